/* One MPI_Alltoallv of equal blocks with tests/mpi/ucx_probe.c switched on
 * around it: prints how many UCX posts each rank made, and the longest run
 * of them between two progress calls (the exchanges in flight), so that a
 * test can hold the shim's scattered schedule against what the installed
 * MPICH runs.  Checks the data too.  Usage: batches [BLOCK_BYTES] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int P, me;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int n = argc > 1 ? atoi(argv[1]) : 16;
    void (*begin)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "ucx_probe_begin");
    void (*end)(int *) = (void (*)(int *))dlsym(RTLD_DEFAULT, "ucx_probe_end");
    if (!begin || !end) {
        if (me == 0)
            fprintf(stderr, "batches: ucx_probe not preloaded\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int *counts = malloc(P * sizeof *counts), *displs = malloc(P * sizeof *displs);
    unsigned char *sbuf = malloc((size_t)P * n), *rbuf = malloc((size_t)P * n);
    for (int i = 0; i < P; i++) {
        counts[i] = n;
        displs[i] = i * n;
    }
    for (size_t i = 0; i < (size_t)P * n; i++)
        sbuf[i] = (unsigned char)(me * 31 + (int)(i / n) * 7 + (int)(i % n));
    /* The first exchange sets up UCX's endpoints; only the second counts. */
    MPI_Alltoallv(sbuf, counts, displs, MPI_BYTE, rbuf, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    int got[3];
    begin();
    MPI_Alltoallv(sbuf, counts, displs, MPI_BYTE, rbuf, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
    end(got);
    int bad = 0;
    for (size_t i = 0; i < (size_t)P * n; i++) {
        int from = (int)(i / n);
        bad |= rbuf[i] != (unsigned char)(from * 31 + me * 7 + (int)(i % n));
    }
    int lo[4] = {got[0], got[1], got[2], -bad}, hi[4] = {got[0], got[1], got[2], bad};
    MPI_Allreduce(MPI_IN_PLACE, lo, 4, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, hi, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0)
        printf("batches: P=%d posts=%d-%d in_flight=%d-%d bursts=%d-%d data=%s\n", P, lo[0], hi[0],
               lo[1], hi[1], lo[2], hi[2], hi[3] ? "WRONG" : "ok");
    free(counts);
    free(displs);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return hi[3] ? 1 : 0;
}
