/* Faults of SimGrid's SMPI that scripts/soak --smpi met, shown with SMPI
 * alone (no shim): doc/lab.md, "Random calls on simulated nodes".  Built
 * with smpicc, or with mpicc for the same checks against a real MPI.
 *
 *   extent   the extent of MPI_Type_vector(12, 1, -1, MPI_INT): 48, lower
 *            bound -44
 *   inplace  MPI_Alltoallv with MPI_IN_PLACE and a strided type against
 *            the same call out of place (symmetric counts): no int differs
 *   bcast    MPI_Bcast on MPI_COMM_WORLD: returns (run it on nodes of 3)
 *   envelope MPI_Type_get_envelope of a struct of two blocks of MPI_INT:
 *            MPI_COMBINER_STRUCT with 3 integers, 2 addresses, 2 types
 *            (the shim's decoder now checks the counts against the
 *            combiner; the soak keeps these types)
 *
 * Rank 0 prints "MODE: ok" or "MODE: FAULT ..."; the exit status is 1 on a
 * fault.  A broadcast that fails aborts the simulation instead. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_extent(void)
{
    MPI_Datatype t;
    MPI_Aint lb, ext;
    MPI_Type_vector(12, 1, -1, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_free(&t);
    if (lb == -44 && ext == 48)
        return 0;
    printf("extent: FAULT lower bound %ld, extent %ld (want -44, 48)\n", (long)lb, (long)ext);
    return 1;
}

static int check_inplace(int P, int me)
{
    MPI_Datatype t;
    MPI_Aint lb, ext;
    MPI_Type_vector(2, 1, 2, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Type_get_extent(t, &lb, &ext);
    int *rc = malloc(2 * (size_t)P * sizeof *rc), *rd = rc + P, pos = 0;
    for (int j = 0; j < P; j++) {       /* symmetric, as in place requires */
        rc[j] = 1 + (j + me) % 3;
        rd[j] = pos;
        pos += rc[j] + 1;
    }
    size_t n = (size_t)(pos + 2) * (size_t)ext / sizeof(int);
    int *in = malloc(n * sizeof(int)), *out = malloc(n * sizeof(int)), *snd = malloc(n * sizeof(int));
    for (size_t i = 0; i < n; i++)
        in[i] = out[i] = snd[i] = me * 100000 + (int)i;
    MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, in, rc, rd, t, MPI_COMM_WORLD);
    MPI_Alltoallv(snd, rc, rd, t, out, rc, rd, t, MPI_COMM_WORLD);
    long bad = 0, all;
    for (size_t i = 0; i < n; i++)
        bad += in[i] != out[i];
    MPI_Reduce(&bad, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    free(rc);
    free(in);
    free(out);
    free(snd);
    MPI_Type_free(&t);
    if (me == 0 && all)
        printf("inplace: FAULT %ld ints differ from the same call out of place\n", all);
    return me == 0 && all;
}

static int check_envelope(void)
{
    int bl[2] = {6, 6}, ni, na, nd, comb;
    MPI_Aint d[2] = {24, 0};
    MPI_Datatype ty[2] = {MPI_INT, MPI_INT}, t;
    MPI_Type_create_struct(2, bl, d, ty, &t);
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    MPI_Type_free(&t);
    if (comb == MPI_COMBINER_STRUCT && ni == 3 && na == 2 && nd == 2)
        return 0;
    printf("envelope: FAULT combiner %d (struct is %d, indexed %d), %d integers, %d addresses, "
           "%d types (want 3, 2, 2)\n", comb, MPI_COMBINER_STRUCT, MPI_COMBINER_INDEXED, ni, na, nd);
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int P, me, bad = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "extent")) {
        bad = me == 0 && check_extent();
    } else if (!strcmp(mode, "inplace")) {
        bad = check_inplace(P, me);
    } else if (!strcmp(mode, "envelope")) {
        bad = me == 0 && check_envelope();
    } else if (!strcmp(mode, "bcast")) {
        long v[3] = {me, 1, 2};
        MPI_Bcast(v, 3, MPI_LONG, 0, MPI_COMM_WORLD);
    } else {
        if (me == 0)
            fprintf(stderr, "usage: smpi_faults extent|inplace|envelope|bcast\n");
        MPI_Finalize();
        return 2;
    }
    if (me == 0 && !bad)
        printf("%s: ok\n", mode);
    MPI_Finalize();
    return bad;
}
