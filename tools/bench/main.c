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
#include "workload.h"

int skewshim_bench_rank, skewshim_bench_size;

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

    size_t n = (size_t)skewshim_bench_size * (size_t)skewshim_bench_size;
    uint64_t *replay = NULL;
    int q = o.ranks_per_node;
    if (o.replay) {
        int lq, lts;
        if (skewshim_bench_load_replay(&o, &replay, &lq, &lts, comm) != 0) {
            MPI_Finalize();
            return 2;
        }
        if (!type_given)
            skewshim_bench_type_for_size(&o, lts);
        /* Emulate the recorded node layout unless told otherwise. */
        if (!q && lq > 0 && lq < skewshim_bench_size) {
            char v[16];
            snprintf(v, sizeof v, "%d", lq);
            if (skewshim_bench_add_set(&o, "topology.ranks_per_node", v) == 0 &&
                skewshim_set_param("topology.ranks_per_node", v) == 0)
                q = lq;
        }
    }

    FILE *csv = NULL;
    if (o.csv && skewshim_bench_rank == 0) {
        csv = fopen(o.csv, "w");
        if (!csv)
            perror(o.csv);
    }
    int csv_ok = !o.csv || csv;
    PMPI_Bcast(&csv_ok, 1, MPI_INT, 0, comm);
    if (!csv_ok) {
        MPI_Finalize();
        return 2;
    }

    char wl[128];
    skewshim_bench_workload_label(&o, wl, sizeof wl);
    if (skewshim_bench_rank == 0)
        skewshim_bench_print_header(&o, q, argc, argv, csv);

    uint64_t *counts = malloc(n * sizeof *counts);
    if (!counts)
        MPI_Abort(comm, 2);
    int status = 0;
    if (replay) {
        uint64_t S = 0;
        int divisible = 1;
        for (size_t k = 0; k < n; k++) {
            divisible &= replay[k] % (uint64_t)o.tsize == 0;
            counts[k] = replay[k] / (uint64_t)o.tsize;
            S = replay[k] > S ? replay[k] : S;
        }
        if (!divisible) {
            if (skewshim_bench_rank == 0)
                fprintf(stderr, "skewshim-bench: --replay: some blocks are not a multiple "
                        "of --type %s (%d bytes)\n", o.type_name, o.tsize);
            status = 2;
        } else {
            skewshim_bench_run_point(&o, counts, wl, S, q, csv, comm);
        }
    } else {
        for (int s = 0; s < o.nsizes; s++) {
            uint64_t S = o.sizes[s];
            if (S % (uint64_t)o.tsize) {
                if (skewshim_bench_rank == 0)
                    fprintf(stderr, "skewshim-bench: size %llu is not a multiple of --type "
                            "%s (%d bytes); skipped\n", (unsigned long long)S, o.type_name,
                            o.tsize);
                continue;
            }
            skewshim_wl w = { .kind = o.wl_kind, .S = S / (uint64_t)o.tsize,
                              .param = o.param, .seed = o.seed, .topk = o.topk,
                              .tokens = o.tokens };
            /* The generators are deterministic, but pow/log may round
             * differently across libm builds on unlike nodes, and one count
             * differing between sender and receiver breaks the call: rank 0
             * generates, everyone receives. */
            int ok = skewshim_bench_rank != 0 ||
                     skewshim_wl_matrix(&w, skewshim_bench_size, counts) == 0;
            PMPI_Bcast(&ok, 1, MPI_INT, 0, comm);
            if (ok)
                PMPI_Bcast(counts, (int)n, MPI_UINT64_T, 0, comm);
            if (!ok) {
                if (skewshim_bench_rank == 0)
                    fprintf(stderr, "skewshim-bench: workload %s refuses --param %g\n",
                            skewshim_wl_name(o.wl_kind), o.param);
                status = 2;
                break;
            }
            skewshim_bench_run_point(&o, counts, wl, S, q, csv, comm);
        }
    }
    if (csv)
        fclose(csv);
    free(counts);
    free(replay);
    MPI_Finalize();
    return status;
}
