#!/bin/sh
# SABRE and FAST over PMPI point-to-point on host buffers, emulated nodes of
# 1..4 ranks (uneven included), both SABRE regimes (the highly skewed one
# with one NIC a node and one a rank), FAST with and without
# pipelining; the plan cache is exercised by repeated seeds.  One job per
# P: the settings change between the checks of a batch, as a tool's do.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
W=uniform,hot_send,hot_recv,zipf,moe,zero
ranks="2 3 4 5 6 7 8 9 16"
for n in $ranks; do
    for q in 1 2 3 4; do
        [ $q -le $n ] || continue
        batch_add "sabre q=$q high" --algo sabre --param topology.ranks_per_node=$q --param sabre.mtm_threshold=1 --workloads $W
        # One NIC per rank (SABRE's Perlmutter nodes): lanes are ranks.
        [ $q -ge 2 ] && batch_add "sabre q=$q high, $q NICs" --algo sabre --param topology.ranks_per_node=$q --param topology.nics_per_node=$q --param sabre.mtm_threshold=1 --workloads $W
        batch_add "sabre q=$q low" --algo sabre --param topology.ranks_per_node=$q --param sabre.mtm_threshold=1000 --workloads $W
        batch_add "fast q=$q" --algo fast --param topology.ranks_per_node=$q --workloads $W --types byte,double
        batch_add "fast q=$q no pipeline" --algo fast --param topology.ranks_per_node=$q --param fast.pipeline=false --workloads uniform,hot_recv
    done
    batch_run $n
done
done_testing
