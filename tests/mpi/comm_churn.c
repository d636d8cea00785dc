/* Thousands of communicators created, used once and freed: the shim's state
 * on each (private dup, node split, caches) must go with it.  Checks the
 * live-state count and the process heap; a leaked private communicator
 * would also exhaust the MPI library's context ids long before the end. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <malloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "skewshim.h"

/* Under AddressSanitizer malloc is ASan's and mallinfo2 sees nothing; its
 * own counter of live heap bytes is the one to watch there. */
size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

static size_t heap_in_use(void)
{
    if (__sanitizer_get_current_allocated_bytes)
        return __sanitizer_get_current_allocated_bytes();
    return mallinfo2().uordblks;
}

static void exchange(MPI_Comm c)
{
    int P, me;
    MPI_Comm_size(c, &P);
    MPI_Comm_rank(c, &me);
    int sc[64], sd[64], rc[64], rd[64], sb[64], rb[64];
    for (int j = 0; j < P; j++) {
        sc[j] = rc[j] = 1;
        sd[j] = rd[j] = j;
        sb[j] = me * 1000 + j;
    }
    MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, c);
    for (int j = 0; j < P; j++)
        if (rb[j] != j * 1000 + me) {
            fprintf(stderr, "comm_churn: wrong data\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 3000, me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int base = skewshim_live_comms();
    size_t heap0 = 0;
    for (int i = 0; i < n; i++) {
        MPI_Comm c;
        if (i % 2)
            MPI_Comm_dup(MPI_COMM_WORLD, &c);
        else
            MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &c);
        exchange(c);
        if (skewshim_live_comms() != base + 1) {
            fprintf(stderr, "comm_churn: no state created for a new communicator\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Comm_free(&c);
        if (i == n / 10)
            heap0 = heap_in_use();
    }
    size_t heap1 = heap_in_use();
    int live = skewshim_live_comms();
    int ok = live == base && heap1 < heap0 + (128u << 10);
    if (me == 0 || !ok)
        printf("comm_churn: rank %d: %d communicators, live states %d (baseline %d), heap %zu -> "
               "%zu bytes\n", me, n, live, base, heap0, heap1);
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Finalize();
    return all ? 0 : 1;
}
