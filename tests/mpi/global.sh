#!/bin/sh
# SABRE and FAST over PMPI point-to-point on host buffers, emulated nodes of
# 1..4 ranks (uneven included), both SABRE regimes (the highly skewed one
# with one NIC a node and one a rank), FAST with and without
# pipelining; the plan cache is exercised by repeated seeds.  One job per
# P: the settings change between the checks of a batch, as a tool's do.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
W=uniform,hot_send,hot_recv,zipf,moe,zero
# Node shapes: every size 1-4 whole and with a short last node (5 = 4+1,
# 3+2; 7 = 4+3, 3+3+1, 2+2+2+1; 9 = 4+4+1). P = 6 and 8 add whole nodes
# of sizes seen elsewhere and two more short last nodes of a kind already
# here (4+2, 3+3+2), and P = 16 on nodes of 1 or 2 only more of the same
# ranks (a 16-rank job is two minutes of this suite on 2 cores): make
# check-full (SKEWSHIM_FULL) runs them too; scripts/soak draws node sizes
# at random.
ranks="2 3 4 5 7 9 16"
[ -n "$SKEWSHIM_FULL" ] && ranks="2 3 4 5 6 7 8 9 16"
for n in $ranks; do
    for q in 1 2 3 4; do
        [ $q -le $n ] || continue
        [ $n -eq 16 ] && [ $q -le 2 ] && [ -z "$SKEWSHIM_FULL" ] && continue
        batch_add "sabre q=$q high" --algo sabre --param topology.ranks_per_node=$q --param sabre.mtm_threshold=1 --workloads $W
        # One NIC per rank (SABRE's Perlmutter nodes): lanes are ranks.
        [ $q -ge 2 ] && batch_add "sabre q=$q high, $q NICs" --algo sabre --param topology.ranks_per_node=$q --param topology.nics_per_node=$q --param sabre.mtm_threshold=1 --workloads $W
        batch_add "sabre q=$q low" --algo sabre --param topology.ranks_per_node=$q --param sabre.mtm_threshold=1000 --workloads $W
        batch_add "fast q=$q" --algo fast --param topology.ranks_per_node=$q --workloads $W --types byte,double
        batch_add "fast q=$q no pipeline" --algo fast --param topology.ranks_per_node=$q --param fast.pipeline=false --workloads uniform,hot_recv
    done
    # The skew of the papers' traces, not only each workload's default:
    # Zipf 0.4 and 0.9, MoE top-1 and top-4 (NAME:PARAM[:TOPK]).
    q=$((n < 3 ? n : 3))
    batch_add "sabre q=$q, Zipf 0.4-0.9, MoE k=1,4" --algo sabre --param topology.ranks_per_node=$q --param sabre.mtm_threshold=1 --workloads zipf:0.4,zipf:0.9,moe:0.4:1,moe:1.2:4
    batch_add "fast q=$q, Zipf 0.4-0.9, MoE k=1,4" --algo fast --param topology.ranks_per_node=$q --workloads zipf:0.4,zipf:0.9,moe:0.4:1,moe:1.2:4
    batch_run $n
done
done_testing
