#!/bin/sh
# Device-buffer tests for the GPU machine (TAP).  Without a GPU it prints
# "skipped: no GPU" and succeeds, so it can sit in `make check` anywhere.
#
# With a GPU it builds skewshim from a `make dist` tarball against the MPI
# found as `mpicc` (Open MPI on the device machine) and runs the harness
# tests/mpi/alltoallv_check --device:
#   - nccl_fanout, sabre, fast at 2, 4 and 8 ranks, each rank with its own
#     NCCL_HOSTID so that several ranks can share the one GPU (NCCL then
#     talks over its socket transport);
#   - 8 ranks as 2 emulated nodes x 4 (topology.ranks_per_node: 4): CUDA
#     IPC within an emulated node, NCCL between them; once more with
#     SKEWSHIM_IPC=0 (NCCL only);
#   - host-only schedules (tuna, bruck2, scattered) on device buffers,
#     through host staging;
#   - runs without NCCL_HOSTID: NCCL refuses several ranks on one GPU, the
#     shim must say so once and still be right through host staging.
#
# Inputs (environment):
#   SKEWSHIM_TARBALL  the dist tarball (default: skewshim-*.tar.gz in the
#                     current directory, the source tree or .device/;
#                     else one is made with autotools when they exist)
#   SKEWSHIM_DEBS     folder with libyaml-dev / libyaml-0-2 .deb files,
#                     unpacked into the work folder when yaml.h is missing
#                     (default: .device/debs)
#   CUDA_HOME         CUDA toolkit (default: from nvcc, else /usr/local/cuda)
#   MPICC, MPIRUN     default mpicc, mpirun
#   SKEWSHIM_GPU_KEEP=1 keeps the work folder
#   SKEWSHIM_GPU_WORK=DIR uses (and keeps) DIR as the work folder
#   SKEWSHIM_GPU_BUILD_ONLY=1 stops after the build (for tests/gpu/bench.sh)
#   SKEWSHIM_TEST_TIMEOUT seconds one mpirun may take (default 300)
# On the device machine (tool `device`), for example:
#   make dist && mkdir -p .device && cp skewshim-*.tar.gz .device/
#   (cd .device && mkdir -p debs && cd debs && apt-get download libyaml-dev libyaml-0-2)
#   run: tests/gpu/run.sh   with carry [".device"]

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "skipped: no GPU"
    # Under the automake TAP driver a plan is needed: skip the whole file.
    if [ -n "$top_builddir" ]; then echo "1..0 # SKIP no GPU"; fi
    exit 0
fi

tap_n=0
tap_fail=0
ok() { tap_n=$((tap_n + 1)); if [ "$1" -eq 0 ]; then echo "ok $tap_n - $2"; else echo "not ok $tap_n - $2"; tap_fail=$((tap_fail + 1)); fi; }
bail() { echo "Bail out! $1"; exit 1; }
finish() { echo "1..$tap_n"; [ $tap_fail -eq 0 ]; exit $?; }

here=$(pwd)
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
# SKEWSHIM_GPU_WORK names the work folder and keeps it, so that
# tests/gpu/bench.sh can time the very build this script tested.
if [ -n "${SKEWSHIM_GPU_WORK:-}" ]; then
    WORK=$SKEWSHIM_GPU_WORK
    rm -rf "$WORK" && mkdir -p "$WORK" || bail "cannot make $WORK"
else
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/skewshim-gpu.XXXXXX")
    if [ "${SKEWSHIM_GPU_KEEP:-0}" != 1 ]; then trap 'rm -rf "$WORK"' EXIT; fi
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPICC=${MPICC:-mpicc}
MPIRUN=${MPIRUN:-mpirun}
if [ -z "$CUDA_HOME" ]; then
    if command -v nvcc >/dev/null 2>&1; then CUDA_HOME=$(dirname "$(dirname "$(command -v nvcc)")"); else CUDA_HOME=/usr/local/cuda; fi
fi
echo "# GPU: $(nvidia-smi -L | head -1)"
echo "# work folder: $WORK"

