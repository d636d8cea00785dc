#!/bin/sh
# The skew log end to end: per-call records merged over ranks, sampling,
# the matrix level, SABRE/FAST planner fields, and skewshim-report on it.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
PY=${PYTHON3:-python3}
printf 'version: 1\ntopology: {ranks_per_node: 2}\nlog: {level: matrix, sample: 2, path: "%s/log.jsonl"}\n' "$TESTDIR" > "$TESTDIR/m.yaml"
SKEWSHIM_ALGORITHM=sabre SKEWSHIM_CONFIG="$TESTDIR/m.yaml" mpirun_n 4 "$CHECK" --algo sabre --workloads hot_send,uniform --seeds 2 --types byte
ok $? "sabre at P=4 in 2 emulated nodes, logged at level matrix"
calls=$(grep -v '"matrix"' "$TESTDIR/log.jsonl" | grep -c '"call":')
mats=$(grep -c '"matrix":' "$TESTDIR/log.jsonl")
# 4 checked calls, sample 2 -> 2 records and 2 matrices
[ "$calls" = 2 ]; ok $? "sample 2 keeps every other call ($calls records)"
[ "$mats" = 2 ]; ok $? "level matrix writes the sampled calls' matrices ($mats)"
"$PY" - "$TESTDIR/log.jsonl" <<'PYEOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
calls = [r for r in recs if "call" in r and "matrix" not in r]
mats = [r["matrix"] for r in recs if "matrix" in r]
ok = all(c["algo"] == "sabre" and c["size"] == 4 and c["nodes"] == 2 for c in calls)
ok &= all("regime" in c and "t_lb_us" in c and "cache_hit" in c for c in calls)
ok &= all(c.get("nics") == 1 for c in calls)
ok &= all(c["time_us"] > 0 and c["messages"] >= 0 for c in calls)
ok &= all(len(m["bytes"]) == 4 and all(len(r) == 4 for r in m["bytes"]) for m in mats)
sys.exit(0 if ok else 1)
PYEOF
ok $? "records carry algo, size, nodes, regime, NICs, T_LB, cache hit; matrices are 4x4"
# A policy that says two NICs a node: SABRE's record says what it planned for.
printf 'version: 1\ntopology: {ranks_per_node: 2, nics_per_node: 2}\nlog: {level: calls, path: "%s/nics.jsonl"}\n' "$TESTDIR" > "$TESTDIR/n.yaml"
SKEWSHIM_ALGORITHM=sabre SKEWSHIM_CONFIG="$TESTDIR/n.yaml" mpirun_n 4 "$CHECK" --algo sabre --workloads hot_recv --seeds 1 --types byte
rc=$?
"$PY" -c 'import json, sys; c = [json.loads(l) for l in open(sys.argv[1]) if "\"call\"" in l]; sys.exit(0 if c and all(r.get("nics") == 2 and r["algo"] == "sabre" for r in c) else 1)' "$TESTDIR/nics.jsonl"
py=$?
[ $rc -eq 0 ] && [ $py -eq 0 ]; ok $? "with nics_per_node: 2 every sabre record says \"nics\": 2"
# The figures of every record, merged over ranks from each rank's own row
# and column, against the same figures computed here from the call's matrix
# (level matrix logs it): integers equal, numbers as the log prints them
# (%.10g), so the check is byte for byte.
printf 'version: 1\ntopology: {ranks_per_node: 2}\nlog: {level: matrix, path: "%s/fig.jsonl"}\nrules:\n  - {use: scattered}\n' "$TESTDIR" > "$TESTDIR/fig.yaml"
SKEWSHIM_CONFIG="$TESTDIR/fig.yaml" mpirun_n 4 "$CHECK" --comms world,split --workloads hot_send,hot_recv,uniform,zero --seeds 2 --types byte,int
ok $? "scattered at P=4 in 2 emulated nodes, every call logged with its matrix"
"$PY" - "$TESTDIR/fig.jsonl" <<'PYEOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mats = {(m["comm"], m["call"]): m for m in (r["matrix"] for r in recs if "matrix" in r)}
calls = [r for r in recs if "call" in r and "matrix" not in r]
def num(v): return float("%.10g" % v)
def mtm(mx, sm, P): return 1.0 if sm == 0 else float(P) * float(mx) / float(sm)
bad = 0
for c in calls:
    m = mats[(c["comm"], c["call"])]
    B, P, node = m["bytes"], m["P"], m["node_of"]
    send = [sum(B[i]) for i in range(P)]
    recv = [sum(B[i][j] for i in range(P)) for j in range(P)]
    isend = [sum(B[i][j] for j in range(P) if node[j] != node[i]) for i in range(P)]
    irecv = [sum(B[i][j] for i in range(P) if node[j] != node[i]) for j in range(P)]
    ne = sum(1 for r in B for v in r if v)
    msgs = max(max(sum(1 for j in range(P) if j != i and B[i][j]),
                   sum(1 for j in range(P) if j != i and B[j][i])) for i in range(P))
    # tuna_hier's phase 2: the other nodes a rank hears from, and for one
    # local id the other nodes its own blocks go to (src/topology/topo.c)
    nodes = sorted(set(node))
    members = {n: [j for j in range(P) if node[j] == n] for n in nodes}
    Q = max(len(v) for v in members.values())
    def phase2(i):
        heard = sum(1 for n in nodes if n != node[i] and any(B[j][i] for j in members[n]))
        sent = max(sum(1 for n in nodes if n != node[i] and l < len(members[n]) and B[i][members[n][l]])
                   for l in range(Q))
        return max(heard, sent)
    p2 = max(phase2(i) for i in range(P))
    want = {"total_bytes": sum(send), "max_block_bytes": max(max(r) for r in B),
            "mean_block_bytes": num(sum(send) / (float(P) * P)),
            "mean_nonempty_bytes": num(sum(send) / float(ne)) if ne else 0,
            "max_msgs": msgs, "max_phase2": p2,
            "send_mtm_all": num(mtm(max(send), sum(send), P)),
            "recv_mtm_all": num(mtm(max(recv), sum(recv), P)),
            "send_mtm_inter": num(mtm(max(isend), sum(isend), P)),
            "recv_mtm_inter": num(mtm(max(irecv), sum(irecv), P))}
    for k, v in want.items():
        if c[k] != v:
            bad += 1
            print("# comm %d call %d: %s = %r, from the matrix %r" % (c["comm"], c["call"], k, c[k], v))
