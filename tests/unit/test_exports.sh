#!/bin/sh
# libskewshim.so exports the MPI_ (and Fortran) entry points and the API of
# include/skewshim.h, nothing else: no planner, workload or log symbol can
# clash with an application's or be called by one.
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
so="$top_builddir/.libs/libskewshim.so"
if [ ! -f "$so" ] || ! command -v nm >/dev/null 2>&1; then
    echo "1..0 # SKIP no shared library here (static build) or no nm"
    exit 0
fi
api=$(sed -n 's/^SKEWSHIM_API [^(]*[ *]\(skewshim_[a-z_]*\)(.*/\1/p' "$top_srcdir/include/skewshim.h" | sort)
syms=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v '^_' | sort)
n=0; failed=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
extra=$(echo "$syms" | grep -v -E '^(MPI_|PMPI_|mpi_|pmpi_|ompi_)' | grep -v -x -F "$api")
[ -z "$extra" ]
ok $? "no symbol beyond the MPI entry points and the API${extra:+ (also: $(echo $extra))}"
missing=$(echo "$api" | grep -v -x -F "$syms")
[ -n "$api" ] && [ -z "$missing" ]
ok $? "every API function of include/skewshim.h is exported${missing:+ (missing: $(echo $missing))}"
echo "$syms" | grep -q -x MPI_Alltoallv
ok $? "MPI_Alltoallv is exported"
echo "1..$n"
[ $failed -eq 0 ]