# --- the tarball ------------------------------------------------------------
tarball=${SKEWSHIM_TARBALL:-}
if [ -z "$tarball" ]; then
    for d in "$here" "$srcdir" "$srcdir/.device"; do
        t=$(ls -t "$d"/skewshim-*.tar.gz 2>/dev/null | head -1)
        if [ -n "$t" ]; then tarball=$t; break; fi
    done
fi
if [ -z "$tarball" ] && command -v autoreconf >/dev/null 2>&1; then
    echo "# making the tarball with autotools"
    mkdir "$WORK/dist" && tar -C "$srcdir" --exclude=.git --exclude=_build --exclude=.device -cf - . | tar -C "$WORK/dist" -xf -
    (cd "$WORK/dist" && autoreconf -fi && ./configure MPICC="$MPICC" && make dist) > "$WORK/dist.log" 2>&1 \
        || { tail -20 "$WORK/dist.log" | sed 's/^/# /'; bail "make dist failed"; }
    tarball=$(ls "$WORK"/dist/skewshim-*.tar.gz | head -1)
fi
[ -n "$tarball" ] && [ -f "$tarball" ] || bail "no skewshim-*.tar.gz (set SKEWSHIM_TARBALL; see the head of this script)"
case $tarball in /*) ;; *) tarball="$here/$tarball" ;; esac
echo "# tarball: $tarball"

# --- libyaml ------------------------------------------------------------------
CPPFLAGS_X=
LDFLAGS_X=
if ! echo '#include <yaml.h>' | "$MPICC" -E -x c - >/dev/null 2>&1; then
    debs=${SKEWSHIM_DEBS:-$srcdir/.device/debs}
    ls "$debs"/libyaml*.deb >/dev/null 2>&1 || bail "yaml.h missing and no libyaml .deb files in $debs"
    for d in "$debs"/libyaml*.deb; do dpkg -x "$d" "$WORK/yaml" || bail "dpkg -x $d failed"; done
    inc=$(dirname "$(find "$WORK/yaml" -name yaml.h | head -1)")
    lib=$(dirname "$(find "$WORK/yaml" -name 'libyaml*.so*' | head -1)")
    # The -dev package's libyaml.so points at the runtime package's file.
    [ -e "$lib/libyaml.so" ] || ln -sf "$(ls "$lib"/libyaml-0.so.* | head -1)" "$lib/libyaml.so"
    CPPFLAGS_X="-I$inc"
    LDFLAGS_X="-L$lib -Wl,-rpath,$lib"
    export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

# --- NCCL: configure wants DIR/include/nccl.h and DIR/lib64/libnccl.so -------
nccl_arg=
if [ ! -e "$CUDA_HOME/include/nccl.h" ] || [ ! -e "$CUDA_HOME/lib64/libnccl.so" ]; then
    h=
    for f in "$CUDA_HOME/include/nccl.h" /usr/include/nccl.h /usr/local/include/nccl.h; do
        [ -e "$f" ] && { h=$f; break; }
    done
    l=
    for f in "$CUDA_HOME/lib64/libnccl.so" /usr/lib/x86_64-linux-gnu/libnccl.so /usr/lib/x86_64-linux-gnu/libnccl.so.2 \
             /usr/lib64/libnccl.so /usr/lib64/libnccl.so.2 /usr/local/lib/libnccl.so.2; do
        [ -e "$f" ] && { l=$f; break; }
    done
    [ -n "$h" ] && [ -n "$l" ] || bail "NCCL not found (nccl.h: ${h:-none}, libnccl: ${l:-none})"
    mkdir -p "$WORK/nccl/include" "$WORK/nccl/lib64"
    ln -sf "$h" "$WORK/nccl/include/nccl.h"
    ln -sf "$l" "$WORK/nccl/lib64/libnccl.so"
    nccl_arg="--with-nccl=$WORK/nccl"
fi

# --- build ----------------------------------------------------------------------
mkdir "$WORK/build"
tar -xzf "$tarball" -C "$WORK/build" || bail "cannot unpack $tarball"
top=$(ls -d "$WORK"/build/skewshim-* | head -1)
(
    cd "$top" &&
    ./configure MPICC="$MPICC" --with-cuda="$CUDA_HOME" $nccl_arg \
        CPPFLAGS="$CPPFLAGS_X" LDFLAGS="$LDFLAGS_X" &&
    make -j"$(nproc 2>/dev/null || echo 4)" &&
    make -j4 tests/mpi/alltoallv_check
) > "$WORK/build.log" 2>&1
rc=$?
[ $rc -eq 0 ] || tail -30 "$WORK/build.log" | sed 's/^/# /'
ok $rc "build from $(basename "$tarball") with $MPICC"
[ $rc -eq 0 ] || finish
grep -q '^#define SKEWSHIM_HAVE_CUDA 1' "$top/config.h"; ok $? "configure found CUDA"
grep -q '^#define SKEWSHIM_HAVE_NCCL 1' "$top/config.h"; ok $? "configure found NCCL"
CHECK="$top/tests/mpi/alltoallv_check"
# The libtool wrapper may relink on first use, which eight ranks starting
# at once would race on: run the real binary with the library path set.
if [ -x "$top/tests/mpi/.libs/alltoallv_check" ]; then
    CHECK="$top/tests/mpi/.libs/alltoallv_check"
    export LD_LIBRARY_PATH="$top/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

[ "${SKEWSHIM_GPU_BUILD_ONLY:-0}" = 1 ] && finish
printf 'version: 1\nlog: {level: off}\n' > "$WORK/quiet.yaml"
printf 'version: 1\nlog: {level: off}\ntopology: {ranks_per_node: 4}\n' > "$WORK/emul.yaml"

# run N HOSTID(yes|no) CONFIG ARGS...: the harness on device buffers.
# EXTRA_ENV: more VAR=value for the ranks (they inherit mpirun's
# environment on a single machine).
EXTRA_ENV=
run() {
    n=$1; hostid=$2; conf=$3; shift 3
    if [ "$hostid" = yes ]; then
        # Every rank its own host for NCCL: several ranks on the one GPU.
        set -- sh -c 'NCCL_HOSTID=h$OMPI_COMM_WORLD_RANK exec "$@"' sh "$CHECK" --device "$@"
    else
        set -- env -u NCCL_HOSTID "$CHECK" --device "$@"
    fi
    env SKEWSHIM_CONFIG="$conf" $EXTRA_ENV timeout "${SKEWSHIM_TEST_TIMEOUT:-300}" \
        "$MPIRUN" --allow-run-as-root --oversubscribe -np "$n" "$@" > "$WORK/out" 2>&1
    rc=$?
    [ $rc -eq 0 ] || tail -20 "$WORK/out" | sed 's/^/# /'
    return $rc
}
summary() { grep '^alltoallv_check:' "$WORK/out" | tail -1 | sed 's/^alltoallv_check: //'; }

# NCCL (one host per rank), every algorithm with a device path.
for n in 2 4 8; do
    for algo in nccl_fanout sabre fast; do
        run $n yes "$WORK/quiet.yaml" --algo $algo --types byte,int,double --comms world,split
        rc=$?
        if [ $rc -eq 0 ] && grep -q 'NCCL unavailable' "$WORK/out"; then
            echo "# NCCL set-up failed although every rank had its own NCCL_HOSTID"
            rc=1
        fi
        ok $rc "$algo, NCCL, P=$n: $(summary)"
    done
done
# Larger blocks (MB range) once per algorithm.
for algo in nccl_fanout sabre fast; do
    run 4 yes "$WORK/quiet.yaml" --algo $algo --S 262144 --seeds 1 --types double
    ok $? "$algo, NCCL, P=4, blocks up to 2 MiB: $(summary)"
done

# Host-only schedules on device buffers: the shim stages through the host.
for algo in tuna bruck2 scattered; do
    run 4 yes "$WORK/quiet.yaml" --algo $algo --types byte,double
    ok $? "$algo (host schedule), device buffers staged, P=4: $(summary)"
done

# Two emulated nodes of four ranks: IPC inside a node, NCCL between nodes.
for algo in nccl_fanout sabre fast; do
    run 8 yes "$WORK/emul.yaml" --algo $algo --types byte,int --comms world,dup
    ok $? "$algo, 2 nodes x 4 (IPC + NCCL): $(summary)"
done
# SABRE's relay told several NICs a node: lanes are ranks, pieces go to and
# come from node peers over IPC (told one, the relay sends every block
# straight, which the cases above check).
for nics in 4 2; do
    run 8 yes "$WORK/emul.yaml" --algo sabre --param topology.nics_per_node=$nics \
        --param sabre.mtm_threshold=1 --types byte,int
    ok $? "sabre's relay with $nics NICs a node, 2 nodes x 4 (IPC + NCCL): $(summary)"
done
# MB-sized blocks with the receive buffer cleared (cudaMemset on the legacy
# stream) just before every call: IPC pushes from peers must not land
# before that clear has run (the bench verifies every call it checks).
BENCH="$top/.libs/skewshim-bench"
env SKEWSHIM_CONFIG="$WORK/emul.yaml" timeout "${SKEWSHIM_TEST_TIMEOUT:-300}" \
    "$MPIRUN" --allow-run-as-root --oversubscribe -np 8 \
    sh -c 'NCCL_HOSTID=h$OMPI_COMM_WORLD_RANK exec "$@"' sh "$BENCH" --device --ranks-per-node 4 \
    --workload equal --type double --sizes 4m,16m --algos sabre,fast,nccl_fanout --iters 2 --warmup 0 \
    > "$WORK/out" 2>&1
rc=$?
[ $rc -eq 0 ] || tail -20 "$WORK/out" | sed 's/^/# /'
ok $rc "sabre, fast, nccl_fanout, 2 nodes x 4, 4 and 16 MiB blocks, receive buffer cleared before each call"

# The built-in policy's device rules: auto must pick sabre where they fire
# (avg block >= 4 MiB; MTM >= 2.2 with avg block >= 1 MiB) and be right.
for wl in "moe 0.8 4m" "zipf 0.8 64m"; do
    set -- $wl
    env -u SKEWSHIM_CONFIG SKEWSHIM_LOG_LEVEL=off timeout "${SKEWSHIM_TEST_TIMEOUT:-300}" \
        "$MPIRUN" --allow-run-as-root --oversubscribe -np 8 \
        sh -c 'NCCL_HOSTID=h$OMPI_COMM_WORLD_RANK exec "$@"' sh "$BENCH" --device --ranks-per-node 4 \
        --workload "$1" --param "$2" --type double --sizes "$3" --algos auto --iters 2 --warmup 0 \
        > "$WORK/out" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && ! grep -q 'ran=sabre' "$WORK/out"; then
        grep '^[a-z]' "$WORK/out" | tail -2 | sed 's/^/# /'
        rc=1
    fi
    [ $rc -eq 0 ] || tail -20 "$WORK/out" | sed 's/^/# /'
    ok $rc "auto under the built-in policy, 2 nodes x 4, $1 $2, S=$3: runs sabre, verified"
done

for algo in sabre fast; do
    EXTRA_ENV=SKEWSHIM_IPC=0
    run 8 yes "$WORK/emul.yaml" --algo $algo --types byte,int
    rc=$?
    EXTRA_ENV=
    ok $rc "$algo, 2 nodes x 4, IPC off (NCCL only): $(summary)"
done

# No NCCL_HOSTID: NCCL refuses several ranks on one GPU; staging must carry
# the call, and the shim must say so (once, rank 0).
for n in 2 4; do
    for algo in nccl_fanout sabre; do
        run $n no "$WORK/quiet.yaml" --algo $algo --types byte,int
        rc=$?
        warned=$(grep -c 'skewshim: NCCL unavailable' "$WORK/out")
        if [ $rc -eq 0 ] && [ "$warned" -ne 1 ]; then
            echo "# expected one 'NCCL unavailable' warning, saw $warned"
            rc=1
        fi
        ok $rc "$algo without NCCL_HOSTID, P=$n: staged through the host: $(summary)"
    done
done

finish
