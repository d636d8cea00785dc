#!/bin/sh
# Datatypes: one ordered run of bytes runs in place; anything else (gaps,
# reordered elements) is packed around the schedule, never delivered in the
# wrong order.  Reordered types pass the size/extent test (rev12: size ==
# true extent == extent), so only decoding the type tells them apart.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
mpirun_n 1 "$top_builddir/tests/mpi/dtype_layout"
ok $? "datatype decoder: $(grep '^dtype_layout:' "$TESTDIR/out" | tail -1)"
for n in 2 3; do
    check $n "vector type is packed and runs (forced scattered)" --algo scattered --types vector
    check $n "vector type under the policy runs its default" --types vector --algo auto --expect native
    check $n "contiguous derived type runs tuna" --algo tuna --types contig,double
done
# Peers with different layouts of one signature: a reversed or swapped type
# against a plain one.  Wrong data before types were decoded.
for a in scattered pairwise bruck2 tuna sabre fast; do
    check 2 "reordered types delivered in order ($a)" --algo $a \
        --types mix:contig12+rev12,mix:swap12+contig12,rev12 --workloads uniform,hot_send --seeds 1
done
check 3 "reordered types on split and reversed communicators" --algo scattered \
    --types mix:rev12+contig12+swap12 --comms split,reverse --workloads uniform --seeds 1
# The harness must fail when the expected algorithm did not run.
SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n 5 "$CHECK" --algo tuna --param max_temp_bytes=0 --param tuna.radix=2 --workloads uniform
[ $? -ne 0 ]; ok $? "harness fails when the expected algorithm fell back"
done_testing
