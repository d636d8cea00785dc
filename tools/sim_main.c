#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* clock_gettime, strtok_r */
#endif

/* skewshim-sim: run global planners on a generated matrix and report their
 * simulated two-tier completion time against T_LB (doc/simulator.md).
 * No MPI: this is the planners and the simulator only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan.h"
#include "sim.h"
#include "workload/workload.h"

typedef struct planner_entry {
    const char *name;
    skewshim_global_planner fn;
    int pipeline;
} planner_entry;

static const planner_entry planners[] = {
    { "spread", skewshim_plan_spread, 1 },
    { "sabre", skewshim_plan_sabre, 1 },
    { "fast", skewshim_plan_fast, 1 },
    { "fast-seq", skewshim_plan_fast, 0 },   /* FAST without the pipeline */
};
#define NPLANNERS (sizeof planners / sizeof *planners)

typedef struct opts {
    int P, Q, nics, seed, sweep, barrier;
    int wl_kind;
    double zipf_s, ratio, B2, latency;
    uint64_t S;
    char planners[256];
} opts;

typedef struct result {
    double time, plan_s, slice_s;
    int stages, ok;
    uint64_t messages;
    int64_t pairs;      /* messages if one sender's moves to one receiver in a stage were one */
} result;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: skewshim-sim [--gpus P] [--per-node Q] [--workload random|zipf|NAME]\n"
        "                    [--zipf-s S] [--S bytes] [--seed N] [--ratio B1/B2]\n"
        "                    [--inter-bw B2_bytes_per_s] [--nics M] [--latency s]\n"
        "                    [--barrier] [--planners spread,sabre,fast,fast-seq] [--sweep]\n");
}

static const planner_entry *find_planner(const char *name)
{
    for (size_t k = 0; k < NPLANNERS; k++)
        if (!strcmp(planners[k].name, name))
            return &planners[k];
    return NULL;
}

static int make_matrix(const opts *o, int P, int kind, skewshim_matrix *m)
{
    skewshim_wl w = { .kind = kind, .S = o->S, .param = kind == SKEWSHIM_WL_ZIPF ? o->zipf_s : 0,
                      .seed = (uint64_t)o->seed, .topk = 2 };
    if (skewshim_matrix_alloc(m, P))
        return -1;
    return skewshim_wl_matrix(&w, P, m->b);
}

static result run_one(const planner_entry *pe, const skewshim_matrix *m,
                      const skewshim_topo *t, const skewshim_sim_model *mo)
{
    result r = { 0 };
    skewshim_params p;
    memset(&p, 0, sizeof p);
    p.fast_pipeline = pe->pipeline;
    p.sabre_alpha = 1.05;           /* SABRE's published defaults */
    p.sabre_mtm_threshold = 2.2;
    p.model_intra_bw = mo->B1;
    p.model_inter_bw = mo->B2;
    p.model_latency = mo->latency;
    skewshim_sched s;
    if (skewshim_sched_init(&s, m->nranks, -1))
        return r;
    skewshim_plan_report rep = { -1, 0, 0.0 };
    double t0 = now();
    int rc = pe->fn(m, t, &p, mo->m, &s, &rep);
    r.plan_s = now() - t0;
    /* What each rank of the shim runs: the slice planner, here for rank 0. */
    int (*slice)(const skewshim_matrix *, const skewshim_topo *, const skewshim_params *, int,
                 int, skewshim_sched *, uint64_t *, skewshim_plan_report *) =
        pe->fn == skewshim_plan_fast ? skewshim_plan_fast_slice
        : pe->fn == skewshim_plan_sabre ? skewshim_plan_sabre_slice : NULL;
    r.slice_s = -1;
    skewshim_sched sl;
    if (slice && skewshim_sched_init(&sl, m->nranks, 0) == 0) {
        uint64_t mt;
        t0 = now();
        if (slice(m, t, &p, mo->m, 0, &sl, &mt, NULL) == 0)
            r.slice_s = now() - t0;
        skewshim_sched_free(&sl);
    }
    if (rc == 0) {
        skewshim_sim_detail d;
        r.time = skewshim_sim_time(&s, t, mo, &d);
        r.ok = r.time >= 0;
        r.stages = rep.stages;
        r.messages = d.messages;
        r.pairs = skewshim_sched_pair_messages(&s);
    }
    skewshim_sched_free(&s);
    return r;
}

