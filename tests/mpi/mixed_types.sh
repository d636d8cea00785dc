#!/bin/sh
# Ranks that pass different but matching datatypes (MPI allows any layouts
# of one type signature): every algorithm at every log level must run to
# completion with the right data.  A decision taken from one rank's own
# datatypes ("non-contiguous: fall back") while its peers run the schedule
# deadlocks; SKEWSHIM_TEST_TIMEOUT turns such a hang into a failure.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
: "${SKEWSHIM_TEST_TIMEOUT:=60}"
export SKEWSHIM_TEST_TIMEOUT
TYPES="mix:contig12+vec12+rev12,mix:vec12+swap12+contig12"
for level in off summary calls matrix; do
    for a in native scattered pairwise bruck2 padded_bruck tuna sabre fast; do
        SKEWSHIM_LOG_LEVEL=$level SKEWSHIM_LOG_PATH="$TESTDIR/log.jsonl" \
            check 3 "mixed layouts, $a, log $level" --algo $a --types "$TYPES" \
            --workloads uniform,hot_recv --seeds 1
    done
    # tuna_hier needs nodes: two emulated nodes of two ranks
    SKEWSHIM_LOG_LEVEL=$level SKEWSHIM_LOG_PATH="$TESTDIR/log.jsonl" \
        check 4 "mixed layouts, tuna_hier, log $level" --algo tuna_hier \
        --param topology.ranks_per_node=2 --types "$TYPES" --workloads uniform --seeds 1
    # the policy (built-in default) with its agreement
    SKEWSHIM_LOG_LEVEL=$level SKEWSHIM_LOG_PATH="$TESTDIR/log.jsonl" SKEWSHIM_CONFIG= \
        mpirun_n 3 "$CHECK" --types "$TYPES" --workloads uniform,hot_recv --seeds 1
    ok $? "mixed layouts, built-in policy, log $level"
done
done_testing
