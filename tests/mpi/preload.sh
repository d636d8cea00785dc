#!/bin/sh
# An unmodified program (examples/demo: no reference to the shim at build
# time) under LD_PRELOAD: its own check passes and the log shows every call.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
if ldd "$DEMO" | grep -q skewshim; then ok 1 "demo must not link the shim"; else ok 0 "demo is built without the shim"; fi
printf 'version: 1\nlog: {level: calls, path: "%s/log-%%j-%%r.jsonl"}\n' "$TESTDIR" > "$TESTDIR/calls.yaml"
for n in 2 4; do
    rm -f "$TESTDIR"/log-*
    SKEWSHIM_CONFIG="$TESTDIR/calls.yaml" mpirun_n $n env LD_PRELOAD="$(preload)" "$DEMO" 7 128
    ok $? "P=$n: demo under LD_PRELOAD is correct"
    calls=$(cat "$TESTDIR"/log-*-0.jsonl 2>/dev/null | grep -c '"call":')
    [ "$calls" = 7 ]; ok $? "P=$n: log has a record for each of the 7 calls (got $calls)"
    grep -q '"summary"' "$TESTDIR"/log-*-0.jsonl; ok $? "P=$n: log has the job summary"
done
rm -f "$TESTDIR"/log-*
SKEWSHIM_DISABLE=1 SKEWSHIM_CONFIG="$TESTDIR/calls.yaml" mpirun_n 2 env LD_PRELOAD="$(preload)" "$DEMO" 3 64
ok $? "SKEWSHIM_DISABLE=1: correct"
ls "$TESTDIR"/log-* >/dev/null 2>&1; [ $? -ne 0 ]; ok $? "SKEWSHIM_DISABLE=1: pure pass-through, no log"
# a C++ caller
MPICXX=$(echo "${CC:-mpicc}" | sed 's/mpicc/mpicxx/')
if command -v "$MPICXX" >/dev/null 2>&1 && "$MPICXX" -o "$TESTDIR/cxx_check" "$top_srcdir/tests/mpi/cxx_check.cpp" 2>"$TESTDIR/cxx.err"; then
    rm -f "$TESTDIR"/log-*
    SKEWSHIM_ALGORITHM=pairwise SKEWSHIM_CONFIG="$TESTDIR/calls.yaml" mpirun_n 3 env LD_PRELOAD="$(preload)" "$TESTDIR/cxx_check"
    ok $? "C++ caller correct under the shim"
    grep -q '"algo": *"pairwise"' "$TESTDIR"/log-*-0.jsonl; ok $? "C++ call intercepted (pairwise ran)"
else
    skip "no MPI C++ compiler ($MPICXX)"
fi
# the wrapper script
SKEWSHIM_LIB="$LIB" SKEWSHIM_CONFIG="$TESTDIR/calls.yaml" mpirun_n 2 env LD_PRELOAD="$(preload | sed 's/:*[^:]*$//')" \
    "$top_srcdir/scripts/skewshim-run" --algorithm scattered -- "$DEMO" 2 64
ok $? "skewshim-run --algorithm scattered runs the demo correctly"
grep -q '"algo": *"scattered"' "$TESTDIR"/log-*-0.jsonl; ok $? "skewshim-run: the log shows scattered ran"
done_testing