static int single(const opts *o)
{
    skewshim_topo t;
    skewshim_matrix m;
    if (skewshim_topo_blocks(&t, o->P, o->Q) || make_matrix(o, o->P, o->wl_kind, &m)) {
        fprintf(stderr, "skewshim-sim: cannot build topology or matrix\n");
        return 1;
    }
    int nics = o->nics > 0 ? o->nics : o->Q;
    skewshim_sim_model mo = { .B1 = o->ratio * o->B2, .B2 = o->B2, .m = nics,
                              .latency = o->latency, .barrier = o->barrier };
    double lb = skewshim_lower_bound(&m, &t, nics, o->B2);
    printf("# P=%d per-node=%d nodes=%d workload=%s", o->P, o->Q, t.nnodes,
           skewshim_wl_name(o->wl_kind));
    if (o->wl_kind == SKEWSHIM_WL_ZIPF)
        printf("(s=%g)", o->zipf_s);
    printf(" S=%llu seed=%d\n# B2=%g B/s per NIC, B1=%g B/s per rank (ratio %g), nics=%d, "
           "latency=%g s%s\n", (unsigned long long)o->S, o->seed, mo.B2, mo.B1, o->ratio,
           nics, o->latency, o->barrier ? ", stage barriers" : "");
    printf("# T_LB = %.6f ms\n", lb * 1e3);
    printf("%-10s %14s %10s %8s %10s %10s %10s %10s\n", "planner", "time_ms", "time/T_LB",
           "stages", "messages", "plan_ms", "r0_ms", "pairs");
    char list[256];
    snprintf(list, sizeof list, "%s", o->planners);
    int rc = 0;
    for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        const planner_entry *pe = find_planner(name);
        if (!pe) {
            fprintf(stderr, "skewshim-sim: unknown planner '%s'\n", name);
            rc = 2;
            continue;
        }
        result r = run_one(pe, &m, &t, &mo);
        if (!r.ok) {
            printf("%-10s %14s\n", name, "failed");
            rc = 1;
            continue;
        }
        char r0[32] = "-";
        if (r.slice_s >= 0)
            snprintf(r0, sizeof r0, "%.3f", r.slice_s * 1e3);
        printf("%-10s %14.6f %10.4f %8d %10llu %10.3f %10s %10lld\n", name, r.time * 1e3,
               lb > 0 ? r.time / lb : 1.0, r.stages, (unsigned long long)r.messages,
               r.plan_s * 1e3, r0, (long long)r.pairs);
    }
    skewshim_matrix_free(&m);
    skewshim_topo_free(&t);
    return rc;
}

/* The report of the issue: 16..1024 GPUs, 8 per node, B1/B2 = 9, random
 * and Zipf, spread-out / SABRE / FAST against T_LB. */
