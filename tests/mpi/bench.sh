#!/bin/sh
# skewshim-bench holds every item's result to a reference byte for byte:
# PMPI_Alltoallv's output (--reference mpi) or the pattern the bench sent
# (--reference pattern, the lab's thousands of ranks).  Both must pass every
# host algorithm on skewed counts with zero blocks, and both must stop the
# run on one wrong byte, as must a timed call of --vary.
. "${top_srcdir:-.}/tests/mpi/lib.sh"
BENCH="$top_builddir/skewshim-bench"
if [ ! -x "$BENCH" ]; then
    skip "skewshim-bench not built"
    done_testing
fi
ALGOS=native,scattered,pairwise,bruck2,padded_bruck,tuna,tuna:radix=3,tuna_hier,auto
reports=0; runs=0; damages=0; damage_runs=0
for n in 3 4; do
    for ref in mpi pattern; do
        SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n "$n" "$BENCH" --algos "$ALGOS" \
            --workload zipf --sizes 16,1k --iters 1 --warmup 0 --ranks-per-node 2 \
            --reference "$ref" --csv "$TESTDIR/$ref.csv"
        ok $? "P=$n --reference $ref: every host algorithm verified"
    done
    # The same rows either way: the reference changes what is checked, not what runs.
    cut -d, -f1-3 "$TESTDIR/mpi.csv" > "$TESTDIR/a"; cut -d, -f1-3 "$TESTDIR/pattern.csv" > "$TESTDIR/b"
    [ "$(wc -l < "$TESTDIR/a")" -gt 10 ] && cmp -s "$TESTDIR/a" "$TESTDIR/b"
    ok $? "P=$n: both references give the same $(($(wc -l < "$TESTDIR/a") - 1)) rows"
    # A byte flipped in a gap of the receive buffer (1), inside its largest
    # block, or inside the largest block of the send buffer: the pattern
    # reference checks all three without the copies the MPI one keeps.
    for ref in mpi pattern; do
        for where in 1 block send; do
            SKEWSHIM_BENCH_TEST_FLIP=$where SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n "$n" "$BENCH" \
                --algos scattered --sizes 16 --iters 1 --warmup 0 --reference "$ref" > /dev/null 2>&1
            rc=$?
            # Exit 3 is the bench's verification abort and nothing else
            # (tools/bench/buffers.c).  Its message is not required: rank 0
            # prints it just before MPI_Abort, and the launcher may tear the
            # job down before it forwards that line.
            said=no; runs=$((runs + 1))
            grep -q "VERIFICATION FAILED: scattered" "$TESTDIR/out" && said=yes
            [ $rc -eq 3 ]
            ok $? "P=$n --reference $ref: one flipped byte ($where) stops the run (exit $rc, message seen: $said)"
            # Before it aborts, the bench repeats the call on the same inputs
            # (the flip is not repeated, so the repeat comes out right),
            # except when the send buffer, an input, was changed.  Rank 0
            # says so before the barrier that precedes its last line.
            if [ $said = yes ]; then
                case $where in
                    send) want="not repeated, the send buffer was modified" ;;
                    *) want="the same call repeated on the same inputs came out right on every rank" ;;
                esac
                grep -q "^skewshim-bench: scattered on .*: $want" "$TESTDIR/out"
                ok $? "P=$n --reference $ref: after the flipped byte ($where): $want"
                reports=$((reports + 1))
            else
                # Counted either way, so the suite's total does not depend
                # on what the launcher forwarded; the count of reports seen
                # is held to at least one below.
                skip "P=$n --reference $ref: after the flipped byte ($where): the launcher dropped rank 0's report"
            fi
            # Held to the pattern, the failing rank also says how far the
            # damage goes: one byte, in a gap (offset 1) or in one block.
            if [ "$ref" = pattern ] && [ "$where" != send ]; then
                damage_runs=$((damage_runs + 1))
                if grep -q "rank 0: scattered" "$TESTDIR/out"; then
                    damages=$((damages + 1))
                    case $where in 1) want="1 bytes wrong in 0 blocks and 1 gaps" ;;
                                   *) want="1 bytes wrong in 1 blocks and 0 gaps" ;; esac
                    grep -q "rank 0: scattered.*; $want; got" "$TESTDIR/out"
                    ok $? "P=$n --reference pattern: the damage of a flipped byte ($where) is counted ($want)"
                    # ... and where it lies: one byte, first = last, with its
                    # address and page offset (a stretch ending on a page
                    # boundary points below the program, doc/lab.md).
                    grep -q "rank 0: scattered.*; bytes \([0-9]*\)-\1 wrong, at 0x[0-9a-f]*-0x[0-9a-f]* (page offsets [0-9]*-[0-9]*)" "$TESTDIR/out"
                    ok $? "P=$n --reference pattern: the flipped byte ($where) is located (one byte, address and page offset)"
                else
                    skip "P=$n --reference pattern: the damage of a flipped byte ($where): the launcher dropped rank 0's report"
                    skip "P=$n --reference pattern: the flipped byte ($where) located: the launcher dropped rank 0's report"
                fi
            fi
        done
    done
