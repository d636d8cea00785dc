#!/bin/sh
# Every example in the docs runs as written: the whole policies of README.md
# and doc/policy.md load under SKEWSHIM_STRICT=1, and the --algos items of
# doc/bench.md are accepted by the benchmark (it refuses unknown algorithms
# and parameter values before timing anything).
. "${top_srcdir:-.}/tests/mpi/lib.sh"
BENCH="$top_builddir/skewshim-bench"
n=0
for doc in README.md doc/policy.md; do
    # Each ```yaml block that starts with "version: 1" is a whole policy.
    awk -v out="$TESTDIR/ex-$(basename "$doc" .md)" '
        /^```yaml/ { on = 1; k++; f = out "-" k ".yaml"; printf "" > f; next }
        /^```/ { on = 0; next }
        on { print >> f }' "$top_srcdir/$doc"
done
for f in "$TESTDIR"/ex-*.yaml; do
    [ -f "$f" ] || continue
    head -1 "$f" | grep -q '^version: 1' || continue
    n=$((n + 1))
    SKEWSHIM_STRICT=1 SKEWSHIM_CONFIG="$f" SKEWSHIM_LOG_LEVEL=off \
        mpirun_n 2 "$BENCH" --algos native,auto --sizes 64 --iters 1 --warmup 0
    ok $? "$(basename "$f"): the policy loads strictly and runs"
done
[ $n -ge 2 ] || { ok 1 "found the policy examples (README.md, doc/policy.md): $n"; }
# The items block of doc/bench.md, one item a line.
items=$(awk '/^### Items of `--algos`/ { s = 1 } s && /^```/ { if (in_) exit; in_ = 1; next }
             s && in_ { print }' "$top_srcdir/doc/bench.md" | tr '\n' ',' | sed 's/,$//')
[ -n "$items" ]
ok $? "doc/bench.md: found the --algos examples ($items)"
SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n 2 "$BENCH" --algos "$items" --sizes 64 --iters 1 --warmup 0
ok $? "doc/bench.md: every --algos example is accepted and verified"
SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n 2 "$BENCH" --algos native --set max_temp_bytes=1048576 \
    --set fast.pipeline=off --sizes 64 --iters 1 --warmup 0
ok $? "doc/bench.md: --set examples, booleans spelled off"
done_testing
