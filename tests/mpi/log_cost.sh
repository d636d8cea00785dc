#!/bin/sh
# What each log level costs in collectives, counted by tests/mpi/log_cost.c
# around 20 exchanges: level calls merges its records in the ring, with no
# collective of its own per call; level matrix gathers each sampled call's
# matrix (one PMPI_Gather).  A policy whose choice needs skew figures runs
# the agreement allreduce until three agreed calls in a row end alike, then
# reuses that outcome for runs of 1, 2, 4, ... calls (src/policy/reuse.h):
# the job's calls 0 1 2 4 7 12 agree, 5 allreduces in the 20 counted after
# the first; with reuse_agreement: 0 every call agrees, which shows the
# counting works.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
PROG="$top_builddir/tests/mpi/log_cost"
policy() {   # policy NAME LEVEL RULE (and $EXTRA, a top-level line)
    { printf 'version: 1\n'; [ -z "$EXTRA" ] || printf '%s\n' "$EXTRA"
      printf 'log: {level: %s, path: "%s/%s.jsonl"}\nrules:\n  - %s\n' \
        "$2" "$TESTDIR" "$1" "$3"; } > "$TESTDIR/$1.yaml"
}
# count NAME: the figure of a collective in the last run
count() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" "$TESTDIR/out"; }
cost() {     # cost N NAME LEVEL RULE EXPECTED-ALLREDUCE EXPECTED-GATHER [ENV]
    n=$1 name=$2 level=$3 rule=$4 want_ar=$5 want_g=$6
    policy "$name" "$level" "$rule"
    rm -f "$TESTDIR/$name.jsonl"
    (if [ -n "$7" ]; then export "$7"; fi
     SKEWSHIM_CONFIG="$TESTDIR/$name.yaml" mpirun_n "$n" "$PROG" --calls 20)
    rc=$?
    ok $rc "P=$n $name: 20 exchanges right"
    line=$(grep '^log_cost:' "$TESTDIR/out")
    ar=$(count allreduce) g=$(count gather)
    [ $rc -eq 0 ] && [ "$ar" = "$want_ar" ] && [ "$g" = "$want_g" ] &&
        [ "$(count iallreduce)" = 0 ] && [ "$(count bcast)" = 0 ] && [ "$(count barrier)" = 0 ]
    ok $? "P=$n $name: $want_ar allreduce, $want_g gather (${line#log_cost: })"
}
# A CUDA build agrees on where the buffers live on every call it does not
# hand to MPI untouched (doc/decisions.md): at every level alike.
base=0
grep -q '^#define SKEWSHIM_HAVE_CUDA 1' "$top_builddir/config.h" 2>/dev/null && base=20
for n in 2 4; do
    cost $n calls-native calls '{use: native}' 0 0
    cost $n calls-native-forced calls '{use: scattered}' 0 0 SKEWSHIM_ALGORITHM=native
    cost $n calls-fixed calls '{use: scattered}' $base 0
    # TuNA reads the agreed largest block: forced, it agrees in every build.
    cost $n calls-forced calls '{use: scattered}' 20 0 SKEWSHIM_ALGORITHM=tuna
    cost $n summary-fixed summary '{use: scattered}' $base 0
    cost $n matrix-fixed matrix '{use: scattered}' $base 20
    cost $n calls-skew calls '{mtm: [1.5, inf], use: scattered}' 5 0
    EXTRA='reuse_agreement: 0' cost $n calls-skew-every calls '{mtm: [1.5, inf], use: scattered}' 20 0
    # scattered, planned from each rank's own sizes, is reused in a host
    # build; a CUDA build agrees on where buffers live on every such call.
    cost $n calls-skew-scattered calls '{mtm: [0, inf], use: scattered}' $((base ? 20 : 5)) 0
    # A rule for jobs across nodes: on one node it cannot match, so the
    # choice is native without a word; across nodes its skew is agreed.
    EXTRA="topology: {ranks_per_node: $n}" cost $n calls-nodes-one calls \
        '{nodes: [2, inf], mtm: [1.5, inf], use: scattered}' 0 0
    EXTRA='topology: {ranks_per_node: 1}' cost $n calls-nodes-many calls \
        '{nodes: [2, inf], mtm: [1.5, inf], use: scattered}' 5 0
done
# The nodes change under a running job (one node, then one per rank after
# the 10th call): the choice fixed on one node is worked out again, and
# the last 10 calls agree as a fresh communicator's do (calls 0 1 2 4 7).
# Level summary, so that the fixed-native short path is the one tested.
EXTRA='topology: {ranks_per_node: 4}' policy nodes-change summary '{nodes: [2, inf], mtm: [1.5, inf], use: scattered}'
SKEWSHIM_CONFIG="$TESTDIR/nodes-change.yaml" mpirun_n 4 "$PROG" --calls 20 --rpn-after 10 1
rc=$?
ok $rc "nodes change: 20 exchanges right"
line=$(grep '^log_cost:' "$TESTDIR/out")
[ $rc -eq 0 ] && [ "$(count allreduce)" = 5 ]
ok $? "nodes change: 5 allreduces, all after the change (${line#log_cost: })"
# The records of those runs are merged at finalize: 20 + 1 per run.
for f in calls-native calls-fixed calls-forced calls-skew calls-skew-every; do
    k=$(grep -c '"call":' "$TESTDIR/$f.jsonl")
    [ "$k" = 21 ]; ok $? "$f: 21 records ($k)"
done
done_testing
