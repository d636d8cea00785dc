/* Birkhoff(-von Neumann) decomposition of a nonnegative integer matrix, as
 * FAST (paper 004, section 4.2) uses it for the server-level traffic matrix.
 * Pure C, exact integer arithmetic.
 *
 * The matrix is first embedded into a scaled doubly stochastic one: lighter
 * rows and columns receive auxiliary (virtual) entries until every row and
 * column sums to T, the largest row or column sum of the input, so the true
 * bottleneck is kept.  The embedded matrix is then written as
 * sum_k weight[k] * Perm_k with at most N^2 - 2N + 2 permutations, the
 * weights summing exactly to T.
 */
#ifndef SKEWSHIM_BIRKHOFF_H
#define SKEWSHIM_BIRKHOFF_H

#include <stdint.h>

typedef struct skewshim_bvn {
    int n;                /* N */
    int nstages;          /* permutations found */
    uint64_t target;      /* T: every row and column of the embedded matrix sums to it */
    uint64_t *embedded;   /* [N*N] input plus auxiliary entries */
    uint64_t *weight;     /* [nstages] */
    int *perm;            /* [nstages*N]: perm[k*N + i] = column matched to row i */
} skewshim_bvn;

/* Embed a ([n*n], row-major) into out ([n*n]) so that all row and column
 * sums equal the largest row or column sum of a, which is returned in
 * *target.  O(N^2), deterministic (deficits filled in index order).
 * Returns 0, or -1 on allocation failure. */
int skewshim_bvn_embed(const uint64_t *a, int n, uint64_t *out, uint64_t *target);

/* Embed and decompose.  Returns 0, or -1 on allocation failure or n < 1.
 * A zero matrix yields no stages. */
int skewshim_bvn_decompose(const uint64_t *a, int n, skewshim_bvn *out);
void skewshim_bvn_free(skewshim_bvn *b);

#endif
