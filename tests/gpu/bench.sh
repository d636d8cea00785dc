#!/bin/sh
# The device machine's tables (doc/performance.md), from the build that
# tests/gpu/run.sh made and tested in $SKEWSHIM_GPU_WORK:
#   device  one rank: every device path against a cudaMemcpy of the same
#           bytes, and what the CUDA calls of a device call cost alone;
#           equal blocks on 2 emulated nodes x 4 ranks: the per-rank link
#           bandwidth of the emulated fabric (for T_LB); 2 nodes x 4 ranks:
#           nccl_fanout, sabre, fast (and native where the MPI is CUDA-aware)
#           on Zipf 0.4..0.9 and MoE routing, ratio to nccl_fanout and T_LB;
#   host    skewshim-bench at 8 and 16 ranks and 16 as 4 emulated nodes of 4,
#           every host algorithm and auto against the MPI library's own
#           MPI_Alltoallv, uniform blocks and uniform random blocks.
#   auto    native against auto (the built-in policy) at 8 and 16 ranks
# Usage: SKEWSHIM_GPU_WORK=DIR tests/gpu/bench.sh [device|host|auto|all] OUTDIR
# Every table is printed with the command that reproduces it and written as
# CSV into OUTDIR.  Times are from one GPU shared by every rank (NCCL over
# sockets between emulated nodes): emulation figures, not a real cluster.

what=${1:-all}
out=${2:-.}
W=${SKEWSHIM_GPU_WORK:?set SKEWSHIM_GPU_WORK to the folder tests/gpu/run.sh built in}
top=$(ls -d "$W"/build/skewshim-* 2>/dev/null | head -1)
[ -n "$top" ] && [ -x "$top/.libs/skewshim-bench" ] || { echo "no build in $W (run tests/gpu/run.sh first)"; exit 1; }
mkdir -p "$out" || exit 1
BENCH=$top/.libs/skewshim-bench
yamllib=$(dirname "$(find "$W/yaml" -name 'libyaml*.so*' 2>/dev/null | head -1)" 2>/dev/null)
export LD_LIBRARY_PATH="$top/.libs${yamllib:+:$yamllib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The shim's own log stays off: the benchmark reads what ran from the API.
export SKEWSHIM_LOG_LEVEL=off
MPIRUN=${MPIRUN:-mpirun}
T=${SKEWSHIM_BENCH_TIMEOUT:-240}

# bench NAME NP HOSTID(yes|no) ARGS...: one table, its CSV as OUTDIR/NAME.csv
bench() {
    name=$1; np=$2; hostid=$3; shift 3
    echo "## $name"
    if [ "$hostid" = yes ]; then
        timeout "$T" "$MPIRUN" --allow-run-as-root --oversubscribe -np "$np" \
            sh -c 'NCCL_HOSTID=h$OMPI_COMM_WORLD_RANK exec "$@"' sh "$BENCH" "$@" --csv "$out/$name.csv"
    else
        timeout "$T" "$MPIRUN" --allow-run-as-root --oversubscribe --bind-to core -np "$np" \
            "$BENCH" "$@" --csv "$out/$name.csv"
    fi
    echo "## $name: exit $?"
}

cuda_aware=no
if command -v ompi_info >/dev/null 2>&1 &&
   ompi_info --parsable --all 2>/dev/null | grep -q 'mpi_built_with_cuda_support:value:true'; then
    cuda_aware=yes
fi
echo "# MPI: $("$MPIRUN" --version 2>&1 | head -1); CUDA-aware: $cuda_aware"
echo "# GPU: $(nvidia-smi -L 2>/dev/null | head -1)"
echo "# CPU: $(nproc) cores"

