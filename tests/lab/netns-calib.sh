#!/bin/sh
# netns-calib.sh: a real two-tier network on one machine, for calibrating the
# lab (doc/lab.md "A two-tier network on one machine"; doc/performance.md
# "Calibration: the lab against real runs").
#
# Two emulated nodes are two network namespaces joined by a veth pair whose
# both ends are rate-limited with tc tbf.  MPICH (ch4:ucx) runs one hydra
# proxy per emulated node (hosts n0, n1, fork launcher), so MPICH sees two
# nodes: shared memory between the ranks of one namespace, UCX over TCP on
# the veth between namespaces.  Every rank is started inside the namespace of
# its node by the wrapper this script writes (rank r -> node r / Q).
#
# Needs root (ip netns, tc); not part of make check or CI (slow, root).
#
#   tests/lab/netns-calib.sh setup   [RATE]     namespaces + veth + tbf (idempotent)
#   tests/lab/netns-calib.sh teardown           remove them (idempotent)
#   tests/lab/netns-calib.sh run     NODES Q -- BENCH ARGS...
#        one skewshim-bench job of NODES x Q ranks across the namespaces
#   tests/lab/netns-calib.sh calib   [OUTDIR]   the calibration set (below):
#        setup, every run REPS times, CSVs into OUTDIR, teardown on exit
#
# Environment: RATE (tbf rate, default 20mbit), BUILD (default _build-mpich),
# REPS (default 3), ITERS (default 5), WARMUP (default 1).
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
NS=skcal            # namespaces skcal0, skcal1; veth skcalv0 <-> skcalv1
NET=10.213.77       # 10.213.77.1 (node 0), 10.213.77.2 (node 1)
RATE=${RATE:-20mbit}
BUILD=${BUILD:-$TOP/_build-mpich}
REPS=${REPS:-3}
ITERS=${ITERS:-5}
WARMUP=${WARMUP:-1}
WRAP=/tmp/skcal-wrap.sh

setup() {
    rate=${1:-$RATE}
    teardown
    ip netns add ${NS}0
    ip netns add ${NS}1
    ip link add ${NS}v0 type veth peer name ${NS}v1
    for n in 0 1; do
        ip link set ${NS}v$n netns ${NS}$n
        ip -n ${NS}$n addr add $NET.$((n + 1))/24 dev ${NS}v$n
        ip -n ${NS}$n link set lo up
        ip -n ${NS}$n link set ${NS}v$n up
        # Segmentation offloads hand tbf 64 KB super-packets that exceed its
        # burst: they are dropped and TCP collapses (0.03 GB/s at 1 MiB on
        # a 1 Gbit/s tbf).  With offloads off tbf sees MTU-sized packets.
        ip -n ${NS}$n link set ${NS}v$n gso_max_size 1500 2>/dev/null || true
        # burst: 2 x 64 KB (enough tokens for a TCP window's head at this
        # rate); limit: 4 MB of queue, so a burst of 2 x 2 ranks is queued,
        # not dropped.
        ip netns exec ${NS}$n tc qdisc replace dev ${NS}v$n root tbf rate "$rate" \
            burst 128kb limit 4mb
    done
    cat >$WRAP <<EOF
#!/bin/sh
# rank -> emulated node (namespace) and its interface; UCX over TCP only
# between nodes (MPICH's own shared memory inside a node), so UCX's shared
# memory transports, which would reach across namespaces, are off.
q=\${SKCAL_Q:?}
n=\$(( \${PMI_RANK:?} / q ))
exec ip netns exec ${NS}\$n env UCX_TLS=tcp,self UCX_TCP_NODELAY=y UCX_NET_DEVICES=${NS}v\$n "\$@"
EOF
    chmod +x $WRAP
    echo "# netns-calib: ${NS}0 ($NET.1) <-> ${NS}1 ($NET.2), tbf $rate each way"
}

teardown() {
    for n in 0 1; do
        ip netns del ${NS}$n 2>/dev/null || true
    done
    ip link del ${NS}v0 2>/dev/null || true
    rm -f $WRAP
}

