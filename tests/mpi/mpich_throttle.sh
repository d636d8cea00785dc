#!/bin/sh
# The lab reads "MPICH at its defaults" as the shim's scattered schedule
# with 32 exchanges in flight (doc/performance.md, "Against MPICH's default
# throttle").  This holds the claim against the MPICH the shim is built
# with: tests/mpi/ucx_probe.c counts the UCX posts a rank makes between two
# progress calls inside one MPI_Alltoallv at 40 ranks (two batches).
# MPICH's own call must have 64 in flight (32 receives and 32 sends, its
# MPIR_CVAR_ALLTOALL_THROTTLE), the shim's scattered (block_count 32) as
# many less its own block, which it copies.  With a throttle of 4, as
# SimGrid's MPICH selector runs it, both must show 8 (the shim in a CUDA
# build up to 20, below): that shows the probe sees batches at all.  MPIR_CVAR_NOLOCAL=1 sends
# every message through UCX, where the probe sees it.  Blocks of 64 KiB go
# by rendezvous, so no batch completes without a progress call (eager
# blocks may, and two batches then read as one).  A CUDA build agrees on
# where the buffers live first, and its allreduce's posts may run into the
# first batch: MPICH's recursive doubling at 40 ranks (32 + 8) posts at
# most 12 on a rank (one to fold the 8 extra ranks in, 5 send-receive
# rounds, one to send the result back), and its small messages can
# complete without a progress call (73 seen once, where 62 + 10 was the
# bound before): up to 12 more than the batch.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
if [ "$SKEWSHIM_MPI" != mpich ]; then
    skip "MPICH only (this build: $SKEWSHIM_MPI)"
    done_testing
fi
PROBE="$TESTDIR/libucx_probe.so"
PROG="$TESTDIR/batches"
${CC:-mpicc} -shared -fPIC -O2 -o "$PROBE" "$top_srcdir/tests/mpi/ucx_probe.c" -ldl > "$TESTDIR/cc.out" 2>&1 &&
    ${CC:-mpicc} -O2 -o "$PROG" "$top_srcdir/tests/mpi/batches.c" -ldl >> "$TESTDIR/cc.out" 2>&1
rc=$?
[ $rc -ne 0 ] && sed 's/^/# /' "$TESTDIR/cc.out"
ok $rc "probe and program build with ${CC:-mpicc}"
N=40
run() {   # run PRELOAD [ENV...]: one exchange of 64 KiB blocks; its batches line
    pre=$1; shift
    mpirun_n $N env MPIR_CVAR_NOLOCAL=1 LD_PRELOAD="$pre" "$@" "$PROG" 65536 || return 1
    grep '^batches:' "$TESTDIR/out"
}
# field LINE NAME: "lo hi" of NAME=lo-hi
field() { echo "$1" | sed -n "s/.* $2=\([0-9]*\)-\([0-9]*\).*/\1 \2/p"; }
line=$(run "$PROBE")
ok $? "MPICH's MPI_Alltoallv under the probe ($line)"
if [ "$(field "$line" posts)" = "0 0" ]; then
    skip "this MPICH does not send through UCX (ch4:ucx): the probe sees nothing"
    done_testing
fi
[ "$(field "$line" in_flight)" = "64 64" ] && [ "$(field "$line" bursts)" = "2 2" ]
ok $? "MPICH's default alltoallv has 32 exchanges in flight, in 2 batches, at P=$N"
line=$(run "$PROBE" MPIR_CVAR_ALLTOALL_THROTTLE=4)
[ "$(field "$line" in_flight)" = "8 8" ]
ok $? "with MPIR_CVAR_ALLTOALL_THROTTLE=4 the probe sees 8 ($line)"
printf 'version: 1\nlog: {level: off}\ndefault: scattered\n' > "$TESTDIR/s32.yaml"
printf 'version: 1\nlog: {level: off}\ndefault: scattered\nscattered: {block_count: 4}\n' > "$TESTDIR/s4.yaml"
shim=$(preload "$PROBE")
cuda=0
grep -q '^#define SKEWSHIM_HAVE_CUDA 1' "$top_builddir/config.h" 2>/dev/null && cuda=1
# expect LINE HOST-ONLY CUDA-LO CUDA-HI: in_flight exactly HOST-ONLY on every
# rank in a host-only build, within [CUDA-LO, CUDA-HI] in a CUDA build.
expect() {
    if [ $cuda = 0 ]; then
        [ "$(field "$1" in_flight)" = "$2 $2" ]
    else
        set -- $(field "$1" in_flight) "$3" "$4"
        [ -n "$2" ] && [ "$1" -ge "$3" ] && [ "$2" -le "$4" ]
    fi
}
line=$(run "$shim" SKEWSHIM_CONFIG="$TESTDIR/s32.yaml") && expect "$line" 62 62 74
ok $? "the shim's scattered (block_count 32) has as many in flight ($line)"
line=$(run "$shim" SKEWSHIM_CONFIG="$TESTDIR/s4.yaml") && expect "$line" 8 8 20
ok $? "and with block_count 4, 8 ($line)"
done_testing