if [ "$what" = device ] || [ "$what" = all ]; then
    native=
    [ "$cuda_aware" = yes ] && native=native,
    # The fixed cost of the CUDA calls a device call makes.
    cuda=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc)")")}
    if cc -O2 -o "$W/cuda_costs" "$(dirname "$0")/cuda_costs.c" -I"$cuda/include" \
          -L"$cuda/lib64" -Wl,-rpath,"$cuda/lib64" -lcudart; then
        echo "## cuda_costs"; "$W/cuda_costs"
    fi
    # One rank: the whole exchange is the rank's own block, so a device path
    # can at best match one device-to-device copy of the same bytes.
    bench dev-1rank 1 yes --device --workload equal --type double --sizes 1m,4m,16m,64m,256m \
        --algos memcpy,${native}nccl_fanout,sabre,fast --baseline memcpy --iters 50 --warmup 5
    # The emulated fabric's per-rank link: 2 nodes x 4 ranks, equal blocks,
    # every rank sends 4 blocks across; C = 4 S / median time.  (Two ranks
    # alone get less: NCCL's socket transport is limited per connection.)
    bench dev-8r-2x4-equal 8 yes --device --ranks-per-node 4 --workload equal --type double \
        --sizes 4m,16m --algos nccl_fanout,${native}sabre,fast --baseline nccl_fanout --iters 5 --warmup 1
    gbps=${SKEWSHIM_LINK_GBPS:-}
    if [ -z "$gbps" ] && [ -f "$out/dev-8r-2x4-equal.csv" ]; then
        gbps=$(awk -F, 'NR > 1 && $6 == "nccl_fanout" { c = 4 * $5 / ($7 * 1e-6) / 1e9 } END { if (c > 0) printf "%.3f", c }' "$out/dev-8r-2x4-equal.csv")
    fi
    echo "# link bandwidth per rank for T_LB: ${gbps:-unknown} GB/s"
    lb=
    [ -n "$gbps" ] && lb="--link-gbps $gbps"
    # 2 emulated nodes x 4 ranks: IPC inside a node, NCCL sockets between.
    # Largest blocks S chosen so that a rank sends about 16 to 256 MiB.
    for wl in "zipf 0.4 4m,16m,64m" "zipf 0.6 8m,32m,128m" "zipf 0.8 16m,64m,256m" \
              "zipf 0.9 16m,64m,256m" "moe 0.8 4m,16m,64m"; do
        set -- $wl
        bench "dev-8r-2x4-$1-$2" 8 yes --device --ranks-per-node 4 --workload "$1" --param "$2" \
            --type double --sizes "$3" \
            --algos nccl_fanout,${native}sabre,fast,fast:pipeline=false \
            --baseline nccl_fanout $lb --iters 5 --warmup 1
    done
fi

if [ "$what" = host ] || [ "$what" = all ]; then
    algos=native,scattered:block_count=4,scattered:block_count=16,pairwise,bruck2,padded_bruck
    algos=$algos,tuna:radix=2,tuna:radix=4,tuna:radix=8,tuna:radix=16,sabre,fast,auto
    for np in 16 8; do
        for wl in equal uniform; do
            bench "host-p$np-$wl" $np no --workload $wl --sizes 16:65536 --algos $algos \
                --iters 50 --warmup 5
        done
    done
    hier=native,tuna_hier:radix=2:variant=coalesced,tuna_hier:radix=4:variant=coalesced
    hier=$hier,tuna_hier:radix=2:variant=staggered,tuna_hier:radix=4:variant=staggered,tuna:radix=4,bruck2
    hier=$hier,sabre,fast,auto
    for wl in equal uniform; do
        bench "host-p16-4x4-$wl" 16 no --ranks-per-node 4 --workload $wl --sizes 16:65536 \
            --algos $hier --iters 50 --warmup 5
    done
fi

if [ "$what" = auto ] || [ "$what" = all ]; then
    # What auto (the built-in policy) costs where it runs native.
    for np in 16 8; do
        for wl in equal uniform; do
            bench "auto-p$np-$wl" $np no --workload $wl --sizes 16:65536 \
                --algos native,auto,native,auto --iters 100 --warmup 10
        done
    done
fi
