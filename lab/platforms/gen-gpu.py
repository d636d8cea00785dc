#!/usr/bin/env python3
"""Writes a two-tier "GPU-like" SimGrid platform (doc/lab.md): NODES nodes of
G ranks; every rank has its own scale-up link to its node's switch
(NVLink/NVSwitch-like) and its own NIC to a non-blocking network (one NIC per
GPU, as SABRE's Perlmutter nodes and FAST's H200 servers have).

   python3 gen-gpu.py NAME G NODES UP_GBps NIC_GBps [HOP_us NIC_us] [nics=K] > NAME.xml

nics=K gives a node K NICs instead of G (K divides G): ranks j*G/K to
(j+1)*G/K-1 of a node share NIC j, as on servers with fewer NICs than GPUs.

HOP_us is the latency of one scale-up hop (two between ranks of a node),
NIC_us that of a NIC (two between nodes, with two cables of 0.5 us).

Routing: a Dijkstra zone.  SimGrid's Dijkstra counts links per route, so
each rank-to-network edge carries two links (its NIC and its own cable
into the switches, too fast to ever be shared) and each rank-to-node-switch
edge one: ranks of one node always take the scale-up path (2 links) rather
than the network (4 links), and ranks of different nodes can only take the
network.  The cable is per rank, not one FATPIPE for the whole network: a
link that every inter-node flow crosses makes SimGrid's max-min solver
handle all flows in one constraint, and a P = 64 point then took more than
10 minutes instead of seconds.
"""
import sys

args = [a for a in sys.argv[1:] if not a.startswith("nics=")]
name, G, nodes, up, nic = args[0], int(args[1]), int(args[2]), args[3], args[4]
hop, nic_lat = (args[5], args[6]) if len(args) > 6 else ("0.5", "1")
K = int(next((a[5:] for a in sys.argv[1:] if a.startswith("nics=")), G))
if K < 1 or G % K:
    sys.exit("gen-gpu.py: nics=%d must divide the %d ranks of a node" % (K, G))
# gpu-h200's links on another node size (the line's weight on that size).
h200_on_nodes_of = ("gpu-h200's links (450 GB/s scale-up, a 400 Gb/s NIC per rank) on "
                    "nodes of %d ranks (the node size is the only change)")
desc = {
    "gpu-h200": "FAST's H200 servers: 8 GPUs per server, 450 GB/s scale-up per GPU "
                "(NVLink 4 / NVSwitch), one 400 Gb/s NIC per GPU (50 GB/s)",
    "gpu-h200-nics1": "gpu-h200's nodes with one 400 Gb/s NIC a node, shared by its 8 "
                      "ranks (the NIC count is the only change)",
    "gpu-h200-nics2": "gpu-h200's nodes with two 400 Gb/s NICs a node, each shared by 4 "
                      "ranks, as on servers with fewer NICs than GPUs",
    "gpu-h200-nics4": "gpu-h200's nodes with four 400 Gb/s NICs a node, each shared by 2 "
                      "ranks, as on servers with fewer NICs than GPUs",
    "gpu-h200-shm": "gpu-h200's nodes (a NIC per rank) with the ranks of a node 0.3 us "
                    "apart, as in cpu-cluster's shared memory, instead of 1 us (the "
                    "scale-up hop latency is the only change)",
    "gpu-h200-pairs": h200_on_nodes_of % 2,
    "gpu-h200-16": h200_on_nodes_of % 16,
    "gpu-perlmutter-nics1": "gpu-perlmutter's nodes with one 200 Gb/s NIC a node, shared "
                            "by its 4 ranks (the NIC count is the only change)",
    "gpu-perlmutter-shm": "gpu-perlmutter's nodes (a NIC per rank) with the ranks of a node "
                          "0.3 us apart, as in cpu-cluster's shared memory, instead of 1 us "
                          "(the scale-up hop latency is the only change)",
    "gpu-perlmutter": "SABRE's Perlmutter GPU nodes: 4 A100 per node, NVLink 3 "
                      "between them (taken as 100 GB/s per GPU), one Slingshot-11 "
                      "200 Gb/s NIC per GPU (25 GB/s)",
    "netns-nics": "tests/lab/netns-calib.sh with NICS=rank: a network namespace per "
                  "node with one veth NIC per rank into a bridge, tc tbf at 20 Mbit/s on "
                  "both ends (2.39 MB/s of TCP payload each way); the ranks of a node "
                  "share memory (UCX's posix and sysv transports in the node's IPC "
                  "namespace; 10 GB/s and 0.3 us rank to rank, as this-machine.xml); "
                  "20 us one way between nodes, as netns-veth.xml",
    "netns-nics4-200m": "tests/lab/netns-calib.sh with NICS=rank and RATE=200mbit: "
                        "netns-nics4 with ten times the NIC rate (23.9 MB/s of TCP "
                        "payload each way), the same latencies",
    "netns-nics8": "tests/lab/netns-calib.sh with NICS=rank, NODES=4 and Q=8: 4 nodes of "
                   "8 ranks, a 2.39 MB/s NIC per rank, the latencies of netns-nics (32 "
                   "ranks: on the device machine's 16 cores, two ranks a core)",
    "netns-nics8x8": "tests/lab/netns-calib.sh with NICS=rank, NODES=8 and Q=8: 8 nodes "
                     "of 8 ranks, a 2.39 MB/s NIC per rank, the latencies of netns-nics "
                     "(64 ranks: on the device machine's 16 cores, four ranks a core)",
    "netns-nics2-200m": "tests/lab/netns-calib.sh with NICS=rank, NODES=8, Q=2 and "
                        "RATE=200mbit: 8 nodes of 2 ranks, a 23.9 MB/s NIC per rank, "
                        "the latencies of netns-nics",
}.get(name, name)
P = G * nodes
o = []
w = o.append
w("<?xml version='1.0'?>")
w('<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">')
w('<platform version="4.1">')
w("<!--")
w(f"  {name}: a two-tier GPU-like cluster, {nodes} nodes x {G} ranks = {P} ranks.")
w(f"  Models {desc}.")
if len(args) > 6:
    w(f"  Latencies: {hop} us per scale-up hop (two rank to rank in a node), {nic_lat} us")
    w("  per NIC and 0.5 us per cable, two of each between nodes.")
