/* One-way latency between rank 0 and every other rank of a node, through
 * the MPI library's own point-to-point path (shared memory inside a node).
 * The lab's GPU-like platforms put the ranks of a node 1 us apart (the
 * scale-up fabric) or 0.3 us (gpu-*-shm, the MPI libraries' shared memory
 * on this project's machines); the line that decides tuna_hier for a NIC
 * per rank is level at a different net saving on each, so the figure this
 * prints on a GPU server's host is what picks the platform.
 *
 *   mpiexec -n P -bind-to core pingpong [nb] [ITERS] [SIZES...]
 *
 * Rank 0 plays ping-pong with rank r (r = 1 .. P-1 in turn, the others
 * wait in a barrier), ITERS round trips after ITERS/10 warm-up ones, and
 * prints half the median of 5 repetitions' mean round trip per size.
 * nb: MPI_Isend/MPI_Irecv and MPI_Wait in place of MPI_Send/MPI_Recv, as
 * the shim's schedules post them; SMPI charges its per-message overheads
 * (smpi/ois, smpi/or) on these and not on a blocking send below its
 * detached threshold, so the lab's figure to set beside a real MPI's is
 * this one.
 * Not built by make: tests/gpu/mpich.sh (step pingpong) compiles it with
 * the MPI it times on the device machine, and the lab runs it built with
 * smpicc on the platform's XML (doc/lab.md, "Latency inside a node"). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 5

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int nonblocking;

static void send_to(char *buf, int bytes, int peer)
{
    if (!nonblocking) {
        MPI_Send(buf, bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
        return;
    }
    MPI_Request q;
    MPI_Isend(buf, bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
}

static void recv_from(char *buf, int bytes, int peer)
{
    if (!nonblocking) {
        MPI_Recv(buf, bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return;
    }
    MPI_Request q;
    MPI_Irecv(buf, bytes, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
}

static double round_trips(int me, int peer, char *buf, int bytes, int n)
{
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        if (me == 0) {
            send_to(buf, bytes, peer);
            recv_from(buf, bytes, peer);
        } else {
            recv_from(buf, bytes, 0);
            send_to(buf, bytes, 0);
        }
    }
    return (MPI_Wtime() - t0) / n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc > 1 && strcmp(argv[1], "nb") == 0) {
        nonblocking = 1;
        argv++;
        argc--;
    }
    int iters = argc > 1 ? atoi(argv[1]) : 20000;
    int default_sizes[] = {0, 16, 256, 4096};
    int nsizes = argc > 2 ? argc - 2 : 4;
    int *sizes = malloc(sizeof *sizes * (size_t)nsizes);
    if (iters < 10 || !sizes) {
        if (me == 0)
            fprintf(stderr, "pingpong: ITERS >= 10\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int maxb = 0, minb = 0;
    for (int s = 0; s < nsizes; s++) {
        sizes[s] = argc > 2 ? atoi(argv[s + 2]) : default_sizes[s];
        if (sizes[s] > maxb)
            maxb = sizes[s];
        if (sizes[s] < minb)
            minb = sizes[s];
    }
    char *buf = malloc((size_t)maxb + 1);
    if (minb < 0 || !buf) {
        fprintf(stderr, "pingpong: sizes >= 0\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(buf, 1, (size_t)maxb + 1);
    char name[MPI_MAX_PROCESSOR_NAME];
    int len;
    MPI_Get_processor_name(name, &len);
    if (me == 0) {
        printf("# pingpong: P=%d iters=%d host=%s %s; one-way us = median of %d means of a round "
               "trip / 2\n",
               np, iters, name, nonblocking ? "Isend/Irecv+Wait" : "Send/Recv", REPS);
        printf("%-6s %-8s %10s %10s %10s\n", "peer", "bytes", "oneway_us", "min_us", "max_us");
    }
    for (int peer = 1; peer < np; peer++) {
        for (int s = 0; s < nsizes; s++) {
            double t[REPS];
            MPI_Barrier(MPI_COMM_WORLD);
            if (me == 0 || me == peer) {
                round_trips(me, peer, buf, sizes[s], iters / 10);
                for (int r = 0; r < REPS; r++)
                    t[r] = round_trips(me, peer, buf, sizes[s], iters) / 2 * 1e6;
                qsort(t, REPS, sizeof t[0], cmp_double);
                if (me == 0)
                    printf("%-6d %-8d %10.3f %10.3f %10.3f\n", peer, sizes[s], t[REPS / 2], t[0],
                           t[REPS - 1]);
            }
        }
    }
    fflush(stdout);
    free(buf);
    free(sizes);
    MPI_Finalize();
    return 0;
}
