#!/usr/bin/python3
"""throttle-compare.py DIR: MPICH's default alltoallv (32 exchanges in flight)
against its throttle of 4 (the lab's mpich-selector native) on the
one-NIC-per-rank network, measured (DIR/device/nics-4x4/real-*-thr{32,4}-N.csv,
tests/lab/netns-calib.sh with THROTTLES="32 4") and in the lab
(DIR/lab/results.csv: native = throttle 4, scattered = 32 in flight).
Runs are paired by repetition: thr32-N against thr4-N."""
import csv,glob,statistics as st,collections,sys,os
D=sys.argv[1] if len(sys.argv) > 1 else 'doc/perf/lab/calib-netns-throttle'
d=collections.defaultdict(list)
for f in sorted(glob.glob(D+'/device/nics-4x4/real-*.csv')):
    thr=os.path.basename(f).split('-thr')[1].split('-')[0]
    for r in csv.DictReader(open(f)):
        d[(r['workload'],int(r['S_bytes']),thr,r['algo'])].append(float(r['median_us']))
lab={}
for r in csv.DictReader(open(D+'/lab/results.csv')):
    lab[(r['workload'],int(r['S_bytes']),r['algo'])]=float(r['median_us'])
print("| workload | S | MPICH default us: measured / lab | MPICH throttle 4 us: measured / lab | default / throttle 4: measured (runs) | lab (scattered 32 / native) | shim scattered 32 / 4: measured | lab |")
print("|---|---|---|---|---|---|---|---|")
for wl in ['equal','uniform']:
    for S in [256,1024,4096,16384,65536]:
        n32=d[(wl,S,'32','native')]; n4=d[(wl,S,'4','native')]
        rr=[a/b for a,b in zip(n32,n4)]
        s4=d[(wl,S,'32','scattered(block_count=4)')]+d[(wl,S,'4','scattered(block_count=4)')]
        s32=d[(wl,S,'32','scattered')]+d[(wl,S,'4','scattered')]
        ln=lab[(wl,S,'native')]; l32=lab[(wl,S,'scattered')]; l4=lab[(wl,S,'scattered(block_count=4)')]
        print("| %s | %d | %.0f / %.0f | %.0f / %.0f | %.2f (%.2f-%.2f) | %.2f | %.2f | %.2f |"%(wl,S,st.median(n32),l32,st.median(n4),ln,st.median(rr),min(rr),max(rr),l32/ln,st.median(s32)/st.median(s4),l32/l4))
