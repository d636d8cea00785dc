/* The skew log: JSON Lines.  Per call (level calls / matrix), a record
 * written by rank 0 of the communicator once the call's time and figures are
 * known as the max and sum over ranks.  They are gathered without a
 * collective per call:
 * each rank keeps its records in a ring; when the ring is full, when the
 * communicator is freed and at finalize, the ring is merged with one
 * reduction (every rank reaches that point at the same call index, so the
 * reduction is safe).  At finalize, a job summary.
 */
#ifndef SKEWSHIM_LOG_H
#define SKEWSHIM_LOG_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include "policy.h"
#include "schedule/sched.h"
#include "topology/topo.h"
#include "vocab.h"

typedef struct skewshim_record {
    uint64_t index;               /* call index on its communicator */
    int comm_id, comm_size, nnodes;
    int algo;                     /* skewshim_algo_id */
    int why, rule, reason;        /* SKEWSHIM_WHY_*, rule index, fallback reason */
    int decided;                  /* SKEWSHIM_DECIDED_*: the same on every rank */
    int buffers;
    /* this rank's row and column; traffic_known is 0 where the call was
     * not described (in place).  The merge reduces them (max and sum over
     * ranks) into the call's figures below, so no call needs a collective
     * of its own to be logged. */
    skewshim_rank_traffic traffic;
    uint64_t phase2;              /* this rank's skewshim_topo_phase2_msgs */
    int traffic_known;
    /* the call's figures, set by the merge */
    uint64_t total_bytes, max_block_bytes;
    double mean_block_bytes;
    double mean_nonempty_bytes;   /* total_bytes / blocks of one byte or more */
    uint64_t max_msgs;            /* the busiest rank's non-empty blocks to or from others */
    uint64_t max_phase2;          /* the busiest rank's tuna_hier inter-node messages (topo.h) */
    double send_mtm_inter, recv_mtm_inter, send_mtm_all, recv_mtm_all;
    /* reduced over ranks at merge time: time and rounds by max, the rest by sum */
    double time;                  /* seconds */
    uint64_t rounds;
    uint64_t messages, bytes_sent, bytes_forwarded;
    /* planner extras, -1 / 0 when not applicable */
    int regime, stages, cache_hit, nics;
    int64_t repeats;              /* agreed repeat count; -1 where nothing agreed */
    double t_pred, t_lb;
    uint64_t meta_bytes;
    double meta_time;
    uint64_t tmp_bytes;
} skewshim_record;

typedef struct skewshim_ring {
    skewshim_record *r;
    int n, cap;
    void *scratch;          /* a degraded rank 0's receive side, per flush */
} skewshim_ring;

/* Open the job's log (rank-local FILE; pattern expanded with %j %r %p).
 * level OFF opens nothing.  jobid must be identical on all ranks. */
int skewshim_log_open(const skewshim_policy *p, int world_rank, const char *jobid);
void skewshim_log_close(void);
int skewshim_log_level(void);
int skewshim_log_sample(void);
/* A call record.  Buffered in the ring; merged and written by rank 0 of comm
 * when the ring is full (collective over pcomm). */
int skewshim_ring_push(skewshim_ring *ring, const skewshim_record *rec, MPI_Comm pcomm, int rank);
/* Merge and write what is buffered (collective over pcomm). */
int skewshim_ring_flush(skewshim_ring *ring, MPI_Comm pcomm, int rank);
/* The same flush in two halves, for finalize: start it on every live
 * communicator (SKEWSHIM_RING_NREQ PMPI_Ireduce; reqs[] may come back
 * MPI_REQUEST_NULL), wait on
 * all the requests together (PMPI_Waitall), then finish each ring (rank 0
 * writes).  Blocking flushes in a loop could deadlock, as ranks belong to
 * different sub-communicators.  Every flush is built on these, so blocking
 * and finalize flushes of one ring always match. */
enum { SKEWSHIM_RING_NREQ = 3 };
int skewshim_ring_flush_start(skewshim_ring *ring, MPI_Comm pcomm, int rank,
                              MPI_Request reqs[SKEWSHIM_RING_NREQ]);
int skewshim_ring_flush_finish(skewshim_ring *ring, int rank);
void skewshim_ring_free(skewshim_ring *ring);
/* Level matrix: the full traffic matrix of a sampled call, written by rank 0.
 * Format (doc/log-format.md): {"matrix": {"call": i, "comm": id, "P": n,
 * "ranks_per_node": q, "type_size": 1, "bytes": [[row 0], [row 1], ...]}} */
int skewshim_log_matrix(int comm_id, uint64_t index, const skewshim_matrix *m,
                        const skewshim_topo *t);
/* Job summary at finalize: calls and time by algorithm, fallback reasons,
 * bytes (skewshim_totals, src/vocab.h).  Written to the log and, when
 * asked, to stderr (rank 0). */
int skewshim_log_summary(const skewshim_totals *t, MPI_Comm world, int to_stderr);
void skewshim_record_json(const skewshim_record *r, FILE *f);

#endif
