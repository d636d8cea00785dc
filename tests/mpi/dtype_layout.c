/* The datatype decoder (src/core/dtype.c) against a table of layouts: every
 * combiner it decodes, in order and out of order.  "run" means the bytes of
 * count elements are one ordered run, what the schedules may move in place;
 * a wrong "run" is wrong data, a wrong "not a run" only a needless pack, so
 * both are checked.  One process is enough: no communication. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <mpi.h>
#include <stdio.h>

int skewshim_type_layout(MPI_Datatype t, int *size, MPI_Aint *extent, MPI_Aint *true_lb);

static int fails, n;

static void expect(const char *name, MPI_Datatype t, int want)
{
    int size;
    MPI_Aint ext, tlb;
    int got = skewshim_type_layout(t, &size, &ext, &tlb);
    n++;
    if (got != want) {
        fprintf(stderr, "dtype_layout: %s: run=%d, expected %d\n", name, got, want);
        fails++;
    }
}

static MPI_Datatype commit(MPI_Datatype t)
{
    MPI_Type_commit(&t);
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Datatype t, c4;
    expect("MPI_INT", MPI_INT, 1);
    expect("MPI_DOUBLE_INT (padded pair)", MPI_DOUBLE_INT, 0);
    expect("MPI_SHORT_INT (gap inside)", MPI_SHORT_INT, 0);
    MPI_Type_contiguous(4, MPI_INT, &c4);
    c4 = commit(c4);
    expect("contiguous(4, int)", c4, 1);
    MPI_Type_dup(MPI_INT, &t);
    expect("dup(int)", t, 1);
    MPI_Type_free(&t);
    MPI_Type_contiguous(0, MPI_INT, &t);
    expect("contiguous(0): empty", commit(t), 1);
    MPI_Type_vector(3, 2, 2, MPI_INT, &t);
    expect("vector(3, 2, 2): touching blocks", commit(t), 1);
    MPI_Type_vector(3, 1, 2, MPI_INT, &t);
    expect("vector(3, 1, 2): gaps", commit(t), 0);
    MPI_Type_vector(12, 1, -1, MPI_INT, &t);
    expect("vector(12, 1, -1): reversed", commit(t), 0);
    MPI_Type_vector(2, 1, 1, c4, &t);
    expect("vector of contiguous", commit(t), 1);
    MPI_Type_create_hvector(2, 1, -16, c4, &t);
    expect("hvector, negative stride", commit(t), 0);
    MPI_Type_create_hvector(2, 1, 16, c4, &t);
    expect("hvector, touching", commit(t), 1);
    int bl[2] = {2, 3}, blr[2] = {3, 3}, ix[3] = {0, 1, 2}, ixp[3] = {0, 2, 1};
    MPI_Aint d[2] = {0, 8}, dr[2] = {12, 0};
    MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
    MPI_Type_create_struct(2, bl, d, ty, &t);
    expect("struct in order", commit(t), 1);
    MPI_Type_create_struct(2, blr, dr, ty, &t);
    expect("struct, halves swapped", commit(t), 0);
    MPI_Type_create_hindexed(2, blr, dr, MPI_INT, &t);
    expect("hindexed, halves swapped", commit(t), 0);
    MPI_Type_indexed(3, (int[]){1, 1, 1}, ix, MPI_INT, &t);
    expect("indexed in order", commit(t), 1);
    MPI_Type_indexed(3, (int[]){1, 1, 1}, ixp, MPI_INT, &t);
    expect("indexed, permuted", commit(t), 0);
    MPI_Type_create_indexed_block(3, 1, ix, MPI_INT, &t);
    expect("indexed_block in order", commit(t), 1);
    MPI_Type_create_indexed_block(3, 1, ixp, MPI_INT, &t);
    expect("indexed_block, permuted", commit(t), 0);
    MPI_Type_create_hindexed_block(2, 2, (MPI_Aint[]){8, 0}, MPI_INT, &t);
    expect("hindexed_block, swapped", commit(t), 0);
    MPI_Type_create_resized(MPI_INT, 0, 8, &t);
    expect("resized(int, extent 8): elements apart", commit(t), 0);
    MPI_Type_create_resized(MPI_INT, -4, 4, &t);
    expect("resized(int, lb -4, extent 4)", commit(t), 1);
    int sz[1] = {10}, sub[1] = {10}, st[1] = {0};
    MPI_Type_create_subarray(1, sz, sub, st, MPI_ORDER_C, MPI_INT, &t);
    expect("subarray (not decoded: packed)", commit(t), 0);
    /* nested: a reversed type inside an ordered contiguous one */
    MPI_Datatype rev;
    MPI_Type_vector(2, 1, -1, MPI_INT, &rev);
    MPI_Type_contiguous(1, commit(rev), &t);
    expect("contiguous(1, reversed)", commit(t), 0);
    printf("dtype_layout: %d types, %d wrong\n", n, fails);
    MPI_Finalize();
    return fails ? 1 : 0;
}
