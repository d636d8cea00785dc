#!/bin/sh
# Non-contiguous datatypes fall back with their reason; contiguous derived
# types run; the check catches a silent fallback.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
for n in 2 3; do
    check $n "vector type falls back (forced scattered)" --algo scattered --types vector
    check $n "vector type falls back (policy)" --types vector --algo auto --expect fallback:noncontiguous_type
    check $n "contiguous derived type runs tuna" --algo tuna --types contig,double
done
# The harness must fail when the expected algorithm did not run.
SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n 2 "$CHECK" --algo scattered --types vector --expect scattered
[ $? -ne 0 ]; ok $? "harness fails when the expected algorithm fell back"
done_testing
