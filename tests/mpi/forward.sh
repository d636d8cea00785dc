#!/bin/sh
# Bruck and TuNA schedules through the shim: a representative slice of the
# issue's matrix (make check-full runs forward_full.sh, the whole of it).
. "${top_srcdir:-.}/tests/mpi/lib.sh"
W=uniform,zero,hot_send,hot_recv,power,zipf
for n in 1 2 3 5; do
    batch_add bruck2 --algo bruck2 --workloads $W --types byte,double
    batch_add padded_bruck --algo padded_bruck --workloads $W --types int
    for r in 2 3 $n; do
        [ $r -ge 2 ] || continue
        batch_add "tuna radix=$r" --algo tuna --param tuna.radix=$r --workloads $W --types byte,int
    done
    batch_run $n
done
check 4 "tuna radix=auto, split comms" --algo tuna --comms split,reverse
check 4 "tuna_hier 2x2 coalesced" --algo tuna_hier --param topology.ranks_per_node=2 --param tuna_hier.radix=2
check 4 "tuna_hier 2x2 staggered" --algo tuna_hier --param topology.ranks_per_node=2 --param tuna_hier.variant=staggered --param tuna_hier.block_count=1
# Nodes of unequal size: a rank of a smaller node stands for the local ids
# its node lacks (src/plan/tuna_hier.c).
check 3 "tuna_hier on uneven nodes (2 + 1) coalesced" --algo tuna_hier --param topology.ranks_per_node=2 \
    --param tuna_hier.radix=2 --workloads $W --types byte,int
check 5 "tuna_hier on uneven nodes (2 + 2 + 1) staggered, one message a batch" --algo tuna_hier \
    --param topology.ranks_per_node=2 --param tuna_hier.variant=staggered --param tuna_hier.block_count=1 \
    --workloads $W --types byte,int
check 5 "tuna_hier on uneven nodes (3 + 2) coalesced, two steps a batch" --algo tuna_hier \
    --param topology.ranks_per_node=3 --param tuna_hier.block_count=2 --workloads $W --types double
# Where the busiest rank of the inter-node phase would send more than half
# the messages of the linear exchange (5 + 1: the lone rank sends 5, the
# linear exchange 5) tuna_hier does not pay off: the policy passes over its
# rules (the next rule runs, the summary counts the communicator), a forced
# tuna_hier still runs it.
check 6 "forced tuna_hier on nodes 5 + 1" --algo tuna_hier --param topology.ranks_per_node=5 \
    --workloads $W --types byte,int
printf 'version: 1\nlog: {level: summary, stderr: true, path: "%s/po-%%j.jsonl"}\nrules:\n  - {max_block_bytes: [0, inf], use: tuna_hier}\n  - {use: pairwise}\n' \
    "$TESTDIR" > "$TESTDIR/passover.yaml"
rm -f "$TESTDIR"/po-*.jsonl
SKEWSHIM_CONFIG="$TESTDIR/passover.yaml" mpirun_n 6 "$CHECK" --algo auto --expect pairwise \
    --param topology.ranks_per_node=5 --workloads uniform,zero
rc=$?
ok $rc "auto on nodes 5 + 1: the tuna_hier rule passed over, pairwise ran: $(grep '^alltoallv_check:' "$TESTDIR/out" | tail -1)"
grep -q "rules for tuna_hier passed over on [1-9][0-9]* communicator" "$TESTDIR/out" &&
    grep -q '"passed_over": {"tuna_hier": [1-9]' "$TESTDIR"/po-*.jsonl
ok $? "nodes 5 + 1: the summary counts the communicators where tuna_hier's rule was passed over"
# One rank per node: phase 2 is the linear exchange, the rule is passed over.
rm -f "$TESTDIR"/po-*.jsonl
SKEWSHIM_CONFIG="$TESTDIR/passover.yaml" mpirun_n 3 "$CHECK" --algo auto --expect pairwise \
    --param topology.ranks_per_node=1 --workloads uniform,zero
rc=$?
ok $rc "auto on one rank per node: the tuna_hier rule passed over, pairwise ran: $(grep '^alltoallv_check:' "$TESTDIR/out" | tail -1)"
# nic_steps WHAT E1 E2 E3: batches of one job on nodes of 2 with 1, 2, then
# 1 NIC a node again (set at run time on the same communicator); auto must
# run E1, E2, E3.
nic_steps() {
    batch_add "$1, 1 NIC a node of 2: $2" --algo auto --expect "$2" \
        --param topology.ranks_per_node=2 --workloads uniform,zero
    batch_add "$1, then 2 NICs a node (a NIC per rank): $3" --algo auto --expect "$3" \
        --param topology.ranks_per_node=2 --param topology.nics_per_node=2 --workloads uniform,zero
    batch_add "$1, then 1 NIC a node again: $4" --algo auto --expect "$4" \
        --param topology.ranks_per_node=2 --param topology.nics_per_node=1 --workloads uniform,zero
}
# A NIC per rank (topology.nics_per_node as large as the nodes): no NIC
# for a node's messages to queue at, the rule is passed over; a forced
# tuna_hier still runs.  Set at run time, the NICs count from the next
# call: one job, the same communicator, 1, 2, then 1 NIC a node.
rm -f "$TESTDIR"/po-*.jsonl
nic_steps "the tuna_hier rule" tuna_hier pairwise tuna_hier
batch_add "forced tuna_hier with a NIC per rank" --algo tuna_hier \
    --param topology.ranks_per_node=2 --param topology.nics_per_node=2 --workloads uniform,hot_recv
