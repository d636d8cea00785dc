#!/usr/bin/python3
"""calib-compare.py: real runs against the lab, as ratios to native.

    tests/lab/calib-compare.py --real real-*.csv --lab results.csv [--selector mpich]
        [--lab-native ALGO] [--match-rpn] [--wide]

Real CSVs are skewshim-bench's (one per repetition of the same command); the
lab CSV is scripts/skewshim-lab's results.csv.  For every (P, ranks per node,
workload, S, algo) it prints the measured time / native (median over the
repetitions, each taken against the native of its own run, with their range),
the lab's time / native, and the lab's ratio over the measured one; then the
summary the calibration reports: the spread of lab / measured, and whether the
lab names the same best schedule as the measurements.
"""
import argparse
import csv
import statistics
import sys


def key(r):
    return (int(r["P"]), int(r.get("ranks_per_node") or 0), r["workload"], int(r["S_bytes"]))


def ratios(rows):
    """{point: {algo: ratio}} from one run's rows (time / that run's native)."""
    nat = {key(r): float(r["median_us"]) for r in rows if r["algo"] == "native"}
    out = {}
    for r in rows:
        k = key(r)
        if k in nat and nat[k] > 0:
            out.setdefault(k, {})[r["algo"]] = (float(r["median_us"]) / nat[k], r["status"])
    return out, nat


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--real", nargs="+", required=True)
    ap.add_argument("--lab", nargs="+", required=True)
    ap.add_argument("--selector", default=None, help="lab rows of this selector only")
    ap.add_argument("--lab-native", default=None, metavar="ALGO",
                    help="the lab item that stands for the real runs' native (e.g. "
                         "'scattered(block_count=32)' for MPICH's default, which posts 32 "
                         "exchanges where the lab's mpich selector posts 4); the lab's own "
                         "native is then left out")
    ap.add_argument("--match-rpn", action="store_true",
                    help="match ranks_per_node too (default: P, workload, S only)")
    ap.add_argument("--wide", action="store_true",
                    help="one row per point, each item as measured / lab")
    ap.add_argument("--short", action="append", default=[], metavar="ALGO=LABEL",
                    help="column label for an item in --wide")
    a = ap.parse_args()

    def k2(k):
        return k if a.match_rpn else (k[0], 0, k[2], k[3])

    real = {}     # point -> algo -> [ratio per run]
    real_nat = {}
    status = {}
    for fn in a.real:
        with open(fn) as f:
            rs, nat = ratios(list(csv.DictReader(f)))
        for k, d in rs.items():
            for algo, (x, st) in d.items():
                real.setdefault(k2(k), {}).setdefault(algo, []).append(x)
                status[(k2(k), algo)] = st
        for k, v in nat.items():
            real_nat.setdefault(k2(k), []).append(v)
    lab_rows = []
    for fn in a.lab:
        with open(fn) as f:
            lab_rows += [r for r in csv.DictReader(f)
                         if a.selector is None or r.get("selector") == a.selector]
    if a.lab_native:
        for r in lab_rows:
            if r["algo"] == a.lab_native:
                r["algo"] = "native"
            elif r["algo"] == "native":
                r["algo"] = "lab:native"
    lab, lab_nat = ratios(lab_rows)
    lab = {k2(k): v for k, v in lab.items()}
    lab_nat = {k2(k): v for k, v in lab_nat.items()}

    if a.wide:
        return wide(a, real, real_nat, lab, lab_nat)
    print("| P | workload | S | algo | measured (runs: min..max) | lab | lab / measured |")
    print("|---|---|---|---|---|---|---|")
    devs, best_agree, best_total = [], 0, 0
    for k in sorted(real):
        if k not in lab:
            continue
        algos = list(real[k])
        for algo in algos:
            xs = real[k][algo]
            m = statistics.median(xs)
            lx = lab[k].get(algo)
            if algo == "native":
                cell_real = "%.0f us (%s runs)" % (statistics.median(real_nat[k]), len(xs))
                cell_lab = "%.0f us" % lab_nat[k] if k in lab_nat else "-"
                print("| %d | %s | %d | native | %s | %s | - |" % (k[0], k[2], k[3], cell_real,
                                                                    cell_lab))
                continue
            st = status.get((k, algo), "ok")
            tag = "" if st == "ok" else " " + st
            if lx is None:
                print("| %d | %s | %d | %s | %.2f (%.2f..%.2f)%s | - | - |" %
                      (k[0], k[2], k[3], algo, m, min(xs), max(xs), tag))
                continue
            d = lx[0] / m
            devs.append((abs(d - 1), d, k, algo))
            print("| %d | %s | %d | %s | %.2f (%.2f..%.2f)%s | %.2f | %.2f |" %
                  (k[0], k[2], k[3], algo, m, min(xs), max(xs), tag, lx[0], d))
        common = [x for x in algos if x in lab[k] and not x.startswith("auto")]
        if len(common) > 1:
            rb = min(common, key=lambda x: statistics.median(real[k][x]))
            lb = min(common, key=lambda x: lab[k][x][0])
            best_total += 1
            best_agree += rb == lb
            print("| %d | %s | %d | *best* | %s | %s | %s |" %
                  (k[0], k[2], k[3], rb, lb, "same" if rb == lb else "differs"))
    if devs:
        ds = sorted(x[0] for x in devs)
        print()
        print("# %d ratios compared: lab / measured within %.0f%% for half of them, "
              "%.0f%% for 90%%, worst %.2f (%s, P=%d, %s, S=%d)" %
              (len(ds), 100 * ds[len(ds) // 2], 100 * ds[min(len(ds) - 1, int(0.9 * len(ds)))],
               max(devs)[1], max(devs)[3], max(devs)[2][0], max(devs)[2][2], max(devs)[2][3]))
        print("# best schedule (auto excluded): lab names the measured one at %d of %d points" %
              (best_agree, best_total))
    return 0


def wide(a, real, real_nat, lab, lab_nat):
    short = dict(x.rsplit("=", 1) for x in a.short)
    algos = []
    for k in sorted(real):
        for x in real[k]:
            if x != "native" and x not in algos and k in lab and x in lab[k]:
                algos.append(x)
    # With --match-rpn two shapes of one P are two rows: say which is which.
    q = "ranks/node | " if a.match_rpn else ""
    print("| P | " + q + "workload | S | native us: measured / lab | " +
          " | ".join(short.get(x, x) for x in algos) + " |")
    print("|---|" + ("---|" if q else "") + "---|---|---|" + "---|" * len(algos))
    for k in sorted(real):
        if k not in lab:
            continue
        cells = ["%d" % k[0]] + (["%d" % k[1]] if q else []) + [k[2], "%d" % k[3],
                 "%.0f / %.0f" % (statistics.median(real_nat[k]), lab_nat[k])
                 if real_nat[k][0] >= 100 else
                 "%.1f / %.1f" % (statistics.median(real_nat[k]), lab_nat[k])]
        for x in algos:
            xs, lx = real[k].get(x), lab[k].get(x)
            cells.append("%.2f / %.2f" % (statistics.median(xs), lx[0]) if xs and lx else "-")
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
