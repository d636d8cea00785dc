#!/bin/sh
# A real MPICH on the device machine's 16 cores, where only Open MPI is
# installed: the lab's "native" is MPICH's alltoallv with 4 exchanges in
# flight, MPICH's default has 32 (the shim's scattered), and this times the
# two, and every host schedule, against each other on real cores.
#
#   tests/gpu/mpich.sh pack BUILD DIR   here: copy an MPICH build of the
#       bench (BUILD, e.g. _build-nocuda, configured with MPICC=mpicc.mpich
#       --without-cuda), the shim, MPICH's hydra launcher and every library
#       they load from this machine (Debian 12) into DIR/mpich.tar.xz, to
#       carry (about 10 MB packed: libmpich alone is 41 MB unpacked);
#   tests/gpu/mpich.sh run DIR OUT [STEP]   there: unpack it into a
#       temporary folder and write the step's tables as CSV into OUT, each
#       printed with the command that reproduces it:
#       tables    (the default) every host item at 16 and 8 ranks, equal and
#                 uniform blocks, at MPICH's defaults and again with
#                 MPIR_CVAR_ALLTOALL_THROTTLE=4 (SKEWSHIM_MPICH_RANKS: other P);
#       throttle  native, scattered 4 and 32, auto at 16 ranks under
#                 throttle 32 and 4 alternating, three times;
#       more      16 ranks as 4 emulated nodes of 4, and auto against
#                 native interleaved at 16 and 8 ranks;
#       netns     tests/lab/netns-calib.sh calib with one NIC per rank
#                 (needs root, network namespaces and tc there), 2 x 2 and 4 x 2;
#       pingpong  tests/lab/pingpong.c, rank 0 against every other rank of
#                 the 16 (one a core), through MPICH's shared memory and,
#                 where the machine has its own MPI (mpicc, mpirun), through
#                 that one too: the latency between the ranks of a node.
# On the device machine, carrying .device (doc/device.md):
#   sh tests/gpu/mpich.sh pack _build-nocuda .device     (here, first)
#   sh tests/gpu/mpich.sh run .device $OUT/mpich throttle
#
# The libraries are this machine's, so the device machine (x86-64, a newer
# glibc) runs them as they are; UCX's transport modules come from DIR too,
# never from an Open MPI's UCX installed there.
set -u
. "$(dirname "$0")/carry_libs.sh"
what=${1:?usage: tests/gpu/mpich.sh pack BUILD DIR | run DIR OUT [STEP]}
case $what in
pack)
    build=${2:?pack BUILD DIR}; dest=${3:?pack BUILD DIR}
    mkdir -p "$dest" || exit 1
    dir=$(mktemp -d)/mpich
    mkdir -p "$dir/bin" "$dir/lib/ucx" || exit 1
    cp "$build/.libs/skewshim-bench" "$(command -v mpiexec.hydra)" "$(command -v hydra_pmi_proxy)" "$dir/bin/" || exit 1
    cp -L "$build/.libs/libskewshim.so.0" "$dir/lib/" || exit 1
    # Every library the programs load (the bench's libskewshim from $dir/lib).
    (LD_LIBRARY_PATH="$dir/lib"; export LD_LIBRARY_PATH
     carry_libs "$dir/lib" "$dir/bin/skewshim-bench" "$dir/bin/mpiexec.hydra" "$dir/bin/hydra_pmi_proxy" \
         "$dir/lib/libskewshim.so.0") || exit 1
    cp -L /usr/lib/x86_64-linux-gnu/ucx/libuct_cma.so.0 "$dir/lib/ucx/" 2>/dev/null
    # What tests/lab/netns-calib.sh needs, for a machine that lacks it:
    # iproute2, util-linux's namespace tools, sysctl, and the source-address
    # preload, each with its libraries apart (net/lib is put on the path of
    # these tools alone where the machine lacks them).
    mkdir -p "$dir/net/bin" "$dir/net/lib" || exit 1
    for t in ip tc nsenter unshare sysctl; do
        cp "$(command -v $t)" "$dir/net/bin/" || exit 1
        carry_libs "$dir/net/lib" "$(command -v $t)" || exit 1
    done
    cc -O2 -shared -fPIC -o "$dir/net/bindsrc.so" "$(dirname "$0")/../lab/bindsrc.c" -ldl || exit 1
    mpicc.mpich -std=c11 -O2 -o "$dir/bin/pingpong" "$(dirname "$0")/../lab/pingpong.c" || exit 1
    mpichversion 2>/dev/null | head -2 > "$dir/VERSION"
    tar -C "$(dirname "$dir")" -cJf "$dest/mpich.tar.xz" mpich || exit 1
    rm -rf "$(dirname "$dir")"
    ls -l "$dest/mpich.tar.xz"
    ;;
