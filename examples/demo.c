/* An ordinary MPI program with a skewed exchange, built with no reference
 * to skewshim: what a user's application looks like to the shim.  Rank 0
 * is "hot" (everyone sends it more, as a popular MoE expert would receive),
 * the rest get a few elements each, some none.  It checks its own result. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int value(int from, int to, int k, int it)
{
    return (from * 7919 + to * 104729 + k * 31 + it) & 0x7fffffff;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int P, me, iters = argc > 1 ? atoi(argv[1]) : 5;
    int scale = argc > 2 ? atoi(argv[2]) : 256;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int *sc = malloc(4 * sizeof(int) * (size_t)P), *sd = sc + P, *rc = sc + 2 * P, *rd = sc + 3 * P;
    int bad = 0;
    for (int it = 0; it < iters; it++) {
        long stot = 0, rtot = 0;
        for (int j = 0; j < P; j++) {
            /* hot receiver 0; every third pair empty */
            sc[j] = j == 0 ? 8 * scale : ((me + j + it) % 3 ? scale / 8 : 0);
            rc[j] = me == 0 ? 8 * scale : ((j + me + it) % 3 ? scale / 8 : 0);
            sd[j] = (int)stot;
            rd[j] = (int)rtot;
            stot += sc[j];
            rtot += rc[j];
        }
        int *sb = malloc(sizeof(int) * (size_t)(stot + 1)), *rb = malloc(sizeof(int) * (size_t)(rtot + 1));
        for (int j = 0; j < P; j++)
            for (int k = 0; k < sc[j]; k++)
                sb[sd[j] + k] = value(me, j, k, it);
        memset(rb, 0xff, sizeof(int) * (size_t)(rtot + 1));
        double t = MPI_Wtime();
        MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD);
        t = MPI_Wtime() - t;
        for (int j = 0; j < P; j++)
            for (int k = 0; k < rc[j]; k++)
                if (rb[rd[j] + k] != value(j, me, k, it))
                    bad++;
        if (me == 0)
            printf("demo: call %d: rank 0 received %ld ints in %.1f us\n", it, rtot, t * 1e6);
        free(sb);
        free(rb);
    }
    int all;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf("demo: %d ranks, %d calls: %s\n", P, iters,
               all ? "RESULT WRONG" : "every received element correct");
    free(sc);
    MPI_Finalize();
    return all ? 1 : 0;
}
