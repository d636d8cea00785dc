#!/bin/sh
# Thousands of communicators created, used and freed: no shim state, private
# communicator or heap left behind.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n 2 "$top_builddir/tests/mpi/comm_churn" 3000
ok $? "3000 communicators at P=2: $(grep '^comm_churn' "$TESTDIR/out" | head -1)"
done_testing