print("# %d records checked against their matrices" % len(calls))
sys.exit(0 if calls and len(calls) == len(mats) and bad == 0 else 1)
PYEOF
ok $? "every record's total, largest, mean and mean non-empty block, busiest rank's messages (linear and tuna_hier's phase 2) and four MTMs match its matrix"
# The agreed bytes per non-empty block reach the rules, through the
# allreduce (a rule for pairwise) and through the matrix gather that
# replaces it where every candidate gathers the matrix (a rule for fast):
# the zero workload (no block carries a byte: 0) stays below [1, 1G] and
# runs native, every other call matches.  Byte for byte against
# PMPI_Alltoallv as ever.  reuse_agreement 0: the empty exchanges, which
# come first, would otherwise settle native for the calls after them.
for algo in pairwise fast; do
    printf 'version: 1\nreuse_agreement: 0\ntopology: {ranks_per_node: 2}\nlog: {level: calls, path: "%s/ne-%s.jsonl"}\nrules:\n  - {avg_nonempty_bytes: [1, 1G], use: %s}\n' \
        "$TESTDIR" "$algo" "$algo" > "$TESTDIR/ne-$algo.yaml"
    SKEWSHIM_CONFIG="$TESTDIR/ne-$algo.yaml" mpirun_n 4 "$CHECK" --workloads zero,uniform,hot_send --seeds 2 --types byte
    rc=$?
    "$PY" - "$TESTDIR/ne-$algo.jsonl" "$algo" <<'PYEOF'
import json, sys
c = [json.loads(l) for l in open(sys.argv[1]) if '"call"' in l]
empty = [r for r in c if r["total_bytes"] == 0]
full = [r for r in c if r["total_bytes"] > 0]
print("# %d calls with bytes, %d without; rules %s" % (len(full), len(empty), sorted(set(str(r.get("rule")) for r in c))))
ok = empty and full and all(r["why"] == "default" and r["mean_nonempty_bytes"] == 0 for r in empty)
ok = ok and all(r.get("rule") == 0 and r["mean_nonempty_bytes"] >= 1 for r in full)
sys.exit(0 if ok else 1)
PYEOF
    py=$?
    [ $rc -eq 0 ] && [ $py -eq 0 ]; ok $? "avg_nonempty_bytes [1, 1G] -> $algo: calls with bytes match it, an empty exchange does not"
