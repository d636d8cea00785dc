#!/bin/sh
# A bad policy: one message naming file, line, column and key on rank 0's
# stderr, then the job runs in pass-through with correct results; strict
# mode aborts instead.  (The 49 loader cases are in tests/unit/test_policy.)
. "${top_srcdir:-.}/tests/mpi/lib.sh"
printf 'version: 1\ntuna:\n  radix: 1\n' > "$TESTDIR/bad.yaml"
SKEWSHIM_CONFIG="$TESTDIR/bad.yaml" mpirun_n 2 env LD_PRELOAD="$(preload)" "$DEMO" 2 64
ok $? "job with a bad policy runs and is correct"
n=$(grep -c "skewshim: policy error: $TESTDIR/bad.yaml:3:[0-9]*: tuna.radix" "$TESTDIR/out")
[ "$n" = 1 ]; ok $? "exactly one message naming file:line:col and key (got $n)"
grep -q "pass-through" "$TESTDIR/out"; ok $? "message says the job runs in pass-through"
SKEWSHIM_STRICT=1 SKEWSHIM_CONFIG="$TESTDIR/bad.yaml" mpirun_n 2 env LD_PRELOAD="$(preload)" "$DEMO" 2 64
[ $? -ne 0 ]; ok $? "SKEWSHIM_STRICT=1 aborts the job with a non-zero exit"
printf 'version: 1\nstrict: true\nlog: {level: off}\n' > "$TESTDIR/strict.yaml"
SKEWSHIM_ALGORITHM=no_such SKEWSHIM_CONFIG="$TESTDIR/strict.yaml" mpirun_n 2 env LD_PRELOAD="$(preload)" "$DEMO" 2 64
[ $? -ne 0 ]; ok $? "strict: true in the file aborts on an unknown SKEWSHIM_ALGORITHM"
grep -q "unknown algorithm 'no_such'" "$TESTDIR/out"; ok $? "unknown algorithm named in the message"
SKEWSHIM_CONFIG="$TESTDIR/missing.yaml" mpirun_n 2 env LD_PRELOAD="$(preload)" "$DEMO" 2 64
ok $? "missing policy file: job still runs"
grep -q "missing.yaml" "$TESTDIR/out"; ok $? "missing file named in the message"
printf 'version: 1\nrules:\n  - {comm_size: [4, 2], use: tuna}\n' > "$TESTDIR/inv.yaml"
SKEWSHIM_CONFIG="$TESTDIR/inv.yaml" mpirun_n 2 env LD_PRELOAD="$(preload)" "$DEMO" 2 64
grep -q "inv.yaml:3:.*rules\[0\].comm_size" "$TESTDIR/out"; ok $? "inverted range reported with its rule"
done_testing
