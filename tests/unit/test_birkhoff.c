#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Birkhoff decomposition: embedding keeps the bottleneck, stages are
 * permutations, they sum exactly to the embedded matrix, and their number
 * stays within N^2 - 2N + 2. */
#include <stdlib.h>
#include <string.h>

#include "birkhoff.h"
#include "tap.h"
#include "xorshift.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { return xorshift64(&rng_state); }

static uint64_t max_line_sum(const uint64_t *a, int n)
{
    uint64_t t = 0;
    for (int i = 0; i < n; i++) {
        uint64_t r = 0, c = 0;
        for (int j = 0; j < n; j++) {
            r += a[(size_t)i * n + j];
            c += a[(size_t)j * n + i];
        }
        if (r > t) t = r;
        if (c > t) t = c;
    }
    return t;
}

/* Every property the planner relies on; returns a reason or NULL. */
static const char *check(const uint64_t *a, int n, const skewshim_bvn *b)
{
    size_t nn = (size_t)n * n;
    if (b->target != max_line_sum(a, n))
        return "target is not the largest row/column sum";
    for (size_t x = 0; x < nn; x++)
        if (b->embedded[x] < a[x])
            return "embedding removed traffic";
    for (int i = 0; i < n; i++) {
        uint64_t r = 0, c = 0;
        for (int j = 0; j < n; j++) {
            r += b->embedded[(size_t)i * n + j];
            c += b->embedded[(size_t)j * n + i];
        }
        if (r != b->target || c != b->target)
            return "embedded matrix not doubly stochastic";
    }
    if (b->nstages > n * n - 2 * n + 2)
        return "too many stages";
    uint64_t *sum = calloc(nn, sizeof *sum);
    int *used = malloc((size_t)n * sizeof *used);
    const char *why = NULL;
    uint64_t wsum = 0;
    for (int k = 0; k < b->nstages && !why; k++) {
        if (!b->weight[k])
            why = "zero-weight stage";
        wsum += b->weight[k];
        memset(used, 0, (size_t)n * sizeof *used);
        for (int i = 0; i < n && !why; i++) {
            int j = b->perm[(size_t)k * n + i];
            if (j < 0 || j >= n || used[j]++)
                why = "stage is not a permutation";
            else
                sum[(size_t)i * n + j] += b->weight[k];
        }
    }
    if (!why && wsum != b->target)
        why = "weights do not sum to the target";
    if (!why && memcmp(sum, b->embedded, nn * sizeof *sum))
        why = "stages do not sum to the embedded matrix";
    free(sum);
    free(used);
    return why;
}

static void run_case(const char *name, const uint64_t *a, int n)
{
    skewshim_bvn b;
    int rc = skewshim_bvn_decompose(a, n, &b);
    TAP_OK(rc == 0, "%s: decompose succeeds", name);
    if (rc)
        return;
    const char *why = check(a, n, &b);
    TAP_OK(!why, "%s (N=%d, %d stages): %s", name, n, b.nstages, why ? why : "valid");
    skewshim_bvn_free(&b);
}

int main(void)
{
    /* N = 1: one stage carrying everything, or none for zero. */
    uint64_t one = 42, zero1 = 0;
    run_case("N=1", &one, 1);
    {
        skewshim_bvn b;
        skewshim_bvn_decompose(&zero1, 1, &b);
        TAP_OK(b.nstages == 0 && b.target == 0, "N=1 zero: no stages");
        skewshim_bvn_free(&b);
    }
    /* N = 2 with a zero row: the auxiliary part fills it. */
    uint64_t two[4] = { 5, 3, 0, 0 };
    run_case("N=2 zero row", two, 2);
    {
        skewshim_bvn b;
        skewshim_bvn_decompose(two, 2, &b);
        TAP_OK(b.target == 8 && b.embedded[2] + b.embedded[3] == 8,
               "N=2: target 8 kept, zero row padded to 8");
        skewshim_bvn_free(&b);
    }
    uint64_t zeros[16] = { 0 };
    run_case("N=4 all zero", zeros, 4);
    /* FAST Fig. 9 style: column D (index 3) sums to 14, the bottleneck. */
    uint64_t fig9[16] = {
        0, 2, 3, 4,
        3, 0, 1, 5,
        2, 4, 0, 5,
        5, 1, 2, 0,
    };
    run_case("Fig.9-like 4x4", fig9, 4);
    {
        skewshim_bvn b;
        skewshim_bvn_decompose(fig9, 4, &b);
        TAP_OK(b.target == 14, "Fig.9-like: bottleneck 14 kept (got %llu)",
               (unsigned long long)b.target);
        skewshim_bvn_free(&b);
    }
    /* Permutation input: exactly one stage. */
    uint64_t perm[9] = { 0, 7, 0, 0, 0, 7, 7, 0, 0 };
    {
        skewshim_bvn b;
        skewshim_bvn_decompose(perm, 3, &b);
        TAP_OK(b.nstages == 1 && b.weight[0] == 7, "permutation: one stage");
        skewshim_bvn_free(&b);
    }
    /* Random dense, sparse and heavy-tailed matrices of many sizes. */
    for (int n = 1; n <= 40; n += (n < 8 ? 1 : 7)) {
        for (int kind = 0; kind < 3; kind++) {
            size_t nn = (size_t)n * n;
            uint64_t *a = malloc(nn * sizeof *a);
            for (size_t x = 0; x < nn; x++) {
                uint64_t v = rnd();
                if (kind == 0) a[x] = v % 1000001;
                else if (kind == 1) a[x] = (v % 5 == 0) ? v % 97 : 0;
                else a[x] = (v % 7 == 0) ? (v >> 20) % (1ull << 40) : v % 3;
            }
            char name[64];
            snprintf(name, sizeof name, "random kind %d", kind);
            run_case(name, a, n);
            free(a);
        }
    }
    /* Degenerate input is refused, not crashed on. */
    {
        skewshim_bvn b;
        TAP_OK(skewshim_bvn_decompose(&one, 0, &b) == -1, "N=0 rejected");
    }
    return TAP_DONE();
}