done
# Emulated nodes are consecutive ranks of MPI_COMM_WORLD: the even/odd
# halves of 4 ranks in 2 nodes of 2 each span both nodes.
printf 'version: 1\ntopology: {ranks_per_node: 2}\nlog: {level: calls, path: "%s/split.jsonl"}\n' "$TESTDIR" > "$TESTDIR/split.yaml"
SKEWSHIM_CONFIG="$TESTDIR/split.yaml" mpirun_n 4 "$CHECK" --algo scattered --comms split --workloads uniform --seeds 1 --types byte
ok $? "scattered on an even/odd split of 4 ranks"
"$PY" -c 'import json,sys
r=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]
c=[x for x in r if "call" in x]
print("# nodes per record:", sorted(set(x["nodes"] for x in c)))
sys.exit(0 if c and all(x["size"] == 2 and x["nodes"] == 2 for x in c) else 1)' "$TESTDIR/split.jsonl"
ok $? "ranks_per_node 2: each half of an even/odd split spans 2 nodes"
# How each call's choice was made (doc/log-format.md, "decided"): once for
# the communicator (the built-in policy below 64 ranks), by the user
# (SKEWSHIM_ALGORITHM), or by the agreement and reused from it (a rule on
# agreed block sizes, two exchanges in turn).  Each record says which; the
# summary counts them, every call once, and its agreed calls are those the
# harness saw run the agreement (skewshim_last_call, a rank-sum of 3).  WANT
# is KIND=N,...: at least N calls of each kind, and no kind not named.
ALT=zero,uniform,zero,uniform,zero,uniform,zero,uniform,zero,uniform,zero,uniform
decided() {   # decided NAME WANT [VAR=VALUE]: 12 calls at 3 ranks, logged at level calls
    { printf 'version: 1\nlog: {level: calls, stderr: true, path: "%s/dec-%s.jsonl"}\n' "$TESTDIR" "$1"
      [ "$1" != agreed ] || printf 'rules:\n  - {max_block_bytes: [1, inf], use: scattered}\n'; } > "$TESTDIR/dec-$1.yaml"
    [ -z "$3" ] || export "$3"
    SKEWSHIM_CONFIG="$TESTDIR/dec-$1.yaml" mpirun_n 3 "$CHECK" --workloads "$ALT" --types byte --seeds 1
    rc=$?
    [ -z "$3" ] || unset "${3%%=*}"
    agreed=$(grep '^alltoallv_check:' "$TESTDIR/out" | tail -1 | sed -n 's/.* \([0-9]*\) agreed.*/\1/p')
    "$PY" - "$TESTDIR/dec-$1.jsonl" "$2" "$agreed" <<'PYEOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
calls = [r for r in recs if "call" in r]
s = [r["summary"] for r in recs if "summary" in r][0]
by = {}
for c in calls:
    by[c.get("decided")] = by.get(c.get("decided"), 0) + 1
want = dict(kv.split("=") for kv in sys.argv[2].split(","))
print("# records by decided %s, summary %s, harness agreed %s (rank-sum)" % (by, s["decided"], sys.argv[3]))
ok = len(calls) == 12 and by == s["decided"] and sum(s["calls"].values()) == 12
ok = ok and all(by.get(k, 0) >= int(v) for k, v in want.items()) and set(by) <= set(want)
ok = ok and 3 * s["decided"].get("agreed", 0) == int(sys.argv[3] or -1)
sys.exit(0 if ok else 1)
PYEOF
    py=$?
    grep -q "^skewshim: calls decided: .*$1 [0-9]" "$TESTDIR/out"
    st=$?
    [ $rc -eq 0 ] && [ $py -eq 0 ] && [ $st -eq 0 ]
    ok $? "decided $1: each record says how its choice was made, the summary counts them ($2)"
}
decided fixed fixed=12
decided forced forced=12 SKEWSHIM_ALGORITHM=native
# A CUDA build reuses only native, and may agree on all 12 calls.
cuda=0
if grep -q '^#define SKEWSHIM_HAVE_CUDA 1' "$top_builddir/config.h" 2>/dev/null; then
    cuda=1
    decided agreed agreed=6,reused=0
else
    decided agreed agreed=4,reused=4
fi
"$PY" "$top_srcdir/scripts/skewshim-report" "$TESTDIR/dec-agreed.jsonl" > "$TESTDIR/dec-report.txt" 2>&1 &&
    [ "$(grep -c '^  decided: .*agreed [0-9]' "$TESTDIR/dec-report.txt")" = 2 ] &&
    { [ "$cuda" = 1 ] || grep -q "^  the agreement cost about .* over those [0-9]* agreed calls" "$TESTDIR/dec-report.txt"; }
ok $? "skewshim-report says how the calls were decided, from the records and from the summary, and what the agreement cost"
"$PY" "$top_srcdir/scripts/skewshim-report" "$TESTDIR/log.jsonl" > "$TESTDIR/report.txt" 2>&1
ok $? "skewshim-report reads the log"
grep -q sabre "$TESTDIR/report.txt"; ok $? "report names the algorithm"
grep -q "busiest rank's messages (non-empty blocks to or from others): min [0-9]" "$TESTDIR/report.txt"; ok $? "report gives the busiest rank's messages (max_msgs)"
if [ -x "$top_builddir/skewshim-bench" ]; then
    mpirun_n 4 "$top_builddir/skewshim-bench" --replay "$TESTDIR/log.jsonl:1" --algos native,scattered --iters 2 --warmup 1
    ok $? "skewshim-bench replays a logged matrix"
    # Repeated exchanges of one matrix plan once: the summary shows hits.
    SKEWSHIM_LOG_LEVEL=summary SKEWSHIM_LOG_PATH="$TESTDIR/cache.jsonl" \
        mpirun_n 3 "$top_builddir/skewshim-bench" --algos fast,sabre --workload zipf --sizes 4096 --iters 4 --warmup 1
    ok $? "bench runs fast and sabre repeatedly"
    "$PY" -c 'import json,sys
r=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]
s=[x["summary"] for x in r if "summary" in x][0]
pc=s["plan_cache"]; print("# plan cache", pc); sys.exit(0 if pc["hits"] > 0 and pc["lookups"] > pc["hits"] else 1)' "$TESTDIR/cache.jsonl"
    ok $? "plan cache: repeated matrices hit, the first of each misses"
fi
done_testing
