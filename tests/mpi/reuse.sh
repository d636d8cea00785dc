#!/bin/sh
# Reusing agreed outcomes under auto (src/policy/reuse.h): every call byte
# for byte against PMPI_Alltoallv while the ranks skip the agreement on the
# same calls, with workloads and types that move the choice between native
# and a schedule from case to case (a rank that reused alone, or reused a
# schedule that reads agreed figures, would hang or corrupt a block).  The
# harness counts the calls that ran the agreement ("N agreed", rank-sum).
. "${top_srcdir:-.}/tests/mpi/lib.sh"
policy() {   # policy NAME RULE [TOP-LEVEL LINE]
    { printf 'version: 1\nlog: {level: off}\n'; [ -z "$3" ] || printf '%s\n' "$3"
      printf 'rules:\n  - %s\n' "$2"; } > "$TESTDIR/$1.yaml"
}
# run N NAME DESCRIPTION CHECK-ARGS...: sets $cases and $agreed
run() {
    n=$1 name=$2 desc=$3; shift 3
    SKEWSHIM_CONFIG="$TESTDIR/$name.yaml" mpirun_n "$n" "$CHECK" "$@"
    rc=$?
    line=$(grep '^alltoallv_check:' "$TESTDIR/out" | tail -1)
    cases=$(echo "$line" | sed -n 's/.* \([0-9]*\) cases.*/\1/p')
    agreed=$(echo "$line" | sed -n 's/.* \([0-9]*\) agreed.*/\1/p')
    ok $rc "$desc: P=$n $* ${line#alltoallv_check: }"
}
cuda=0
grep -q '^#define SKEWSHIM_HAVE_CUDA 1' "$top_builddir/config.h" 2>/dev/null && cuda=1
W=uniform,zero,hot_send,hot_recv,zipf,moe
policy never '{max_block_bytes: [1G, inf], use: scattered}'
policy every '{max_block_bytes: [1G, inf], use: scattered}' 'reuse_agreement: 0'
policy small '{max_block_bytes: [0, 64], use: tuna_hier}'
policy scat '{mtm: [0, inf], use: scattered}'
printf 'version: 1\nlog: {level: summary, path: %s}\nrules:\n  - %s\n' "$TESTDIR/alt.jsonl" \
    '{max_block_bytes: [1, inf], use: scattered}' > "$TESTDIR/alt.yaml"
# Three in turn: all-zero blocks (native), uniform ones (scattered) and
# equal ones of 24 B, the only ones whose average reaches 24 (pairwise).
printf 'version: 1\nlog: {level: summary, path: %s}\nrules:\n  - %s\n  - %s\n' "$TESTDIR/three.jsonl" \
    '{avg_block_bytes: [24, inf], use: pairwise}' '{max_block_bytes: [1, inf], use: scattered}' \
    > "$TESTDIR/three.yaml"
THREE=$(i=0; while [ $i -lt 16 ]; do printf 'zero,uniform,equal,'; i=$((i + 1)); done)
THREE=${THREE%,}
# Two exchanges in turn: all-zero blocks (native) and uniform ones
# (scattered), sixteen times each.
ALT=$(i=0; while [ $i -lt 16 ]; do printf 'zero,uniform,'; i=$((i + 1)); done)
ALT=${ALT%,}
for n in 2 3 4 5; do
    # Every call ends native: after three agreed calls the runs begin.
    run $n never "settled native" --workloads $W --types byte,double --seeds 6 --comms world,split
    [ "$agreed" -gt 0 ] && [ $((agreed * 3)) -lt "$cases" ]
    ok $? "P=$n settled native: $agreed of $cases calls agreed (fewer than a third)"
    run $n every "reuse_agreement 0" --workloads $W --types byte,double --seeds 6 --comms world,split
    [ "$agreed" = "$cases" ]
    ok $? "P=$n reuse_agreement 0: every call agreed ($agreed of $cases)"
    # 1-byte elements keep blocks <= 64 B (tuna_hier), doubles do not
    # (native): the choice flips from case to case, and outcomes that read
    # agreed figures are never reused.
    run $n small "tuna_hier / native mix" --workloads $W --types byte,double --S 40 --seeds 4 \
        --comms world,reverse
    run $n small "tuna_hier / native mix, noncontiguous" --workloads uniform,zero --types vec12,byte \
        --S 5 --seeds 4
    # scattered is planned from a rank's own sizes: reused in a host build;
    # a CUDA build agrees on where the buffers live on every such call.
    run $n scat "scattered reused" --workloads $W --types byte,int --seeds 6 --comms world,split
    if [ $cuda = 1 ]; then [ "$agreed" = "$cases" ]; else [ $((agreed * 3)) -lt "$cases" ]; fi
    ok $? "P=$n scattered: $agreed of $cases calls agreed (cuda build: $cuda)"
    # A job that alternates two outcomes reuses both once each has come
    # back (a CUDA build: only the native turns; its 16 scattered calls and
    # 5 native ones of 32 agree, against 32 of 32 before).
    rm -f "$TESTDIR/alt.jsonl"
    run $n alt "alternating native / scattered" --workloads $ALT --types byte --seeds 1 --comms world
    ran=$(grep -o '"calls": {[^}]*}' "$TESTDIR/alt.jsonl")
    case "$ran" in *'"native": 16'*'"scattered": 16'*) st=0 ;; *) st=1 ;; esac
    ok $st "P=$n alternating: both outcomes ran, 16 calls each ($ran)"
    if [ $cuda = 1 ]; then [ $((agreed * 10)) -lt $((cases * 7)) ]; else [ $((agreed * 3)) -lt "$cases" ]; fi
    ok $? "P=$n alternating: $agreed of $cases calls agreed (cuda build: $cuda)"
    # Three in turn: each turn reused once all three have come back (a
    # CUDA build: the native turns only, 36 of 48 calls agree); before,
    # every call of such a job agreed.
    rm -f "$TESTDIR/three.jsonl"
    run $n three "three exchanges in turn" --workloads $THREE --types byte --S 24 --seeds 1 --comms world
    ran=$(grep -o '"calls": {[^}]*}' "$TESTDIR/three.jsonl")
    case "$ran" in *'"native": 16'*) st=0 ;; *) st=1 ;; esac
    case "$ran" in *'"scattered": 16'*) ;; *) st=1 ;; esac
    case "$ran" in *'"pairwise": 16'*) ;; *) st=1 ;; esac
    ok $st "P=$n three in turn: each outcome ran 16 times ($ran)"
    if [ $cuda = 1 ]; then [ $((agreed * 10)) -lt $((cases * 8)) ]; else [ $((agreed * 3)) -lt "$cases" ]; fi
    ok $? "P=$n three in turn: $agreed of $cases calls agreed (cuda build: $cuda)"
    run $n alt "alternating, in place (only native reused)" --workloads $ALT --types byte,double \
        --seeds 1 --comms world,split --in-place
    [ $((agreed * 10)) -lt $((cases * 7)) ]
    ok $? "P=$n alternating in place: $agreed of $cases calls agreed (the scattered turns)"
done
done_testing