else:
    w("  Numbers: the papers' and vendors' nominal per-direction bandwidths (above);")
    w("  latencies are assumptions: 0.5 us per scale-up hop (1 us rank to rank in a")
    w("  node), 1 us per NIC and 0.5 us per cable, two of each between nodes (3 us).")
if K < G:
    w(f"  {K} NIC(s) a node: ranks j*{G // K} to (j+1)*{G // K}-1 of a node share NIC j.")
w("  The network between NICs is non-blocking (full bisection): every rank's")
w("  cable into it is 100 TB/s, so only NICs and scale-up links are shared.")
w("  All links are full duplex (SPLITDUPLEX).  Host-buffer runs of the shim")
w("  (sabre, fast, native ...) on this platform measure the schedules in the")
w("  regime the SABRE and FAST papers claim; device copies are not modelled.")
# No "--" inside an XML comment (not well-formed): the option by its name.
w("  One host per rank: the shim's nodes come from the bench's option")
w("  ranks-per-node " + str(G) + ",")
w("  not from MPI_Comm_split_type (which would see one host per rank).")
w("  Generated: python3 lab/platforms/gen-gpu.py " + " ".join(sys.argv[1:]))
w("-->")
w('<zone id="world" routing="DijkstraCache">')
w('  <router id="net"/>')
for n in range(nodes):
    w(f'  <router id="sw{n}"/>')
for r in range(P):
    w(f'  <host id="g{r}" speed="1Gf"/>')
    w(f'  <link id="up{r}" bandwidth="{up}GBps" latency="{hop}us" sharing_policy="SPLITDUPLEX"/>')
    if r % (G // K) == 0:
        w(f'  <link id="nic{r // (G // K)}" bandwidth="{nic}GBps" latency="{nic_lat}us" sharing_policy="SPLITDUPLEX"/>')
    w(f'  <link id="cable{r}" bandwidth="100TBps" latency="0.5us" sharing_policy="SPLITDUPLEX"/>')
for r in range(P):
    n = r // G
    w(f'  <route src="g{r}" dst="sw{n}"><link_ctn id="up{r}" direction="UP"/></route>')
    w(f'  <route src="g{r}" dst="net"><link_ctn id="nic{r // (G // K)}" direction="UP"/><link_ctn id="cable{r}" direction="UP"/></route>')
w("</zone>")
w("</platform>")
print("\n".join(o))
