#!/bin/sh
# native, scattered and pairwise through the whole pipeline at 1..8 ranks:
# every communicator kind and datatype, byte-exact against PMPI_Alltoallv.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
if [ "$SKEWSHIM_MPI" = openmpi ]; then ranks="2 3 5"; else ranks="1 2 3 4 5 8"; fi
for n in $ranks; do
    comms=world,dup,split,reverse
    types=byte,int,double,contig
    batch_add native --algo native --comms $comms --types $types
    batch_add scattered --algo scattered --comms $comms --types $types
    batch_add "scattered block_count=1" --algo scattered --param scattered.block_count=1 --comms world,split
    batch_add "scattered block_count=3" --algo scattered --param scattered.block_count=3 --comms world,reverse
    batch_add pairwise --algo pairwise --comms $comms --types $types
    batch_run $n
done
# The policy (built-in default) with its agreement collective.
for n in 2 3; do
    SKEWSHIM_CONFIG= mpirun_n $n "$CHECK" --comms world,split --types byte,double
    ok $? "built-in default policy: P=$n"
done
# A forced algorithm with the per-call log off needs no global facts: no
# agreement collective at all.  The policy's skew rules, or the log, need it.
# (A CUDA build agrees on every call it does not hand to MPI untouched:
# where buffers live is a local fact there, doc/decisions.md.)
if grep -q '^#define SKEWSHIM_HAVE_CUDA 1' "$top_builddir/config.h" 2>/dev/null; then
    check 3 "forced scattered, CUDA build: the agreement runs (buffer place)" --algo scattered --agreement 1
else
    check 3 "forced scattered, log off: no agreement" --algo scattered --agreement 0
fi
check 3 "forced tuna needs the agreed max block" --algo tuna --agreement 1
# The built-in rules start at 64 ranks (host) or need device buffers, and
# no rank has a CUDA context: nothing a call carries can change the choice.
SKEWSHIM_CONFIG= mpirun_n 3 "$CHECK" --agreement 0 --types int
ok $? "built-in policy at 3 ranks, host buffers: native with no agreement collective"
# (reuse_agreement 0: every call agrees; reusing an agreed outcome is
# tests/mpi/reuse.sh's subject)
printf 'version: 1\nlog: {level: off}\nreuse_agreement: 0\nrules:\n  - {mtm: [2.2, inf], use: scattered}\n' > "$TESTDIR/mtm.yaml"
SKEWSHIM_CONFIG="$TESTDIR/mtm.yaml" mpirun_n 3 "$CHECK" --agreement 1 --types int
ok $? "a rule on MTM that can change the choice at 3 ranks: agreement runs"
printf 'version: 1\nlog: {level: off}\nrules:\n  - {comm_size: [64, inf], mtm: [2.2, inf], use: scattered}\n' > "$TESTDIR/mtm64.yaml"
SKEWSHIM_CONFIG="$TESTDIR/mtm64.yaml" mpirun_n 3 "$CHECK" --agreement 0 --types int
ok $? "the same rule limited to 64+ ranks, at 3 ranks: no agreement"
# Which side is skewed: one hot receiver (hot_recv: send MTM 1.19-1.42,
# receive 2.67-4 at 3-5 ranks, each rank its own node) against one hot
# sender (the mirror image); equal blocks match neither rule.
printf 'version: 1\nlog: {level: off}\nreuse_agreement: 0\nrules:\n  - {send_mtm: [0, 2], recv_mtm: [2.2, inf], use: pairwise}\n  - {send_mtm: [2.2, inf], recv_mtm: [0, 2], use: scattered}\n' > "$TESTDIR/side.yaml"
for n in 3 5; do
    for w in hot_recv:pairwise hot_send:scattered equal:native; do
        SKEWSHIM_CONFIG="$TESTDIR/side.yaml" mpirun_n $n "$CHECK" --algo auto \
            --param topology.ranks_per_node=1 --workloads ${w%%:*} --S 4096 --types byte,int \
            --seeds 2 --expect ${w#*:}
        ok $? "send_mtm/recv_mtm rules, P=$n, ${w%%:*}: ran ${w#*:}"
    done
done
# The per-call log merges its figures with its records and needs no
# agreement of its own; a CUDA build still agrees on where buffers live.
cuda=0
grep -q '^#define SKEWSHIM_HAVE_CUDA 1' "$top_builddir/config.h" 2>/dev/null && cuda=1
SKEWSHIM_LOG_LEVEL=calls SKEWSHIM_LOG_PATH="$TESTDIR/l.jsonl" SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n 3 "$CHECK" --algo scattered --agreement $cuda
ok $? "forced scattered with the per-call log on: agreement only in a CUDA build ($cuda)"
done_testing
