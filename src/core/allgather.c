/* The size matrix exchange of SABRE and FAST as an allgather of log2 P
 * rounds over PMPI_Sendrecv on the private communicator: recursive
 * doubling at power-of-two sizes, Bruck's otherwise.
 *
 * Every rank's row is a few KB (P + 4 values of 8 bytes), so the exchange
 * is bound by its rounds, not its bytes.  MPI libraries pick their
 * allgather by the total size: MPICH (and SMPI's mpich selector) switch
 * to the ring at 512 KB in all, which is P = 256 here, and the ring's
 * P - 1 rounds made SABRE 3.6x a native alltoallv of 128 KiB blocks in the
 * lab (doc/performance.md, experiment 2 at P = 256; 0.34x with this).
 * ceil(log2 P) rounds move the same P - 1 rows into each rank at any P,
 * on any MPI.  Messages between two ranks on one communicator and
 * tag arrive in order, and every rank ends its exchange before its
 * executor sends, so the shim's one tag serves both. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "core/internal.h"
#include "exec.h"

static void reverse_rows(uint64_t *a, size_t lo, size_t hi, size_t row, uint64_t *swap)
{
    for (; lo + 1 < hi; lo++) {
        hi--;
        memcpy(swap, a + lo * row, row * sizeof *a);
        memcpy(a + lo * row, a + hi * row, row * sizeof *a);
        memcpy(a + hi * row, swap, row * sizeof *a);
    }
}

/* Power-of-two sizes: recursive doubling, partner rank ^ k, every row
 * landing in place.  Its first rounds stay inside a node when nodes are
 * blocks of consecutive ranks, where Bruck's rank - k crosses a node edge
 * in every round (at P = 128 on nodes of 8, 6 us more in the lab). */
static int doubling(uint64_t *all, size_t row, int rank, int size, MPI_Comm comm)
{
    for (int k = 1; k < size; k <<= 1) {
        int peer = rank ^ k;
        size_t mine = (size_t)(rank & ~(k - 1)), theirs = (size_t)(peer & ~(k - 1));
        int rc = PMPI_Sendrecv(all + mine * row, (int)((size_t)k * row), MPI_UINT64_T, peer,
                               SKEWSHIM_TAG, all + theirs * row, (int)((size_t)k * row),
                               MPI_UINT64_T, peer, SKEWSHIM_TAG, comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int skewshim_allgather_rows(uint64_t *mine, uint64_t *all, size_t row, int rank, int size,
                            MPI_Comm comm)
{
    if ((size & (size - 1)) == 0) {
        memcpy(all + (size_t)rank * row, mine, row * sizeof *all);
        return doubling(all, row, rank, size, comm);
    }
    /* Bruck: rounds fill all[i] with the row of rank (rank + i) % size. */
    memcpy(all, mine, row * sizeof *all);
    for (int k = 1; k < size; k <<= 1) {
        int n = k < size - k ? k : size - k;
        int rc = PMPI_Sendrecv(all, (int)((size_t)n * row), MPI_UINT64_T, (rank - k + size) % size,
                               SKEWSHIM_TAG, all + (size_t)k * row, (int)((size_t)n * row),
                               MPI_UINT64_T, (rank + k) % size, SKEWSHIM_TAG, comm,
                               MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    /* Rotate right by rank rows (three reversals) so that all[j] is rank
     * j's row. */
    size_t p = (size_t)size, r = (size_t)rank;
    reverse_rows(all, 0, p, row, mine);
    reverse_rows(all, 0, r, row, mine);
    reverse_rows(all, r, p, row, mine);
    return MPI_SUCCESS;
}
