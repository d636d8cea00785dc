#!/bin/sh
# TAP test of skewshim-tune's choosing, without running anything: figures()
# on a small matrix, and decide() on replay times made up so that only one
# side's MTM can separate the matrices (both have the same blocks and the
# same larger side, so max_block, avg_block and mtm cannot).  The tuner must
# split on that side, put the boundary between the two values, give each
# range its best item, keep one rule when the agreement would eat the gain,
# and write a policy the shim's own loader accepts with those ranges.
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
py=${PYTHON:-python3}
chk="$top_builddir/skewshim-check-policy"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/skewshim-tune-decide.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# The python part prints "ok/not ok" lines itself (numbered 1..k) and writes
# two policies; the shell checks them with the loader.
TUNE="$top_srcdir/scripts/skewshim-tune" OUT="$tmp" "$py" - > "$tmp/tap" 2>&1 <<'EOF'
import importlib.machinery, importlib.util, os, types
loader = importlib.machinery.SourceFileLoader("skewshim_tune", os.environ["TUNE"])
spec = importlib.util.spec_from_loader(loader.name, loader)
t = importlib.util.module_from_spec(spec)
loader.exec_module(t)
n = 0
def ok(cond, what):
    global n
    n += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n, what))

# figures(): 4 ranks on 2 nodes; every rank sends 30 bytes off its node,
# rank 2 receives 50 of the 60 that go to node 1.
m = dict(P=4, ranks_per_node=2, bytes=[[0, 0, 25, 5], [0, 0, 25, 5], [15, 15, 0, 0], [15, 15, 0, 0]])
d = dict(m=m)
t.figures(d, 0)
ok(abs(d["send_mtm"] - 1.0) < 1e-9, "figures: balanced senders give send_mtm 1 (%g)" % d["send_mtm"])
ok(abs(d["recv_mtm"] - 50 * 4 / 120.0) < 1e-9, "figures: the hot receiver gives recv_mtm %g" % d["recv_mtm"])
ok(d["mtm"] == max(d["send_mtm"], d["recv_mtm"]) and d["nodes"] == 2, "figures: mtm is the larger side")
ok(d["avg_block"] == 120 / 16.0 and d["avg_nonempty"] == 120 / 8.0,
   "figures: 120 bytes in 8 non-empty blocks of 16: average %g, %g a non-empty block"
   % (d["avg_block"], d["avg_nonempty"]))

def rep(name, send, recv, times, agree=2.0, avg_nonempty=32768.0):
    return dict(name=name, P=64, nodes=8, max_block=65536, avg_block=32768.0,
                avg_nonempty=avg_nonempty, weight=10,
                send_mtm=send, recv_mtm=recv, mtm=max(send, recv), agree_us=agree,
                times={k: (v, "ok") for k, v in times.items()}, path="job.jsonl", index=0)

items = {64: ["native", "fast", "scattered:block_count=8"]}
# Hot receivers from balanced senders (FAST wins) against a matrix skewed on
# both sides (scattered wins): same recv_mtm 8, so only send_mtm tells them apart.
moe = rep("moe", 1.05, 8.0, {"native": 100.0, "fast": 45.0, "scattered:block_count=8": 95.0})
zipf = rep("zipf", 8.0, 8.0, {"native": 100.0, "fast": 130.0, "scattered:block_count=8": 40.0})
plan = t.decide([zipf, moe], items, 0.10)[0]
ok(plan["key"] == "send_mtm", "split on send_mtm (got %s)" % plan["key"])
r = plan["ranges"]
ok(len(r) == 2 and r[0][2] == "fast" and r[1][2] == "scattered:block_count=8",
   "balanced senders run fast, hot senders scattered (%s)" % [x[2] for x in r])
ok(len(r) == 2 and r[0][1] == r[1][0] and 1.05 < r[0][1] < 8.0 and r[1][1] is None,
   "one boundary between the two send MTMs, open above (%s)" % [(x[0], x[1]) for x in r])
ok(abs(plan["total"] - (450 + 400 + 40)) < 1e-9, "the split's total counts the agreement (%g)" % plan["total"])

# Hot senders into balanced receivers against both sides hot: only recv_mtm.
hot_send = rep("hot_send", 8.0, 1.1, {"native": 100.0, "fast": 150.0, "scattered:block_count=8": 50.0})
both = rep("both", 8.0, 8.0, {"native": 100.0, "fast": 45.0, "scattered:block_count=8": 90.0})
plan2 = t.decide([hot_send, both], items, 0.10)[0]
ok(plan2["key"] == "recv_mtm" and [x[2] for x in plan2["ranges"]] == ["scattered:block_count=8", "fast"],
   "split on recv_mtm (got %s, %s)" % (plan2["key"], [x[2] for x in plan2["ranges"]]))

