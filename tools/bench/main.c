#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* skewshim-bench: times MPI_Alltoallv under skewshim's algorithms on
 * generated or replayed workloads (doc/bench.md).
 *
 * Linked against libskewshim, so MPI_Alltoallv is the shim; PMPI_Alltoallv
 * is the untouched MPI library and serves as the reference.  Measurement
 * rules from DESIGN.md section 5: the algorithms of one size run interleaved
 * (A B C A B C ...), each call is timed between a barrier and its return,
 * the per-iteration time is the max over ranks, and every algorithm's result
 * is checked byte for byte against the reference before it is timed.  The
 * parts are listed in bench.h.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "bench.h"
#include "skewshim.h"
#include "workload/workload.h"

int skewshim_bench_rank, skewshim_bench_size;

/* full (rank 0 only, P x P, elements) -> row and col of every rank: two
 * scatters, the second after transposing in place (full is left transposed).
 * Two scatters of P rows cost far fewer simulated messages under SMPI than
 * an all-to-all of single counts would. */
static void distribute_matrix(uint64_t *full, int P, uint64_t *row, uint64_t *col,
                              MPI_Comm comm)
{
    PMPI_Scatter(full, P, MPI_UINT64_T, row, P, MPI_UINT64_T, 0, comm);
    if (skewshim_bench_rank == 0) {
        for (size_t i = 0; i < (size_t)P; i++)
            for (size_t j = i + 1; j < (size_t)P; j++) {
                uint64_t t = full[i * P + j];
                full[i * P + j] = full[j * P + i];
                full[j * P + i] = t;
            }
    }
    PMPI_Scatter(full, P, MPI_UINT64_T, col, P, MPI_UINT64_T, 0, comm);
}

/* --replay: rank 0 reads the matrix into *full; the type follows the
 * log's unless --type was given, and the recorded node layout is emulated
 * unless ranks_per_node was.  0 or -1. */
static int load_replay(opts *o, int type_given, uint64_t **full, int *q, MPI_Comm comm)
{
    int lq, lts;
    if (skewshim_bench_load_replay(o, full, &lq, &lts, comm) != 0)
        return -1;
    if (!type_given)
        skewshim_bench_type_for_size(o, lts);
    if (!*q && lq > 0 && lq < skewshim_bench_size) {
        char v[16];
        snprintf(v, sizeof v, "%d", lq);
        if (skewshim_bench_add_set(o, "topology.ranks_per_node", v) == 0 &&
            skewshim_set_param("topology.ranks_per_node", v) == 0)
            *q = lq;
    }
    return 0;
}

/* --csv: rank 0 opens the file; every rank learns whether it could, so all
 * stop together.  0 or -1. */
static int open_csv(const opts *o, FILE **csv, MPI_Comm comm)
{
    *csv = NULL;
    if (o->csv && skewshim_bench_rank == 0) {
        *csv = fopen(o->csv, "w");
        if (!*csv)
            perror(o->csv);
    }
    int csv_ok = !o->csv || *csv;
    PMPI_Bcast(&csv_ok, 1, MPI_INT, 0, comm);
    return csv_ok ? 0 : -1;
}

/* The replayed matrix as one point.  Rank 0 converts it to elements and
 * finds S; hdr = {divisible, S}.  Returns the exit status. */
static int run_replay(opts *o, uint64_t *full, uint64_t *row, uint64_t *col, const char *wl,
                      int q, FILE *csv, MPI_Comm comm)
{
    int P = skewshim_bench_size;
    size_t n = (size_t)P * (size_t)P;
    uint64_t hdr[2] = { 1, 0 };
    if (skewshim_bench_rank == 0) {
        for (size_t k = 0; k < n; k++) {
            hdr[0] &= full[k] % (uint64_t)o->tsize == 0;
            hdr[1] = full[k] > hdr[1] ? full[k] : hdr[1];
            full[k] /= (uint64_t)o->tsize;
        }
    }
    PMPI_Bcast(hdr, 2, MPI_UINT64_T, 0, comm);
    if (!hdr[0]) {
        if (skewshim_bench_rank == 0)
            fprintf(stderr, "skewshim-bench: --replay: some blocks are not a multiple "
                    "of --type %s (%d bytes)\n", o->type_name, o->tsize);
        return 2;
    }
    distribute_matrix(full, P, row, col, comm);
    skewshim_bench_run_point(o, row, col, wl, hdr[1], q, csv, NULL, NULL, comm);
    return 0;
}

/* The generated workload of one size with a given seed, to every rank's
 * row and column.  The generators are deterministic, but pow/log may round
 * differently across libm builds on unlike nodes, and one count differing
 * between sender and receiver breaks the call: rank 0 generates, everyone
 * receives its row and column.  Collective; 0, or -1 when the workload
 * refuses its parameter. */
typedef struct draw_ctx {
    const opts *o;
    uint64_t S, *full;
    MPI_Comm comm;
} draw_ctx;

