#!/bin/sh
# lab/copycheck (doc/lab.md, "A check that failed at P = 1024") must catch
# the damage it looks for: each mode runs one second clean (exit 0, no
# wrong copy on a sound machine) and one second with COPYCHECK_INJECT=1,
# which zeroes the first 64 bytes of the first copy (exit 1 and a report
# of 64 wrong bytes at 0-63).  zmm16 needs a CPU with AVX-512.  Prints TAP.
. "$(dirname "$0")/tap.sh"
HOSTCC=${HOSTCC:-cc}
tap_scratch copycheck
echo "1..6"
avx512=no
grep -qw avx512f /proc/cpuinfo 2>/dev/null && avx512=yes
flags=
[ $avx512 = yes ] && flags=-mavx512f
if ! $HOSTCC -std=c11 -O2 $flags -Wall -Wextra -Werror -o "$OUT/copycheck" "$top_srcdir/lab/copycheck.c" 2>"$OUT/cc.err"; then
    sed 's/^/# /' "$OUT/cc.err"
    for m in warm fresh zmm16; do ok 1 "$m: clean (copycheck did not build)"; ok 1 "$m: injected (copycheck did not build)"; done
    exit 0
fi
for m in warm fresh zmm16; do
    if [ $m = zmm16 ] && [ $avx512 = no ]; then
        skip "zmm16 clean" "no AVX-512 on this CPU"; skip "zmm16 injected" "no AVX-512 on this CPU"; continue
    fi
    "$OUT/copycheck" $m 1 > "$OUT/$m.clean" 2>&1
    rc=$?
    [ $rc -eq 0 ] && grep -q ", 0 wrong$" "$OUT/$m.clean" || { rc=1; sed 's/^/# /' "$OUT/$m.clean" | head -5; }
    ok $rc "$m: a second of copies, none wrong"
    COPYCHECK_INJECT=1 "$OUT/copycheck" $m 1 > "$OUT/$m.inj" 2>&1
    rc=$?
    if [ $rc -eq 1 ] && grep -q "copy 1 at .* wrong in 64 of [0-9]* bytes (0-63), first wrong 0x00" "$OUT/$m.inj" \
        && grep -q ", 1 wrong$" "$OUT/$m.inj"; then rc=0; else rc=1; sed 's/^/# /' "$OUT/$m.inj" | head -5; fi
    ok $rc "$m: the injected 64 zero bytes are caught (exit 1)"
done
