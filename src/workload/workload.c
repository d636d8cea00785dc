#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Workload generators (DESIGN.md section 5).  Pure C: the benchmark and the
 * tests call these on every rank and rely on identical output everywhere,
 * so the only randomness is a self-contained PRNG seeded from the request,
 * never rand() or the clock. */

#include "workload/workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const wl_names[SKEWSHIM_WL_COUNT] = {
    "equal", "uniform", "normal", "power", "zipf",
    "zero", "hot_send", "hot_recv", "moe",
};

const char *skewshim_wl_name(int kind)
{
    if (kind < 0 || kind >= SKEWSHIM_WL_COUNT)
        return "unknown";
    return wl_names[kind];
}

void skewshim_wl_label(const skewshim_wl *w, char *out, size_t len)
{
    /* The defaults are spelled out so that two labels are equal exactly
     * when the generators draw the same matrix shape. */
    if (w->kind == SKEWSHIM_WL_MOE)
        snprintf(out, len, "moe(s=%g,k=%d)", w->param > 0 ? w->param : 0.8,
                 w->topk > 0 ? w->topk : 2);
    else if (w->param > 0)
        snprintf(out, len, "%s(%g)", skewshim_wl_name(w->kind), w->param);
    else
        snprintf(out, len, "%s", skewshim_wl_name(w->kind));
}

int skewshim_wl_from_name(const char *name)
{
    if (!name)
        return -1;
    for (int k = 0; k < SKEWSHIM_WL_COUNT; k++)
        if (strcmp(name, wl_names[k]) == 0)
            return k;
    return -1;
}

/* ---- PRNG: splitmix64.  Small, fast, good enough for workload shapes, and
 * its output is defined by integer arithmetic only, so it is the same on
 * every platform and compiler. */

typedef struct rng { uint64_t s; } rng;

static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* One independent stream per (seed, kind, row): a row's values then do not
 * depend on how many draws earlier rows needed (rejection sampling). */
static rng rng_stream(uint64_t seed, int kind, uint64_t row)
{
    rng r = { seed };
    r.s = rng_next(&r) ^ ((uint64_t)kind << 56) ^ (row * 0xd1b54a32d192ed03ULL);
    rng_next(&r);
    return r;
}

/* Uniform in [0, n] without modulo bias. */
static uint64_t rng_upto(rng *r, uint64_t n)
{
    if (n == UINT64_MAX)
        return rng_next(r);
    uint64_t span = n + 1, lim = UINT64_MAX - UINT64_MAX % span;
    uint64_t x;
    do
        x = rng_next(r);
    while (x >= lim);
    return x % span;
}

/* Uniform in [0, 1). */
static double rng_unit(rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

static uint64_t round_clamp(double v, uint64_t S)
{
    if (!(v > 0.0))
        return 0;
    double r = floor(v + 0.5);
    return r >= (double)S ? S : (uint64_t)r;
}

static void shuffle(rng *r, uint64_t *a, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)rng_upto(r, i - 1);
        uint64_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

/* ---- generators ---- */

static void gen_normal(const skewshim_wl *w, int P, uint64_t *c)
{
    double sd = (w->param > 0 ? w->param : 0.25) * (double)w->S;
    double mean = (double)w->S / 2.0;
    for (int i = 0; i < P; i++) {
        rng r = rng_stream(w->seed, SKEWSHIM_WL_NORMAL, (uint64_t)i);
        for (int j = 0; j < P; j++) {
            uint64_t v = w->S + 1;
            /* Resampling truncates without piling mass on 0 and S.  A huge
             * sd makes acceptance rare; its limit is uniform on [0, S], so
             * after a few misses draw that instead of looping on. */
            for (int tries = 0; tries < 64 && v > w->S; tries++) {
                double u1 = 1.0 - rng_unit(&r), u2 = rng_unit(&r);
                double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
                double x = mean + sd * z;
                if (x >= -0.5 && x < (double)w->S + 0.5)
                    v = round_clamp(x, w->S);
            }
            if (v > w->S)
                v = rng_upto(&r, w->S);
            c[(size_t)i * P + j] = v;
        }
    }
}

static int gen_power(const skewshim_wl *w, int P, uint64_t *c)
{
    double x = w->param > 0 ? w->param : 0.95;
    if (x > 1.0)
        return -1;   /* blocks would exceed S */
    for (int i = 0; i < P; i++) {
        uint64_t *row = c + (size_t)i * P;
        for (int j = 0; j < P; j++)
            row[j] = round_clamp((double)w->S * pow(x, j), w->S);
        row[0] = w->S;   /* exact, whatever pow rounds to */
        rng r = rng_stream(w->seed, SKEWSHIM_WL_POWER, (uint64_t)i);
        shuffle(&r, row, (size_t)P);
    }
    return 0;
}

static int gen_zipf(const skewshim_wl *w, int P, uint64_t *c)
{
    double s = w->param > 0 ? w->param : 0.8;
    size_t n = (size_t)P * P;
    /* c doubles as the permutation: c[pair] = popularity rank - 1. */
    for (size_t k = 0; k < n; k++)
        c[k] = k;
    rng r = rng_stream(w->seed, SKEWSHIM_WL_ZIPF, 0);
    shuffle(&r, c, n);
    for (size_t k = 0; k < n; k++)
        c[k] = c[k] == 0 ? w->S
                         : round_clamp((double)w->S / pow((double)(c[k] + 1), s), w->S);
    return 0;
}

static int gen_hot(const skewshim_wl *w, int P, uint64_t *c, int by_row)
{
    double f = w->param > 0 ? w->param : 1.0 / 16.0;
    if (f > 1.0)
        return -1;
    uint64_t cold = round_clamp((double)w->S * f, w->S);
    int hot = (int)(w->seed % (uint64_t)P);
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++)
            c[(size_t)i * P + j] = (by_row ? i : j) == hot ? w->S : cold;
    return 0;
}

