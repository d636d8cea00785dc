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
# The shim sets up at a Fortran MPI_INIT too (Open MPI's calls PMPI_Init
# directly), where it checks that all ranks' settings agree: with
# SKEWSHIM_ALGORITHM on one rank only, every rank runs in pass-through
# instead of hanging.
timeout "${SKEWSHIM_TEST_TIMEOUT:-60}" $MPIEXEC $MPIEXEC_FLAGS \
    -n 1 env LD_PRELOAD="$(preload)" SKEWSHIM_CONFIG="$TESTDIR/calls.yaml" SKEWSHIM_ALGORITHM=scattered "$TESTDIR/fortran_check" : \
    -n 2 env LD_PRELOAD="$(preload)" SKEWSHIM_CONFIG="$TESTDIR/calls.yaml" "$TESTDIR/fortran_check" > "$TESTDIR/out" 2>&1
rc=$?
[ $rc -ne 0 ] && sed 's/^/# /' "$TESTDIR/out" | tail -5
ok $rc "Fortran job with settings that differ between ranks completes ($SKEWSHIM_MPI)"
grep -q "settings differ between ranks" "$TESTDIR/out"
ok $? "the settings check ran at the Fortran MPI_INIT ($SKEWSHIM_MPI)"
done_testing
