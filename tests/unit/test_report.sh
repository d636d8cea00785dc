#!/bin/sh
# TAP test of scripts/skewshim-report on tests/data/sample.jsonl: the text
# summary, the error on a malformed line, and the plots (--plot, --html,
# --speedup) when some python3 here can import matplotlib (else a SKIP line).
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
report="$top/scripts/skewshim-report"
sample="$top/tests/data/sample.jsonl"
py=${PYTHON:-python3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/skewshim-report.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
ok() {  # ok DESCRIPTION COMMAND...
    n=$((n + 1))
    desc=$1
    shift
    if "$@" >/dev/null 2>&1; then
        echo "ok $n - $desc"
    else
        echo "not ok $n - $desc"
        failed=$((failed + 1))
    fi
}
has() { grep -E -- "$1" "$tmp/out" ; }

"$py" "$report" "$sample" >"$tmp/out" 2>"$tmp/err"
rc=$?
ok "report exits 0 on the sample" test "$rc" -eq 0
ok "nothing on stderr" test ! -s "$tmp/err"
ok "job header shown" has '^  job 51234: skewshim 0\.1\.0, policy conf/moe\.yaml, level matrix'
ok "12 call records on 2 communicators" has '12 call records on 2 communicator'
ok "sabre: 3 calls, largest share of time" has '^  sabre +3 +25\.0% +27\.371 ms +47\.5%'
ok "tuna: 2 calls" has '^  tuna +2 +16\.7% +80\.1 us'
ok "choice counts" has 'chosen by: rule 8, fallback 2, forced 1, default 1'
ok "fallbacks counted" has '^fallbacks \(call records\): 2 of 12 calls'
ok "in_place reason" has '^  in_place +1$'
ok "memory_cap reason" has '^  memory_cap +1$'
ok "inter-node MTM min/median/max" has '^  inter-node mtm +1\.000 +1\.[0-9]{3} +4\.100$'
ok "all-traffic MTM row" has '^  all traffic mtm +1\.000'
ok "SABRE regimes" has 'SABRE regime: high 2, low 1'
ok "SABRE's NICs, and what one means" has 'SABRE planned for 1 NIC\(s\) a node \(topology.nics_per_node\)'
ok "total bytes" has '^  total [0-9.]+ MiB over 12 calls'
ok "average block min/median/max" has '^  average block: min 64 B, median 136\.0 KiB, max 2\.0 MiB$'
ok "per non-empty block, from the records that carry it" has '^  per non-empty block: min 73 B, median 75 B, max 78 B$'
ok "slowest call first" has '^  comm 0 call 8 +native +21\.451 ms'
ok "plan cache rate from the summary" has '3 / 9 lookups hit \(33\.3%\)'
ok "matrix listed" has 'comm 0 call 2: P=8, ranks_per_node=4'
ok "job summary table" has '^job summary'
ok "rules passed over, from the summary" has "rules passed over .*: tuna_hier on 1 communicator"

# --top limits the slowest list
"$py" "$report" --top 1 "$sample" >"$tmp/out" 2>&1
ok "--top 1 lists one call" test "$(grep -c '^  comm [0-9]* call [0-9]* ' "$tmp/out")" -eq 1

# a malformed line: file and line named, exit 1
head -n 3 "$sample" >"$tmp/bad.jsonl"
echo '{"call": 3, "comm": 0, "algo": ' >>"$tmp/bad.jsonl"
"$py" "$report" "$tmp/bad.jsonl" >"$tmp/out" 2>"$tmp/err"
rc=$?
ok "malformed line: exit 1" test "$rc" -eq 1
ok "malformed line: file:line in the message" grep -q "bad.jsonl:4: malformed JSON" "$tmp/err"

"$py" "$report" "$tmp/missing.jsonl" >"$tmp/out" 2>"$tmp/err"
ok "missing file: exit 1" test $? -eq 1

# --plot without matplotlib (and no other python3 to hand over to): a
# clear error that says how to get it, not a traceback
if ! "$py" -c 'import matplotlib' >/dev/null 2>&1; then
    SKEWSHIM_REPORT_REEXEC=1 "$py" "$report" "$sample" --plot "$tmp/noplots" >"$tmp/out" 2>"$tmp/err"
    ok "--plot without matplotlib: exit 1" test $? -eq 1
    ok "--plot without matplotlib: says so and how to install it" \
        grep -q "need matplotlib.*apt-get install python3-matplotlib" "$tmp/err"
fi

# --plot with the first python3 that has matplotlib
plotpy=
for p in "$py" python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import matplotlib' >/dev/null 2>&1; then
        plotpy=$p
        break
    fi
done
if [ -n "$plotpy" ]; then
    # Through the first python3 on PATH: it hands over to one with
    # matplotlib by itself when it has none.
    "$py" "$report" "$sample" --plot "$tmp/plots" --html "$tmp/page.html" >"$tmp/out" 2>"$tmp/err"
    ok "--plot --html exits 0 (python3 first on PATH: $py)" test $? -eq 0
    for f in mtm.png bytes.png time.png time_vs_lb.png matrix-comm0-call2.png; do
        ok "--plot wrote $f, a PNG" sh -c "head -c 8 '$tmp/plots/$f' | grep -q PNG"
    done
    ok "html: one file with the summary" grep -q "12 call records on 2 communicator" "$tmp/page.html"
    ok "html: every plot inlined" test "$(grep -c 'src="data:image/png;base64,' "$tmp/page.html")" -eq 5
    "$py" "$report" --speedup "$top/tests/data/bench-sample.csv" --plot "$tmp/speed" >"$tmp/out" 2>"$tmp/err"
    ok "--speedup exits 0" test $? -eq 0
    ok "--speedup: one heat map per algorithm" test -s "$tmp/speed/speedup-scattered_block_count_16_.png"
    ok "--speedup: native itself gets none" test ! -e "$tmp/speed/speedup-native.png"
    "$py" "$report" --speedup "$sample" --plot "$tmp/speed2" >"$tmp/out" 2>"$tmp/err"
    ok "--speedup on a non-CSV: exit 1 with a message" sh -c "test -s '$tmp/err'"
else
    n=$((n + 1))
    echo "ok $n - # SKIP --plot: no python3 here imports matplotlib"
fi

echo "1..$n"
test "$failed" -eq 0
