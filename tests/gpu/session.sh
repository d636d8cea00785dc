#!/bin/sh
# One call on the device machine: the steps named (test, device, host; all
# three by default) on one build, logs and CSVs into OUTDIR.
#   tests/gpu/session.sh OUTDIR [test] [device] [host] [auto]
# test runs tests/gpu/run.sh (which builds); the benchmarks reuse its build
# in $SKEWSHIM_GPU_WORK, building first when it is not there.
out=${1:?usage: tests/gpu/session.sh OUTDIR [test] [device] [host] [auto]}
shift
[ $# -gt 0 ] || set -- test device host
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out" || exit 1
export SKEWSHIM_GPU_WORK=${SKEWSHIM_GPU_WORK:-/tmp/skewshim-gpu}
export SKEWSHIM_TEST_TIMEOUT=${SKEWSHIM_TEST_TIMEOUT:-120}
built() { ls "$SKEWSHIM_GPU_WORK"/build/skewshim-*/.libs/skewshim-bench >/dev/null 2>&1; }
for step in "$@"; do
    case $step in
    test)
        sh "$here/run.sh" 2>&1 | tee "$out/gpu-tap.txt" ;;
    device|host|auto)
        built || SKEWSHIM_GPU_BUILD_ONLY=1 sh "$here/run.sh" 2>&1 | tee -a "$out/build-tap.txt"
        sh "$here/bench.sh" "$step" "$SKEWSHIM_GPU_WORK/csv" 2>&1 | tee -a "$out/bench-$step.txt" ;;
    *) echo "unknown step $step"; exit 2 ;;
    esac
    # Eight files at most come back from the device machine: the CSVs
    # travel as one archive, refreshed after every step.
    [ -d "$SKEWSHIM_GPU_WORK/csv" ] && tar -C "$SKEWSHIM_GPU_WORK" -czf "$out/csv.tar.gz" csv
done
cp "$SKEWSHIM_GPU_WORK/build.log" "$out/" 2>/dev/null
exit 0
