#!/bin/sh
# The pay-back guard's price of planning (doc/policy.md, "Pay-back guard"):
# a rule picks fast from agreed facts on a model where balancing pays back
# the matrix exchange (1 MB/s between emulated nodes of one rank, no
# latency or overhead).  A matrix the communicator has not seen lately
# needs a plan; when planning it would cost more than the schedule gains,
# the call runs native (not_paid_back), and the same call again, now seen,
# runs fast.  With planning free both run fast.  Every call byte for byte
# against PMPI_Alltoallv; both ways of reaching the plan: the matrix
# exchange as the agreement (one rule) and the allreduce first (a second
# rule that needs no matrix).  Each communicator keeps its own record: the
# duplicate meets every matrix anew.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
policy() {   # policy NAME PLAN_ENTRY EXTRA_RULE
    { printf 'version: 1\nlog: {level: off}\nreuse_agreement: 0\n'
      printf 'model: {intra_bw: 1e12, inter_bw: 1e6, latency: 0, overhead: 0, plan_entry: %s}\n' "$2"
      printf 'rules:\n  - {mtm: [0, inf], use: fast}\n'
      [ -z "$3" ] || printf '  - %s\n' "$3"; } > "$TESTDIR/$1.yaml"
}
policy dear 1
policy free 0
policy dear2 1 '{max_block_bytes: [1G, inf], use: scattered}'
policy free2 0 '{max_block_bytes: [1G, inf], use: scattered}'
run() {   # run N NAME DESCRIPTION CHECK-ARGS...
    n=$1 name=$2 desc=$3; shift 3
    SKEWSHIM_CONFIG="$TESTDIR/$name.yaml" mpirun_n "$n" "$CHECK" --algo auto \
        --param topology.ranks_per_node=1 --workloads hot_send,hot_recv --S 4096 \
        --types byte,double --seeds 3 --comms world,dup "$@"
    rc=$?
    summary=$(grep '^alltoallv_check:' "$TESTDIR/out" | tail -1)
    ok $rc "$desc: P=$n ${summary#alltoallv_check: }"
}
ranks="3 4 5"
case "$SKEWSHIM_MPI" in openmpi) ranks="3 4" ;; esac
for n in $ranks; do
    run $n dear "planning dearer than the gain, matrix first" \
        --expect fallback:not_paid_back --again fast
    run $n dear2 "planning dearer than the gain, allreduce first" \
        --expect fallback:not_paid_back --again fast
    run $n free "planning free, matrix first" --expect fast --again fast
    run $n free2 "planning free, allreduce first" --expect fast --again fast
done
done_testing
