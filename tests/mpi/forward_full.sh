#!/bin/sh
# The widest matrix (make check-full): every forwarding schedule x P in
# {1..9, 12, 16} x radix in {2, 3, 4, ~sqrt(P), P-1, P} x every workload x
# datatypes; tuna_hier on 2, 3 and 4 ranks per node, the last node smaller
# where q does not divide P.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
W=equal,uniform,normal,power,zipf,zero,hot_send,hot_recv,moe
for n in 1 2 3 4 5 6 7 8 9 12 16; do
    check $n bruck2 --algo bruck2 --workloads $W --types byte,int,double,contig
    check $n padded_bruck --algo padded_bruck --workloads $W --types byte,double
    sq=$(awk "BEGIN{r=int(sqrt($n)+0.5); print (r<2?2:r)}")
    for r in 2 3 4 $sq $((n - 1)) $n; do
        [ $r -ge 2 ] && [ $r -le $n ] || continue
        check $n "tuna radix=$r" --algo tuna --param tuna.radix=$r --workloads $W --types byte,int,double
    done
    for q in 2 3 4; do
        [ $n -gt $q ] || continue
        for v in coalesced staggered; do
            check $n "tuna_hier q=$q $v" --algo tuna_hier --param topology.ranks_per_node=$q \
                --param tuna_hier.variant=$v --workloads $W --types byte,double
        done
    done
done
done_testing
