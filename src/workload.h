/* Workload generators shared by the tests and the benchmark.  Pure C.
 * Every generator is deterministic in (kind, P, S, param, seed), so all ranks
 * compute the same matrix without communicating.
 */
#ifndef SKEWSHIM_WORKLOAD_H
#define SKEWSHIM_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>
#include "topo.h"

typedef enum skewshim_wl_kind {
    SKEWSHIM_WL_EQUAL = 0,   /* every block S */
    SKEWSHIM_WL_UNIFORM,     /* uniform in [0, S] */
    SKEWSHIM_WL_NORMAL,      /* normal, mean S/2, sd S*param (default 0.25), truncated to [0, S] */
    SKEWSHIM_WL_POWER,       /* power law: S * u^param (param default 3) */
    SKEWSHIM_WL_ZIPF,        /* destination j gets weight 1/(rank of j)^param, scaled so the largest block is S */
    SKEWSHIM_WL_ZERO,        /* every block 0 */
    SKEWSHIM_WL_HOT_SEND,    /* one rank sends S to everyone, the others S/16 */
    SKEWSHIM_WL_HOT_RECV,    /* everyone sends S to one rank, S/16 elsewhere */
    SKEWSHIM_WL_MOE,         /* MoE top-k routing: tokens to experts (one per rank) with Zipf(param) popularity */
    SKEWSHIM_WL_COUNT
} skewshim_wl_kind;

typedef struct skewshim_wl {
    int kind;
    uint64_t S;              /* largest block, in elements */
    double param;            /* kind-specific; <= 0 selects the default */
    uint64_t seed;
    int topk;                /* MoE: experts per token (default 2) */
} skewshim_wl;

const char *skewshim_wl_name(int kind);
int skewshim_wl_from_name(const char *name);      /* -1 when unknown */

/* counts[i*P + j]: elements rank i sends rank j.  Returns 0. */
int skewshim_wl_matrix(const skewshim_wl *w, int P, uint64_t *counts);

/* Load matrix number `index` (0-based, in file order) of a log written at
 * level matrix (doc/log-format.md).  m is allocated here; *ranks_per_node
 * and *type_size get the values the log recorded.  Returns 0, or -1 with a
 * message naming the file and line in err. */
int skewshim_wl_replay_load(const char *path, int index, skewshim_matrix *m,
                            int *ranks_per_node, int *type_size,
                            char *err, size_t errlen);

#endif
