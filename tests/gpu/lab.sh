#!/bin/sh
# The performance lab on the device machine's cores: SimGrid is not
# installed there and nothing can be fetched, so this carries SimGrid's SMPI
# runtime and the lab build of the bench from this machine (Debian 12), and
# runs several lab commands at once, one simulation per core.  A lab figure
# (mode det) does not depend on the machine that computes it: the run
# repeats one published cell first so that the copy can be checked.
#
#   tests/gpu/lab.sh pack BUILD DIR   here: the SMPI build's skewshim-bench
#       (BUILD, e.g. _build-smpi), smpirun, smpimain and every library they
#       load but the C library's own, into DIR/smpi.tar.xz, to carry;
#   tests/gpu/lab.sh run DIR OUT JOBS [PARALLEL]   there: unpack it, then
#       run every line of the file JOBS (the arguments of one
#       scripts/skewshim-lab command, without --build and --out), PARALLEL
#       at a time (default: the cores), each into its own folder; everything
#       goes back as OUT/lab.tgz (job-N/ with results.csv, command.txt and
#       the job's log), refreshed as each job ends.
#   tests/gpu/lab.sh start DIR WORK JOBS [PARALLEL]   there: the same run,
#       detached into WORK/out, so that it outlives the device call that
#       starts it (a call lasts at most 600 s, a session's device time is
#       longer); a second start on the same WORK does nothing;
#   tests/gpu/lab.sh collect WORK OUT SECONDS   there, in the same or a later
#       call on the warm machine: wait until the run ends or SECONDS pass,
#       then copy WORK's lab.tgz, mem.txt and run.log into OUT.
# Each job ends at SKEWSHIM_LAB_JOB_TIMEOUT seconds (default 420) with what
# it had: the lab writes a (P, workload) point only when its smpirun ended.
set -u
. "$(dirname "$0")/carry_libs.sh"
usage="usage: tests/gpu/lab.sh pack BUILD DIR | run DIR OUT JOBS [PARALLEL] | start DIR WORK JOBS [PARALLEL] | collect WORK OUT SECONDS"
what=${1:?$usage}
case $what in
pack)
    build=${2:?pack BUILD DIR}; dest=${3:?pack BUILD DIR}
    mkdir -p "$dest" || exit 1
    tmp=$(mktemp -d) || exit 1
    dir=$tmp/smpi
    mkdir -p "$dir/lib" "$dir/build" || exit 1
    smpimain=/usr/lib/x86_64-linux-gnu/simgrid/smpimain
    cp "$build/skewshim-bench" "$dir/build/" || exit 1
    cp "$smpimain" "$dir/" || exit 1
    # smpirun names smpimain and its own library folder by absolute paths:
    # both become the unpacked folder's, given at run time.
    sed -e "s|$smpimain|\${SKEWSHIM_SMPI_DIR}/smpimain|" \
        -e 's|^export LD_LIBRARY_PATH=.*|export LD_LIBRARY_PATH="${SKEWSHIM_SMPI_DIR}/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"|' \
        "$(command -v smpirun)" > "$dir/smpirun" || exit 1
    chmod +x "$dir/smpirun"
    grep -q 'SKEWSHIM_SMPI_DIR}/smpimain' "$dir/smpirun" || { echo "smpirun: smpimain path not found" >&2; exit 1; }
    carry_libs "$dir/lib" "$dir/smpimain" "$dir/build/skewshim-bench" || exit 1
    smpirun -version 2>/dev/null | head -1 > "$dir/VERSION"
    tar -C "$tmp" -cJf "$dest/smpi.tar.xz" smpi || exit 1
    rm -rf "$tmp"
    ls -l "$dest/smpi.tar.xz"
    ;;
