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

void skewshim_bench_note_last(item *it)
{
    skewshim_last last;
    memset(&last, 0, sizeof last);
    if (skewshim_last_call(&last) != 0)
        return;
    const char *name = skewshim_algorithm_name(last.algorithm);
    snprintf(it->ran, sizeof it->ran, "%s", name ? name : "?");
    if (last.fallback_reason != 0) {
        it->fallbacks++;
        snprintf(it->reason, sizeof it->reason, "%s",
                 last.reason && *last.reason ? last.reason : "unknown");
    }
}

/* Times all items interleaved; rank 0 gets the per-iteration max over ranks
 * in tmax[iter * nitems + item] (seconds). */
static void time_items(opts *o, layout *L, double *tmax, MPI_Comm comm)
{
    int n = o->nitems, total = o->warmup + o->iters;
    double *t = calloc((size_t)o->iters * (size_t)n, sizeof *t);
    if (!t) {
        fprintf(stderr, "skewshim-bench: rank %d: out of memory\n", skewshim_bench_rank);
        MPI_Abort(comm, 2);
    }
    for (int i = 0; i < n; i++) {
        o->items[i].fallbacks = 0;
        o->items[i].reason[0] = '\0';
    }
    for (int it = 0; it < total; it++) {
        for (int i = 0; i < n; i++) {
            item *x = &o->items[i];
            skewshim_bench_item_apply(x);
            skewshim_bench_device_sync(o);
            PMPI_Barrier(comm);
            double t0 = MPI_Wtime();
            MPI_Alltoallv(skewshim_bench_send_ptr(o, L), L->scount, L->sdispl, o->type,
                          skewshim_bench_recv_ptr(o, L), L->rcount, L->rdispl, o->type, comm);
            skewshim_bench_device_sync(o);
            double t1 = MPI_Wtime();
            if (it >= o->warmup) {
                t[(size_t)(it - o->warmup) * n + i] = t1 - t0;
                skewshim_bench_note_last(x);
            }
            skewshim_bench_item_restore(o, x);
        }
    }
    PMPI_Reduce(t, tmax, o->iters * n, MPI_DOUBLE, MPI_MAX, 0, comm);
    free(t);
}

/* One point: build buffers, check every item, time them all. */
void skewshim_bench_run_point(opts *o, const uint64_t *row, const uint64_t *col, const char *wl,
                              uint64_t S, int q, FILE *csv, MPI_Comm comm)
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
    skewshim_bench_run_reference(o, &L, wl, S, comm);
    for (int i = 0; i < o->nitems; i++)
        skewshim_bench_run_item_checked(o, &o->items[i], &L, wl, S, comm);
    double *tmax = malloc((size_t)o->iters * (size_t)o->nitems * sizeof *tmax);
    if (!tmax)
        MPI_Abort(comm, 2);
    time_items(o, &L, tmax, comm);
    if (skewshim_bench_rank == 0)
        skewshim_bench_report(o, tmax, wl, S, q, csv);
    free(tmax);
    skewshim_bench_layout_free(&L);
}
