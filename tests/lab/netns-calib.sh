#!/bin/sh
# netns-calib.sh: a real two-tier network on one machine, for calibrating the
# lab (doc/lab.md "A two-tier network on one machine"; doc/performance.md
# "Calibration: the lab against real runs").
#
# Two emulated nodes are two network namespaces joined by a veth pair whose
# both ends are rate-limited with tc tbf.  MPICH (ch4:ucx) runs one hydra
# proxy per emulated node (hosts n0, n1, fork launcher), so MPICH sees two
# nodes.  Every rank is started inside the namespace of its node by the
# wrapper this script writes (rank r -> node r / Q).  Debian's MPICH moves
# every message with UCX, the ranks of one node too: with UCX over TCP only,
# theirs crosses the namespace's loopback (not rate-limited).
#
# With NICS=rank every rank has a NIC of its own instead, as the nodes of the
# SABRE and FAST papers have (one NIC per GPU): node n's namespace holds Q
# veths skcalv<n>_<i> into a bridge in a switch namespace (skcalsw), tbf on
# both ends of each, and rank i of the node sends from and receives on its
# own (UCX_NET_DEVICES, its address as the source of its TCP connections by
# tests/lab/bindsrc.c, policy routing by source address).  The ranks of a
# node share memory through UCX's posix and sysv transports, which UCX takes
# between processes of one IPC namespace only: each node gets its own IPC
# namespace, so no rank reaches another node but by its NIC.  This is the
# lab's GPU-like two-tier model on one machine: lab/platforms/netns-nics.xml.
# NODES and Q (default 2 and 2) give its shape at setup.
#
# More ranks than cores time the scheduler, not the network: on the 2-core
# development machine 4 busy-polling MPICH ranks need 8 ms for a 16-byte
# exchange (as they do without namespaces).  Use a machine with a core per
# rank (the device machine: tests/gpu/mpich.sh and doc/performance.md).
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
# REPS (default 3), ITERS (default 5), WARMUP (default 1), NICS (node, the
# default: one NIC per node; rank: one per rank), NODES and Q (NICS=rank),
# MPIEXEC (default mpiexec.mpich), SKCAL_BINDSRC (a built bindsrc.so; else
# it is compiled with cc), ALGOS, SIZES and WORKLOADS (calib's items, block
# sizes and workloads, NAME:PARAM separated by spaces), THROTTLES (calib: the
# values of MPICH's MPIR_CVAR_ALLTOALL_THROTTLE to run every job under, in
# turn; empty, the default, leaves MPICH at its own, 32 in 4.0.2).
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
IPCDIR=/run/skcal     # the IPC namespaces of NICS=rank, one file a node
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
NICS=${NICS:-node}

# limit NS DEV RATE: a veth end with offloads off and tbf on its egress.
limit() {
    # Segmentation offloads hand tbf 64 KB super-packets that exceed its
    # burst: they are dropped and TCP collapses (0.03 GB/s at 1 MiB on a
    # 1 Gbit/s tbf).  With offloads off tbf sees MTU-sized packets.
    ip -n "$1" link set "$2" gso_max_size 1500 2>/dev/null || true
    # burst: 2 x 64 KB (enough tokens for a TCP window's head at this rate);
    # limit: 4 MB of queue, so a burst of 2 x 2 ranks is queued, not dropped.
    ip netns exec "$1" tc qdisc replace dev "$2" root tbf rate "$3" burst 128kb limit 4mb
}

