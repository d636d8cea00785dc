#!/bin/sh
# MPI_THREAD_MULTIPLE: concurrent calls on different communicators, plain
# and in place, with the per-call log off and on (the log ring, its merges
# and its last flush at MPI_Comm_free in every thread at once).
# scripts/tsan runs this under ThreadSanitizer, where SKEWSHIM_FAULT_RING=1
# (a test-build-only switch) makes the ring's allocations fail, so the
# threads flush through its fallback buffers together.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
printf 'version: 1\nlog: {level: calls, path: "%s/t-%%r.jsonl"}\n' "$TESTDIR" > "$TESTDIR/calls.yaml"
for run in "scattered quiet" "native quiet" "tuna quiet" "scattered calls" "sabre calls" "scattered calls fault"; do
    set -- $run
    algo=$1; cfg="$TESTDIR/$2.yaml"; fault=${3:+1}
    rm -f "$TESTDIR"/t-*.jsonl
    SKEWSHIM_ALGORITHM=$algo SKEWSHIM_CONFIG="$cfg" SKEWSHIM_FAULT_RING=${fault:-0} \
        mpirun_n 2 "$top_builddir/tests/mpi/threads"
    rc=$?
    if [ $rc -eq 77 ]; then skip "MPI_THREAD_MULTIPLE not provided"
    else ok $rc "threads, $run: $(grep '^threads' "$TESTDIR/out")"; fi
    if [ $rc -eq 0 ] && [ "$2" = calls ] && [ -z "$fault" ]; then
        # every call of every thread has its record: 3 threads x 200
        # iterations x 2 calls (plain, in place), none in_place
        n=$(grep -c '"call"' "$TESTDIR/t-0.jsonl" 2>/dev/null)
        [ "${n:-0}" = 1200 ] && ! grep -q '"reason": *"in_place"' "$TESTDIR/t-0.jsonl"
        ok $? "$run: all 1200 calls of rank 0 recorded, none fell back in place (got ${n:-0})"
    fi
done
done_testing
