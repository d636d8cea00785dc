/* setup_cost: what the shim's first call on a communicator costs before
 * its exchange, collective by collective.
 *
 * The shim meets a communicator at its first MPI_Alltoallv and sets up a
 * state for it (src/core/comm.c, create() and shared_keys()): a private
 * duplicate, so that its messages never meet the user's; one allreduce
 * that agrees on whether every rank could allocate, on the communicator's
 * id and on whether device buffers are possible; the node split; one
 * allgather of each rank's node and world rank; one allreduce that says
 * every rank attached its state.  This program runs the same collectives
 * in the same order, then one allreduce the size of a call's agreement,
 * and prints rank 0's time for each (MPI_Wtime; under SMPI, simulated).
 * Build and run it in the lab (doc/performance.md, "The first call on a
 * communicator"):
 *
 *   smpicc -O1 -o setup_cost lab/setup_cost.c
 *   smpirun -np 256 -platform lab/platforms/cpu-cluster.xml -hostfile HOSTS \
 *       --cfg=network/model:CM02 --cfg=smpi/os:0:2e-7:0 --cfg=smpi/ois:0:2e-7:0 \
 *       --cfg=smpi/or:0:2e-7:0 --cfg=smpi/send-is-detached-thresh:0 \
 *       --cfg=smpi/simulate-computation:no --cfg=smpi/coll-selector:mpich \
 *       --log=root.thres:critical ./setup_cost
 *
 * HOSTS names rank r's host node<r / 32>, as the lab's driver writes it.
 * With a real MPI: mpicc -O1 -o setup_cost lab/setup_cost.c, then mpiexec.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { STEPS = 8, AGREE_WORDS = 13 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    const char *name[STEPS] = {
        "MPI_Comm_dup (the private communicator)",
        "allreduce, 4 ints (allocated, id, device)",
        "MPI_Comm_split_type (the nodes)",
        "broadcast of the node's key, 1 int",
        "MPI_Comm_free of the node communicator",
        "allgather, 2 ints a rank (node, world rank)",
        "allreduce, 1 int (every rank attached)",
        "a call's agreement: allreduce, 13 words",
    };
    double t[STEPS + 1];
    MPI_Comm dup, node;
    int v[4] = {0, rank, 0, 0}, w[4], mine[2] = {rank, rank}, attached = 1;
    int *all = malloc(2 * (size_t)P * sizeof *all);
    uint64_t facts[AGREE_WORDS] = {0}, agreed[AGREE_WORDS];
    if (!all)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    t[0] = MPI_Wtime();
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    t[1] = MPI_Wtime();
    MPI_Allreduce(v, w, 4, MPI_INT, MPI_MAX, dup);
    t[2] = MPI_Wtime();
    MPI_Comm_split_type(dup, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    t[3] = MPI_Wtime();
    MPI_Bcast(&mine[0], 1, MPI_INT, 0, node);
    t[4] = MPI_Wtime();
    MPI_Comm_free(&node);
    t[5] = MPI_Wtime();
    MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, dup);
    t[6] = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, &attached, 1, MPI_INT, MPI_MIN, dup);
    t[7] = MPI_Wtime();
    MPI_Allreduce(facts, agreed, AGREE_WORDS, MPI_UINT64_T, MPI_MAX, dup);
    t[8] = MPI_Wtime();
    if (rank == 0) {
        printf("setup_cost: %d ranks, rank 0's MPI_Wtime\n", P);
        for (int i = 0; i < STEPS; i++)
            printf("  %-44s %10.1f us\n", name[i], (t[i + 1] - t[i]) * 1e6);
        printf("  %-44s %10.1f us\n", "set-up in all (the first seven)", (t[7] - t[0]) * 1e6);
        printf("  %-44s %10.1f us\n", "of which the shim's own (all but the dup)",
               (t[7] - t[1]) * 1e6);
    }
    MPI_Comm_free(&dup);
    free(all);
    MPI_Finalize();
    return 0;
}