done
# The skips above must not hide a report that never comes: a launcher
# drops it now and then, not on every one of these aborted runs.
[ $reports -ge 1 ] && [ $damages -ge 1 ]
ok $? "aborted runs: rank 0's reports came through (repeat verdict in $reports of $runs runs, damage in $damages of $damage_runs)"
# A fault that repeats: the byte flipped in the repeat too is reported as
# such, with the repeat's own per-rank line.
SKEWSHIM_BENCH_TEST_FLIP=block-twice SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n 3 "$BENCH" \
    --algos scattered --sizes 16 --iters 1 --warmup 0 --reference pattern > /dev/null 2>&1
rc=$?
if grep -q "VERIFICATION FAILED: scattered" "$TESTDIR/out"; then
    [ $rc -eq 3 ] && grep -q "rank 0: repeat: scattered.*1 bytes wrong in 1 blocks" "$TESTDIR/out" &&
        grep -q "^skewshim-bench: scattered on .*came out wrong again" "$TESTDIR/out"
    ok $? "P=3: a flipped byte that comes back in the repeat is reported as wrong again (exit $rc)"
else
    [ $rc -eq 3 ]
    ok $? "P=3: a flipped byte that comes back in the repeat stops the run (exit $rc, message not seen)"
fi
# --reference none: timing only (the lab folds every rank's buffers onto one
# copy, doc/lab.md).  Nothing is checked, so a flipped byte goes through,
# and every row and the header say so: no unchecked figure reads as checked.
SKEWSHIM_BENCH_TEST_FLIP=block SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n 4 "$BENCH" \
    --algos scattered,bruck2,auto --workload zipf --sizes 16,1k --iters 1 --warmup 0 \
    --reference none --csv "$TESTDIR/none.csv"
ok $? "P=4 --reference none: a flipped byte is not checked (timing only)"
n_rows=$(awk 'NR > 1' "$TESTDIR/none.csv" | wc -l)
n_unchecked=$(awk -F, 'NR > 1 && $11 ~ /^(unchecked|ran=[a-z_0-9]+ unchecked)$/' "$TESTDIR/none.csv" | wc -l)
[ "$n_rows" -eq 6 ] && [ "$n_unchecked" -eq 6 ] && grep -q "^# --reference none: timing only" "$TESTDIR/out"
ok $? "P=4 --reference none: $n_unchecked of $n_rows rows say unchecked, and the header says timing only"
# --vary: a matrix of its own for every iteration, each timed call checked
# after its timing (an exchange that changes every call, as MoE routing).
SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n 4 "$BENCH" --algos native,scattered,fast,sabre,auto \
    --workload moe --sizes 1k --iters 2 --warmup 1 --ranks-per-node 2 --vary
