#!/bin/sh
# MPI_IN_PLACE runs the chosen schedule from a staged copy of the receive
# blocks: every host algorithm byte for byte against PMPI_Alltoallv in
# place (random counts with zeros, gaps between blocks, odd rank counts,
# uneven nodes, derived types), and the harness checks from the shim's own
# record of each call that the schedule ran, not MPI.  The memory cap
# counts the staging against the agreed largest receive total, so ranks
# whose own totals fall on either side of the cap still all fall back.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
# make check-full (SKEWSHIM_FULL) widens the rank counts and seeds.
ranks="2 3"; seeds=1; hier=4
if [ -n "$SKEWSHIM_FULL" ]; then ranks="2 3 4 5 7"; seeds=3; hier="4 6 8"; fi
wl=uniform,zero,hot_send,hot_recv,power
for n in $ranks; do
    for a in scattered pairwise bruck2 padded_bruck tuna sabre fast; do
        batch_add "in place, $a" --algo $a --in-place --workloads $wl --types byte,int,contig --seeds $seeds
    done
    batch_run $n
done
for n in $hier; do
    check $n "in place, tuna_hier (2 per node)" --algo tuna_hier --param topology.ranks_per_node=2 \
        --in-place --workloads $wl --types byte,int --seeds $seeds
done
# Uneven nodes (3 of 2, 2, 1 ranks): SABRE and FAST take them.
for a in sabre fast; do
    check 5 "in place, $a on uneven nodes" --algo $a --param topology.ranks_per_node=2 --in-place \
        --workloads $wl --types int --seeds 1
done
# Derived datatypes in place: gaps inside the type (packed around the
# schedule) and peers passing reordered layouts of one signature.
check 3 "in place, vector type (packed)" --algo tuna --in-place --types vector --workloads $wl
check 2 "in place, reordered types" --algo scattered --in-place \
    --types mix:contig12+rev12,mix:swap12+contig12 --workloads uniform,hot_send --seeds 1
check 3 "in place, split and reversed communicators" --algo bruck2 --in-place --comms split,reverse,dup
# auto: the policy's rule runs a schedule in place.
printf 'version: 1\nlog: {level: off}\nrules:\n  - {use: sabre}\n' > "$TESTDIR/auto.yaml"
SKEWSHIM_CONFIG="$TESTDIR/auto.yaml" mpirun_n 3 "$CHECK" --algo auto --expect sabre --in-place --workloads $wl
ok $? "in place, auto (a rule choosing sabre) runs it"
# The memory cap between the smallest and the largest receive total: all
# ranks fall back together (a rank deciding alone would hang or corrupt).
for a in scattered tuna; do
    check 3 "in place over the cap: every rank falls back ($a)" --algo $a --in-place --cap-between \
        --workloads hot_recv --expect fallback:memory_cap
done
check 3 "in place within the cap runs" --algo scattered --in-place --param max_temp_bytes=1MiB --workloads hot_recv
# At level calls an in-place call has a record with what ran.
printf 'version: 1\nlog: {level: calls, path: "%s/calls.jsonl"}\n' "$TESTDIR" > "$TESTDIR/calls.yaml"
SKEWSHIM_CONFIG="$TESTDIR/calls.yaml" mpirun_n 3 "$CHECK" --algo pairwise --in-place --workloads uniform --seeds 1 --types int
ok $? "in place at level calls"
n=$(grep -c '"algo": *"pairwise"' "$TESTDIR/calls.jsonl" 2>/dev/null)
[ "${n:-0}" -ge 1 ] && ! grep -q '"reason": *"in_place"' "$TESTDIR/calls.jsonl"
ok $? "the records say pairwise ran ($n), none in_place"
done_testing
