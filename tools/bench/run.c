#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Running one point: the checked calls, then the timed loop, where the
 * algorithms of one size run interleaved (A B C A B C ...), each call is
 * timed between a barrier and its return, and rank 0 gets the max over
 * ranks per iteration. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "skewshim.h"

/* Counts what a timed call ran; the fourth kind on counts every later one. */
static void note_seen(item *it)
{
    int k = 0;
    while (k < it->nseen && strcmp(it->seen[k], it->ran) != 0)
        k++;
    if (k == it->nseen) {
        if (it->nseen == (int)(sizeof it->seen / sizeof it->seen[0])) {
            k = it->nseen - 1;
            snprintf(it->seen[k], sizeof it->seen[k], "other");
        } else {
            snprintf(it->seen[k], sizeof it->seen[k], "%s", it->ran);
            it->seen_n[k] = 0;
            it->nseen++;
        }
    }
    it->seen_n[k]++;
}

int skewshim_bench_note_last(item *it)
{
    skewshim_last last;
    memset(&last, 0, sizeof last);
    if (skewshim_last_call(&last) != 0)
        return -1;
    const char *name = skewshim_algorithm_name(last.algorithm);
    snprintf(it->ran, sizeof it->ran, "%s", name ? name : "?");
    it->agreed += last.agreed != 0;
    note_seen(it);
    if (last.fallback_reason != 0) {
        it->fallbacks++;
        snprintf(it->reason, sizeof it->reason, "%s",
                 last.reason && *last.reason ? last.reason : "unknown");
    }
    return last.plan_cache_hit;
}

/* --vary: iteration it's own matrix, laid out and referenced outside the
 * timing. */
static void next_matrix(opts *o, layout *L, const matrix_source *vary, int it, const char *wl,
                        uint64_t S, MPI_Comm comm)
{
    int P = skewshim_bench_size;
    uint64_t *row = malloc((size_t)P * sizeof *row), *col = malloc((size_t)P * sizeof *col);
    if (!row || !col) {   /* the draw is collective: no rank may skip it */
        fprintf(stderr, "skewshim-bench: rank %d: out of memory\n", skewshim_bench_rank);
        MPI_Abort(comm, 2);
    }
    int bad = vary->draw(vary->ctx, o->seed + 1 + (uint64_t)it, row, col) != 0;
    if (!bad) {
        skewshim_bench_layout_free(L);
        bad = skewshim_bench_layout_build(L, o, row, col, P, skewshim_bench_rank) != 0;
    }
    int any = 0;
    PMPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm);
    free(row);
    free(col);
    if (any) {
        if (skewshim_bench_rank == 0)
            fprintf(stderr, "skewshim-bench: --vary: iteration %d's matrix could not be "
                    "laid out\n", it);
        MPI_Abort(comm, 2);
    }
    skewshim_bench_run_reference(o, L, wl, S, comm);
}

/* One call of the item applied, on the layout's buffers. */
static void exchange(const opts *o, layout *L, MPI_Comm comm)
{
    MPI_Alltoallv(skewshim_bench_send_ptr(o, L), L->scount, L->sdispl, o->type,
                  skewshim_bench_recv_ptr(o, L), L->rcount, L->rdispl, o->type, comm);
}

/* Times all items interleaved; rank 0 gets the per-iteration max over ranks
 * in tmax[iter * nitems + item] (seconds). */
static void time_items(opts *o, layout *L, layout *alts, int nalts, double *tmax,
                       const matrix_source *vary, const char *wl, uint64_t S, MPI_Comm comm)
{
    int n = o->nitems, total = o->warmup + o->iters;
    double *t = calloc((size_t)o->iters * (size_t)n, sizeof *t);
    if (!t) {
        fprintf(stderr, "skewshim-bench: rank %d: out of memory\n", skewshim_bench_rank);
        MPI_Abort(comm, 2);
    }
    for (int i = 0; i < n; i++) {
        o->items[i].fallbacks = 0;
        o->items[i].planned = -1;
        o->items[i].agreed = 0;
        o->items[i].nseen = 0;
        o->items[i].reason[0] = '\0';
    }
    for (int it = 0; it < total; it++) {
        if (vary)
            next_matrix(o, L, vary, it, wl, S, comm);
        for (int i = 0; i < n; i++) {
            item *x = &o->items[i];
            int copy = strcmp(x->algo, BENCH_MEMCPY) == 0;
            if (vary && !copy)
                skewshim_bench_clear_recv(L);
            if (!copy)
                skewshim_bench_item_apply(x);
            for (int k = 0; k < nalts && !copy; k++)   /* --alternate: the job's others */
                exchange(o, &alts[k], comm);
            skewshim_bench_device_sync(o);
            PMPI_Barrier(comm);
            double t0 = MPI_Wtime();
            if (copy)
                skewshim_bench_copy_payload(o, L);
            else
                exchange(o, L, comm);
            skewshim_bench_device_sync(o);
            double t1 = MPI_Wtime();
            if (it >= o->warmup) {
                t[(size_t)(it - o->warmup) * n + i] = t1 - t0;
                /* A run of more sabre/fast items than the plan cache has
                 * slots evicts each item's plan before its timed call; the
                 * CSV says so instead of passing a miss off as the steady
                 * state. */
                if (!copy) {
                    int hit = skewshim_bench_note_last(x);
                    if (hit >= 0)
                        x->planned = (x->planned < 0 ? 0 : x->planned) + !hit;
                }
            }
            if (!copy)
                skewshim_bench_item_restore(o, x);
            if (vary && !copy)
                skewshim_bench_check_result(o, x, L, wl, S, comm);
        }
    }
    PMPI_Reduce(t, tmax, o->iters * n, MPI_DOUBLE, MPI_MAX, 0, comm);
    free(t);
}

