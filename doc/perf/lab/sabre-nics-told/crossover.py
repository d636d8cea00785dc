#!/usr/bin/python3
"""crossover.py: SABRE's relay (mtm_threshold=1) over its 2D regime
(mtm_threshold=1000) against the inter-node MTM of each matrix, told the
platform's NICs and told one, on both GPU-like platforms at P = 16
(doc/performance.md, "SABRE told its NICs").  Run from the repository root:
    doc/perf/lab/sabre-nics-told/crossover.py
reads the sweeps in doc/perf/lab/sabre-nics-{told,1}/mtm-*-p16 and the MTMs
(doc/perf/lab/sabre-mtm-charge-digest: gpu-h200; mtm-perlmutter-p16-mtms),
writes doc/perf/lab/sabre-nics-told/crossover.png."""
import csv
import os
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

L = "doc/perf/lab"


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def mtms(path):
    return {r["workload"]: max(float(r["mtm_send"]), float(r["mtm_recv"]))
            for r in rows(path) if r.get("mtm_recv")}


def ratio(path):
    t = {}
    for r in rows(path):
        t.setdefault(r["workload"], {})[r["algo"]] = float(r["median_us"])
    return {w: a["sabre(mtm_threshold=1)"] / a["sabre(mtm_threshold=1000)"] for w, a in t.items()}


fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
for ax, plat, nics, mfile in (
        (axes[0], "h200", 8, L + "/sabre-mtm-charge-digest/results.csv"),
        (axes[1], "perlmutter", 4, L + "/sabre-nics-told/mtm-perlmutter-p16-mtms/results.csv")):
    m = mtms(mfile)
    for told, style, label in (("told", "o-", "told %d NICs a node" % nics),
                               ("1", "s--", "told one NIC a node (a direct exchange)")):
        r = ratio("%s/sabre-nics-%s/mtm-%s-p16/results.csv" % (L, told, plat))
        pts = sorted((m[w], r[w]) for w in r if w in m)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.axvline(2.2, color="grey", ls=":", label="the paper's threshold, 2.2")
    ax.set_xscale("log")
    ax.set_xlabel("inter-node MTM (larger of send and receive)")
    ax.set_title("gpu-%s, P = 16, 1 MiB" % plat)
    ax.legend(fontsize=8)
axes[0].set_ylabel("relay time / 2D time (below 1: relay faster)")
fig.suptitle("lab (SimGrid SMPI, simulated), mode det, charge on: SABRE's regimes against MTM")
fig.tight_layout()
out = L + "/sabre-nics-told/crossover.png"
fig.savefig(out, dpi=110)
print(out)
