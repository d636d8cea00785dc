/* The schedule: the one data structure every planner produces and every
 * executor consumes.  Pure C, no MPI, no CUDA.
 *
 * A schedule is a list of moves grouped into stages.  A move copies `bytes`
 * bytes from (src rank, src_loc, src_off) to (dst rank, dst_loc, dst_off).
 * src == dst is a local copy.  Stages run in order; the moves of one stage
 * run concurrently, so a planner never lets a stage read a temp region that
 * the same stage writes.  Every rank derives the same schedule (or its own
 * slice of it) from the same inputs, so senders and receivers agree on the
 * order of messages between any pair: the executor posts them in list order
 * and MPI's non-overtaking rule matches them.
 *
 * Offsets in SKEWSHIM_LOC_SEND / SKEWSHIM_LOC_RECV are relative to the start
 * of one user block: src_blk names the send block (its destination rank) and
 * dst_blk the receive block (its origin rank).  The executor adds the user's
 * displacement (displ * extent) of that block, so planners need only block
 * sizes, never the user's displacements, and a plan can be shared by ranks
 * that hold only the size matrix.  SKEWSHIM_LOC_TMP offsets are into the
 * shim's temporary buffer of that rank (src_blk / dst_blk unused, -1), whose
 * size the schedule declares before anything runs.
 */
#ifndef SKEWSHIM_SCHED_H
#define SKEWSHIM_SCHED_H

#include <stddef.h>
#include <stdint.h>

enum skewshim_loc {
    SKEWSHIM_LOC_SEND = 0,
    SKEWSHIM_LOC_RECV = 1,
    SKEWSHIM_LOC_TMP = 2
};

typedef struct skewshim_move {
    int32_t src, dst;       /* ranks in the communicator */
    uint8_t src_loc, dst_loc;
    uint16_t stage;
    uint32_t flags;         /* SKEWSHIM_MOVE_* */
    int32_t src_blk, dst_blk; /* user block for LOC_SEND / LOC_RECV, else -1 */
    uint64_t src_off, dst_off, bytes;
} skewshim_move;

/* The move crosses a node boundary (set by planners that know topology, used
 * by the simulator and the device executor to pick the link). */
#define SKEWSHIM_MOVE_INTER 0x1u

/* Counters every schedule reports, so tests hold them to the papers'
 * formulas and the log shows what a call cost. */
typedef struct skewshim_sched_stats {
    uint64_t rounds;          /* communication rounds (stages that send) */
    uint64_t messages;        /* point-to-point messages, local copies excluded */
    uint64_t bytes_sent;      /* bytes on the wire, forwarded bytes included */
    uint64_t bytes_forwarded; /* bytes sent by a rank that is not their origin */
    uint64_t bytes_copied;    /* local copies */
} skewshim_sched_stats;

typedef struct skewshim_sched {
    int nranks;               /* P */
    int rank;                 /* owner when this is one rank's slice, -1 when global */
    skewshim_move *moves;
    size_t nmoves, cap;
    int nstages;
    uint64_t *tmp_bytes;      /* per rank (global) or [0] (slice) */
    skewshim_sched_stats stats;
} skewshim_sched;

/* Lifecycle.  All return 0 on success, -1 on allocation failure. */
int skewshim_sched_init(skewshim_sched *s, int nranks, int rank);
void skewshim_sched_reset(skewshim_sched *s);   /* keep memory, drop moves */
void skewshim_sched_free(skewshim_sched *s);
int skewshim_sched_add(skewshim_sched *s, const skewshim_move *m);
/* Shorthand for the common case.  Zero-byte moves are dropped here, so no
 * planner has to special-case empty blocks. */
int skewshim_sched_move(skewshim_sched *s, int stage,
                        int src, int src_loc, int src_blk, uint64_t src_off,
                        int dst, int dst_loc, int dst_blk, uint64_t dst_off,
                        uint64_t bytes, uint32_t flags);

/* Sort moves by stage (stable, so per-pair order is kept), fold each move
 * that continues its pair's previous move in the stage on both sides into
 * that one, set nstages, tmp_bytes from the moves that touch TMP, and stats
 * (for `rank`, or summed over all ranks when rank < 0).  Planners call it
 * last. */
int skewshim_sched_finish(skewshim_sched *s);

/* Copy the moves of one rank (src or dst equal to rank) into out, keeping
 * order; out->rank = rank, out->tmp_bytes[0] is that rank's temp size. */
int skewshim_sched_slice(const skewshim_sched *global, int rank, skewshim_sched *out);

/* Stats of one rank computed from a global schedule. */
void skewshim_sched_rank_stats(const skewshim_sched *s, int rank, skewshim_sched_stats *st);
/* The messages of s if the moves of one sender to one receiver within a
 * stage travelled as one (distinct (stage, src, dst) with src != dst): what
 * coalescing them would leave.  -1 when out of memory. */
int64_t skewshim_sched_pair_messages(const skewshim_sched *s);

/* Pure checker used by property tests: replays a global schedule stage by
 * stage on byte arrays (every send byte tagged with its origin, destination
 * and offset) and reports whether every receive byte of every rank arrived
 * exactly once with the right content, nothing was read or written outside
 * a user block or the declared temp, and no stage reads temp that the same
 * stage writes.  bytes is the P*P size matrix (bytes[i*P+j]: i sends j).
 * Returns 0 when correct, else -1 and a message in err. */
int skewshim_sched_verify(const skewshim_sched *global, const uint64_t *bytes,
                          char *err, size_t errlen);

#endif
