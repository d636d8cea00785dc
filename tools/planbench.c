#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* clock_gettime */
#endif

/* skewshim-planbench: how long the global planners take to build a schedule,
 * one thread, no MPI, next to the scheduler runtimes the FAST paper reports
 * (section 4.4 / Fig. 16: 25 us for 4 servers, 221 us for 8, 805 us for 12,
 * 77 ms for 40, 8 GPUs each).  Two figures: the decision (server matrix
 * and Birkhoff stages, what the paper's scheduler computes) and the full
 * global move list the executor consumes; and next to the full list, the
 * slice planner for rank 0, which is what each rank of the shim runs.
 * Median of many runs, each on a fresh schedule, so allocation is part of
 * what is timed, as it is in the shim.  Last, what every call of sabre and
 * fast pays on a plan-cache hit, per matrix entry (the lab's entry_ns). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "birkhoff.h"
#include "plan.h"
#include "schedule/digest.h"
#include "schedule/plan_cache.h"
#include "workload/workload.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct stats {
    double median, min, max;
    int ok;
} stats;

/* FAST's scheduling decision alone, what the paper times: the server
 * matrix and its Birkhoff stages (no per-rank move list).  Same signature
 * as a planner so the same timing loop serves. */
static int fast_decide(const skewshim_matrix *m, const skewshim_topo *t,
                       const skewshim_params *p, int nics,
                       skewshim_sched *out, skewshim_plan_report *rep)
{
    (void)p; (void)nics; (void)out; (void)rep;
    int P = m->nranks, N = t->nnodes;
    uint64_t *D = calloc((size_t)N * N, sizeof *D);
    if (!D)
        return -1;
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++)
            if (t->node_of[i] != t->node_of[j])
                D[(size_t)t->node_of[i] * N + t->node_of[j]] += m->b[(size_t)i * P + j];
    skewshim_bvn b;
    int rc = skewshim_bvn_decompose(D, N, &b);
    if (!rc)
        skewshim_bvn_free(&b);
    free(D);
    return rc;
}

typedef int (*slice_planner)(const skewshim_matrix *, const skewshim_topo *,
                             const skewshim_params *, int, int, skewshim_sched *, uint64_t *,
                             skewshim_plan_report *);
static slice_planner cur_slice;

/* A slice planner behind the global planner's signature, so the same timing
 * loop serves: rank 0, a schedule of its own. */
static int slice0(const skewshim_matrix *m, const skewshim_topo *t, const skewshim_params *p,
                  int nics, skewshim_sched *out, skewshim_plan_report *rep)
{
    (void)out;
    skewshim_sched s;
    uint64_t mt;
    if (skewshim_sched_init(&s, m->nranks, 0))
        return -1;
    int rc = cur_slice(m, t, p, nics, 0, &s, &mt, rep);
    skewshim_sched_free(&s);
    return rc;
}

static stats time_planner(skewshim_global_planner fn, const skewshim_matrix *m,
                          const skewshim_topo *t, const skewshim_params *p, int nics,
                          double budget_s, int max_runs)
{
    stats st = { 0, 0, 0, 0 };
    double *samples = malloc((size_t)max_runs * sizeof *samples);
    if (!samples)
        return st;
    int n = 0;
    double start = now();
    while (n < max_runs && (n < 5 || now() - start < budget_s)) {
        skewshim_sched s;
        if (skewshim_sched_init(&s, m->nranks, -1))
            break;
        double t0 = now();
        int rc = fn(m, t, p, nics, &s, NULL);
        double dt = now() - t0;
        skewshim_sched_free(&s);
        if (rc) {
            free(samples);
            return st;
        }
        samples[n++] = dt;
    }
    qsort(samples, (size_t)n, sizeof *samples, cmp_double);
    st.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
    st.min = samples[0];
    st.max = samples[n - 1];
    st.ok = n > 0;
    free(samples);
    return st;
}

/* Median time per matrix entry of what every sabre or fast call does with
 * the gathered rows (P + 3 words each) before it can run a cached plan: the
 * column digests, their check against the receivers' digests, the plan
 * hash, and the lookup's full compare with the cached matrix. */
static stats hit_ns_per_entry(int P, double budget_s, uint64_t seed)
{
    stats st = { 0, 0, 0, 0 };
    size_t row = (size_t)P + 3, n = (size_t)P * P;
    skewshim_plan_cache *pc = calloc(1, sizeof *pc);
    uint64_t *rows = malloc((size_t)P * row * sizeof *rows), *digest = malloc((size_t)P * sizeof *digest);
    uint64_t *cached = malloc(n * sizeof *cached);
    enum { MAX_RUNS = 10000 };
    double *samples = malloc(MAX_RUNS * sizeof *samples);
    skewshim_wl w = { .kind = SKEWSHIM_WL_ZIPF, .S = 1u << 20, .param = 0.8, .seed = seed };
    if (!pc || !rows || !digest || !cached || !samples || skewshim_wl_matrix(&w, P, cached))
        goto out;
    for (int i = 0; i < P; i++)
        memcpy(rows + (size_t)i * row, cached + (size_t)i * P, (size_t)P * sizeof *rows);
    skewshim_digest_columns(rows, P, row, digest);
    for (int j = 0; j < P; j++)
        rows[(size_t)j * row + P] = digest[j];
    skewshim_plan_key k;
    memset(&k, 0, sizeof k);
    k.nranks = P;
    skewshim_plan_entry *e = &pc->slot[0];
    e->used = 1;
    e->matrix = cached;
    e->n = n;
    e->key = k;
    e->hash = skewshim_plan_hash(digest, P, &k);
    int runs = 0, ok = 1;
    double start = now();
    while (runs < MAX_RUNS && (runs < 5 || now() - start < budget_s)) {
        double t0 = now();
        skewshim_digest_columns(rows, P, row, digest);
        for (int j = 0; j < P; j++)
            ok &= digest[j] == rows[(size_t)j * row + P];
        ok &= skewshim_plan_lookup(pc, skewshim_plan_hash(digest, P, &k), &k, rows, P, row) == e;
        samples[runs++] = (now() - t0) * 1e9 / (double)n;
    }
    qsort(samples, (size_t)runs, sizeof *samples, cmp_double);
    st.median = runs % 2 ? samples[runs / 2] : 0.5 * (samples[runs / 2 - 1] + samples[runs / 2]);
    st.min = samples[0];
    st.max = samples[runs - 1];
    st.ok = ok;
out:
    free(samples);
    free(cached);
    free(digest);
    free(rows);
    free(pc);
    return st;
}

