#!/bin/sh
# skewshim-tune end to end in the lab (doc/tune.md), mode det, cpu-cluster:
#   1. a job: skewshim-bench at P = 64 on the uniform workload, S = 16 B and
#      16 KiB, logged at level matrix (scripts/skewshim-lab --log-matrix);
#   2. skewshim-tune replays its two distinct matrices through native,
#      pairwise, tuna (radix 2) and tuna_hier and writes a policy, which must
#      pass the shim's own loader (skewshim-check-policy, run by the tuner);
#   3. the same job with SKEWSHIM_CONFIG=the tuned policy and --algos auto,
#      logged: the calls the policy chose must have run tuna_hier at S = 16
#      (0.42 x native in the lab, doc/performance.md; the next item, tuna
#      radix 2, 0.69 x) and native at 16 KiB (every item above native there:
#      pairwise and tuna_hier 1.05-1.2 x, tuna radix 2 1.8 x at 4 and 64 KiB),
#      and the S = 16 choice must be the best of the tuner's own table.
# A tuner that picks another item, keeps native where tuna_hier wins, writes
# rules the loader refuses or that match the wrong calls fails here.
# Runs in an SMPI build (configure MPICC=smpicc); prints TAP.
. "$(dirname "$0")/tap.sh"
tap_need_smpirun
tap_scratch tune-ci
PY=/usr/bin/python3
LAB="$top_srcdir/scripts/skewshim-lab"
t0=$(date +%s)

# 1. the job, logged at level matrix
timeout 600 $PY "$LAB" ci-verify --build "$top_builddir" --out "$OUT/job" --no-plot --mode det \
    --ranks 64 --sizes 16,16k --algos native --iters 1 --warmup 0 \
    --log-matrix "$OUT/job.jsonl" > "$OUT/job.out" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '"matrix"' "$OUT/job.jsonl" 2>/dev/null || { rc=1; tail -15 "$OUT/job.out" | sed 's/^/# /'; }
ok $rc "a P=64 job logged at level matrix"

# 2. tune it
timeout 600 $PY "$top_srcdir/scripts/skewshim-tune" "$OUT/job.jsonl" --platform cpu-cluster \
    --build "$top_builddir" --out "$OUT/tuned" --iters 1 --warmup 0 \
    --algos native,pairwise,tuna:radix=2,tuna_hier > "$OUT/tune.out" 2>&1
rc=$?
[ $rc -eq 0 ] || tail -20 "$OUT/tune.out" | sed 's/^/# /'
ok $rc "skewshim-tune wrote a policy and the shim's loader accepted it"
grep -q "^# .*rules\[0\]" "$OUT/tune.out"
ok $? "the loader listed the tuned rules"
sed 's/^/# /' "$OUT/tuned/policy.yaml" 2>/dev/null | grep -v '^# *$' | head -30
grep '^# this job' "$OUT/tune.out"

# 3. the job under the tuned policy, auto; which algorithm the log says ran
SKEWSHIM_CONFIG="$OUT/tuned/policy.yaml" SKEWSHIM_STRICT=1 timeout 600 $PY "$LAB" ci-verify \
    --build "$top_builddir" --out "$OUT/auto" --no-plot --mode det --ranks 64 --sizes 16,16k \
    --algos auto --iters 1 --warmup 0 --log-matrix "$OUT/auto.jsonl" > "$OUT/auto.out" 2>&1
rc=$?
[ $rc -eq 0 ] || tail -15 "$OUT/auto.out" | sed 's/^/# /'
ok $rc "the job ran under the tuned policy (strict: a policy error aborts)"

# Calls and matrices by their largest block: below 1 KiB the S = 16 ones.
ran() {   # ran small|large: the algorithms the policy ran for those calls
    $PY -c '
import json, sys
seen = set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "call" in r and r.get("why") in ("rule", "default") and \
            (r.get("max_block_bytes", 0) < 1024) == (sys.argv[2] == "small"):
        seen.add(r["algo"])
print(",".join(sorted(seen)) or "none")' "$OUT/auto.jsonl" "$1"
}
best() {  # best small|large: the tuner's best item there, from its per-matrix table
    $PY -c '
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if (int(r["max_block_bytes"]) < 1024) == (sys.argv[2] == "small"):
        print(r["best"], r["best_ratio"], r["tuned"])' "$OUT/tuned/matrices.csv" "$1"
}
a16=$(ran small)
b16=$(best small)
[ "$a16" = tuna_hier ] && [ "${b16%% *}" = tuna_hier ]
ok $? "S=16: the tuned policy ran ${a16:-?} (expected tuna_hier; tuner's best: ${b16:-?})"
a64=$(ran large)
b64=$(best large)
[ "$a64" = native ]
ok $? "S=16k: the tuned policy ran ${a64:-?} (expected native: nothing wins by 10 %; tuner's best: ${b64:-?})"
echo "# skewshim-tune CI test: $(( $(date +%s) - t0 )) s"
echo "1..$n"
