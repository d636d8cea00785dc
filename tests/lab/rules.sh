#!/bin/sh
# The lab's checks of where auto's rules draw their lines (doc/lab.md; the
# rest of the CI subset is tests/lab/ci.sh, which runs beside this under
# make -j2): the real shim and skewshim-bench under SimGrid's SMPI in mode
# det (communication only, reruns bit-identical), through
# scripts/skewshim-lab, every item verified against PMPI_Alltoallv:
#   - the edges of the 65 B - 1 KiB tuna_hier rules: P = 256, uniform
#     128 B, auto runs tuna_hier at <= 0.9 x scattered; P = 256, power
#     768 B (sparse: 106.6 B a non-empty block), auto runs scattered
#     where tuna_hier takes > 1.05 x scattered; P = 128, uniform 112 B,
#     auto runs tuna_hier at <= 0.95 x scattered; P = 64, equal 64 B,
#     auto runs scattered where tuna_hier takes > 1.05 x scattered;
#   - nodes of unequal size: P = 80 (32 + 32 + 16), uniform 16 B,
#     tuna_hier verified in both variants and auto runs it at <= 0.9 x
#     scattered; P = 65 (32 + 32 + 1), auto runs scattered (the policy
#     passes over tuna_hier's rules) where tuna_hier takes > 1.05 x;
#   - a NIC per rank (gpu-h200, nodes of 8): P = 64, uniform 16 B, auto
#     runs scattered where tuna_hier takes > 1.2 x scattered; P = 192,
#     power 16 B (68 non-empty blocks a row), auto runs scattered where
#     tuna_hier takes > 1.1 x, and uniform 16 B, auto runs tuna_hier at
#     <= 0.75 x scattered; the log of the power-law point says why
#     (max_msgs, passed_over_calls); P = 256, uniform 256 B, auto runs
#     tuna_hier at <= 0.9 x (nodes of 8) and <= 0.85 x (nodes of 4,
#     gpu-perlmutter), and on 512 B blocks there keeps scattered where
#     tuna_hier takes > 1.1 x; a user's tuna_hier rule with the global
#     8 in flight at P = 128 on gpu-perlmutter, uniform 16 B, is held
#     to the line drawn with 8: auto runs scattered where tuna_hier
#     takes > 1.1 x (1.129; the line for 32 alone ran it); on sparse
#     rows the line counts tuna_hier's non-empty inter-node bundles
#     only: P = 512 on nodes of 4 (gpu-perlmutter), power 64 B, auto
#     runs tuna_hier at <= 0.88 x scattered (0.790 today).
# Runs in an SMPI build (configure MPICC=smpicc); prints TAP.
. "$(dirname "$0")/tap.sh"
tap_need_smpirun
tap_scratch lab-rules
. "$(dirname "$0")/points.sh"
t0=$(date +%s)
# The edge of the 65 B - 1 KiB tuna_hier rule at 256-1023 ranks (<= 84 B per
# non-empty block): uniform blocks of up to 128 B average 64.08 B (64.5 B a
# non-empty block) at P = 256, where tuna_hier takes 0.832x scattered
# (MPICH's default) and auto must run it; at the old edge (64 B average)
# auto ran scattered there, 1.13x scattered.
verified edge "P=256, uniform 128 B: native, scattered, tuna_hier and auto verified" \
    --ranks 256 --sizes 128 --algos native,scattered,tuna_hier,auto --iters 1 --warmup 0
auto_ran_scattered "$OUT/edge/results.csv" 256 128 tuna_hier 0.9 "P=256, uniform 128 B"
# Sparse blocks: power-law rows of up to 768 B at P = 256 average 60 B a
# block but 106.6 B a non-empty one (about half are empty, and MPICH sends
# nothing for those), where tuna_hier takes 1.13x scattered: the rule must
# not take them (on the average block it did).  And the rule for 128-255
# ranks: uniform 112 B blocks at P = 128 (56.6 B a non-empty block),
# tuna_hier 0.911x scattered, which auto must run.
verified sparse "P=256, power 768 B: scattered, tuna_hier and auto verified" \
    --ranks 256 --workloads power --sizes 768 --algos scattered,tuna_hier,auto --iters 1 --warmup 0