ok $? "P=4 --vary: every item checked on 3 matrices"
grep -q "seed=1 vary" "$TESTDIR/out"
ok $? "P=4 --vary: the header says so"
# The planned column: how many timed calls planned (missed the plan cache),
# empty for schedules without one.  Two plan items keep their plans from the
# verifying call; five evict each other in its four slots (LRU, cyclic), so
# every timed call plans; --vary plans every call.
field() {   # CSV, algo label, K -> that row's K-th field from the end (1: the
            # last); counted from the end, as a MoE workload's label is
            # quoted and holds commas.  Header first: "# name" must be it.
    awk -F, -v a="$2" -v k="$3" -v want="$4" 'NR == 1 { if ($(NF - k + 1) != want) print "no " want " column"; next }
                                             index($0, "," a ",") { print $(NF - k + 1) }' "$1"
}
planned() { field "$1" "$2" 4 planned; }
SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n 4 "$BENCH" --algos native,sabre,fast \
    --workload zipf --sizes 1k --iters 1 --warmup 0 --ranks-per-node 2 --csv "$TESTDIR/p2.csv"
[ "$(planned "$TESTDIR/p2.csv" native)" = "" ] && [ "$(planned "$TESTDIR/p2.csv" sabre)" = 0 ] &&
    [ "$(planned "$TESTDIR/p2.csv" fast)" = 0 ]
ok $? "P=4, two plan items: the timed calls hit the plan cache (planned 0; native: none)"
SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n 4 "$BENCH" \
    --algos sabre,sabre:mtm_threshold=1,sabre:mtm_threshold=1000,fast,fast:pipeline=false \
    --workload zipf --sizes 1k --iters 1 --warmup 0 --ranks-per-node 2 --csv "$TESTDIR/p5.csv"
[ "$(planned "$TESTDIR/p5.csv" sabre)" = 1 ] && [ "$(planned "$TESTDIR/p5.csv" 'fast(pipeline=false)')" = 1 ] &&
    grep -q " sabre .* planned 1/1" "$TESTDIR/out"
ok $? "P=4, five plan items: each timed call planned, in the CSV and the table"
SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n 4 "$BENCH" --algos sabre --workload moe --sizes 1k \
    --iters 2 --warmup 0 --ranks-per-node 2 --vary --csv "$TESTDIR/pv.csv"
[ "$(planned "$TESTDIR/pv.csv" sabre)" = 2 ]
ok $? "P=4 --vary: both timed calls planned"
# The mean over the timed calls (what a job pays), how many of them ran the
# agreement, and what they ran when not all the same.  With scattered for
# blocks up to 64 B, auto settles on it at 16 B and reuses it (runs of 1,
# 2, 4: agreed calls 0 1 2 4 7, then 8-11 reused); at 256 B the checked
# call (9) and the first two timed ones (10 11) still take it, then an
# agreed call sees native and starts over, asking more of the new period
# since a trusted one broke: 12 13 14 15 17 agree.  A CUDA build reuses native
# only (where buffers live is a local fact): every 16 B call agrees, and at
# 256 B native is founded as a period only once the 16 B outcomes, agreed
# every call, have left the reuse history (18 agreed calls): all 8 timed
# calls agree (3 before the history was read), nothing stale.
printf 'version: 1\nlog: {level: off}\nrules:\n  - {max_block_bytes: [0, 64], use: scattered}\n' \
    > "$TESTDIR/mix.yaml"
SKEWSHIM_CONFIG="$TESTDIR/mix.yaml" mpirun_n 3 "$BENCH" --algos auto --sizes 16,256 --iters 8 \
    --warmup 0 --csv "$TESTDIR/mix.csv"
ok $? "P=3, auto over a change of sizes: verified"
if grep -q '^#define SKEWSHIM_HAVE_CUDA 1' "$top_builddir/config.h" 2>/dev/null; then
    want_small=8 want_large="8/" want_table="ran=native agreed 8/8$"
else
    want_small=4 want_large="5/scattered:2;native:6" want_table="ran=native agreed 5/8 mix scattered:2;native:6"
fi
small=$(awk -F, '$5 == 16' "$TESTDIR/mix.csv") large=$(awk -F, '$5 == 256' "$TESTDIR/mix.csv")
mean_ok=$(awk -F, 'NR > 1 && !($8 <= $(NF - 2) && $(NF - 2) <= $9) { bad = 1 } END { print bad ? "no" : "yes" }' \
    "$TESTDIR/mix.csv")