int main(int argc, char **argv)
{
    double budget = 2.0;    /* seconds per measurement, at least 5 runs */
    int seed = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--budget")) budget = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed")) seed = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "usage: skewshim-planbench [--budget seconds] [--seed N]\n");
            return 2;
        }
    }
    static const int servers[] = { 4, 8, 12, 40 };
    static const double paper_us[] = { 25.0, 221.0, 805.0, 77000.0 };
    static const int kinds[] = { SKEWSHIM_WL_UNIFORM, SKEWSHIM_WL_ZIPF };
    const int Q = 8;
    skewshim_params p;
    memset(&p, 0, sizeof p);
    p.fast_pipeline = 1;
    p.sabre_alpha = 1.05;
    p.sabre_mtm_threshold = 2.2;

    printf("# plan time, one thread, median (min..max) of runs within %.1f s; 8 GPUs per server\n",
           budget);
    printf("%7s %5s %-7s %10s %8s %12s %20s %10s %8s %12s %20s %10s %12s\n", "servers", "GPUs",
           "matrix", "decide_us", "speedup", "fast_us", "(min..max)", "paper_us", "speedup",
           "fast_r0_us", "(min..max)", "sabre_us", "sabre_r0_us");
    int rc = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
        for (size_t a = 0; a < sizeof servers / sizeof *servers; a++) {
            int P = servers[a] * Q;
            skewshim_topo t;
            skewshim_matrix m;
            skewshim_wl w = { .kind = kinds[k], .S = 100000000ull,
                              .param = kinds[k] == SKEWSHIM_WL_ZIPF ? 0.8 : 0,
                              .seed = (uint64_t)seed, .topk = 2 };
            if (skewshim_topo_blocks(&t, P, Q) || skewshim_matrix_alloc(&m, P) ||
                skewshim_wl_matrix(&w, P, m.b))
                return 1;
            stats dc = time_planner(fast_decide, &m, &t, &p, Q, budget, 100000);
            stats f = time_planner(skewshim_plan_fast, &m, &t, &p, Q, budget, 100000);
            cur_slice = skewshim_plan_fast_slice;
            stats fs = time_planner(slice0, &m, &t, &p, Q, budget, 100000);
            stats s = time_planner(skewshim_plan_sabre, &m, &t, &p, Q, budget, 100000);
            cur_slice = skewshim_plan_sabre_slice;
            stats ss = time_planner(slice0, &m, &t, &p, Q, budget, 100000);
            if (!f.ok || !fs.ok) rc = 1;
            char range[48], srange[48];
            snprintf(range, sizeof range, "(%.1f..%.1f)", f.min * 1e6, f.max * 1e6);
            snprintf(srange, sizeof srange, "(%.1f..%.1f)", fs.min * 1e6, fs.max * 1e6);
            printf("%7d %5d %-7s %10.1f %7.1fx %12.1f %20s %10.0f %7.1fx %12.1f %20s %10.1f %12.1f\n",
                   servers[a], P, kinds[k] == SKEWSHIM_WL_ZIPF ? "zipf0.8" : "random",
                   dc.median * 1e6, dc.ok ? paper_us[a] / (dc.median * 1e6) : 0.0,
                   f.median * 1e6, range, paper_us[a],
                   f.ok ? paper_us[a] / (f.median * 1e6) : 0.0, fs.median * 1e6, srange,
                   s.ok ? s.median * 1e6 : -1.0, ss.ok ? ss.median * 1e6 : -1.0);
            fflush(stdout);
            skewshim_matrix_free(&m);
            skewshim_topo_free(&t);
        }

    printf("\n# every sabre / fast call on a plan-cache hit: digest, check, hash, compare\n");
    printf("%7s %14s %20s\n", "P", "ns_per_entry", "(min..max)");
    static const int hit_p[] = { 64, 256, 1024, 2048 };
    for (size_t a = 0; a < sizeof hit_p / sizeof *hit_p; a++) {
        stats h = hit_ns_per_entry(hit_p[a], budget, (uint64_t)seed);
        if (!h.ok)
            rc = 1;
        char range[48];
        snprintf(range, sizeof range, "(%.2f..%.2f)", h.min, h.max);
        printf("%7d %14.2f %20s\n", hit_p[a], h.median, range);
        fflush(stdout);
    }
    return rc;
}