/* The lower bound of SABRE section 5.2 / FLASH theorem 1 for this point:
 * max over nodes of the inter-node bytes a node sends or receives, over its
 * q links of link_gbps each (one NIC per rank).  Collective; 0 when there is
 * no link speed or no node size to hold the point to. */
static double lower_bound(const opts *o, const layout *L, int q, MPI_Comm comm)
{
    int P = skewshim_bench_size, me = skewshim_bench_rank;
    if (o->link_gbps <= 0 || q <= 0)
        return 0;
    int nodes = (P + q - 1) / q, mine = me / q;
    double *v = calloc(4 * (size_t)nodes, sizeof *v);
    if (!v)
        MPI_Abort(comm, 2);
    double *send = v, *recv = v + nodes, *gsend = v + 2 * (size_t)nodes,
           *grecv = v + 3 * (size_t)nodes;
    for (int j = 0; j < P; j++)
        if (j / q != mine) {
            send[mine] += (double)L->scount[j] * o->tsize;
            recv[mine] += (double)L->rcount[j] * o->tsize;
        }
    PMPI_Allreduce(v, gsend, 2 * nodes, MPI_DOUBLE, MPI_SUM, comm);
    double worst = 0;
    for (int k = 0; k < nodes; k++) {
        worst = gsend[k] > worst ? gsend[k] : worst;
        worst = grecv[k] > worst ? grecv[k] : worst;
    }
    free(v);
    return worst / ((double)q * o->link_gbps * 1e9);
}

/* The reference, then one checked call of every item; copy: the memcpy
 * item gets its buffer here. */
static void check_items(opts *o, layout *L, const char *wl, uint64_t S, int copy, MPI_Comm comm)
{
    skewshim_bench_run_reference(o, L, wl, S, comm);
    for (int i = 0; i < o->nitems; i++)
        if (strcmp(o->items[i].algo, BENCH_MEMCPY) != 0)
            skewshim_bench_run_item_checked(o, &o->items[i], L, wl, S, comm);
        else if (copy && skewshim_bench_copy_payload(o, L) != 0) {
            fprintf(stderr, "skewshim-bench: rank %d: the memcpy item cannot get its "
                    "buffer\n", skewshim_bench_rank);
            MPI_Abort(comm, 2);
        }
}

/* One point: build buffers, check every item, time them all. */
void skewshim_bench_run_point(opts *o, const uint64_t *row, const uint64_t *col, const char *wl,
                              uint64_t S, int q, FILE *csv, const matrix_source *vary,
                              const alt_matrix *alt, MPI_Comm comm)
{
    layout L;
    int rc = skewshim_bench_layout_build(&L, o, row, col, skewshim_bench_size,
                                         skewshim_bench_rank), worst = 0;
    int mine = -rc;
    PMPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm);
    if (worst) {
        if (skewshim_bench_rank == 0)
            fprintf(stderr, "skewshim-bench: S=%llu: %s; point skipped\n",
                    (unsigned long long)S,
                    worst == 2 ? "counts or displacements exceed INT_MAX elements"
                               : "out of memory (host or device)");
        skewshim_bench_layout_free(&L);
        return;
    }
    /* --alternate: the other exchanges are checked first, in their order,
     * so that auto's calls take their turns from the first on, as in the
     * timed loop. */
    layout alts[MAX_ALTERNATE];
    int nalts = 0;
    for (int k = 0; alt && k < alt->n; k++) {
        rc = skewshim_bench_layout_build(&alts[k], o, alt->row[k], alt->col[k],
                                         skewshim_bench_size, skewshim_bench_rank);
        mine = -rc;
        PMPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm);
        nalts = k + 1;
        if (worst) {
            if (skewshim_bench_rank == 0)
                fprintf(stderr, "skewshim-bench: --alternate %llu: its buffers cannot be had; "
                        "point skipped\n", (unsigned long long)alt->S[k]);
            while (nalts)
                skewshim_bench_layout_free(&alts[--nalts]);
            skewshim_bench_layout_free(&L);
            return;
        }
        check_items(o, &alts[k], wl, alt->S[k], 0, comm);
    }
    check_items(o, &L, wl, S, 1, comm);
    double t_lb = lower_bound(o, &L, q, comm);
    /* What one rank moves at this point: S alone does not say it. */
    double pay = (double)L.payload, pmax = 0, psum = 0;
    PMPI_Reduce(&pay, &pmax, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
    PMPI_Reduce(&pay, &psum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
    if (skewshim_bench_rank == 0) {
        printf("# %s S=%llu: bytes sent per rank: mean %.2f MiB, max %.2f MiB", wl,
               (unsigned long long)S, psum / skewshim_bench_size / 1048576.0,
               pmax / 1048576.0);
        if (t_lb > 0)
            printf("; T_LB %.2f us", t_lb * 1e6);
        printf("%s", vary ? " (the checked matrix; every iteration draws its own)" : "");
        for (int k = 0; alt && k < alt->n; k++)
            printf("%s%llu%s", k ? ", " : "; in turn with S=", (unsigned long long)alt->S[k],
                   k + 1 == alt->n ? ", untimed" : "");
        printf("\n");
    }
    double *tmax = malloc((size_t)o->iters * (size_t)o->nitems * sizeof *tmax);
    if (!tmax)
        MPI_Abort(comm, 2);
    time_items(o, &L, alts, nalts, tmax, vary, wl, S, comm);
    if (skewshim_bench_rank == 0)
        skewshim_bench_report(o, tmax, wl, S, q, t_lb, csv);
    free(tmax);
    while (nalts)
        skewshim_bench_layout_free(&alts[--nalts]);
    skewshim_bench_layout_free(&L);
}