[ "$(field "$TESTDIR/mix.csv" auto 2 agreed | head -1)" = "$want_small" ] &&
    [ "$(echo "$small" | awk -F, '{ print $NF }')" = "" ] &&
    [ "$(echo "$large" | awk -F, '{ print $(NF - 1) "/" $NF }')" = "$want_large" ] &&
    [ "$(field "$TESTDIR/mix.csv" auto 3 mean_us | wc -l)" = 2 ] && [ "$mean_ok" = yes ] &&
    grep -q " auto .* $want_table" "$TESTDIR/out"
ok $? "P=3, auto over a change of sizes: 16 B agreed $want_small of 8, 256 B agreed/ran ${want_large}, means within min-max"
# The repeat count on agreed calls (src/core/agree.c): every call agrees
# (reuse_agreement: 0); 16 B runs scattered, whose outcome no rule on
# repeats can read, so after 16 such agreed calls a call no longer compares
# its sizes.  At 256 B a rule on repeats >= 2 runs pairwise: the first 256 B
# call (the bench's check) is not compared and the next one compares
# against a stale row, so the count reaches 2 at the fourth 256 B call
# (timed calls: native on 2, pairwise on 18); at log level calls every call
# compares and it reaches 2 at the third (native on 1).  Were agreed calls
# never compared, the count would never reach 2 (native on all 20).
for level in summary calls; do
    printf 'version: 1\nreuse_agreement: 0\nlog: {level: %s, path: "%s/rep-%s.jsonl"}\nrules:\n' \
        $level "$TESTDIR" $level > "$TESTDIR/rep.yaml"
    printf '  - {max_block_bytes: [0, 64], use: scattered}\n  - {repeats: [2, inf], use: pairwise}\n' \
        >> "$TESTDIR/rep.yaml"
    SKEWSHIM_CONFIG="$TESTDIR/rep.yaml" mpirun_n 3 "$BENCH" --algos auto --sizes 16,256 --iters 20 \
        --warmup 0 --csv "$TESTDIR/rep.csv"
    rc=$?
    got=$(awk -F, '$5 == 256 { print $NF }' "$TESTDIR/rep.csv")
    want="native:2;pairwise:18"
    [ $level = calls ] && want="native:1;pairwise:19"
    [ $rc -eq 0 ] && [ "$got" = "$want" ]
    ok $? "P=3, a rule on repeats >= 2 after 21 calls no rule on repeats reads, log level $level: 256 B ran ${got:-?} (want $want)"
done
# --alternate: a job of two exchanges in turn, both checked first (the other
# one first, so auto's calls alternate from its first call).  auto runs
# scattered at 16 B and native at 256 B; once both have come back and
# been borne out once more (calls 0-4) the runs begin, and the agreed calls
# are 0 1 2 3 4 6 9 14 23: of the 16 timed calls (3 5 ... 33), 3 agree (3 9
# 23).  Without the alternation
# followed, all 16 would.  A CUDA build reuses only the native turns: every
# 16 B call agrees.
for pair in "256 16" "16 256"; do
    set -- $pair
    SKEWSHIM_CONFIG="$TESTDIR/mix.yaml" mpirun_n 3 "$BENCH" --algos native,auto --sizes $1 \
        --alternate $2 --iters 16 --warmup 0 --csv "$TESTDIR/alt.csv"
    rc=$?
    got="$(field "$TESTDIR/alt.csv" auto 2 agreed)/$(awk -F, '$6 == "auto" { print $11 }' "$TESTDIR/alt.csv")"
    want=3/ran=native
    [ $1 = 16 ] && want=3/ran=scattered
    if [ $1 = 16 ] && grep -q '^#define SKEWSHIM_HAVE_CUDA 1' "$top_builddir/config.h" 2>/dev/null; then
        want=16/ran=scattered
    fi
    [ $rc -eq 0 ] && [ "$got" = "$want" ] && grep -q "^# --alternate $2: " "$TESTDIR/out"
    ok $? "P=3, auto at $1 B in turn with $2 B: verified, agreed/ran $got (want $want)"
