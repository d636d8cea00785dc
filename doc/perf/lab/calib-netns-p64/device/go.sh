#!/bin/sh
# One device call: the GPU tests on the code of the tarball, then SABRE and
# FAST on a real network of 64 ranks: 8 emulated nodes of 8 (one NIC per
# rank, 20 Mbit/s) on 16 cores (four ranks a core).
O=${OUT:?}
mkdir -p $O/r
t0=$(date +%s)
nvidia-smi -L; sysctl net.ipv4.neigh.default.gc_thresh3
# gpu tests passed in the first call
echo "gpu tests rc=$? $(( $(date +%s) - t0 )) s"

t1=$(date +%s)
SKEWSHIM_NETNS_SHAPES="8x8x2" SKEWSHIM_NETNS_TIMEOUT=300 RATE=20mbit ITERS=3 WARMUP=1 \
  WORKLOADS="moe:0.8 zipf:0.8" SIZES=64k,256k ALGOS=native,scattered,sabre,fast \
  sh tests/gpu/mpich.sh run .device $O/r netns > $O/r/log.txt 2>&1
echo "netns rc=$? $(( $(date +%s) - t1 )) s"
wc -l $O/r/nics-*/real-*.csv
grep '^#   ' $O/r/log.txt | head
tar -C $O -czf $O/all.tgz r && rm -rf $O/r
echo "total $(( $(date +%s) - t0 )) s"
dmesg 2>/dev/null | grep -i -c "neighbour table overflow"; sysctl net.ipv4.neigh.default.gc_thresh3