static int draw_matrix(void *ctx, uint64_t seed, uint64_t *row, uint64_t *col)
{
    const draw_ctx *d = ctx;
    const opts *o = d->o;
    int P = skewshim_bench_size;
    skewshim_wl w = { .kind = o->wl_kind, .S = d->S / (uint64_t)o->tsize, .param = o->param,
                      .seed = seed, .topk = o->topk, .tokens = o->tokens };
    int ok = skewshim_bench_rank != 0 || skewshim_wl_matrix(&w, P, d->full) == 0;
    PMPI_Bcast(&ok, 1, MPI_INT, 0, d->comm);
    if (!ok)
        return -1;
    distribute_matrix(d->full, P, row, col, d->comm);
    return 0;
}

/* draw_matrix, or the workload's refusal said: 0 or the exit status. */
static int draw_or_refuse(draw_ctx *d, uint64_t *row, uint64_t *col)
{
    if (draw_matrix(d, d->o->seed, row, col) == 0)
        return 0;
    if (skewshim_bench_rank == 0)
        fprintf(stderr, "skewshim-bench: workload %s refuses --param %g\n",
                skewshim_wl_name(d->o->wl_kind), d->o->param);
    return 2;
}

/* One point per --sizes entry on the generated workload; *full is rank 0's
 * matrix buffer (the caller frees it).  The --alternate matrices are the
 * same for every point: drawn once.  Returns the exit status. */
static int run_sizes(opts *o, uint64_t **full, uint64_t *row, uint64_t *col,
                     uint64_t *alt_rows, const char *wl, int q, FILE *csv, MPI_Comm comm)
{
    int P = skewshim_bench_size;
    if (skewshim_bench_rank == 0) {
        *full = malloc((size_t)P * (size_t)P * sizeof **full);
        if (!*full)
            MPI_Abort(comm, 2);
    }
    alt_matrix alt = { .S = o->alternate, .n = o->nalternate };
    for (int k = 0; k < o->nalternate; k++) {
        uint64_t *ar = alt_rows + 2 * (size_t)k * (size_t)P, *ac = ar + P;
        draw_ctx d2 = { .o = o, .S = o->alternate[k], .full = *full, .comm = comm };
        int rc = draw_or_refuse(&d2, ar, ac);
        if (rc)
            return rc;
        alt.row[k] = ar;
        alt.col[k] = ac;
    }
    for (int s = 0; s < o->nsizes; s++) {
        uint64_t S = o->sizes[s];
        if (S % (uint64_t)o->tsize) {
            if (skewshim_bench_rank == 0)
                fprintf(stderr, "skewshim-bench: size %llu is not a multiple of --type "
                        "%s (%d bytes); skipped\n", (unsigned long long)S, o->type_name,
                        o->tsize);
            continue;
        }
        draw_ctx d = { .o = o, .S = S, .full = *full, .comm = comm };
        int rc = draw_or_refuse(&d, row, col);
        if (rc)
            return rc;
        matrix_source src = { .draw = draw_matrix, .ctx = &d };
        skewshim_bench_run_point(o, row, col, wl, S, q, csv, o->vary ? &src : NULL,
                                 o->nalternate ? &alt : NULL, comm);
    }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Comm_rank(comm, &skewshim_bench_rank);
    MPI_Comm_size(comm, &skewshim_bench_size);

    static opts o;
    int type_given;
    int rc = skewshim_bench_parse_args(&o, argc, argv, &type_given);
    if (rc == 1 && skewshim_bench_rank == 0)
        skewshim_bench_print_help();
    if (rc == 0)
        rc = skewshim_bench_check_knobs(&o) ? -1 : 0;
    if (rc == 0)
        rc = skewshim_bench_device_setup(&o, comm);
    if (rc != 0) {
        MPI_Finalize();
        return rc == 1 ? 0 : 2;
    }

    /* Only rank 0 ever holds the whole P x P matrix (generated or replayed);
     * every rank keeps its own row and column (distribute_matrix).  Under
     * SMPI all ranks live in one process, and P copies of the matrix were
     * gigabytes at P = 1024 (doc/lab.md). */
    int P = skewshim_bench_size;
    uint64_t *full = NULL;
    int q = o.ranks_per_node;
    FILE *csv = NULL;
    if ((o.replay && load_replay(&o, type_given, &full, &q, comm) != 0) ||
        open_csv(&o, &csv, comm) != 0) {
        MPI_Finalize();
        return 2;
    }

    char wl[128];
    skewshim_bench_workload_label(&o, wl, sizeof wl);
    if (skewshim_bench_rank == 0)
        skewshim_bench_print_header(&o, q, argc, argv, csv);

    uint64_t *row = malloc((size_t)P * sizeof *row), *col = malloc((size_t)P * sizeof *col);
    uint64_t *alt = malloc(2 * MAX_ALTERNATE * (size_t)P * sizeof *alt);
    if (!row || !col || !alt)
        MPI_Abort(comm, 2);
    int status = o.replay ? run_replay(&o, full, row, col, wl, q, csv, comm)
                          : run_sizes(&o, &full, row, col, alt, wl, q, csv, comm);
    free(alt);
    if (csv)
        fclose(csv);
    free(row);
    free(col);
    free(full);
    MPI_Finalize();
    return status;
}