done
# Three in turn: pairwise at 256 B, native at 4 KiB, scattered at 16 B (the
# timed one), each checked first in that order: auto's calls go P N S P N
# S ...; once all three have come back and been borne out once more (calls
# 0-6) the runs begin, and the agreed calls are 0-6 8 11 16 25 42: of the 16
# timed calls (5 8 ... 50), 3 agree (5 8 11); all 16 did before a period of
# 3 was followed, and do in a CUDA build, which reuses only the native turns.
printf 'version: 1\nlog: {level: off}\nrules:\n  - %s\n  - %s\n' \
    '{max_block_bytes: [0, 64], use: scattered}' '{max_block_bytes: [65, 1024], use: pairwise}' \
    > "$TESTDIR/mix3.yaml"
# in_turn CONFIG CSV WANT WANT_CUDA BENCH-ARGS...: native and auto at P = 3
# in a job of exchanges in turn, verified; auto's timed calls agreed and
# ran WANT (WANT_CUDA in a CUDA build), in $got and $want.
in_turn() {
    cfg=$1 csv=$2 want=$3
    grep -q '^#define SKEWSHIM_HAVE_CUDA 1' "$top_builddir/config.h" 2>/dev/null && want=$4
    shift 4
    SKEWSHIM_CONFIG="$cfg" mpirun_n 3 "$BENCH" --algos native,auto --warmup 0 --csv "$csv" "$@"
    rc=$?
    got="$(field "$csv" auto 2 agreed)/$(awk -F, '$6 == "auto" { print $11 }' "$csv")"
    [ $rc -eq 0 ] && [ "$got" = "$want" ]
}
in_turn "$TESTDIR/mix3.yaml" "$TESTDIR/alt3.csv" 3/ran=scattered 16/ran=scattered \
    --sizes 16 --alternate 256,4k --iters 16 && grep -q "^# --alternate 256,4096: " "$TESTDIR/out"
ok $? "P=3, auto at 16 B in turn with 256 B and 4 KiB: verified, agreed/ran $got (want $want)"
# Five in turn, four alike: native at 256 B, then scattered at 16 B four
# times, the last one timed (N S S S S): the agreed calls are 0-10 12 15 20
# 29 46 79, and of the 16 timed calls (9 14 ... 84) 3 agree (9 29 79).  All
# 16 did before a period of five was followed, and do in a CUDA build,
# which reuses only the native turns.
in_turn "$TESTDIR/mix.yaml" "$TESTDIR/alt5.csv" 3/ran=scattered 16/ran=scattered \
    --sizes 16 --alternate 256,16,16,16 --iters 16 && grep -q "^# --alternate 256,16,16,16: " "$TESTDIR/out"
ok $? "P=3, auto at 16 B after 256 B and three more 16 B: verified, agreed/ran $got (want $want)"
SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n 1 "$BENCH" --alternate 1,2,3,4,5,6,7,8
rc=$?
[ $rc -eq 2 ] && grep -q "bad --alternate '1,2,3,4,5,6,7,8'" "$TESTDIR/out"
ok $? "--alternate with eight sizes is refused (exit $rc)"
SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n 1 "$BENCH" --alternate 1k --vary
rc=$?
[ $rc -eq 2 ] && grep -q "alternate takes a generated workload, without --vary" "$TESTDIR/out"
ok $? "--alternate with --vary is refused (exit $rc)"
SKEWSHIM_BENCH_TEST_FLIP=timed SKEWSHIM_CONFIG="$TESTDIR/quiet.yaml" mpirun_n 4 "$BENCH" \
    --algos scattered --workload moe --sizes 1k --iters 1 --warmup 0 --vary > /dev/null 2>&1
rc=$?
[ $rc -eq 3 ]
ok $? "P=4 --vary: one flipped byte in a timed call stops the run (exit $rc)"
mpirun_n 1 "$BENCH" --reference bogus
rc=$?
grep -q "bad --reference 'bogus'" "$TESTDIR/out"
said=$?
[ $rc -eq 2 ] && [ $said -eq 0 ]
ok $? "--reference bogus is refused (exit $rc)"
done_testing
