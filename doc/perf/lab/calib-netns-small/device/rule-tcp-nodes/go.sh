#!/bin/sh
# The built-in policy with one rule added for TCP networks (tuna_hier at
# 8-63 ranks over 2+ nodes, blocks <= 64 B; .device/tcp.yaml): auto against MPICH's default
# across 4 x 4, 8 x 2 and 2 x 4 emulated nodes, and on one 16-rank node.
O=${OUT:?}
mkdir -p $O/r
cp .device/tcp.yaml skewshim.yaml      # read by every rank from its cwd
t0=$(date +%s)
SKEWSHIM_NETNS_SHAPES="4x4x2 8x2x2 2x4x2" SKEWSHIM_NETNS_TIMEOUT=150 RATE=200mbit ITERS=100 WARMUP=10 \
  WORKLOADS="uniform power" SIZES=16,64,256 ALGOS=native,tuna_hier,auto \
  sh tests/gpu/mpich.sh run .device $O/r netns > $O/r/log.txt 2>&1
echo "netns rc=$? $(( $(date +%s) - t0 )) s"
m=$(mktemp -d); tar -C $m -xJf .device/mpich.tar.xz
for rep in 1 2; do for wl in uniform power; do
  PATH=$m/mpich/bin:$PATH LD_LIBRARY_PATH=$m/mpich/lib UCX_MODULE_DIR=$m/mpich/lib/ucx SKEWSHIM_LOG_LEVEL=off \
    timeout 60 mpiexec.hydra -n 16 -bind-to core $m/mpich/bin/skewshim-bench --algos native,tuna_hier,auto \
    --workload $wl --sizes 16,64,256 --iters 200 --warmup 20 --csv $O/r/onenode-16-$wl-$rep.csv > /dev/null 2>&1
  echo "one node $wl $rep rc=$?"
done; done
rm -f skewshim.yaml
wc -l $O/r/nics-*/real-*.csv $O/r/onenode*.csv | tail -30
tar -C $O -czf $O/all.tgz r && rm -rf $O/r
