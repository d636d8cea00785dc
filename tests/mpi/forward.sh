#!/bin/sh
# Bruck and TuNA schedules through the shim: a representative slice of the
# issue's matrix (make check-full runs forward_full.sh, the whole of it).
. "${top_srcdir:-.}/tests/mpi/lib.sh"
W=uniform,zero,hot_send,hot_recv,power,zipf
for n in 1 2 3 5; do
    check $n bruck2 --algo bruck2 --workloads $W --types byte,double
    check $n padded_bruck --algo padded_bruck --workloads $W --types int
    for r in 2 3 $n; do
        [ $r -ge 2 ] || continue
        check $n "tuna radix=$r" --algo tuna --param tuna.radix=$r --workloads $W --types byte,int
    done
done
check 4 "tuna radix=auto, split comms" --algo tuna --comms split,reverse
check 4 "tuna_hier 2x2 coalesced" --algo tuna_hier --param topology.ranks_per_node=2 --param tuna_hier.radix=2
check 4 "tuna_hier 2x2 staggered" --algo tuna_hier --param topology.ranks_per_node=2 --param tuna_hier.variant=staggered --param tuna_hier.block_count=1
check 3 "tuna_hier on uneven nodes falls back" --algo tuna_hier --param topology.ranks_per_node=2 --expect fallback:uneven_nodes
check 5 "memory cap: tuna over max_temp_bytes falls back" --algo tuna --param tuna.radix=2 --param max_temp_bytes=0 --workloads uniform --expect fallback:memory_cap
done_testing