batch_run 4 "$TESTDIR/passover.yaml"
grep -q '"passed_over": {"tuna_hier": [1-9]' "$TESTDIR"/po-*.jsonl
ok $? "a NIC per rank: the summary counts the communicator where tuna_hier's rule was passed over"
# The nic_per_rank matcher: a fact of the communicator, so rules on it alone
# settle the choice without an agreement, and again when the NICs change at
# run time: one job, the same communicator, 1, 2, then 1 NIC a node of 2.
printf 'version: 1\nrules:\n  - {nic_per_rank: true, use: scattered}\n  - {use: pairwise}\n' \
    > "$TESTDIR/nicrule.yaml"
nic_steps "rules on nic_per_rank" pairwise scattered pairwise
batch_run 4 "$TESTDIR/nicrule.yaml"
# tuna_hier.pay_check false: the rule's author measured it, so the checks
# of whether tuna_hier pays off (nodes 5 + 1; a NIC per rank) do not pass
# it over and nothing is counted; set at run time the key is refused (only
# the rules read it, when they are matched).
printf 'version: 1\nlog: {level: summary, stderr: true, path: "%s/po-%%j.jsonl"}\nrules:\n  - {max_block_bytes: [0, inf], use: tuna_hier, tuna_hier: {pay_check: false}}\n  - {use: pairwise}\n' \
    "$TESTDIR" > "$TESTDIR/paycheck.yaml"
paycheck_runs() {   # paycheck_runs N WHAT PARAM...
    n=$1 what=$2; shift 2
    rm -f "$TESTDIR"/po-*.jsonl
    SKEWSHIM_CONFIG="$TESTDIR/paycheck.yaml" mpirun_n "$n" "$CHECK" --algo auto --expect tuna_hier \
        "$@" --workloads uniform,zero
    rc=$?
    ok $rc "pay_check false, $what: the rule runs tuna_hier: $(grep '^alltoallv_check:' "$TESTDIR/out" | tail -1)"
    ! grep -q "passed over" "$TESTDIR/out" && grep -q '"passed_over": {}' "$TESTDIR"/po-*.jsonl
    ok $? "pay_check false, $what: nothing passed over in the summary"
}
paycheck_runs 6 "nodes 5 + 1" --param topology.ranks_per_node=5
paycheck_runs 4 "nodes of 2, a NIC per rank" --param topology.ranks_per_node=2 \
    --param topology.nics_per_node=2
# The refusal aborts the job, and a launcher tearing a job down may drop
# its last lines (seen once on a loaded machine): the reason is looked for
# in up to three runs, each of which must fail.
for try in 1 2 3; do
    mpirun_n 2 "$CHECK" --algo auto --param tuna_hier.pay_check=false --workloads uniform >/dev/null 2>&1
    rc=$?
    [ $rc -ne 0 ] || break
    grep -q "bad --param" "$TESTDIR/out" && break
done
[ $rc -ne 0 ] && grep -q "bad --param" "$TESTDIR/out"
ok $? "skewshim_set_param refuses tuna_hier.pay_check (run $try)"
# Nodes of 4 + 2 (the ranks of the node of 2 send 2 messages, the linear
# exchange 5) and 2 + 2: the same rule runs tuna_hier.
for nq in 6:4 4:2; do
    n=${nq%:*} q=${nq#*:}
    rm -f "$TESTDIR"/po-*.jsonl
    SKEWSHIM_CONFIG="$TESTDIR/passover.yaml" mpirun_n $n "$CHECK" --algo auto --expect tuna_hier \
        --param topology.ranks_per_node=$q --workloads uniform,zero
    rc=$?
    ok $rc "auto, nodes of $q at P = $n: the tuna_hier rule runs tuna_hier: $(grep '^alltoallv_check:' "$TESTDIR/out" | tail -1)"
    ! grep -q "passed over" "$TESTDIR/out" && grep -q '"passed_over": {}' "$TESTDIR"/po-*.jsonl
    ok $? "P = $n, nodes of $q: nothing passed over in the summary"
done
# tuna_hier sends no empty bundle between nodes: on 3 nodes of 2 an
# exchange with every block empty costs no inter-node message (it cost
# every rank N - 1 = 2 before, 12 in all; only phase 1's size messages
# inside a node remain), in both variants.
for v in coalesced staggered; do
    printf 'version: 1\nlog: {level: calls, path: "%s/empty-%s.jsonl"}\n' "$TESTDIR" "$v" > "$TESTDIR/empty.yaml"
    rm -f "$TESTDIR/empty-$v.jsonl"
    SKEWSHIM_CONFIG="$TESTDIR/empty.yaml" mpirun_n 6 "$CHECK" --algo tuna_hier --workloads zero --types byte \
        --param topology.ranks_per_node=2 --param tuna_hier.variant=$v
    rc=$?
    msgs=$(grep -o '"messages": [0-9]*' "$TESTDIR/empty-$v.jsonl" | awk '{ if ($2 > m) m = $2 } END { print m + 0 }')
    n=$(grep -c '"algo": "tuna_hier"' "$TESTDIR/empty-$v.jsonl")
    [ $rc -eq 0 ] && [ "$n" -ge 1 ] && [ "$msgs" -lt 12 ]
    ok $? "tuna_hier ($v) on empty blocks, 3 nodes of 2: no phase-2 message ($n calls, at most $msgs messages)"
done
check 5 "memory cap: tuna over max_temp_bytes falls back" --algo tuna --param tuna.radix=2 --param max_temp_bytes=0 --workloads uniform --expect fallback:memory_cap
done_testing
