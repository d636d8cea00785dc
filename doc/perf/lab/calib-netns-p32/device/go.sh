#!/bin/sh
# SABRE and FAST on a real network beyond 16 ranks: 4 emulated nodes of 8
# (one NIC per rank, 20 Mbit/s), 32 ranks on 16 cores (two ranks a core).
O=${OUT:?}
mkdir -p $O/r
t0=$(date +%s)
SKEWSHIM_NETNS_SHAPES="4x8x2" SKEWSHIM_NETNS_TIMEOUT=240 RATE=20mbit ITERS=3 WARMUP=1 \
  WORKLOADS="moe:0.8 zipf:0.8" SIZES=64k,256k ALGOS=native,scattered,sabre,fast \
  sh tests/gpu/mpich.sh run .device $O/r netns > $O/r/log.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"
wc -l $O/r/nics-*/real-*.csv
grep '^#   ' $O/r/log.txt | head
tar -C $O -czf $O/all.tgz r && rm -rf $O/r
