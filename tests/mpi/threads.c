/* MPI_THREAD_MULTIPLE: threads exchanging on their own communicators at the
 * same time, each result checked, plain and in place; then each thread
 * frees its communicator, so the shim's per-communicator teardown (the
 * log ring's last flush, a collective) runs in all threads at once.  Under
 * ThreadSanitizer (scripts/tsan) every shared thing the calls touch is
 * checked; there the ring's allocations can be made to fail
 * (SKEWSHIM_FAULT_RING=1), so its static fallback buffers are used by
 * several threads' flushes together. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "skewshim.h"

#define THREADS 3
#define ITERS 200

static int errors;

static void *worker(void *arg)
{
    MPI_Comm c = *(MPI_Comm *)arg;
    int P, me;
    MPI_Comm_size(c, &P);
    MPI_Comm_rank(c, &me);
    int *sc = malloc(4 * sizeof(int) * (size_t)P), *sd = sc + P, *rc = sc + 2 * P, *rd = sc + 3 * P;
    int *sb = malloc(sizeof(int) * 8 * (size_t)P), *rb = malloc(sizeof(int) * 8 * (size_t)P);
    for (int it = 0; it < ITERS; it++) {
        for (int j = 0; j < P; j++) {
            sc[j] = 1 + (me + j + it) % 7;
            sd[j] = 8 * j;
            rc[j] = 1 + (j + me + it) % 7;
            rd[j] = 8 * j;
            for (int k = 0; k < sc[j]; k++)
                sb[8 * j + k] = (me << 20) | (j << 10) | (it + k) % 1024;
        }
        MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, c);
        for (int j = 0; j < P; j++)
            for (int k = 0; k < rc[j]; k++)
                if (rb[8 * j + k] != ((j << 20) | (me << 10) | (it + k) % 1024))
                    __atomic_add_fetch(&errors, 1, __ATOMIC_SEQ_CST);
        /* The counts are symmetric (sc[j] == rc[j] on the peer): in place
         * the send data starts in the receive blocks (the staging of
         * src/core/inplace.c, per communicator, in every thread). */
        for (int j = 0; j < P; j++)
            for (int k = 0; k < sc[j]; k++)
                rb[8 * j + k] = sb[8 * j + k];
        MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, rb, rc, rd, MPI_INT, c);
        for (int j = 0; j < P; j++)
            for (int k = 0; k < rc[j]; k++)
                if (rb[8 * j + k] != ((j << 20) | (me << 10) | (it + k) % 1024))
                    __atomic_add_fetch(&errors, 1, __ATOMIC_SEQ_CST);
    }
    /* Freed here, in all threads at once: the teardown of each
     * communicator's state (its last log flush) runs concurrently. */
    MPI_Comm_free((MPI_Comm *)arg);
    free(sc);
    free(sb);
    free(rb);
    return NULL;
}

/* A tool thread steering the shim while the others call it: parameters
 * that change no message pattern of the schedules this test runs (a model
 * figure; FAST's pipelining, which none of them reads), so every rank
 * stays matched whatever it reads.  A parameter a running schedule reads
 * (SABRE's alpha while SABRE runs) must be set before the same call on
 * every rank, which a thread racing the calls cannot do: it would give the
 * ranks different plan keys, so one rank could plan where another finds
 * the plan cached.  Under ThreadSanitizer this is where an unlocked
 * override would show. */
static volatile int stop;

static void *steer(void *arg)
{
    (void)arg;
    for (int k = 0; !__atomic_load_n(&stop, __ATOMIC_RELAXED); k++) {
        skewshim_set_param("fast.pipeline", k % 2 ? "false" : "true");
        skewshim_set_param("model.latency", k % 2 ? "1e-6" : NULL);
        skewshim_force_algorithm(NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        printf("threads: MPI_THREAD_MULTIPLE not provided; skipped\n");
        MPI_Finalize();
        return 77;
    }
    MPI_Comm comm[THREADS];
    for (int t = 0; t < THREADS; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comm[t]);
    pthread_t th[THREADS], tool;
    pthread_create(&tool, NULL, steer, NULL);
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, &comm[t]);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    pthread_join(tool, NULL);
    int all;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0)
        printf("threads: %d threads x %d calls, %d wrong elements\n", THREADS, ITERS, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
