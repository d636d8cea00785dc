#!/bin/sh
# lab/setup_cost (doc/performance.md, "The first call on a communicator")
# builds with smpicc and gives the table's P = 64 column to the digit (mode
# det is deterministic): the set-up 116.1 us, of which 100.0 us SimGrid's
# MPI_Comm_dup and 16.1 us the shim's own collectives.  A change of
# SimGrid, of the platform or of the settings that moves them fails here,
# and the doc's figure with it.  Prints TAP.
. "$(dirname "$0")/tap.sh"
tap_scratch setup-cost
echo "1..2"
smpicc -std=c11 -O1 -Wall -Wextra -Werror -o "$OUT/setup_cost" "$top_srcdir/lab/setup_cost.c" 2>"$OUT/cc.err"
rc=$?
[ $rc -eq 0 ] || sed 's/^/# /' "$OUT/cc.err"
ok $rc "lab/setup_cost.c builds with smpicc, no warning"
r=0
while [ $r -lt 64 ]; do echo "node$((r / 32))"; r=$((r + 1)); done > "$OUT/hosts"
# The lab's own settings for mode det and the mpich selector, as its driver
# gives them to smpirun, so that this figure moves with the lab's.
cfg=$(/usr/bin/python3 "$top_srcdir/scripts/skewshim-lab" small-cpu --platform cpu-cluster --ranks 64 \
    --workloads uniform --sizes 16 --algos native --mode det --selectors mpich --dry-run --out "$OUT/dry" |
    sed -n 's/^# smpirun //p' | tr ' ' '\n' | grep -e '^--cfg=' -e '^--log=')
[ -n "$cfg" ] || echo "# skewshim-lab --dry-run gave no settings"
# shellcheck disable=SC2086
timeout 300 smpirun -np 64 -platform "$top_srcdir/lab/platforms/cpu-cluster.xml" -hostfile "$OUT/hosts" \
    $cfg "$OUT/setup_cost" > "$OUT/out" 2>&1
rc=$?
sed 's/^/# /' "$OUT/out"
[ $rc -eq 0 ] && grep -q "MPI_Comm_dup (the private communicator) *100.0 us" "$OUT/out" &&
    grep -q "set-up in all (the first seven) *116.1 us" "$OUT/out" &&
    grep -q "of which the shim's own (all but the dup) *16.1 us" "$OUT/out"
ok $? "P = 64 on cpu-cluster: the set-up 116.1 us, SimGrid's dup 100.0, the shim's own 16.1 (the doc's table)"
