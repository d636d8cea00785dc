#!/bin/sh
# skewshim-tune in live mode (doc/tune.md) at 2 ranks on this machine: a
# bench job logged at level matrix, tuned by replaying its matrices under
# mpiexec; the policy must pass the shim's loader, hold one rule for
# comm_size 2, and, run with --algos auto under SKEWSHIM_STRICT=1, route the
# job's calls to the item the tuner wrote for them.  Timings on 2 oversubscribed
# cores say nothing about performance, so the winner itself is not asserted
# here (tests/lab/tune.sh does that in the lab).
. "$(dirname "$0")/lib.sh"
BENCH="$top_builddir/skewshim-bench"
PY=${PYTHON3:-python3}

SKEWSHIM_LOG_LEVEL=matrix SKEWSHIM_LOG_PATH="$TESTDIR/job.jsonl" \
    mpirun_n 2 "$BENCH" --workload uniform --sizes 256 --algos native --iters 1 --warmup 0
rc=$?
[ $rc -eq 0 ] && grep -q '"matrix"' "$TESTDIR/job.jsonl"
ok $? "a 2-rank job logged at level matrix"

timeout 300 "$PY" "$top_srcdir/scripts/skewshim-tune" "$TESTDIR/job.jsonl" --live \
    --mpiexec "$MPIEXEC $MPIEXEC_FLAGS" --build "$top_builddir" --label "this 2-core machine" \
    --algos native,pairwise,scattered:block_count=1 --iters 3 --warmup 1 \
    --out "$TESTDIR/tuned" > "$TESTDIR/tune.out" 2>&1
rc=$?
[ $rc -eq 0 ] || tail -20 "$TESTDIR/tune.out" | sed 's/^/# /'
ok $rc "skewshim-tune --live wrote a policy the shim's loader accepts"
grep -q 'comm_size: 2, use: ' "$TESTDIR/tuned/policy.yaml" 2>/dev/null
ok $? "one rule on comm_size alone (a single matrix needs no agreement)"
grep -q "^# this job's .* exchanges would take .* (.*predicted, live: .*this 2-core machine" "$TESTDIR/tune.out"
ok $? "the summary names native, the tuned policy and where it was measured"
item=$("$PY" -c 'import csv,sys; print(next(csv.DictReader(open(sys.argv[1])))["tuned"])' \
       "$TESTDIR/tuned/matrices.csv" 2>/dev/null)
want=${item%%:*}
SKEWSHIM_CONFIG="$TESTDIR/tuned/policy.yaml" SKEWSHIM_STRICT=1 SKEWSHIM_LOG_LEVEL=off \
    mpirun_n 2 "$BENCH" --workload uniform --sizes 256 --algos auto --iters 1 --warmup 0
rc=$?
got=$(sed -n 's/.* auto .* ran=\([a-z_0-9]*\).*/\1/p' "$TESTDIR/out" | head -1)
[ $rc -eq 0 ] && [ -n "$want" ] && [ "$got" = "$want" ]
ok $? "the job under the tuned policy ran ${got:-?} (the tuner wrote ${item:-?})"
done_testing