static int sweep(const opts *o)
{
    static const int sizes[] = { 16, 32, 64, 128, 256, 512, 1024 };
    static const int kinds[] = { SKEWSHIM_WL_UNIFORM, SKEWSHIM_WL_ZIPF };
    const char *names[] = { "spread", "sabre", "fast" };
    int Q = 8;
    printf("# sweep: %d GPUs per node, one NIC per GPU, B2=%g B/s, B1/B2=%g, latency=%g s, "
           "S=%llu, seed=%d, zipf s=%g\n", Q, o->B2, o->ratio, o->latency,
           (unsigned long long)o->S, o->seed, o->zipf_s);
    printf("%6s %-8s %12s %9s %9s %9s %7s %11s %11s %11s %11s\n", "GPUs", "workload", "T_LB_ms",
           "spread", "sabre", "fast", "stages", "fast_plan", "fast_r0", "sabre_plan", "sabre_r0");
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
        for (size_t a = 0; a < sizeof sizes / sizeof *sizes; a++) {
            int P = sizes[a];
            skewshim_topo t;
            skewshim_matrix m;
            if (skewshim_topo_blocks(&t, P, Q) || make_matrix(o, P, kinds[k], &m))
                return 1;
            skewshim_sim_model mo = { .B1 = o->ratio * o->B2, .B2 = o->B2, .m = Q,
                                      .latency = o->latency, .barrier = o->barrier };
            double lb = skewshim_lower_bound(&m, &t, Q, o->B2);
            result r[3];
            for (int x = 0; x < 3; x++)
                r[x] = run_one(find_planner(names[x]), &m, &t, &mo);
            printf("%6d %-8s %12.3f", P, kinds[k] == SKEWSHIM_WL_ZIPF ? "zipf" : "random",
                   lb * 1e3);
            for (int x = 0; x < 3; x++) {
                if (r[x].ok) printf(" %9.4f", lb > 0 ? r[x].time / lb : 1.0);
                else printf(" %9s", "failed");
            }
            printf(" %7d %9.2fms %9.2fms %9.2fms %9.2fms\n", r[2].stages, r[2].plan_s * 1e3,
                   r[2].slice_s * 1e3, r[1].plan_s * 1e3, r[1].slice_s * 1e3);
            fflush(stdout);
            skewshim_matrix_free(&m);
            skewshim_topo_free(&t);
        }
    return 0;
}

int main(int argc, char **argv)
{
    opts o = { .P = 64, .Q = 8, .nics = 0, .seed = 1, .wl_kind = SKEWSHIM_WL_UNIFORM,
               .zipf_s = 0.8, .ratio = 9.0, .B2 = 50e9, .latency = 2e-6,
               .S = 100000000ull };
    snprintf(o.planners, sizeof o.planners, "spread,sabre,fast");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (!strcmp(a, "--sweep")) { o.sweep = 1; takes = 0; }
        else if (!strcmp(a, "--barrier")) { o.barrier = 1; takes = 0; }
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        else if (!v) { usage(stderr); return 2; }
        else if (!strcmp(a, "--gpus")) o.P = atoi(v);
        else if (!strcmp(a, "--per-node")) o.Q = atoi(v);
        else if (!strcmp(a, "--zipf-s")) o.zipf_s = atof(v);
        else if (!strcmp(a, "--S")) o.S = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--seed")) o.seed = atoi(v);
        else if (!strcmp(a, "--ratio")) o.ratio = atof(v);
        else if (!strcmp(a, "--inter-bw")) o.B2 = atof(v);
        else if (!strcmp(a, "--nics")) o.nics = atoi(v);
        else if (!strcmp(a, "--latency")) o.latency = atof(v);
        else if (!strcmp(a, "--planners")) snprintf(o.planners, sizeof o.planners, "%s", v);
        else if (!strcmp(a, "--workload")) {
            o.wl_kind = !strcmp(v, "random") ? SKEWSHIM_WL_UNIFORM : skewshim_wl_from_name(v);
            if (o.wl_kind < 0) {
                fprintf(stderr, "skewshim-sim: unknown workload '%s'\n", v);
                return 2;
            }
        } else { usage(stderr); return 2; }
        i += takes;
    }
    if (o.P < 1 || o.Q < 1 || !(o.ratio > 0) || !(o.B2 > 0) || o.latency < 0) {
        fprintf(stderr, "skewshim-sim: --gpus, --per-node, --ratio, --inter-bw must be positive\n");
        return 2;
    }
    return o.sweep ? sweep(&o) : single(&o);
}
