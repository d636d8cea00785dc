#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Where a run's matrices come from besides the generators: a matrix-level
 * log (--replay), read by rank 0 and broadcast; and the workload's label
 * in the table. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "topology/topo.h"
#include "workload/workload.h"

/* Rank 0 reads the log and keeps the matrix (bytes) in *counts; the other
 * ranks get NULL there and only the header, so the file need only exist
 * where rank 0 runs and only rank 0 holds P x P counts.  Returns 0 or -1
 * (on every rank). */
int skewshim_bench_load_replay(const opts *o, uint64_t **counts, int *q, int *ts, MPI_Comm comm)
{
    int hdr[4] = { 0, 0, 0, 0 };   /* ok, P, q, type_size */
    skewshim_matrix m = { 0, NULL };
    char err[512] = "";
    *counts = NULL;
    if (skewshim_bench_rank == 0) {
        if (skewshim_wl_replay_load(o->replay, o->replay_index, &m, &hdr[2], &hdr[3], err,
                                    sizeof err) == 0) {
            hdr[0] = 1;
            hdr[1] = m.nranks;
        }
    }
    PMPI_Bcast(hdr, 4, MPI_INT, 0, comm);
    if (!hdr[0] || hdr[1] != skewshim_bench_size) {
        if (skewshim_bench_rank == 0) {
            if (!hdr[0])
                fprintf(stderr, "skewshim-bench: --replay: %s\n", err);
            else
                fprintf(stderr, "skewshim-bench: --replay: matrix %d of %s has P=%d, "
                        "this run has %d ranks (run with mpiexec -n %d)\n",
                        o->replay_index, o->replay, hdr[1], skewshim_bench_size, hdr[1]);
        }
        skewshim_matrix_free(&m);
        return -1;
    }
    if (skewshim_bench_rank == 0) {
        size_t n = (size_t)skewshim_bench_size * (size_t)skewshim_bench_size;
        *counts = malloc(n * sizeof **counts);
        if (!*counts)
            MPI_Abort(comm, 2);
        memcpy(*counts, m.b, n * sizeof **counts);
    }
    skewshim_matrix_free(&m);
    *q = hdr[2];
    *ts = hdr[3];
    return 0;
}

void skewshim_bench_workload_label(const opts *o, char *out, size_t len)
{
    if (o->replay) {
        const char *base = strrchr(o->replay, '/');
        snprintf(out, len, "replay(%s:%d)", base ? base + 1 : o->replay, o->replay_index);
    } else {
        skewshim_wl w = { .kind = o->wl_kind, .param = o->param, .topk = o->topk };
        skewshim_wl_label(&w, out, len);
    }
}