auto_kept_scattered "$OUT/sparse/results.csv" 256 768 1.05 "P=256, power 768 B"
verified p128 "P=128, uniform 112 B: scattered, tuna_hier and auto verified" \
    --ranks 128 --sizes 112 --algos scattered,tuna_hier,auto --iters 1 --warmup 0
auto_ran_scattered "$OUT/p128/results.csv" 128 112 tuna_hier 0.95 "P=128, uniform 112 B"
# At 64-127 ranks the edge is 36 B a non-empty block: equal 64 B blocks at
# P = 64 take tuna_hier 1.12x scattered, and auto must run scattered (the
# rule on the largest block, to 64 B, ran tuna_hier there).
verified p64eq "P=64, equal 64 B: scattered, tuna_hier and auto verified" \
    --ranks 64 --workloads equal --sizes 64 --algos scattered,tuna_hier,auto --iters 1 --warmup 0
auto_kept_scattered "$OUT/p64eq/results.csv" 64 64 1.05 "P=64, equal 64 B"
# Nodes of unequal size.  80 ranks on nodes of 32 are 32 + 32 + 16: a rank
# of the node of 16 stands for two local ids of the others; tuna_hier (both
# variants) must be verified there and auto must run it, 0.82x scattered
# today.  65 ranks are 32 + 32 + 1: the lone rank would send almost what the
# linear exchange does (tuna_hier 1.21x scattered), so the policy passes
# over tuna_hier's rules and auto must run scattered.
verified uneven80 "P=80 (32 + 32 + 16), uniform 16 B: scattered, tuna_hier (both variants) and auto verified" \
    --ranks 80 --sizes 16 --algos scattered,tuna_hier,tuna_hier:variant=staggered,auto --iters 1 --warmup 0
auto_ran_scattered "$OUT/uneven80/results.csv" 80 16 tuna_hier 0.9 "P=80 (32 + 32 + 16), uniform 16 B"
verified uneven65 "P=65 (32 + 32 + 1), uniform 16 B: scattered, tuna_hier and auto verified" \
    --ranks 65 --sizes 16 --algos scattered,tuna_hier,auto --iters 1 --warmup 0
auto_kept_scattered "$OUT/uneven65/results.csv" 65 16 1.05 "P=65 (32 + 32 + 1), uniform 16 B"
# A NIC per rank (gpu-h200: nodes of 8, and the lab tells the shim 8 NICs a
# node): at P = 64 tuna_hier would save the busiest rank 56 of the linear
# exchange's 63 messages (less its 7 phase-2 ones), below the line's 90
# and too few for the agreement and its intra-node rounds (1.37x
# scattered today), so the policy passes over its rules and auto must run
# scattered.
verified nics64 "gpu-h200 P=64 (a NIC per rank), uniform 16 B: scattered, tuna_hier and auto verified" \
    --platform gpu-h200 --ranks 64 --sizes 16 --algos scattered,tuna_hier,auto --iters 1 --warmup 0
auto_kept_scattered "$OUT/nics64/results.csv" 64 16 1.2 "gpu-h200 P=64, a NIC per rank, uniform 16 B"
# At P = 192 (24 nodes of 8) dense blocks leave tuna_hier 164 net messages
# to save and it runs, with the rule's block_count 32 (0.678x scattered
# today; 0.781x with the global 8, so a rule that lost its 32 fails
# the 0.75 below); power-law 16 B blocks leave
# the linear exchange only the non-empty ones (85 on the busiest rank over
# 6 stages of 32 peers: a cost of 106 messages, 83 net), so the rule is
# passed over for the call and auto must run scattered (tuna_hier 1.169x
# today; auto ran it before).
verified nics192p "gpu-h200 P=192 (a NIC per rank), power 16 B: scattered, tuna_hier and auto verified" \
    --platform gpu-h200 --ranks 192 --sizes 16 --workloads power --algos scattered,tuna_hier,auto \
    --iters 1 --warmup 0
