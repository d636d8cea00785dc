/* The shim's added cost per call: 1 int per block at 2 ranks, three modes
 * interleaved in one run (A B C A B C ...):
 *   pmpi    - PMPI_Alltoallv directly: no shim at all on the path
 *   native  - MPI_Alltoallv through the shim, algorithm native, log off
 *   disable - MPI_Alltoallv with the shim in pass-through (as SKEWSHIM_DISABLE=1)
 * Run with SKEWSHIM_CONFIG pointing at a policy with log level off.  The
 * disable mode switches the shim's pass-through on between batches
 * (skewshim_set_disabled), so all three share one process. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "skewshim.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int P, me, reps = argc > 1 ? atoi(argv[1]) : 20000, batch = 50;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int *c = malloc(2 * sizeof(int) * (size_t)P), *d = c + P;
    int *sb = malloc(sizeof(int) * (size_t)P), *rb = malloc(sizeof(int) * (size_t)P);
    for (int j = 0; j < P; j++) {
        c[j] = 1;
        d[j] = j;
        sb[j] = me;
    }
    skewshim_force_algorithm("native");
    int nb = reps / batch;
    double *t[3];
    for (int m = 0; m < 3; m++)
        t[m] = malloc(sizeof(double) * (size_t)nb);
    for (int w = 0; w < 1000; w++)
        MPI_Alltoallv(sb, c, d, MPI_INT, rb, c, d, MPI_INT, MPI_COMM_WORLD);
    for (int b = 0; b < nb; b++)
        for (int m = 0; m < 3; m++) {
            skewshim_set_disabled(m == 2);
            PMPI_Barrier(MPI_COMM_WORLD);
            double t0 = PMPI_Wtime();
            for (int i = 0; i < batch; i++) {
                if (m == 0)
                    PMPI_Alltoallv(sb, c, d, MPI_INT, rb, c, d, MPI_INT, MPI_COMM_WORLD);
                else
                    MPI_Alltoallv(sb, c, d, MPI_INT, rb, c, d, MPI_INT, MPI_COMM_WORLD);
            }
            t[m][b] = (PMPI_Wtime() - t0) / batch;
        }
    skewshim_set_disabled(0);
    if (me == 0) {
        const char *name[3] = {"no shim (PMPI)", "shim, native, log off", "shim disabled"};
        double med[3];
        for (int m = 0; m < 3; m++) {
            qsort(t[m], (size_t)nb, sizeof(double), cmp);
            med[m] = t[m][nb / 2];
        }
        printf("# reproduce: mpiexec -n %d %s %d   (SKEWSHIM_CONFIG with log: {level: off})\n", P,
               argv[0], reps);
        printf("%-24s %12s %12s %12s %14s\n", "mode", "median_us", "min_us", "max_us",
               "added_us");
        for (int m = 0; m < 3; m++)
            printf("%-24s %12.3f %12.3f %12.3f %14.3f\n", name[m], med[m] * 1e6, t[m][0] * 1e6,
                   t[m][nb - 1] * 1e6, (med[m] - med[0]) * 1e6);
    }
    MPI_Finalize();
    return 0;
}