# run NODES Q -- ARGS: hydra with one proxy per emulated node (hosts n0, n1
# name nothing: the fork launcher starts both proxies here; they only tell
# MPICH which ranks share a node).
#
# MPICH 4.0.2 over UCX/TCP across the namespaces hangs in MPI_Finalize
# (ranks spin in ucp_worker_progress, seen with gdb) after the bench has
# written and closed its CSV.  So when --csv is given, the job is watched:
# once the CSV holds every row (items x sizes), mpiexec is stopped, which
# stops its ranks; a run whose CSV never completes is a failure.
run() {
    nodes=$1; q=$2; shift 2
    [ "${1:-}" = "--" ] && shift
    hosts=n0
    [ "$nodes" -ge 2 ] && hosts=n0,n1
    csv= want=0 prev=
    for x in "$@"; do
        case $prev in
            --csv) csv=$x ;;
            --algos) na=$(echo "$x" | tr ',' '\n' | wc -l) ;;
            --sizes) ns=$(echo "$x" | tr ',' '\n' | wc -l) ;;
        esac
        prev=$x
    done
    [ -n "$csv" ] && want=$((1 + ${na:-1} * ${ns:-1})) && rm -f "$csv"
    SKCAL_Q=$q SKEWSHIM_LOG_LEVEL=off \
        timeout 900 mpiexec.mpich -launcher fork -hosts $hosts -ppn "$q" -n $((nodes * q)) \
        -genvlist SKCAL_Q,SKEWSHIM_LOG_LEVEL \
        $WRAP "$BUILD/skewshim-bench" "$@" &
    pid=$!
    if [ "$want" -gt 0 ]; then
        while kill -0 $pid 2>/dev/null; do
            if [ -f "$csv" ] && [ "$(wc -l <"$csv")" -ge "$want" ]; then
                sleep 3
                kill $pid 2>/dev/null || true
                break
            fi
            sleep 1
        done
    fi
    rc=0
    wait $pid || rc=$?
    if [ -n "$csv" ]; then
        [ -f "$csv" ] && [ "$(wc -l <"$csv")" -ge "$want" ] && return 0
        return 1
    fi
    return $rc
}

ALGOS=native,scattered,pairwise,sabre,fast,fast:pipeline=false,tuna_hier

calib() {
    out=${1:-$TOP/doc/perf/lab/calib-netns}
    mkdir -p "$out"
    trap teardown EXIT INT TERM
    setup "$RATE"
    cmdf="$out/real-commands.txt"
    {
        echo "# Real runs: MPICH 4.0.2 (ch4:ucx), 2 network namespaces over veth, tbf $RATE"
        echo "# each way, this 2-core machine; build $BUILD (non-ASan)."
        echo "# Reproduce the whole set: RATE=$RATE REPS=$REPS ITERS=$ITERS WARMUP=$WARMUP tests/lab/netns-calib.sh calib"
    } >"$cmdf"
    for shape in 2x2 2x1; do
        nodes=${shape%x*}; q=${shape#*x}
        for wl in zipf:0.8 moe:0.8 equal; do
            name=${wl%%:*}; param=${wl#*:}
            [ "$param" = "$wl" ] && param=
            sizes=64k,256k
            for rep in $(seq 1 "$REPS"); do
                csv="$out/real-$shape-$name${param:+-$param}-$rep.csv"
                set -- --ranks-per-node "$q" --algos "$ALGOS" --workload "$name" \
                    ${param:+--param $param} --sizes $sizes --iters "$ITERS" --warmup "$WARMUP" \
                    --csv "$csv"
                line="RATE=$RATE tests/lab/netns-calib.sh run $nodes $q -- $*"
                echo "$line" >>"$cmdf"
                echo "# $line"
                t0=$(date +%s)
                run "$nodes" "$q" -- "$@" >/dev/null || echo "#   FAILED rc=$?"
                echo "#   $(( $(date +%s) - t0 )) s"
            done
        done
    done
    echo "# reproduce: RATE=$RATE REPS=$REPS ITERS=$ITERS WARMUP=$WARMUP tests/lab/netns-calib.sh calib"
}

[ "$(id -u)" = 0 ] || { echo "netns-calib.sh: needs root (ip netns, tc)" >&2; exit 77; }
cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
    setup) setup "$@" ;;
    teardown) teardown ;;
    run) run "$@" ;;
    calib) calib "$@" ;;
    *) sed -n 2,22p "$0"; exit 2 ;;
esac