auto_kept_scattered "$OUT/nics192p/results.csv" 192 16 1.1 "gpu-h200 P=192, a NIC per rank, power 16 B"
verified nics192u "gpu-h200 P=192 (a NIC per rank), uniform 16 B: scattered, tuna_hier and auto verified" \
    --platform gpu-h200 --ranks 192 --sizes 16 --workloads uniform --algos scattered,tuna_hier,auto \
    --iters 1 --warmup 0
auto_ran_scattered "$OUT/nics192u/results.csv" 192 16 tuna_hier 0.75 "gpu-h200 P=192, a NIC per rank, uniform 16 B"
# The shim explains it: auto alone at the power-law point, logged at level
# matrix; every call record says scattered and the busiest rank's 85
# messages (from the bench's matrix: 68 sends a row, 85 receives at most),
# and the summary counts the calls whose tuna_hier rule was passed over.
rm -f "$OUT/nics192.jsonl"
run nics192log --platform gpu-h200 --ranks 192 --sizes 16 --workloads power --algos auto \
    --iters 1 --warmup 0 --log-matrix "$OUT/nics192.jsonl"
rc=$?
/usr/bin/python3 - "$OUT/nics192.jsonl" <<'PYEOF'
import json, sys
try:
    recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
except (OSError, ValueError) as e:
    print("# %s" % e); sys.exit(1)
calls = [r for r in recs if "call" in r and "matrix" not in r]
summ = [r["summary"] for r in recs if "summary" in r]
got = summ[-1].get("passed_over_calls", {}).get("tuna_hier", 0) if summ else 0
print("# %d call records: %s; passed_over_calls tuna_hier %d" % (
    len(calls), sorted(set((r["algo"], r.get("max_msgs")) for r in calls)), got))
ok = calls and all(r["algo"] == "scattered" and r.get("max_msgs") == 85 for r in calls)
sys.exit(0 if ok and got >= 1 else 1)
PYEOF
py=$?
[ $rc -eq 0 ] && [ $py -eq 0 ]
ok $? "gpu-h200 P=192, power 16 B: the log says scattered, 85 messages on the busiest rank, and counts the passed-over calls"
# Larger blocks with a NIC per rank: the built-in rule for a NIC per rank
# (to 512 B) runs tuna_hier where the call's line says the messages it
# saves pay for its copies (a net saving of at least 90 + 0.5 times the
# mean non-empty block's bytes, and those bytes).  At P = 256 on nodes of 8
# it saves 224 net: dense blocks of up to 256 B (128.5 B a non-empty block)
# take tuna_hier 0.720x scattered with the rule's 32 and auto must run it
# (it ran scattered before the rule).  On nodes of 4 it saves 192 net:
# blocks of up to 256 B take it 0.790x and auto must run it (the line
# drawn with 8 in flight kept scattered there), blocks of up to 512 B
# (256.7 B) take it 1.183x with 8 (0.948x with 32) and auto must keep
# scattered (the rule alone, without the bytes in the line, would run it).
verified nics256 "gpu-h200 P=256 (a NIC per rank), uniform 256 B: scattered, tuna_hier and auto verified" \
    --platform gpu-h200 --ranks 256 --sizes 256 --workloads uniform --algos scattered,tuna_hier,auto \
    --iters 1 --warmup 0
auto_ran_scattered "$OUT/nics256/results.csv" 256 256 tuna_hier 0.9 "gpu-h200 P=256, a NIC per rank, uniform 256 B"
verified nics256q4 "gpu-perlmutter P=256 (a NIC per rank), uniform 256 and 512 B: scattered, tuna_hier and auto verified" \
    --platform gpu-perlmutter --ranks 256 --sizes 256,512 --workloads uniform --algos scattered,tuna_hier,auto \
    --iters 1 --warmup 0
