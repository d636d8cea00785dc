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
# check's 7 words, not a row of the matrix; where an allreduce agrees
# anyway, it carries the compare, and from the matrix's second call on
# nothing else is exchanged.  Four ways to the plan: the
# algorithm forced, a rule whose matrix exchange is the agreement, a rule
# reached through the allreduce, and a rule on the agreed repeat count.
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
# A rule that wants the matrix repeated: a new one runs scattered (the
# default), its second call gathers it, the later ones check it.
policy repeated
sed -i 's|  - {mtm: \[0, inf\], use: fast}|  - {repeats: [1, inf], use: sabre}|; s|^rules:|default: scattered\nrules:|' \
    "$TESTDIR/repeated.yaml"
# The same rule from the fourth call of a matrix on, with agreements
# reused: a build without CUDA reuses the scattered outcome of two agreed
# calls for the third, which still counts towards the repeats, so both
# builds go s s s, then gather on the fourth.
policy threshold
sed -i 's|  - {mtm: \[0, inf\], use: fast}|  - {repeats: [3, inf], use: sabre}|; s|^rules:|default: scattered\nrules:|; /^reuse_agreement/d' \
    "$TESTDIR/threshold.yaml"
# The same at log level summary, where a reused call compares its sizes
# only if the count can change a choice (src/core/call.c): here the rule
# on repeats can, so the fourth call gathers as above.
sed 's|level: calls, path: "\(.*\)/threshold.jsonl"|level: summary, path: "\1/quiet.jsonl"|' \
    "$TESTDIR/threshold.yaml" > "$TESTDIR/quiet.yaml"
cp "$TESTDIR/first.yaml" "$TESTDIR/forced.yaml"
sed -i "s|first.jsonl|forced.jsonl|" "$TESTDIR/forced.yaml"
# read NAME PATTERN: what the log says of the calls, one letter a call of
# each case: g gathered the matrix (and planned, sabre or fast), c took the
# plan from the cache after the check alone, h took it with no exchange but
# the agreement allreduce, s ran scattered and exchanged no matrix
read_log() {
    "$PY" - "$TESTDIR/$1.jsonl" "$2" <<'PYEOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
calls = [r for r in recs if "call" in r and "matrix" not in r and r.get("comm") is not None]
pat = sys.argv[2]
P = calls[0]["size"] if calls else 0
# meta_bytes is summed over the ranks: a row of P + 4 words each, or
# the check's 7 (the same at P = 3, hence P >= 4 here)
row = P * (P + 4) * 8
def fits(c, want):
    m = c.get("meta_bytes", 0)
    if want == "s":
        return c["algo"] == "scattered" and m == 0
    if c["algo"] not in ("sabre", "fast"):
        return False
    if want == "c":
        return m == 56 * P and c.get("cache_hit") is True
    if want == "h":
        return m == 0 and c.get("cache_hit") is True
    return m >= row
bad = [(c["call"], pat[i % len(pat)], c["algo"], c.get("meta_bytes"))
       for i, c in enumerate(calls) if not fits(c, pat[i % len(pat)])]
print("# %d calls against %s; %d wrong %s" % (len(calls), pat, len(bad), bad[:4]))
sys.exit(0 if calls and len(calls) % len(pat) == 0 and not bad else 1)
PYEOF
}
run() {   # run N NAME DESCRIPTION PATTERN CHECK-ARGS...
    n=$1 name=$2 desc=$3 pat=$4; shift 4
    rm -f "$TESTDIR/$name.jsonl"
    SKEWSHIM_CONFIG="$TESTDIR/$name.yaml" mpirun_n "$n" "$CHECK" --workloads hot_send,hot_recv,zipf,moe --S 4096 \
        --types byte,double --seeds 2 --repeats 3 --perturb "$@"
    rc=$?
    summary=$(grep '^alltoallv_check:' "$TESTDIR/out" | tail -1)
    ok $rc "$desc: P=$n ${summary#alltoallv_check: }"
    read_log "$name" "$pat"
    ok $? "$desc: P=$n, the calls of a matrix went $pat (g gathered, c checked, h held, s scattered)"
}
# 4 and 5 ranks: whole nodes of 2 and a short last node; make check-full
# (SKEWSHIM_FULL) adds 8 under MPICH (40 s of this suite on 2 cores).
ranks="4 5"
[ -n "$SKEWSHIM_FULL" ] && [ "$SKEWSHIM_MPI" != openmpi ] && ranks="4 5 8"
for n in $ranks; do
    run $n forced "sabre forced" ggccg --algo sabre --again sabre
    run $n forced "fast forced" ggccg --algo fast --again fast
    run $n first "fast by a rule, matrix first" ggccg --algo auto --expect fast --again fast
    run $n allreduce "fast by a rule, allreduce first" ghhhg --algo auto --expect fast --again fast
    run $n repeated "sabre by a rule on repeats" sghhs --algo auto --expect scattered --again sabre
    run $n threshold "sabre by a rule on 3 repeats, agreements reused" sssgs --algo auto \
        --expect scattered --again any --workloads moe --types byte --seeds 1
    rm -f "$TESTDIR/quiet.jsonl"
    SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n $n "$CHECK" --workloads moe --S 4096 --types byte \
        --seeds 1 --repeats 3 --perturb --algo auto --expect scattered --again any
    rc=$?
    ran=$(grep -o '"calls": {[^}]*}' "$TESTDIR/quiet.jsonl")
    case "$ran" in *'"sabre": 1'*'"scattered": 4'*|*'"scattered": 4'*'"sabre": 1'*) st=$rc ;; *) st=1 ;; esac
    ok $st "sabre by a rule on 3 repeats, log level summary: P=$n, 4 scattered calls and 1 sabre ($ran)"
done
done_testing