# One NIC per rank (above): namespaces skcal<n> with veths skcalv<n>_<i>,
# whose other ends skcals<n>_<i> are ports of the bridge in skcalsw.
setup_rank_nics() {
    rate=$1; nodes=${NODES:-2}; q=${Q:-2}
    bindsrc=${SKCAL_BINDSRC:-/tmp/skcal-bindsrc.so}
    [ -f "$bindsrc" ] || cc -O2 -shared -fPIC -o "$bindsrc" "$TOP/tests/lab/bindsrc.c" -ldl
    mkdir -p $IPCDIR
    # Every NIC resolves the address of every rank of another node: nodes x
    # q x (nodes - 1) x q neighbour entries, in one table the kernel keeps
    # for all namespaces, whose default limit (gc_thresh3, 1024) 4 x 8
    # stays under (768) and 8 x 8 passes (3584: MPI_Init failed,
    # "Destination is unreachable").  Raised, never lowered.
    need=$((nodes * q * nodes * q))
    for k in 1 2 3; do
        cur=$(sysctl -n net.ipv4.neigh.default.gc_thresh$k 2>/dev/null || echo 0)
        if [ "$cur" -lt $((need * k)) ]; then
            sysctl -q -w net.ipv4.neigh.default.gc_thresh$k=$((need * k))
        fi
    done
    ip netns add ${NS}sw
    ip -n ${NS}sw link set lo up
    ip -n ${NS}sw link add br0 type bridge
    ip -n ${NS}sw link set br0 up
    for n in $(seq 0 $((nodes - 1))); do
        touch $IPCDIR/ipc$n
        unshare --ipc=$IPCDIR/ipc$n true
        ip netns add ${NS}$n
        ip -n ${NS}$n link set lo up
        # A node answers ARP for an address on that address's NIC only.
        ip netns exec ${NS}$n sysctl -q -w net.ipv4.conf.all.arp_ignore=1 \
            net.ipv4.conf.all.arp_announce=2 net.ipv4.conf.all.rp_filter=0 \
            net.ipv4.conf.default.rp_filter=0
        for i in $(seq 0 $((q - 1))); do
            v=${NS}v${n}_$i; sw=${NS}s${n}_$i; a=$NET.$((n * q + i + 1))
            ip link add "$v" type veth peer name "$sw"
            ip link set "$v" netns ${NS}$n
            ip link set "$sw" netns ${NS}sw
            ip -n ${NS}sw link set "$sw" master br0
            ip -n ${NS}sw link set "$sw" up
            ip -n ${NS}$n addr add $a/24 dev "$v"
            ip -n ${NS}$n link set "$v" up
            ip -n ${NS}$n rule add from $a table $((100 + i))
            ip -n ${NS}$n route add $NET.0/24 dev "$v" src $a table $((100 + i))
            limit ${NS}$n "$v" "$rate"
            limit ${NS}sw "$sw" "$rate"
        done
    done
    cat >$WRAP <<EOF
#!/bin/sh
# rank -> its node's IPC and network namespaces and its own NIC (node
# rank / q, local index rank % q); UCX's shared memory inside the node.
q=\${SKCAL_Q:?}
n=\$(( \${PMI_RANK:?} / q )); i=\$(( PMI_RANK % q ))
exec nsenter --ipc=$IPCDIR/ipc\$n ip netns exec ${NS}\$n env UCX_TLS=tcp,self,posix,sysv \\
    UCX_TCP_NODELAY=y UCX_NET_DEVICES=${NS}v\${n}_\$i LD_PRELOAD=$bindsrc \\
    SKCAL_BIND_ADDR=$NET.\$((n * q + i + 1)) "\$@"
EOF
    chmod +x $WRAP
    echo "# netns-calib: $nodes nodes x $q ranks, one NIC per rank into a bridge, tbf $rate each way"
}

setup() {
    rate=${1:-$RATE}
    teardown
    if [ "$NICS" = rank ]; then setup_rank_nics "$rate"; return; fi
    ip netns add ${NS}0
    ip netns add ${NS}1
    ip link add ${NS}v0 type veth peer name ${NS}v1
    for n in 0 1; do
        ip link set ${NS}v$n netns ${NS}$n
        ip -n ${NS}$n addr add $NET.$((n + 1))/24 dev ${NS}v$n
        ip -n ${NS}$n link set lo up
        ip -n ${NS}$n link set ${NS}v$n up
        limit ${NS}$n ${NS}v$n "$rate"
    done
    cat >$WRAP <<EOF
#!/bin/sh
# rank -> emulated node (namespace) and its interface; UCX over TCP only, so
# that no shared memory transport of UCX reaches across the namespaces.
q=\${SKCAL_Q:?}
n=\$(( \${PMI_RANK:?} / q ))
exec ip netns exec ${NS}\$n env UCX_TLS=tcp,self UCX_TCP_NODELAY=y UCX_NET_DEVICES=${NS}v\$n "\$@"
EOF
    chmod +x $WRAP
    echo "# netns-calib: ${NS}0 ($NET.1) <-> ${NS}1 ($NET.2), tbf $rate each way"
}

