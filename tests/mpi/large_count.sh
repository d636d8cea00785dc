#!/bin/sh
# MPI_Alltoallv_c (MPI 4 large counts) is intercepted, passed through and
# counted in the summary.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
if ! grep -q 'define HAVE_MPI_ALLTOALLV_C 1' "$top_builddir/config.h"; then
    skip "this MPI has no MPI_Alltoallv_c"
    done_testing
fi
printf 'version: 1\nlog: {level: summary, path: "%s/log-%%j.jsonl"}\n' "$TESTDIR" > "$TESTDIR/sum.yaml"
SKEWSHIM_CONFIG="$TESTDIR/sum.yaml" mpirun_n 2 "$top_builddir/tests/mpi/fallback"
ok $? "MPI_Alltoallv_c result correct"
grep -q '"large_count_calls": *1' "$TESTDIR"/log-*.jsonl
ok $? "summary counts one large-count call"
done_testing
