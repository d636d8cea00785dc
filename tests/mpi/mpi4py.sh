#!/bin/sh
# Python callers through mpi4py.  Debian's python3-mpi4py is built against
# Open MPI, so this runs in the Open MPI build of the shim.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
if [ -z "$PYTHON_MPI4PY" ]; then skip "python3-mpi4py not installed"; done_testing; fi
mpi4py_mpi=$("$PYTHON_MPI4PY" -c 'from mpi4py import MPI; print(MPI.Get_library_version())' 2>/dev/null | head -1)
case "$mpi4py_mpi:$SKEWSHIM_MPI" in
    *"Open MPI"*:openmpi|*MPICH*:mpich) ;;
    *) skip "mpi4py uses another MPI ($mpi4py_mpi); tested in the $SKEWSHIM_MPI-matching build"; done_testing ;;
esac
printf 'version: 1\nlog: {level: calls, path: "%s/log-%%r.jsonl"}\n' "$TESTDIR" > "$TESTDIR/calls.yaml"
SKEWSHIM_ALGORITHM=scattered SKEWSHIM_CONFIG="$TESTDIR/calls.yaml" mpirun_n 3 env LD_PRELOAD="$(preload)" "$PYTHON_MPI4PY" "$top_srcdir/tests/mpi/mpi4py_check.py"
ok $? "mpi4py Alltoallv correct under the shim"
# 3 plain and 3 in-place calls, all run by the schedule (none in_place)
n=$(grep -c '"algo": *"scattered"' "$TESTDIR/log-0.jsonl" 2>/dev/null)
[ "$n" = 6 ]; ok $? "all 6 mpi4py calls (3 in place) ran scattered (got $n)"
done_testing
