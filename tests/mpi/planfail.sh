#!/bin/sh
# A SABRE or FAST plan that fails on one rank only (the planner's own
# allocations): every rank must hand that call to MPI together, with the
# result right, and the next call of the same matrix must plan again on
# every rank (the plan caches stay alike).  Before the plan was agreed on,
# the failing rank went to MPI alone and the job hung.  Needs the test-only
# fault switch (-DSKEWSHIM_FAULT_INJECTION, as scripts/tsan builds):
# SKEWSHIM_FAULT_PLAN=R[:N] fails the first N plans (all, without N) of
# rank R.  Not part of the ordinary suite; scripts/tsan runs it.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
if ! grep -q 'DSKEWSHIM_FAULT_INJECTION' "$top_builddir/config.log" 2>/dev/null; then
    skip "not a build with -DSKEWSHIM_FAULT_INJECTION (scripts/tsan makes one)"
    done_testing
fi
export SKEWSHIM_TEST_TIMEOUT=${SKEWSHIM_TEST_TIMEOUT:-120}
for algo in sabre fast; do
    for fault in 1 3; do
        # Every plan of rank $fault fails: every call goes to MPI, agreed.
        export SKEWSHIM_FAULT_PLAN=$fault
        check 4 "$algo, every plan of rank $fault fails: all ranks to MPI" \
            --algo $algo --param topology.ranks_per_node=2 --workloads zipf,moe,hot_recv --seeds 2 \
            --expect fallback:internal_error
    done
    # Only the first plan fails: that call goes to MPI, and its matrix
    # again is planned and run on every rank (none kept a plan the
    # failing rank lacks).
    export SKEWSHIM_FAULT_PLAN=2:1
    check 4 "$algo, the first plan of rank 2 fails, then the same matrix runs $algo" \
        --algo $algo --param topology.ranks_per_node=2 --workloads zipf --types byte --seeds 1 \
        --expect fallback:internal_error --again $algo
    unset SKEWSHIM_FAULT_PLAN
    # No fault: the switch itself changes nothing.
    check 4 "$algo, no fault" --algo $algo --param topology.ranks_per_node=2 --workloads zipf,moe --seeds 2 \
        --expect $algo --again $algo
done
done_testing
