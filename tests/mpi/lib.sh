# Shared helpers of the MPI test scripts (sourced).  Every script prints TAP.
# Environment from the Makefile: MPIEXEC, MPIEXEC_FLAGS, top_builddir,
# top_srcdir, SKEWSHIM_MPI, ASAN_CFLAGS, MPIFORT, PYTHON_MPI4PY.
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
tap_n=0
tap_fail=0
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
# Open MPI refuses root without these; harmless elsewhere.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Never read a skewshim.yaml lying in the build directory by accident.
TESTDIR=$(mktemp -d "${TMPDIR:-/tmp}/skewshim-test.XXXXXX")
trap 'rm -rf "$TESTDIR"' EXIT
cd "$TESTDIR"
LIB="$top_builddir/.libs/libskewshim.so"
CHECK="$top_builddir/tests/mpi/alltoallv_check"
DEMO="$top_builddir/examples/demo"
# A policy with logging off, for runs that must not depend on the default.
printf 'version: 1\nlog: {level: off}\n' > "$TESTDIR/quiet.yaml"

ok() {   # ok COND_STATUS DESCRIPTION
    tap_n=$((tap_n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $tap_n - $2"; else echo "not ok $tap_n - $2"; tap_fail=$((tap_fail + 1)); fi
}
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n - # SKIP $1"; }
done_testing() { echo "1..$tap_n"; exit 0; }

# preload [LIB...]: the preload list, each LIB (a probe that must wrap
# what the shim calls) before the shim. With an AddressSanitizer build,
# the ASan runtime must come first.
preload() {
    list=
    for extra in "$@"; do list="$list$extra:"; done
    if [ -n "$ASAN_CFLAGS" ]; then
        list="$(${CC:-gcc} -print-file-name=libasan.so):$list"
    fi
    echo "$list$LIB"
}

# mpirun N CMD...: launch with the configured MPI; output in $TESTDIR/out.
mpirun_n() {
    n=$1; shift
    timeout "${SKEWSHIM_TEST_TIMEOUT:-300}" $MPIEXEC $MPIEXEC_FLAGS -n "$n" "$@" > "$TESTDIR/out" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then sed 's/^/# /' "$TESTDIR/out" | tail -20; fi
    return $rc
}

# check N DESCRIPTION ARGS...: the harness at N ranks, one TAP line.
check() {
    n=$1; desc=$2; shift 2
    SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n "$n" "$CHECK" "$@"
    rc=$?
    summary=$(grep '^alltoallv_check:' "$TESTDIR/out" | tail -1)
    ok $rc "$desc: P=$n $* ${summary#alltoallv_check: }"
}

# Many checks at one P in one job (alltoallv_check --batch): a job's start
# costs seconds under AddressSanitizer on an oversubscribed machine, the
# checks themselves less.  Each batch_add gives one TAP line, as check
# would; batch_run one more, for the job's exit.
batch_add() {   # batch_add DESCRIPTION OPTIONS...
    desc=$1; shift
    printf '%s\n' "$desc" >> "$TESTDIR/batch.desc"
    printf '%s\n' "$*" >> "$TESTDIR/batch.args"
}
batch_run() {   # batch_run N [POLICY]  (default: the quiet one)
    n=$1
    SKEWSHIM_CONFIG="${2:-$TESTDIR/quiet.yaml}" mpirun_n "$n" "$CHECK" --batch "$TESTDIR/batch.args"
    rc=$?
    i=0
    while IFS= read -r desc; do
        i=$((i + 1))
        args=$(sed -n "${i}p" "$TESTDIR/batch.args")
        summary=$(grep "^alltoallv_check\[$i\]:" "$TESTDIR/out" | tail -1)
        case "$summary" in *" (rank-sum), 0 failed,"*) st=0 ;; *) st=1 ;; esac
        ok $st "$desc: P=$n $args ${summary#alltoallv_check\[$i\]: }"
    done < "$TESTDIR/batch.desc"
    ok $rc "P=$n: the job of $i checks ended cleanly"
    rm -f "$TESTDIR/batch.desc" "$TESTDIR/batch.args"
}
