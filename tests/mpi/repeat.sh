#!/bin/sh
# The repeat check (src/core/global.c): a job that repeats its exchange has
# SABRE and FAST check each rank's own row and column against the current
# plan's matrix instead of gathering the whole matrix again.  Every case
# runs 4 times and then once with one block an element shorter, so that
# the two ranks of that block alone disagree with the last plan: a check
# that hit there would move the element all the same, into the receiver's
# poisoned gap.  Every call byte for byte against PMPI_Alltoallv, the
# algorithm that ran checked, and the log read back: from the third call
# of a matrix on, the plan comes from the cache and the call exchanged the
# check's 6 words, not a row of the matrix.  Three ways to the plan: the
# algorithm forced, a rule whose matrix exchange is the agreement, and a
# rule reached through the allreduce.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
PY=${PYTHON3:-python3}
policy() {   # policy NAME EXTRA_RULE
    { printf 'version: 1\nreuse_agreement: 0\ntopology: {ranks_per_node: 2}\n'
      printf 'model: {intra_bw: 1e12, inter_bw: 1e6, latency: 0, overhead: 0, plan_entry: 0}\n'
      printf 'log: {level: calls, path: "%s/%s.jsonl"}\n' "$TESTDIR" "$1"
      printf 'rules:\n  - {mtm: [0, inf], use: fast}\n'
      [ -z "$2" ] || printf '  - %s\n' "$2"; } > "$TESTDIR/$1.yaml"
}
policy first
policy allreduce '{max_block_bytes: [1G, inf], use: scattered}'
cp "$TESTDIR/first.yaml" "$TESTDIR/forced.yaml"
sed -i "s|first.jsonl|forced.jsonl|" "$TESTDIR/forced.yaml"
# read NAME CALLS_PER_CASE: what the log says of the calls
read_log() {
    "$PY" - "$TESTDIR/$1.jsonl" "$2" <<'PYEOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
calls = [r for r in recs if "call" in r and "matrix" not in r and r.get("comm") is not None]
per = int(sys.argv[2])
P = calls[0]["size"] if calls else 0
# meta_bytes is summed over the ranks: a row of P + 3 words each, or
# the check's 6 (the same at P = 3, hence P >= 4 here)
row = P * (P + 3) * 8
checked = [c for i, c in enumerate(calls) if i % per in (2, 3)]
bad = [c["call"] for c in checked
       if c.get("meta_bytes") != 48 * P or c.get("cache_hit") is not True or c["algo"] not in ("sabre", "fast")]
gathered = [c for i, c in enumerate(calls) if i % per in (0, 1, 4) and c.get("meta_bytes", 0) >= row]
print("# %d calls; %d repeats checked, %d wrong (%s); %d gathered the matrix"
      % (len(calls), len(checked), len(bad), bad[:5], len(gathered)))
sys.exit(0 if calls and len(calls) % per == 0 and checked and not bad
         and len(gathered) == 3 * len(calls) // per else 1)
PYEOF
}
run() {   # run N NAME DESCRIPTION CHECK-ARGS...
    n=$1 name=$2 desc=$3; shift 3
    rm -f "$TESTDIR/$name.jsonl"
    SKEWSHIM_CONFIG="$TESTDIR/$name.yaml" mpirun_n "$n" "$CHECK" --workloads hot_send,hot_recv,zipf,moe --S 4096 \
        --types byte,double --seeds 2 --repeats 3 --perturb "$@"
    rc=$?
    summary=$(grep '^alltoallv_check:' "$TESTDIR/out" | tail -1)
    ok $rc "$desc: P=$n ${summary#alltoallv_check: }"
    read_log "$name" 5
    ok $? "$desc: P=$n, calls 3 and 4 of a matrix checked, not gathered"
}
ranks="4 5 8"
case "$SKEWSHIM_MPI" in openmpi) ranks="4 5" ;; esac
for n in $ranks; do
    run $n forced "sabre forced" --algo sabre --again sabre
    run $n forced "fast forced" --algo fast --again fast
    run $n first "fast by a rule, matrix first" --algo auto --expect fast --again fast
    run $n allreduce "fast by a rule, allreduce first" --algo auto --expect fast --again fast
done
done_testing
