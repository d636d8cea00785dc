#!/bin/sh
# SABRE and FAST over PMPI point-to-point on host buffers, emulated nodes of
# 1..4 ranks (uneven included), both SABRE regimes, FAST with and without
# pipelining, a pair's pieces grouped into one message (the default), one
# message each, and mixed; the plan cache is exercised by repeated seeds.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
W=uniform,hot_send,hot_recv,zipf,moe,zero
# make check: every P of the issue with lighter workload lists at the odd
# sizes; make check-full: every workload everywhere.
ranks="2 3 4 5 6 7 8 9 16"
[ "$SKEWSHIM_FULL" = 1 ] || case "$SKEWSHIM_MPI" in openmpi) ranks="2 3 5 8 16" ;; esac
for n in $ranks; do
    for q in 1 2 3 4; do
        [ $q -le $n ] || continue
        check $n "sabre q=$q high" --algo sabre --param topology.ranks_per_node=$q --param sabre.mtm_threshold=1 --workloads $W
        check $n "sabre q=$q low" --algo sabre --param topology.ranks_per_node=$q --param sabre.mtm_threshold=1000 --workloads $W
        check $n "fast q=$q" --algo fast --param topology.ranks_per_node=$q --workloads $W --types byte,double
        check $n "fast q=$q no pipeline" --algo fast --param topology.ranks_per_node=$q --param fast.pipeline=false --workloads uniform,hot_recv
        # The pieces of a pair in a stage one message each (coalesce_below
        # 0), and grouped only below 100 B, so that a pair's messages mix
        # groups and single pieces: one q per P keeps it cheap.
        [ $q -eq 2 ] || [ $n -eq 2 ] || continue
        for b in 0 100; do
            check $n "sabre q=$q high, coalesce_below $b" --algo sabre --param topology.ranks_per_node=$q --param sabre.mtm_threshold=1 --param sabre.coalesce_below=$b --workloads zipf,moe,hot_send
            check $n "fast q=$q, coalesce_below $b" --algo fast --param topology.ranks_per_node=$q --param fast.coalesce_below=$b --workloads zipf,moe,hot_recv
        done
    done
done
done_testing
