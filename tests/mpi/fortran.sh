#!/bin/sh
# Fortran callers (use mpi and mpif.h) are intercepted: under MPICH through
# its C MPI_Alltoallv, under Open MPI through the Fortran entry points the
# shim defines.  The log must show all four calls, and the job summary
# written at MPI_Finalize.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
if [ -z "$MPIFORT" ] || ! command -v "$MPIFORT" >/dev/null 2>&1; then
    skip "no MPI Fortran compiler"
    done_testing
fi
"$MPIFORT" -o "$TESTDIR/fortran_check" "$top_srcdir/tests/mpi/fortran.f90" > "$TESTDIR/fc.out" 2>&1
ok $? "Fortran test program builds with $MPIFORT"
printf 'version: 1\nlog: {level: calls, path: "%s/log-%%r.jsonl"}\n' "$TESTDIR" > "$TESTDIR/calls.yaml"
for algo in scattered tuna; do
    rm -f "$TESTDIR"/log-*
    SKEWSHIM_ALGORITHM=$algo SKEWSHIM_CONFIG="$TESTDIR/calls.yaml" mpirun_n 3 env LD_PRELOAD="$(preload)" "$TESTDIR/fortran_check"
    ok $? "Fortran program correct under the shim ($algo, $SKEWSHIM_MPI)"
    n=$(grep -c "\"algo\": *\"$algo\"" "$TESTDIR/log-0.jsonl" 2>/dev/null)
    [ "$n" = 4 ]; ok $? "all 4 Fortran calls (use mpi, mpif.h) intercepted and run by $algo (got $n)"
    # The shim finalizes through MPI_Finalize from Fortran too: the job
    # summary, written then, counts the 4 calls (once per communicator).
    grep "\"summary\"" "$TESTDIR/log-0.jsonl" 2>/dev/null | grep -q "\"calls\": {\"$algo\": *4}"
    ok $? "job summary written at a Fortran MPI_Finalize ($algo, $SKEWSHIM_MPI)"
done
done_testing
