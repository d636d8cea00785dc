#!/bin/sh
# MPI_THREAD_MULTIPLE: concurrent calls on different communicators.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
for algo in scattered native tuna; do
    SKEWSHIM_ALGORITHM=$algo SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n 2 "$top_builddir/tests/mpi/threads"
    rc=$?
    if [ $rc -eq 77 ]; then skip "MPI_THREAD_MULTIPLE not provided"; else ok $rc "threads, $algo: $(grep '^threads' "$TESTDIR/out")"; fi
done
done_testing