/* Index of the first cdf entry > u (cdf strictly increasing up to cdf[n-1]). */
static int cdf_pick(const double *cdf, int n, double u)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static int moe_topk(const skewshim_wl *w, int P)
{
    int k = w->topk > 0 ? w->topk : 2;
    return k > P ? P : k;
}

int skewshim_wl_moe_tokens(const skewshim_wl *w, int P, uint64_t *tok)
{
    if (P < 1 || !w || !tok)
        return -1;
    double s = w->param > 0 ? w->param : 0.8;
    int topk = moe_topk(w, P);
    int tokens = w->tokens > 0 ? w->tokens : 1024;
    double *weight = malloc((size_t)P * sizeof *weight);
    double *cdf = malloc((size_t)P * sizeof *cdf);
    uint64_t *perm = malloc((size_t)P * sizeof *perm);
    int *chosen = malloc((size_t)topk * sizeof *chosen);
    if (!weight || !cdf || !perm || !chosen) {
        free(weight); free(cdf); free(perm); free(chosen);
        return -1;
    }
    /* Popularity is global (the same hot experts for every rank, as in a
     * real MoE layer) but which expert is hot is seeded, not always rank 0. */
    for (int e = 0; e < P; e++)
        perm[e] = (uint64_t)e;
    rng pr = rng_stream(w->seed, SKEWSHIM_WL_MOE, UINT64_MAX);
    shuffle(&pr, perm, (size_t)P);
    double total = 0;
    for (int e = 0; e < P; e++) {
        weight[e] = 1.0 / pow((double)(perm[e] + 1), s);
        total += weight[e];
        cdf[e] = total;
    }
    memset(tok, 0, (size_t)P * P * sizeof *tok);
    for (int i = 0; i < P; i++) {
        rng r = rng_stream(w->seed, SKEWSHIM_WL_MOE, (uint64_t)i);
        uint64_t *row = tok + (size_t)i * P;
        for (int t = 0; t < tokens; t++) {
            double left = total;
            for (int k = 0; k < topk; k++) {
                int e = -1;
                /* Rejection keeps the draw exact (conditional on distinct
                 * experts) and cheap; when the popular experts are taken and
                 * it keeps missing, scan the remaining weight instead. */
                for (int tries = 0; tries < 32 && e < 0; tries++) {
                    int cand = cdf_pick(cdf, P, rng_unit(&r) * total);
                    int dup = 0;
                    for (int q = 0; q < k; q++)
                        dup |= chosen[q] == cand;
                    if (!dup)
                        e = cand;
                }
                if (e < 0) {
                    double u = rng_unit(&r) * left;
                    for (int cand = 0; cand < P; cand++) {
                        int dup = 0;
                        for (int q = 0; q < k; q++)
                            dup |= chosen[q] == cand;
                        if (dup)
                            continue;
                        e = cand;   /* the last free one absorbs rounding */
                        if (u < weight[cand])
                            break;
                        u -= weight[cand];
                    }
                }
                chosen[k] = e;
                left -= weight[e];
                row[e]++;
            }
        }
    }
    free(weight); free(cdf); free(perm); free(chosen);
    return 0;
}

static int gen_moe(const skewshim_wl *w, int P, uint64_t *c)
{
    if (skewshim_wl_moe_tokens(w, P, c) != 0)
        return -1;
    size_t n = (size_t)P * P;
    uint64_t maxc = 0;
    for (size_t k = 0; k < n; k++)
        if (c[k] > maxc)
            maxc = c[k];
    for (size_t k = 0; k < n; k++)
        c[k] = maxc == 0 ? 0
             : c[k] == maxc ? w->S
             : round_clamp((double)c[k] * (double)w->S / (double)maxc, w->S);
    return 0;
}

int skewshim_wl_matrix(const skewshim_wl *w, int P, uint64_t *counts)
{
    if (!w || !counts || P < 1)
        return -1;
    size_t n = (size_t)P * P;
    switch (w->kind) {
    case SKEWSHIM_WL_EQUAL:
    case SKEWSHIM_WL_ZERO: {
        uint64_t v = w->kind == SKEWSHIM_WL_EQUAL ? w->S : 0;
        for (size_t k = 0; k < n; k++)
            counts[k] = v;
        return 0;
    }
    case SKEWSHIM_WL_UNIFORM:
        for (int i = 0; i < P; i++) {
            rng r = rng_stream(w->seed, SKEWSHIM_WL_UNIFORM, (uint64_t)i);
            for (int j = 0; j < P; j++)
                counts[(size_t)i * P + j] = rng_upto(&r, w->S);
        }
        return 0;
    case SKEWSHIM_WL_NORMAL:
        gen_normal(w, P, counts);
        return 0;
    case SKEWSHIM_WL_POWER:
        return gen_power(w, P, counts);
    case SKEWSHIM_WL_ZIPF:
        return gen_zipf(w, P, counts);
    case SKEWSHIM_WL_HOT_SEND:
        return gen_hot(w, P, counts, 1);
    case SKEWSHIM_WL_HOT_RECV:
        return gen_hot(w, P, counts, 0);
    case SKEWSHIM_WL_MOE:
        return gen_moe(w, P, counts);
    default:
        return -1;
    }
}
