#!/bin/sh
# Inter-communicators and invalid arguments go to the MPI library with
# their reason; the summary counts them.  MPI_IN_PLACE is no fallback.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
PY=${PYTHON3:-python3}
printf 'version: 1\nlog: {level: summary, path: "%s/log-%%j.jsonl"}\n' "$TESTDIR" > "$TESTDIR/sum.yaml"
for n in 2 3; do
    rm -f "$TESTDIR"/log-*.jsonl
    SKEWSHIM_CONFIG="$TESTDIR/sum.yaml" mpirun_n $n "$top_builddir/tests/mpi/fallback"
    ok $? "fallback cases at P=$n"
    for r in intercommunicator invalid_args; do
        grep -q "\"$r\": *[1-9]" "$TESTDIR"/log-*.jsonl 2>/dev/null
        ok $? "P=$n: summary counts reason $r"
    done
    ! grep -q '"in_place": *[1-9]' "$TESTDIR"/log-*.jsonl
    ok $? "P=$n: no in_place fallback counted"
done
# At level calls, an in-place call has its record and its place in the
# call index, which counts every call on the communicator: the indices of
# each communicator's records run 0, 1, 2, ... with no gap.
printf 'version: 1\nlog: {level: calls, path: "%s/calls.jsonl"}\n' "$TESTDIR" > "$TESTDIR/calls.yaml"
SKEWSHIM_CONFIG="$TESTDIR/calls.yaml" mpirun_n 2 "$top_builddir/tests/mpi/fallback"
ok $? "fallback cases at level calls"
"$PY" - "$TESTDIR/calls.jsonl" <<'PYEOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
calls = [r for r in recs if "call" in r]
inplace = [r for r in calls if r.get("reason") == "in_place"]
print("# %d call records, %d in place" % (len(calls), len(inplace)))
# in place runs (scattered twice, native by force once): no fallback
ok = len(inplace) == 0 and sum(r["algo"] == "scattered" for r in calls) >= 2
by = {}
for r in calls:
    by.setdefault(r["comm"], []).append(r["call"])
for c, idx in by.items():
    if sorted(idx) != list(range(len(idx))):
        print("# comm %d: indices %s" % (c, sorted(idx)))
        ok = False
sys.exit(0 if ok else 1)
PYEOF
ok $? "level calls: in-place calls ran, call indices without gaps"
# Settings that differ between ranks (here SKEWSHIM_ALGORITHM on one rank
# only) would send one call down two paths: every rank runs in pass-through.
timeout "${SKEWSHIM_TEST_TIMEOUT:-60}" $MPIEXEC $MPIEXEC_FLAGS -n 1 env SKEWSHIM_ALGORITHM=scattered \
    SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" "$CHECK" --expect fallback:disabled : \
    -n 1 env SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" "$CHECK" --expect fallback:disabled > "$TESTDIR/out" 2>&1
rc=$?
[ $rc -ne 0 ] && sed 's/^/# /' "$TESTDIR/out" | tail -5
ok $rc "settings that differ between ranks: pass-through everywhere, no hang"
grep -q "settings differ between ranks" "$TESTDIR/out"; ok $? "rank 0 says why"
done_testing
