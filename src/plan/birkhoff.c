#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Birkhoff decomposition with exact integers.  Each round peels off the
 * matched permutation with weight equal to its smallest matched entry, so at
 * least one entry reaches zero per round; the residual keeps equal row and
 * column sums, so a perfect matching on its positive support always exists
 * (Hall/Koenig).  Every round leaves the residual on a proper face of the
 * Birkhoff polytope, whence the N^2 - 2N + 2 bound for any matching choice.
 *
 * The matching is repaired, not rebuilt: only rows whose matched entry hit
 * zero are freed and re-augmented (Kuhn's augmenting paths), which is what
 * keeps the scheduler in microseconds for tens of servers.
 */
#include <stdlib.h>
#include <string.h>

#include "birkhoff.h"

int skewshim_bvn_embed(const uint64_t *a, int n, uint64_t *out, uint64_t *target)
{
    size_t nn = (size_t)n * (size_t)n;
    uint64_t t = 0;
    memcpy(out, a, nn * sizeof *out);
    uint64_t *rdef = calloc((size_t)n * 2 + 1, sizeof *rdef);
    if (!rdef) {
        *target = 0;
        return -1;
    }
    uint64_t *cdef = rdef + n;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            rdef[i] += a[(size_t)i * n + j];
            cdef[j] += a[(size_t)i * n + j];
        }
    for (int i = 0; i < n; i++) {
        if (rdef[i] > t) t = rdef[i];
        if (cdef[i] > t) t = cdef[i];
    }
    for (int i = 0; i < n; i++) {
        rdef[i] = t - rdef[i];
        cdef[i] = t - cdef[i];
    }
    /* Row and column deficits have the same total (N*T minus the matrix
     * sum), so a two-pointer sweep (north-west corner rule) pairs them off. */
    int i = 0, j = 0;
    while (i < n && j < n) {
        if (!rdef[i]) { i++; continue; }
        if (!cdef[j]) { j++; continue; }
        uint64_t x = rdef[i] < cdef[j] ? rdef[i] : cdef[j];
        out[(size_t)i * n + j] += x;
        rdef[i] -= x;
        cdef[j] -= x;
    }
    free(rdef);
    *target = t;
    return 0;
}

typedef struct matcher {
    int n;
    const uint64_t *r;  /* residual */
    int *row_to, *col_to;
    int *seen;          /* per column: stamp of the search that visited it */
    int stamp;
} matcher;

static int augment(matcher *m, int i)
{
    const uint64_t *row = m->r + (size_t)i * m->n;
    /* A free positive column first: most repairs end here, no recursion. */
    for (int j = 0; j < m->n; j++)
        if (row[j] && m->col_to[j] < 0) {
            m->row_to[i] = j;
            m->col_to[j] = i;
            return 1;
        }
    for (int j = 0; j < m->n; j++) {
        if (!row[j] || m->seen[j] == m->stamp)
            continue;
        m->seen[j] = m->stamp;
        if (augment(m, m->col_to[j])) {
            m->row_to[i] = j;
            m->col_to[j] = i;
            return 1;
        }
    }
    return 0;
}

void skewshim_bvn_free(skewshim_bvn *b)
{
    free(b->embedded);
    free(b->weight);
    free(b->perm);
    memset(b, 0, sizeof *b);
}

int skewshim_bvn_decompose(const uint64_t *a, int n, skewshim_bvn *out)
{
    memset(out, 0, sizeof *out);
    if (n < 1)
        return -1;
    size_t nn = (size_t)n * (size_t)n;
    int maxst = n * n - 2 * n + 2;
    out->n = n;
    out->embedded = malloc(nn * sizeof *out->embedded);
    out->weight = malloc((size_t)maxst * sizeof *out->weight);
    out->perm = malloc((size_t)maxst * (size_t)n * sizeof *out->perm);
    uint64_t *res = malloc(nn * sizeof *res);
    int *ints = malloc((size_t)n * 3 * sizeof *ints);
    if (!out->embedded || !out->weight || !out->perm || !res || !ints)
        goto fail;
    if (skewshim_bvn_embed(a, n, out->embedded, &out->target))
        goto fail;
    memcpy(res, out->embedded, nn * sizeof *res);

    matcher m = { .n = n, .r = res, .row_to = ints, .col_to = ints + n,
                  .seen = ints + 2 * n, .stamp = 0 };
    for (int i = 0; i < 3 * n; i++)
        ints[i] = -1;

    uint64_t left = out->target;
    while (left > 0) {
        for (int i = 0; i < n; i++) {
            if (m.row_to[i] >= 0)
                continue;
            m.stamp++;
            if (!augment(&m, i))
                goto fail;      /* impossible for equal sums: a bug, not data */
        }
        if (out->nstages >= maxst)
            goto fail;
        uint64_t w = left;
        for (int i = 0; i < n; i++) {
            uint64_t x = res[(size_t)i * n + m.row_to[i]];
            if (x < w) w = x;
        }
        int k = out->nstages++;
        out->weight[k] = w;
        memcpy(out->perm + (size_t)k * n, m.row_to, (size_t)n * sizeof(int));
        for (int i = 0; i < n; i++) {
            int j = m.row_to[i];
            res[(size_t)i * n + j] -= w;
            if (!res[(size_t)i * n + j]) {
                m.row_to[i] = -1;
                m.col_to[j] = -1;
            }
        }
        left -= w;
    }
    free(res);
    free(ints);
    return 0;
fail:
    free(res);
    free(ints);
    skewshim_bvn_free(out);
    return -1;
}
