#!/bin/sh
# MPI_IN_PLACE, inter-communicators and invalid arguments go to the MPI
# library with their reason; the summary counts them.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
printf 'version: 1\nlog: {level: summary, path: "%s/log-%%j.jsonl"}\n' "$TESTDIR" > "$TESTDIR/sum.yaml"
for n in 2 3; do
    rm -f "$TESTDIR"/log-*.jsonl
    SKEWSHIM_CONFIG="$TESTDIR/sum.yaml" mpirun_n $n "$top_builddir/tests/mpi/fallback"
    ok $? "fallback cases at P=$n"
    for r in in_place intercommunicator invalid_args; do
        grep -q "\"$r\": *[1-9]" "$TESTDIR"/log-*.jsonl 2>/dev/null
        ok $? "P=$n: summary counts reason $r"
    done
done
done_testing
