/* State shared by the files of src/core: the process-wide settings decided
 * at MPI_Init, the totals for the finalize summary, the tool overrides. */
#ifndef SKEWSHIM_CORE_INTERNAL_H
#define SKEWSHIM_CORE_INTERNAL_H

#include <mpi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "call.h"
#include "log.h"
#include "policy.h"
#include "policy/params.h"

typedef struct skewshim_state {
    int initialized, finalized;
    int lazy;                     /* set up on a first call, without a collective */
    int no_summary;               /* settings differed across ranks: no summary */
    int disabled;                 /* pass-through: SKEWSHIM_DISABLE or a bad policy */
    skewshim_reason disabled_reason;
    int env_forced;               /* algorithm id from SKEWSHIM_ALGORITHM, or -1 */
    int tool_forced;              /* from skewshim_force_algorithm, or -1 */
    int tool_disabled;            /* from skewshim_set_disabled */
    skewshim_policy policy;
    char jobid[96];
    int world_rank, world_size;
    int thread_level;
    MPI_Op agree_op;
    /* tool overrides (include/skewshim.h): bit i is entry i of the
     * parameter table; ranks_per_node and nics_per_node have the two bits
     * after them (api.c) */
    unsigned ov_mask;
    skewshim_params ov;
    int ov_ranks_per_node, ov_nics_per_node;
    /* totals for the summary, under lock */
    pthread_mutex_t lock;
    skewshim_totals totals;
    int next_comm_id;
} skewshim_state;

extern skewshim_state skewshim_g;

/* describe.c: a call's own facts and the MPI library's own argument
 * checks, from c's arguments into the communicator's scratch (the reason
 * this rank alone cannot run it, or none); packing around a host schedule
 * where a datatype is not one ordered run (pack points the call at dense
 * buffers and keeps the user's receive buffer for unpack). */
skewshim_reason skewshim_call_describe(skewshim_call *c);
int skewshim_call_pack(skewshim_call *c, void **user_recv);
int skewshim_call_unpack(skewshim_call *c, void *user_recv);

/* run.c: the planned schedule on the call's buffers (host, device, or
 * host staging), its stats and temp reported into c; an MPI error code. */
int skewshim_call_run(skewshim_call *c, const skewshim_algo *a);

/* init.c */
int skewshim_init_after_mpi(int thread_level);  /* after PMPI_Init*: policy, log, keyval */
void skewshim_init_lazy(void);                   /* first call without our MPI_Init */
void skewshim_finalize_before_mpi(void);         /* before PMPI_Finalize */

/* agree.c: the one agreement allreduce */
/* Grow a per-communicator scratch buffer to at least need bytes (kept
 * between calls, freed with the communicator): MPI_ERR_NO_MEM or success. */
int skewshim_scratch_grow(void **buf, uint64_t *cap, uint64_t need);
int skewshim_agree_setup(void);
int skewshim_agree(skewshim_call *c);
void skewshim_local_facts(const skewshim_call *c, uint64_t *v, int nv);
/* The agreement from the gathered size matrix instead (global.c gathers,
 * with the three words of skewshim_agree_local_tail after each row's hash:
 * reason, buffers, and skewshim_repeat_local's word, changed). */
void skewshim_agree_local_tail(const skewshim_call *c, uint64_t changed, uint64_t *tail);
/* This rank's share of the agreed repeat count: 1 when its row or column
 * of sizes differs from those at the communicator's last agreed or reused
 * call (which it then keeps), or differed at a reused call since the last
 * agreement, else 0.  Once per agreed call.  Compared where the call
 * gathers the matrix, while one of the communicator's last agreed outcomes
 * could read the count (skewshim_repeat_note_outcome), or where a per-call
 * log reports it; elsewhere the call counts as a change. */
uint64_t skewshim_repeat_local(const skewshim_call *c, int gathers);
/* After an agreed call's choice: whether its outcome could read the count. */
void skewshim_repeat_note_outcome(skewshim_call *c, int could_read);
/* A reused call's share of the same, noted for the next agreement:
 * compared where its outcome could read the count or a log reports it,
 * else a change. */
void skewshim_repeat_reused(const skewshim_call *c, int could_read);
/* The agreed count from the max over ranks of that word, into c->ag. */
void skewshim_repeat_agreed(skewshim_call *c, uint64_t any_changed);
void skewshim_agree_matrix(skewshim_call *c, const uint64_t *rows, size_t rowlen, int mismatch);

/* allgather.c: every rank's row of row values into all[size][row] in
 * ceil(log2 size) rounds; mine holds this rank's row on entry and is
 * scratch after. */
int skewshim_allgather_rows(uint64_t *mine, uint64_t *all, size_t row, int rank, int size,
                            MPI_Comm comm);

/* dtype.c: size, extent and true lb of t; returns 1 when its data is one
 * ordered run of bytes (typemap order = address order, elements touching),
 * the layout the byte-moving schedules can read and write in place. */
int skewshim_type_layout(MPI_Datatype t, int *size, MPI_Aint *extent, MPI_Aint *true_lb);

/* The ranks_per_node in force (tool override, else policy; 0 = shared split). */
int skewshim_ranks_per_node(void);
/* The nics_per_node in force (tool override, else policy). */
int skewshim_nics_per_node(void);
/* Effective parameters: the chosen ones with tool overrides applied. */
void skewshim_apply_overrides(skewshim_params *p);

/* global.c: SABRE / FAST on host buffers */
/* The P x P exchange as the call's one collective: gathers the matrix and
 * fills c->ag from it (so SABRE / FAST plan without a second exchange). */
int skewshim_global_exchange(skewshim_call *c);
/* The plan step of SABRE / FAST (the algorithm table's plan): gathers the
 * matrix unless the agreement did, plans this rank's slice (or finds it
 * cached) into c->plan, reports it, returns the largest temp of any rank. */
uint64_t skewshim_global_plan(skewshim_call *c);
/* This rank's share of the agreement's "held": *miss 0 when its row and
 * column of sizes are those of the current plan's matrix, with that plan's
 * hash in *hash (0 and 1 when there is none). */
void skewshim_global_held(const skewshim_call *c, uint64_t *miss, uint64_t *hash);

/* inplace.c: MPI_IN_PLACE.  describe points the send arguments at the
 * receive side (before the call is described); bytes is the staging's
 * rank-invariant bound (0 when not in place), counted against the memory
 * cap; stage copies the blocks out and makes the copy the send side. */
void skewshim_inplace_describe(skewshim_call *c);
uint64_t skewshim_inplace_bytes(const skewshim_call *c);
int skewshim_inplace_stage(skewshim_call *c);

/* api.c */
void skewshim_set_last(const skewshim_call *c, skewshim_reason reason);

void skewshim_count_fallback(skewshim_reason r, MPI_Comm comm);

#endif