run)
    src=${2:?run DIR OUT}; out=${3:?run DIR OUT}; step=${4:-tables}
    mkdir -p "$out" || exit 1
    top=$(mktemp -d) || exit 1
    trap 'rm -rf "$top"' EXIT
    tar -C "$top" -xJf "$src/mpich.tar.xz" || exit 1
    dir=$top/mpich
    export PATH="$dir/bin:$PATH" LD_LIBRARY_PATH="$dir/lib" UCX_MODULE_DIR="$dir/lib/ucx"
    export SKEWSHIM_LOG_LEVEL=off
    T=${SKEWSHIM_BENCH_TIMEOUT:-150}
    echo "# MPI: $(tr '\n' ' ' < "$dir/VERSION"); $(nproc) cores; $(uname -r)"
    # bench NAME NP CVAR ARGS...: one table, its CSV as OUT/NAME.csv
    bench() {
        name=$1; np=$2; cvar=$3; shift 3
        echo "## $name"
        echo "# reproduce: ${cvar:+$cvar }mpiexec.hydra -n $np -bind-to core skewshim-bench $* --csv $name.csv"
        env $cvar timeout "$T" mpiexec.hydra -n "$np" -bind-to core "$dir/bin/skewshim-bench" "$@" --csv "$out/$name.csv"
        echo "## $name: exit $?"
    }
    case $step in
    tables)
        algos=native,scattered:block_count=4,scattered:block_count=16,scattered:block_count=32,pairwise,bruck2
        algos=$algos,padded_bruck,tuna:radix=2,tuna:radix=4,tuna:radix=16,sabre,fast,auto
        for np in ${SKEWSHIM_MPICH_RANKS:-16 8}; do
            for wl in equal uniform; do
                # MPICH at its defaults: native is MPICH's scattered with 32 in flight.
                bench "mpich-p$np-$wl" "$np" "" --workload "$wl" --sizes 16:65536 \
                    --algos "$algos" --iters 50 --warmup 5
                # The lab's native: MPICH's scattered with 4 in flight.
                bench "mpich-thr4-p$np-$wl" "$np" "MPIR_CVAR_ALLTOALL_THROTTLE=4" --workload "$wl" \
                    --sizes 16:65536 --algos native,scattered:block_count=4,scattered:block_count=32,auto \
                    --iters 50 --warmup 5
            done
        done ;;
    throttle)
        # MPICH's throttle alone, 32 (its default) and 4 alternating, three times.
        for rep in 1 2 3; do
            for wl in equal uniform; do
                for thr in 32 4; do
                    bench "thr$thr-p16-$wl-$rep" 16 "MPIR_CVAR_ALLTOALL_THROTTLE=$thr" --workload "$wl" \
                        --sizes 16:65536 --algos native,scattered:block_count=4,scattered:block_count=32,auto \
                        --iters 200 --warmup 10
                done
            done
        done ;;
    netns)
        # A real two-tier network with one NIC per rank (tests/lab/netns-calib.sh,
        # NICS=rank): 2 nodes x 2 ranks twice, 4 nodes x 2 once.
        for t in ip tc nsenter unshare sysctl; do
            command -v $t >/dev/null 2>&1 && continue
            mkdir -p "$top/netbin"
            printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/net/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %s/net/bin/%s "$@"\n' \
                "$dir" "$dir" $t > "$top/netbin/$t"
            chmod +x "$top/netbin/$t"
            echo "# $t: carried"
        done
        export PATH="$top/netbin:$PATH"
        calib=$(dirname "$0")/../lab/netns-calib.sh
        # NODESxQxREPS
        for shape in ${SKEWSHIM_NETNS_SHAPES:-2x2x2 4x2x1}; do
            set -- $(echo "$shape" | tr x ' ')
            echo "## netns $1 x $2"
            NICS=rank NODES=$1 Q=$2 REPS=$3 BUILD="$dir/bin" MPIEXEC=mpiexec.hydra \
                SKCAL_BINDSRC="$dir/net/bindsrc.so" timeout "${SKEWSHIM_NETNS_TIMEOUT:-400}" \
                sh "$calib" calib "$out/nics-$1x$2"
            echo "## netns $1 x $2: exit $?"
        done ;;
    more)
        # 4 emulated nodes of 4 (the lab's calib-16core 4 x 4 items), and
        # what auto (the built-in policy) costs against native, interleaved.
        hier=native,tuna_hier:radix=2:variant=coalesced,tuna_hier:radix=4:variant=coalesced
        hier=$hier,tuna_hier:radix=2:variant=staggered,tuna_hier:radix=4:variant=staggered,tuna:radix=4,bruck2
        for wl in equal uniform; do
            bench "mpich-p16-4x4-$wl" 16 "" --ranks-per-node 4 --workload "$wl" --sizes 16:65536 \
                --algos "$hier,sabre,fast,auto" --iters 50 --warmup 5
        done
        for np in 16 8; do
            for wl in equal uniform; do
                bench "mpich-auto-p$np-$wl" "$np" "" --workload "$wl" --sizes 16:65536 \
                    --algos native,auto,native,auto --iters 100 --warmup 10
            done
        done ;;
    pingpong)
        np=${SKEWSHIM_PINGPONG_RANKS:-$(nproc)}; it=${SKEWSHIM_PINGPONG_ITERS:-5000}
        # pp NAME PROGRAM LAUNCHER...: blocking and non-blocking (nb: as
        # the shim posts its messages, where the lab charges its
        # per-message overheads), twice each, into OUT/pingpong-NAME-*.txt.
        pp() {
            pp_name=$1; pp_prog=$2; shift 2
            for mode in "" nb; do
                for rep in 1 2; do
                    echo "## pingpong-$pp_name${mode:+-$mode}-$rep"
                    echo "# reproduce: $* pingpong ${mode:+$mode }$it 0 16 256 4096"
                    timeout "$T" "$@" "$pp_prog" $mode "$it" 0 16 256 4096 |
                        tee "$out/pingpong-$pp_name${mode:+-$mode}-$rep.txt"
                done
            done
        }
        pp mpich "$dir/bin/pingpong" mpiexec.hydra -n "$np" -bind-to core
        # The machine's own MPI, where it has one, without the carried MPICH.
        (unset LD_LIBRARY_PATH UCX_MODULE_DIR
         export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
         command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1 &&
             mpicc -std=c11 -O2 -o "$top/pingpong-own" "$(dirname "$0")/../lab/pingpong.c" || exit 0
         echo "# own MPI: $(mpirun --version 2>&1 | head -1)"
         pp own "$top/pingpong-own" mpirun --allow-run-as-root --bind-to core -n "$np") ;;
    *) echo "unknown step $step (tables, throttle, more, netns, pingpong)" >&2; exit 2 ;;
    esac
    ;;
*) echo "usage: tests/gpu/mpich.sh pack BUILD DIR | run DIR OUT [STEP]" >&2; exit 2 ;;
esac
