# Sourced by the lab's tests (tests/lab/*.sh): where the trees are, the
# TAP counters, and a scratch directory removed on exit.  Sourcing it runs
# nothing else.
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
n=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
# finish: the plan after the tests, for a test whose count is not fixed.
finish() { echo "1..$n"; exit 0; }
# tap_scratch NAME: OUT is a new directory, gone when the test exits.
tap_scratch() {
    OUT=$(mktemp -d "${TMPDIR:-/tmp}/skewshim-$1.XXXXXX") ||
        { echo "Bail out! no scratch folder in ${TMPDIR:-/tmp}"; exit 1; }
    trap 'rm -rf "$OUT"' EXIT
}
# tap_need_smpirun: the whole test is skipped without SimGrid.
tap_need_smpirun() {
    command -v smpirun >/dev/null 2>&1 && return 0
    echo "1..0 # SKIP smpirun not found (apt-get install libsimgrid-dev)"
    exit 0
}
