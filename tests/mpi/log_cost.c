/* Counts the collectives the shim makes around MPI_Alltoallv: the program
 * defines the PMPI_ collectives itself, so the shim's calls to them land
 * here (an executable's symbols come first) and go on to the MPI library.
 * Rank 0 prints how many of each a run of --calls exchanges made, after a
 * first call that creates the communicator's state; tests/mpi/log_cost.sh
 * holds them to what each log level may cost.  Every exchange is checked.
 * --rpn-after K Q sets topology.ranks_per_node to Q after the K-th counted
 * call (the nodes change under a running job). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "skewshim.h"

enum { C_ALLREDUCE, C_IALLREDUCE, C_REDUCE, C_IREDUCE, C_ALLGATHER, C_GATHER, C_BCAST,
       C_BARRIER, C_N };
static const char *const cname[C_N] = {"allreduce", "iallreduce", "reduce", "ireduce",
                                       "allgather", "gather", "bcast", "barrier"};
static long counted[C_N];

static void *next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "log_cost: no %s after this program\n", name);
        abort();
    }
    return f;
}

#define FORWARD(k, name, ...)                                       \
    do {                                                            \
        static int (*real)();                                       \
        if (!real) real = (int (*)())next(#name);                   \
        counted[k]++;                                               \
        return real(__VA_ARGS__);                                   \
    } while (0)

int PMPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    FORWARD(C_ALLREDUCE, PMPI_Allreduce, s, r, n, t, op, c);
}
int PMPI_Iallreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                    MPI_Request *q)
{
    FORWARD(C_IALLREDUCE, PMPI_Iallreduce, s, r, n, t, op, c, q);
}
int PMPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c)
{
    FORWARD(C_REDUCE, PMPI_Reduce, s, r, n, t, op, root, c);
}
int PMPI_Ireduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c,
                 MPI_Request *q)
{
    FORWARD(C_IREDUCE, PMPI_Ireduce, s, r, n, t, op, root, c, q);
}
int PMPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                   MPI_Comm c)
{
    FORWARD(C_ALLGATHER, PMPI_Allgather, s, sn, st, r, rn, rt, c);
}
int PMPI_Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                int root, MPI_Comm c)
{
    FORWARD(C_GATHER, PMPI_Gather, s, sn, st, r, rn, rt, root, c);
}
int PMPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{
    FORWARD(C_BCAST, PMPI_Bcast, b, n, t, root, c);
}
int PMPI_Barrier(MPI_Comm c)
{
    FORWARD(C_BARRIER, PMPI_Barrier, c);
}

/* Skewed sizes: rank i sends 1 + (i * 7 + j * 3) % 11 ints to rank j. */
static int count_of(int i, int j) { return 1 + (i * 7 + j * 3) % 11; }

static int exchange(int rank, int P, int call)
{
    int *sc = malloc(4 * sizeof(int) * (size_t)P);
    if (!sc) MPI_Abort(MPI_COMM_WORLD, 2);
    int *sd = sc + P, *rc = sd + P, *rd = rc + P;
    int st = 0, rt = 0;
    for (int j = 0; j < P; j++) {
        sc[j] = count_of(rank, j);
        rc[j] = count_of(j, rank);
        sd[j] = st;
        rd[j] = rt;
        st += sc[j];
        rt += rc[j];
    }
    int *sb = malloc(sizeof(int) * (size_t)(st + rt + 1));
    if (!sb) MPI_Abort(MPI_COMM_WORLD, 2);
    int *rb = sb + st;
    for (int j = 0; j < P; j++)
        for (int k = 0; k < sc[j]; k++) sb[sd[j] + k] = (call * P + rank) * 4096 + j * 64 + k;
    MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD);
    int bad = 0;
    for (int j = 0; j < P; j++)
        for (int k = 0; k < rc[j]; k++)
            bad += rb[rd[j] + k] != (call * P + j) * 4096 + rank * 64 + k;
    free(sb);
    free(sc);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P, calls = 20, rpn_after = -1;
    const char *rpn = NULL;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--calls"))
            calls = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rpn-after") && i + 2 < argc) {
            rpn_after = atoi(argv[++i]);
            rpn = argv[++i];
        }
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int bad = exchange(rank, P, 0);
    long before[C_N];
    memcpy(before, counted, sizeof before);
    for (int c = 1; c <= calls; c++) {
        bad += exchange(rank, P, c);
        if (c == rpn_after && skewshim_set_param("topology.ranks_per_node", rpn) != 0) {
            fprintf(stderr, "log_cost: topology.ranks_per_node=%s refused\n", rpn);
            bad++;
        }
    }
    if (rank == 0) {
        printf("log_cost: calls=%d", calls);
        for (int k = 0; k < C_N; k++) printf(" %s=%ld", cname[k], counted[k] - before[k]);
        printf("\n");
    }
    if (bad) fprintf(stderr, "log_cost: rank %d: %d wrong elements\n", rank, bad);
    MPI_Finalize();
    return bad != 0;
}
