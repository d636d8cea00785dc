#!/bin/sh
# TAP test of skewshim-check-policy (tools/check_policy.c): the shim's own
# loader as a command.  A good policy loads (exit 0, -v lists its rules); a
# bad one prints FILE:LINE:COL: KEY: MESSAGE and exits 1, as MPI_Init would
# report it; conf/default.yaml loads.
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
chk="$top_builddir/skewshim-check-policy"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/skewshim-check.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }

cat > "$tmp/good.yaml" <<'Y'
version: 1
default: native
rules:
  - {buffers: host, comm_size: 64, max_block_bytes: [0, 1024], use: tuna_hier}
  - {buffers: host, comm_size: 64, max_block_bytes: [1025, inf], use: tuna, tuna: {radix: 4}}
  - {buffers: host, nodes: [2, inf], use: scattered}
Y
"$chk" -v "$tmp/good.yaml" > "$tmp/out" 2>&1
ok $? "a good policy loads"
grep -q 'rules\[1\] (line 5): buffers=host comm_size=\[64, 64\] max_block_bytes=\[1025, inf\] -> tuna' "$tmp/out"
ok $? "-v lists the rules as loaded"
grep -q 'rules\[2\] (line 6): buffers=host nodes=\[2, inf\] -> scattered' "$tmp/out"
ok $? "-v lists a nodes matcher"
printf 'version: 1\ntuna:\n  radix: 1\n' > "$tmp/bad.yaml"
"$chk" "$tmp/good.yaml" "$tmp/bad.yaml" > "$tmp/out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "^$tmp/bad.yaml:3:10: tuna.radix: expected an integer >= 2" "$tmp/out"
ok $? "a bad policy: exit 1 and FILE:LINE:COL: KEY: MESSAGE (rc $rc)"
"$chk" "$top_srcdir/conf/default.yaml"
ok $? "conf/default.yaml loads"
"$chk" "$tmp/missing.yaml" 2>"$tmp/out"
[ $? -eq 1 ] && grep -q "missing.yaml: cannot open" "$tmp/out"
ok $? "an unreadable file is an error"
echo "1..$n"
