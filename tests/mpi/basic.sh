#!/bin/sh
# native, scattered and pairwise through the whole pipeline at 1..8 ranks:
# every communicator kind and datatype, byte-exact against PMPI_Alltoallv.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
if [ "$SKEWSHIM_MPI" = openmpi ]; then ranks="2 3 5"; else ranks="1 2 3 4 5 8"; fi
for n in $ranks; do
    comms=world,dup,split,reverse
    types=byte,int,double,contig
    check $n native --algo native --comms $comms --types $types
    check $n scattered --algo scattered --comms $comms --types $types
    check $n "scattered block_count=1" --algo scattered --param scattered.block_count=1 --comms world,split
    check $n "scattered block_count=3" --algo scattered --param scattered.block_count=3 --comms world,reverse
    check $n pairwise --algo pairwise --comms $comms --types $types
done
# The policy (built-in default) with its agreement collective.
for n in 2 3; do
    SKEWSHIM_CONFIG= mpirun_n $n "$CHECK" --comms world,split --types byte,double
    ok $? "built-in default policy: P=$n"
done
done_testing