auto_ran_scattered "$OUT/nics256q4/results.csv" 256 256 tuna_hier 0.85 "gpu-perlmutter P=256, a NIC per rank, uniform 256 B"
auto_kept_scattered "$OUT/nics256q4/results.csv" 256 512 1.1 "gpu-perlmutter P=256, a NIC per rank, uniform 512 B"
# Sparse rows at more ranks: the linear exchange waits for each of its
# stages of 32 peers, so the line counts its stages as well as its
# messages (src/topology/topo.c).  At P = 256 power-law 16 B blocks leave
# the busiest rank 91 messages over 8 stages, a cost of 124 and 93 net:
# tuna_hier with the rule's 32 takes 0.849x scattered and auto must run it
# (counting messages alone, 60 net, auto ran scattered).
verified stages256 "gpu-h200 P=256 (a NIC per rank), power 16 B: scattered and auto verified" \
    --platform gpu-h200 --ranks 256 --sizes 16 --workloads power --algos scattered,auto \
    --iters 1 --warmup 0
auto_ran_scattered "$OUT/stages256/results.csv" 256 16 tuna_hier 0.9 "gpu-h200 P=256, a NIC per rank, power 16 B"
# Largest blocks of 513 B - 1 KiB with a NIC per rank (the built-in rule
# 6: from 384 ranks, MTM <= 2, the same line): at P = 384 on nodes of 8,
# power-law 1 KiB blocks (176 messages, 170 net against 159; MTM 1.39),
# tuna_hier with 32 takes 0.866x scattered and auto must run it (without
# the rule the policy leaves these blocks to scattered: the first rule
# stops at 512 B, rule 3 at 84 B a non-empty block).
verified k1x384 "gpu-h200 P=384 (a NIC per rank), power 1 KiB: scattered and auto verified" \
    --platform gpu-h200 --ranks 384 --sizes 1k --workloads power --algos scattered,auto \
    --iters 1 --warmup 0
auto_ran_scattered "$OUT/k1x384/results.csv" 384 1024 tuna_hier 0.92 "gpu-h200 P=384, a NIC per rank, power 1 KiB"
# tuna_hier's inter-node phase sends no empty bundle, and on balanced rows
# the line subtracts only the non-empty ones (src/topology/topo.c): at
# P = 512 on nodes of 4, power-law 64 B blocks (130 messages; the busiest
# rank 90 non-empty bundles of 127; MTM 1.56) leave 116 net against 97
# (79 with every bundle counted), tuna_hier with 32 takes 0.790x
# scattered, and auto must run it.
verified empty512 "gpu-perlmutter P=512 (a NIC per rank), power 64 B: scattered and auto verified" \
    --platform gpu-perlmutter --ranks 512 --sizes 64 --workloads power --algos scattered,auto \
    --iters 1 --warmup 0
auto_ran_scattered "$OUT/empty512/results.csv" 512 64 tuna_hier 0.88 "gpu-perlmutter P=512, a NIC per rank, power 64 B"
# A rule with fewer requests in flight than the line was drawn with (a
# user's, with the global block_count of 8) is held to the line drawn with
# 8 as well (src/topology/topo.c): at P = 128 on nodes of 4, 16 B blocks,
# 126 - 2.25 x 31 = 56 net, below 86; the line for 32 alone (95 net) let
# auto run tuna_hier there at 1.129x scattered.
SKEWSHIM_CONFIG="$top_srcdir/doc/perf/lab/nic-per-rank/user-rule-8.yaml"
export SKEWSHIM_CONFIG
verified few128 "gpu-perlmutter P=128 (a NIC per rank), uniform 16 B, a user's rule with 8 in flight: verified" \
    --platform gpu-perlmutter --ranks 128 --sizes 16 --workloads uniform --algos scattered,tuna_hier,auto \
    --iters 1 --warmup 0
unset SKEWSHIM_CONFIG
auto_kept_scattered "$OUT/few128/results.csv" 128 16 1.1 "gpu-perlmutter P=128, a user's tuna_hier rule with 8 in flight, uniform 16 B"
echo "# lab rules: $(( $(date +%s) - t0 )) s"
finish
