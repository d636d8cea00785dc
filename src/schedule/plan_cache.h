#ifndef SKEWSHIM_PLAN_CACHE_H
#define SKEWSHIM_PLAN_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "plan.h"
#include "schedule/sched.h"

#define SKEWSHIM_PLAN_CACHE_SLOTS 4

/* Everything besides the matrix that a plan depends on.  Zero-filled before
 * use so padding hashes and compares deterministically. */
typedef struct skewshim_plan_key {
    int algo, nranks, ranks_per_node, nnodes, nics, pipeline;
    double alpha, mtm_threshold;
} skewshim_plan_key;

typedef struct skewshim_plan_entry {
    int used;
    uint64_t hash, last_use;
    skewshim_plan_key key;
    uint64_t *matrix;
    size_t n;
    skewshim_sched slice;          /* this rank's moves */
    uint64_t max_tmp;              /* largest temp over all ranks: rank-invariant */
    skewshim_plan_report rep;
    double t_pred, t_lb;
} skewshim_plan_entry;

typedef struct skewshim_plan_cache {
    skewshim_plan_entry slot[SKEWSHIM_PLAN_CACHE_SLOTS];
    uint64_t clock;
    uint64_t *gathered;            /* [P][P+3]: rows, receive-count digests, agreement;
                                      NULL once a miss handed it to its entry */
    uint64_t *digest;              /* [P]: digests of the gathered matrix's columns */
    int matrix_p;
    skewshim_plan_entry *cur;      /* the plan of the current call */
    int cur_hit;
    uint64_t meta_bytes;
    double meta_time;
} skewshim_plan_cache;

/* Frees a communicator's cache (a skewshim_plan_cache, or NULL). */
void skewshim_plan_cache_free(void *cache);
void skewshim_plan_entry_clear(skewshim_plan_entry *e);
/* Hash of the n column digests of a matrix (schedule/digest.h) and the key. */
uint64_t skewshim_plan_hash(const uint64_t *digest, int n, const skewshim_plan_key *k);
/* The entry holding the n x n matrix whose row i is rows + i * stride. */
skewshim_plan_entry *skewshim_plan_lookup(skewshim_plan_cache *pc, uint64_t hash,
                                          const skewshim_plan_key *k, const uint64_t *rows,
                                          int n, size_t stride);
skewshim_plan_entry *skewshim_plan_victim(skewshim_plan_cache *pc);

/* The plan hashes of a communicator's latest matrix calls, most recent
 * first, as many as the cache holds.  Unlike the cache, which is each
 * rank's own memory and can differ after an allocation failed on one rank,
 * this moves with agreed figures only (the gathered matrix and the key), so
 * every rank predicts a miss alike: the pay-back guard prices the planning
 * of a matrix it has not seen lately (doc/policy.md). */
typedef struct skewshim_plan_seen {
    uint64_t hash[SKEWSHIM_PLAN_CACHE_SLOTS];
    int n;
} skewshim_plan_seen;

/* Whether hash is among the latest; records it as the most recent. */
int skewshim_plan_seen_note(skewshim_plan_seen *s, uint64_t hash);

#endif