run)
    src=${2:?run DIR OUT JOBS}; out=${3:?run DIR OUT JOBS}; jobs=${4:?run DIR OUT JOBS}
    par=${5:-$(nproc)}
    here=$(cd "$(dirname "$0")/../.." && pwd)
    mkdir -p "$out" || exit 1
    top=$(mktemp -d) || exit 1
    tar -C "$top" -xJf "$src/smpi.tar.xz" || exit 1
    export SKEWSHIM_SMPI_DIR=$top/smpi
    export PATH="$SKEWSHIM_SMPI_DIR:$PATH" PYTHONDONTWRITEBYTECODE=1
    T=${SKEWSHIM_LAB_JOB_TIMEOUT:-420}
    echo "# $(cat "$SKEWSHIM_SMPI_DIR/VERSION"); $(nproc) cores; $(free -g | awk '/^Mem/ { print $2 }') GB; $par at a time; $T s a job"
    work=$top/jobs
    mkdir -p "$work" || exit 1
    n=0
    : > "$work/.ended"
    # What the machine holds while the jobs run (the lab's memory is its
    # buffers: the reason to run it here).
    ( while :; do echo "$(date +%T) $(free -m | awk '/^Mem/ { print $3 }') MB used, load $(cut -d' ' -f1 /proc/loadavg)"; sleep 15; done ) > "$out/mem.txt" &
    sampler=$!
    # Each job in the background, at most $par at once (a job appends a
    # line to .ended when it ends: dash has no job count of its own).
    while IFS= read -r line; do
        case $line in ''|'#'*) continue ;; esac
        while [ $((n - $(wc -l < "$work/.ended"))) -ge "$par" ]; do sleep 1; done
        n=$((n + 1))
        d=$work/job-$n
        mkdir -p "$d"
        echo "# job $n: scripts/skewshim-lab $line"
        (
            t0=$(date +%s)
            # The lab's own timeout ends a smpirun and its simulation; the
            # outer one only guards the driver.
            eval "set -- $line"
            # stdin is the JOBS file this loop reads, and smpirun hands its
            # stdin to the simulation: keep the lines for the loop.
            timeout $((T + 30)) python3 "$here/scripts/skewshim-lab" "$@" --timeout "$T" \
                --build "$SKEWSHIM_SMPI_DIR/build" --out "$d" < /dev/null > "$d/log.txt" 2>&1
            rc=$?
            echo "# job $n: exit $rc after $(( $(date +%s) - t0 )) s"
            echo "$n" >> "$work/.ended"
            # Whatever has ended so far goes back even if the call is cut.
            tar -C "$work" -czf "$out/lab.tgz.part$n" . 2>/dev/null
            mv "$out/lab.tgz.part$n" "$out/lab.tgz"
        ) &
    done < "$jobs"
    while [ "$(wc -l < "$work/.ended")" -lt "$n" ]; do sleep 1; done
    kill "$sampler" 2>/dev/null
    tar -C "$work" -czf "$out/lab.tgz" .
    rm -rf "$top"
    ;;
start)
    src=${2:?start DIR WORK JOBS}; work=${3:?start DIR WORK JOBS}; jobs=${4:?start DIR WORK JOBS}
    mkdir -p "$work" || exit 1
    if [ -e "$work/pid" ]; then
        echo "# $work: started before (pid $(cat "$work/pid"))"
        exit 0
    fi
    # A new session: the device tool ends the call's process group, not
    # this one.
    setsid nohup sh "$0" run "$src" "$work/out" "$jobs" ${5:+"$5"} \
        > "$work/run.log" 2>&1 < /dev/null &
    echo $! > "$work/pid"
    echo "# started in $work (pid $!)"
    ;;
collect)
    work=${2:?collect WORK OUT SECONDS}; out=${3:?collect WORK OUT SECONDS}; secs=${4:?collect WORK OUT SECONDS}
    [ -e "$work/pid" ] || { echo "$work: nothing started" >&2; exit 1; }
    pid=$(cat "$work/pid")
    end=$(( $(date +%s) + secs ))
    while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$end" ]; do sleep 5; done
    mkdir -p "$out" || exit 1
    for f in "$work/out/lab.tgz" "$work/out/mem.txt" "$work/run.log"; do
        [ -e "$f" ] && cp "$f" "$out/"
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "# still running: $(grep -c '^# job [0-9]*: exit' "$work/run.log") job(s) ended so far"
    else
        echo "# ended"
    fi
    cat "$work/run.log"
    ;;
*) echo "$usage" >&2; exit 2 ;;
esac
