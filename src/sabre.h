/* SABRE's intra-node greedy balancing (paper 000, Algorithm 1) as a pure
 * function, shared by the highly-skewed planner (src/plan/sabre.c) and the
 * unit tests.  No MPI, no CUDA, no allocation.
 *
 * One call solves one subproblem: the blocks one source node sends to one
 * destination node, to be spread over `nlanes` proxies (NIC groups) of the
 * source node so that no proxy carries more than
 *     L_max = ceil(L_total / nlanes) + floor((alpha - 1) * ceil(L_total / nlanes)).
 * L_max is never below the average, so everything always fits; it is
 * computed once from integers and one double product, so every rank derives
 * the same value from the same matrix.
 *
 * Blocks are taken in decreasing size (ties: lower index first).  A block
 * goes to its preferred lane when it fits there, else to the least loaded
 * lane (ties: lower lane) when it fits there, else that lane takes the
 * largest chunk that fills it to L_max and the remainder goes back to the
 * front of the queue.  Every split fills one lane to L_max, so there are at
 * most nlanes splits and at most nitems + nlanes pieces.
 */
#ifndef SKEWSHIM_SABRE_H
#define SKEWSHIM_SABRE_H

#include <stddef.h>
#include <stdint.h>

/* One assigned piece: bytes [off, off + bytes) of item `item` go to `lane`. */
typedef struct skewshim_sabre_piece {
    int item;
    int lane;
    uint64_t off, bytes;
} skewshim_sabre_piece;

/* Upper bound on the pieces skewshim_sabre_balance writes. */
#define SKEWSHIM_SABRE_MAX_PIECES(nitems, nlanes) ((size_t)(nitems) + (size_t)(nlanes))

/* The tolerance L_max for a subproblem of `total` bytes (alpha < 1 is
 * treated as 1; nlanes < 1 as 1). */
uint64_t skewshim_sabre_lmax(uint64_t total, int nlanes, double alpha);

/* Balance items (sizes `bytes[i]`, preferred lane `pref[i]` in [0, nlanes),
 * or -1 for none) over nlanes lanes.  Zero-byte items produce no piece.
 * Writes the pieces to `out` (room for SKEWSHIM_SABRE_MAX_PIECES), their
 * count to *npieces, and the final per-lane loads to lane_load[nlanes]
 * (required: it is the working array).  `order` is scratch for nitems ints.
 * Returns 0, or -1 on bad arguments. */
int skewshim_sabre_balance(const uint64_t *bytes, const int *pref, int nitems,
                           int nlanes, double alpha, int *order,
                           skewshim_sabre_piece *out, size_t *npieces,
                           uint64_t *lane_load);

#endif
