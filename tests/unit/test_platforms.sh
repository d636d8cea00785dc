#!/bin/sh
# The lab's platforms: every platform scripts/skewshim-lab knows has its XML,
# well formed, shipped in the tarball (EXTRA_DIST), and a platform written by
# lab/platforms/gen-gpu.py is what its "Generated:" line makes today, so that
# a figure's platform can be rebuilt from the command its file names.
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
py=${PYTHON3:-python3}
if ! command -v "$py" >/dev/null 2>&1; then
    echo "1..0 # SKIP no python3"
    exit 0
fi
cd "$top_srcdir" || exit 1
exec "$py" - <<'EOF'
import ast, glob, os, re, subprocess, sys
import xml.etree.ElementTree as ET

n = failed = 0
def ok(cond, what):
    global n, failed
    n += 1
    if not cond:
        failed += 1
    print(("ok" if cond else "not ok") + f" {n} - {what}")

driver = open("scripts/skewshim-lab").read()
def table(name):
    m = re.search(r"^" + name + r" = (\{.*?^\})", driver, re.S | re.M)
    return ast.literal_eval(m.group(1)) if m else {}
platforms, nics = table("PLATFORMS"), table("NICS")
ok(len(platforms) >= 10, f"the driver's platform table read ({len(platforms)} platforms)")
ok(set(nics) <= set(platforms), "every platform told its NICs is a platform")

dist = " ".join(open("Makefile.am").read().split("\\\n"))
files = {os.path.basename(f)[:-4]: f for f in glob.glob("lab/platforms/*.xml")}
for name in sorted(set(platforms) | set(files)):
    path = f"lab/platforms/{name}.xml"
    ok(name in files, f"{name}: {path} exists")
    ok(name in platforms, f"{name}: the driver knows it")
    if name not in files:
        continue
    try:
        root = ET.parse(path).getroot()
        ok(root.tag == "platform", f"{name}: well-formed, a <platform>")
    except ET.ParseError as e:
        ok(False, f"{name}: well-formed ({e})")
    ok(re.search(r"(^|\s)" + re.escape(path) + r"(\s|$)", dist) is not None,
       f"{name}: in Makefile.am (shipped)")
    text = open(path).read()
    gen = re.search(r"^  Generated: python3 (lab/platforms/gen-gpu\.py .*)$", text, re.M)
    if gen:
        args = gen.group(1).split()
        out = subprocess.run([sys.executable] + args, capture_output=True, text=True)
        ok(out.returncode == 0 and out.stdout == text,
           f"{name}: gen-gpu.py {' '.join(args[1:])} makes it as it is")
print(f"1..{n}")
sys.exit(1 if failed else 0)
EOF