# The agreement (30 us x 20 calls) costs more than the split gains over
# scattered alone (1350 - 850 = 500 us): one rule on comm_size alone.
dear = [dict(x, agree_us=30.0) for x in (moe, zipf)]
plan3 = t.decide(dear, items, 0.10)[0]
ok(plan3["key"] is None and plan3["ranges"][0][2] == "scattered:block_count=8",
   "an agreement dearer than the split's gain keeps one rule (%s, %s)"
   % (plan3["key"], plan3["ranges"][0][2]))

# Dense against sparse blocks of one average (the lab's power-law rows at
# P = 256): only the bytes per non-empty block tell them apart.
small = {64: ["native", "tuna_hier", "scattered"]}
dense = rep("dense", 1.1, 1.1, {"native": 100.0, "tuna_hier": 45.0, "scattered": 60.0},
            avg_nonempty=60.0)
sparse = rep("sparse", 1.1, 1.1, {"native": 100.0, "tuna_hier": 70.0, "scattered": 50.0},
             avg_nonempty=106.6)
plan4 = t.decide([sparse, dense], small, 0.10)[0]
r4 = plan4["ranges"]
ok(plan4["key"] == "avg_nonempty" and [x[2] for x in r4] == ["tuna_hier", "scattered"],
   "split on avg_nonempty: dense blocks tuna_hier, sparse ones scattered (%s, %s)"
   % (plan4["key"], [x[2] for x in r4]))
# An average is not whole bytes: the ranges meet, so no value between two
# integers falls to no rule.
ok(len(r4) == 2 and r4[0][0] == 0 and r4[0][1] == r4[1][0] and 60.0 < r4[0][1] < 106.6,
   "the two ranges meet between 60 and 106.6 (%s)" % [(x[0], x[1]) for x in r4])

class Runner:
    def command(self, rep, items, csvf):
        return ["skewshim-bench", "--replay", "job.jsonl:%d" % rep["index"], "--algos", ",".join(items)]
    def shown(self, cmd):
        return " ".join(cmd)
a = types.SimpleNamespace(margin=0.10, live=False, platform="gpu-h200", mode="det")
t.write_policy(os.path.join(os.environ["OUT"], "send.yaml"), [plan], a, "skewshim-tune (test)", "test job", Runner())
t.write_policy(os.path.join(os.environ["OUT"], "recv.yaml"), [plan2], a, "skewshim-tune (test)", "test job", Runner())
t.write_policy(os.path.join(os.environ["OUT"], "nonempty.yaml"), [plan4], a, "skewshim-tune (test)", "test job", Runner())
EOF
rc=$?
cat "$tmp/tap"
n=$(grep -c '^\(not \)\{0,1\}ok ' "$tmp/tap")
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
ran=$n
[ "$rc" -eq 0 ] && [ "$ran" -eq 12 ]
ok $? "the python part ran all 12 checks (rc $rc, $ran ran)"
# two_ranges NAME MATCHER LOW HIGH: the tuned policy NAME.yaml loads and holds
# two MATCHER ranges at P = 64, [0, t] then [t, inf], running LOW and HIGH
# (any item where they are empty).
two_ranges() {
    if [ ! -x "$chk" ]; then
        n=$((n + 1)); echo "ok $n # SKIP $chk not built"; n=$((n + 1)); echo "ok $n # SKIP $chk not built"
        return
    fi
    "$chk" -v "$tmp/$1.yaml" > "$tmp/$1.out" 2>&1
    rc=$?
    [ $rc -eq 0 ] || sed 's/^/# /' "$tmp/$1.out"
    ok $rc "the $2 policy loads"
    grep -q "comm_size=\[64, 64\] $2=\[0, [0-9.]*\] -> $3" "$tmp/$1.out" &&
        grep -q "comm_size=\[64, 64\] $2=\[[0-9.]*, inf\] -> $4" "$tmp/$1.out"
    ok $? "the loader reads two $2 ranges${3:+, $3 then $4}"
}
two_ranges send send_mtm
two_ranges recv recv_mtm
two_ranges nonempty avg_nonempty_bytes tuna_hier scattered
# The rule it measured tuna_hier for keeps the policy's pay checks off (they
# would pass it over with a NIC per rank below 128 saved messages); the
# scattered one has no such key.
grep -q "use: tuna_hier, tuna_hier: {pay_check: false}}" "$tmp/nonempty.yaml" &&
    ! grep "use: scattered" "$tmp/nonempty.yaml" | grep -q pay_check
ok $? "the tuned tuna_hier rule sets pay_check: false, the scattered one not"
echo "1..$n"