teardown() {
    for ns in $(ip netns list 2>/dev/null | awk '{ print $1 }' | grep "^${NS}"); do
        ip netns del "$ns" 2>/dev/null || true
    done
    ip link del ${NS}v0 2>/dev/null || true
    for f in $IPCDIR/ipc*; do
        [ -e "$f" ] || continue
        umount "$f" 2>/dev/null || true
        rm -f "$f"
    done
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
    hosts=$(seq -s, -f 'n%g' 0 $((nodes - 1)))
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
    envlist=SKCAL_Q,SKEWSHIM_LOG_LEVEL
    [ -n "${MPIR_CVAR_ALLTOALL_THROTTLE:-}" ] && envlist=$envlist,MPIR_CVAR_ALLTOALL_THROTTLE
    SKCAL_Q=$q SKEWSHIM_LOG_LEVEL=off \
        timeout 900 $MPIEXEC -launcher fork -hosts $hosts -ppn "$q" -n $((nodes * q)) \
        -genvlist $envlist \
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

ALGOS=${ALGOS:-native,scattered,pairwise,sabre,fast,fast:pipeline=false,tuna_hier}
SIZES=${SIZES:-64k,256k}

calib() {
    if [ "$NICS" = rank ]; then
        out=${1:-$TOP/doc/perf/lab/calib-netns-nics}
        shapes="${NODES:-2}x${Q:-2}"; workloads=${WORKLOADS:-hot_recv:0.25 moe:0.8 zipf:0.8 equal}
    else
        out=${1:-$TOP/doc/perf/lab/calib-netns}
        shapes="2x2 2x1"; workloads=${WORKLOADS:-zipf:0.8 moe:0.8 equal}
    fi
    mkdir -p "$out"
    trap teardown EXIT INT TERM
    setup "$RATE"
    cmdf="$out/real-commands.txt"
    # Everything that shaped the set, for its reproduce line.
    set_env="NICS=$NICS RATE=$RATE REPS=$REPS ITERS=$ITERS WARMUP=$WARMUP SIZES=$SIZES ALGOS=$ALGOS"
    set_env="$set_env WORKLOADS='$workloads'${THROTTLES:+ THROTTLES='$THROTTLES'}"
    [ "$NICS" = rank ] && set_env="$set_env NODES=${NODES:-2} Q=${Q:-2}"
    {
        echo "# Real runs: MPICH 4.0.2 (ch4:ucx), network namespaces over veth (NICS=$NICS: one NIC"
        echo "# per $NICS), tbf $RATE each way, $(nproc) cores; build $BUILD (non-ASan)."
        echo "# Reproduce the whole set: $set_env tests/lab/netns-calib.sh calib"
    } >"$cmdf"
    for shape in $shapes; do
        nodes=${shape%x*}; q=${shape#*x}
        for wl in $workloads; do
            name=${wl%%:*}; param=${wl#*:}
            [ "$param" = "$wl" ] && param=
            for rep in $(seq 1 "$REPS"); do
                # Each throttle in turn within a repetition, so that a drift
                # of the machine falls on all of them alike.
                for thr in ${THROTTLES:-default}; do
                    sfx=; cvar=
                    [ "$thr" != default ] && sfx=-thr$thr && cvar="MPIR_CVAR_ALLTOALL_THROTTLE=$thr "
                    csv="$out/real-$shape-$name${param:+-$param}$sfx-$rep.csv"
                    # With a NIC per rank the shim is told so, as a user
                    # of such nodes would tell it in the policy: SABRE's
                    # lanes are then the node's NICs, not one.
                    nics=; [ "$NICS" = rank ] && nics="--set topology.nics_per_node=$q"
                    set -- --ranks-per-node "$q" $nics --algos "$ALGOS" --workload "$name" \
                        ${param:+--param $param} --sizes "$SIZES" --iters "$ITERS" --warmup "$WARMUP" \
                        --csv "$csv"
                    line="${cvar}NICS=$NICS RATE=$RATE tests/lab/netns-calib.sh run $nodes $q -- $*"
                    echo "$line" >>"$cmdf"
                    echo "# $line"
                    t0=$(date +%s)
                    if [ -n "$cvar" ]; then export MPIR_CVAR_ALLTOALL_THROTTLE=$thr
                    else unset MPIR_CVAR_ALLTOALL_THROTTLE; fi
                    run "$nodes" "$q" -- "$@" >/dev/null || echo "#   FAILED rc=$?"
                    echo "#   $(( $(date +%s) - t0 )) s"
                done
            done
        done
    done
    echo "# reproduce: $set_env tests/lab/netns-calib.sh calib"
}

[ "$(id -u)" = 0 ] || { echo "netns-calib.sh: needs root (ip netns, tc)" >&2; exit 77; }
cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
    setup) setup "$@" ;;
    teardown) teardown ;;
    run) run "$@" ;;
    calib) calib "$@" ;;
    *) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 2 ;;
esac
