/* Workload generators shared by the tests and the benchmark.  Pure C.
 * Every generator is deterministic in (kind, P, S, param, seed, topk,
 * tokens), so all ranks compute the same matrix without communicating.
 * All blocks lie in [0, S]; the kinds marked "max S" always contain a block
 * of exactly S (when P >= 1 and, for hot kinds, P >= 2).
 */
#ifndef SKEWSHIM_WORKLOAD_H
#define SKEWSHIM_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>
#include "topology/topo.h"

typedef enum skewshim_wl_kind {
    SKEWSHIM_WL_EQUAL = 0,   /* every block S (max S) */
    SKEWSHIM_WL_UNIFORM,     /* uniform integers in [0, S] (Bruck / TuNA papers) */
    SKEWSHIM_WL_NORMAL,      /* normal, mean S/2, sd S*param (default 0.25),
                                truncated to [0, S] by resampling */
    SKEWSHIM_WL_POWER,       /* power law of the Bruck / TuNA papers: row i gets
                                c_j = S * x^j, j = 0..P-1, shuffled per row;
                                x = param (default 0.95, must be < 1) (max S) */
    SKEWSHIM_WL_ZIPF,        /* Zipf(s), s = param (default 0.8; FAST's MoE traces
                                show 0.4..0.9): the P*P pairs are ranked by a
                                seeded permutation and the pair of rank k (1-based)
                                gets S / k^s, so a few senders and receivers carry
                                the elephant flows (max S) */
    SKEWSHIM_WL_ZERO,        /* every block 0 */
    SKEWSHIM_WL_HOT_SEND,    /* rank seed % P sends S to everyone, the others
                                S*param (default 1/16) (max S) */
    SKEWSHIM_WL_HOT_RECV,    /* everyone sends S to rank seed % P, S*param
                                (default 1/16) elsewhere (max S) */
    SKEWSHIM_WL_MOE,         /* MoE top-k routing (SABRE): each rank routes
                                `tokens` tokens to topk distinct experts drawn
                                from a Zipf(param, default 0.8) popularity over
                                P experts, one expert per rank; block (i,j) =
                                tokens of i routed to j, scaled so the largest
                                block is S (max S unless nothing is routed) */
    SKEWSHIM_WL_COUNT
} skewshim_wl_kind;

typedef struct skewshim_wl {
    int kind;
    uint64_t S;              /* largest block, in elements */
    double param;            /* kind-specific; <= 0 selects the default */
    uint64_t seed;
    int topk;                /* MoE: experts per token (default 2, at most P) */
    int tokens;              /* MoE: tokens per rank (default 1024) */
} skewshim_wl;

const char *skewshim_wl_name(int kind);          /* "equal", "uniform", ... */
int skewshim_wl_from_name(const char *name);      /* -1 when unknown */

/* "uniform", "zipf(0.4)", "moe(s=0.8,k=2)": the kind with its parameters,
 * defaults written out for MoE; the label logs and CSVs carry. */
void skewshim_wl_label(const skewshim_wl *w, char *out, size_t len);

/* counts[i*P + j]: elements rank i sends rank j.  Returns 0, or -1 for an
 * unknown kind, P < 1 or an allocation failure. */
int skewshim_wl_matrix(const skewshim_wl *w, int P, uint64_t *counts);

/* MoE only: the unscaled routing, tokens[i*P + j] = tokens of rank i sent to
 * expert j.  Each row sums to tokens * topk.  Returns 0 or -1. */
int skewshim_wl_moe_tokens(const skewshim_wl *w, int P, uint64_t *tokens);

/* Load matrix number `index` (0-based, in file order) of a log written at
 * level matrix (doc/log-format.md).  m is allocated here; *ranks_per_node
 * and *type_size get the values the log recorded.  Lines that are not
 * matrix records are skipped.  Returns 0, or -1 with a message naming the
 * file and line in err. */
int skewshim_wl_replay_load(const char *path, int index, skewshim_matrix *m,
                            int *ranks_per_node, int *type_size,
                            char *err, size_t errlen);

#endif
