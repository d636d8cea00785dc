# Sourced by the lab's checks of figures (tests/lab/ci.sh, rules.sh), after
# tests/lab/tap.sh and with OUT set: one lab run in mode det, and the
# figures of its rows.
LAB="$top_srcdir/scripts/skewshim-lab"

run() {   # run NAME ARGS...: one lab run into $OUT/NAME
    name=$1; shift
    timeout 900 /usr/bin/python3 "$LAB" ci-verify --build "$top_builddir" --out "$OUT/$name" \
        --no-plot --mode det "$@" > "$OUT/$name.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || sed 's/^/# /' "$OUT/$name.log" | tail -20
    return $rc
}

# field FILE P S ALGO COLUMN: one column of the row (mpich selector)
field() {
    awk -F, -v P="$2" -v S="$3" -v A="$4" -v C="$5" '
        { sub(/\r$/, "") }
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $col["selector"] == "mpich" && $col["P"] == P && $col["S_bytes"] == S && $col["algo"] == A { print (C in col ? $col[C] : ""); exit }' "$1"
}

le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 <= b + 0) }'; }
# ratio_of CSV P S A B: A's time over B's
ratio_of() {
    a=$(field "$1" "$2" "$3" "$4" median_us)
    b=$(field "$1" "$2" "$3" "$5" median_us)
    awk -v a="$a" -v b="$b" 'BEGIN { if (a == "" || b == "") print ""; else printf "%.3f", a / b }'
}
# auto_ran_scattered CSV P S ALGO BOUND LABEL: auto ran ALGO and took <= BOUND
# x scattered (MPICH's default exchange).
auto_ran_scattered() {
    st=$(field "$1" "$2" "$3" auto status)
    r=$(ratio_of "$1" "$2" "$3" auto scattered)
    [ "$st" = "ran=$4" ] && le "$r" "$5"
    ok $? "$6: auto ran ${st#ran=} at ${r:-?}x scattered (want $4, <= $5)"
}
# verified NAME LABEL ARGS...: one lab run, every item checked against
# PMPI_Alltoallv (the bench aborts on a mismatch); its CSV in $OUT/NAME.
verified() {
    name=$1; label=$2; shift 2
    run "$name" "$@"
    ok $? "$label"
}
# auto_kept_scattered CSV P S BOUND LABEL: auto ran scattered where
# tuna_hier takes more than BOUND x scattered.
auto_kept_scattered() {
    st=$(field "$1" "$2" "$3" auto status)
    t=$(ratio_of "$1" "$2" "$3" tuna_hier scattered)
    [ "$st" = ran=scattered ] && [ -n "$t" ] && ! le "$t" "$4"
    ok $? "$5: auto ran ${st#ran=} (want scattered), where tuna_hier takes ${t:-?}x scattered (> $4)"
}
