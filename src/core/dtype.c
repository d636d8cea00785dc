/* Whether a datatype's data is one ordered run of bytes.  The schedules
 * move bytes, so a type qualifies only when its typemap, read in order,
 * visits consecutive increasing addresses and consecutive elements touch.
 * Size, extent and true extent cannot tell: MPI_Type_vector(12, 1, -1,
 * MPI_INT) has size == true extent == extent and is a run in reverse order.
 * So the type is decoded (MPI_Type_get_envelope / get_contents) down to its
 * predefined leaves.  Anything the decoder does not know (subarray, darray,
 * the MPI-1 *_INTEGER combiners, very deep nesting) is reported "not a run",
 * which costs a pack, never a wrong result. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>

#include "core/internal.h"

/* Deeper nesting than any real program builds; beyond it, "not a run". */
#define MAX_DEPTH 32

/* The bytes of one element: [start, start + len) in typemap order when ok. */
typedef struct run {
    int ok;
    MPI_Aint start, len;
} run;

/* Pieces of a constructor, appended in typemap order. */
typedef struct acc {
    int ok, any;
    MPI_Aint start, end;
} acc;

static void add(acc *a, const run *child, MPI_Aint child_extent, MPI_Aint disp, MPI_Aint n)
{
    if (!a->ok || n <= 0 || child->len == 0)
        return;
    /* n copies of the child sit child_extent apart: one run only when each
     * ends where the next begins. */
    if (!child->ok || (n > 1 && child_extent != child->len)) {
        a->ok = 0;
        return;
    }
    MPI_Aint s = disp + child->start;
    if (a->any && s != a->end) {
        a->ok = 0;
        return;
    }
    if (!a->any)
        a->start = s;
    a->any = 1;
    a->end = s + n * child->len;
}

static int predefined(int combiner)
{
    return combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
           combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER;
}

static void leaf(MPI_Datatype t, run *r)
{
    int size;
    MPI_Aint tlb, text;
    r->ok = PMPI_Type_size(t, &size) == MPI_SUCCESS &&
            PMPI_Type_get_true_extent(t, &tlb, &text) == MPI_SUCCESS && (MPI_Aint)size == text;
    r->start = r->ok ? tlb : 0;
    r->len = r->ok ? size : 0;
}

static void decode(MPI_Datatype t, int depth, run *r);

/* The run of a constructor's child type and the child's extent. */
static void child(MPI_Datatype t, int depth, run *r, MPI_Aint *extent)
{
    MPI_Aint lb;
    decode(t, depth + 1, r);
    if (PMPI_Type_get_extent(t, &lb, extent) != MPI_SUCCESS)
        r->ok = 0;
}

/* count blocks of blocklength copies of the child, stride bytes apart:
 * each must start where the last ended, so checking the first two
 * spacings covers them all. */
static void add_vector(acc *a, const run *c, MPI_Aint ext, int count, int blocklength,
                       MPI_Aint stride)
{
    add(a, c, ext, 0, blocklength);
    if (count > 1 && a->any && a->ok) {
        if (stride != (MPI_Aint)blocklength * c->len)
            a->ok = 0;
        else
            a->end += (MPI_Aint)(count - 1) * stride;
    }
}

/* Whether the envelope's counts are what the combiner's arguments take
 * (MPI 4.0, Table 5.1), so that reading them stays inside the arrays.  A
 * library whose envelope says otherwise (SimGrid 3.32 names a struct of
 * one child type MPI_COMBINER_INDEXED and hands out the struct's 3
 * integers where indexed reads 5) gets "not a run": a pack, where reading
 * past the integers took heap garbage for displacements and once called
 * such a struct one run (doc/lab.md, "Random calls on simulated nodes"). */
static int counts_fit(int comb, int ni, int na, int nd, const int *iv)
{
    int n = ni > 0 ? iv[0] : -1;
    switch (comb) {
    case MPI_COMBINER_DUP:
        return nd == 1;
    case MPI_COMBINER_RESIZED:
        return na == 2 && nd == 1;
    case MPI_COMBINER_CONTIGUOUS:
        return ni == 1 && nd == 1;
    case MPI_COMBINER_VECTOR:
        return ni == 3 && nd == 1;
    case MPI_COMBINER_HVECTOR:
        return ni == 2 && na == 1 && nd == 1;
    case MPI_COMBINER_INDEXED:
        return n >= 0 && ni == 2 * n + 1 && nd == 1;
    case MPI_COMBINER_HINDEXED:
        return n >= 0 && ni == n + 1 && na == n && nd == 1;
    case MPI_COMBINER_INDEXED_BLOCK:
        return n >= 0 && ni == n + 2 && nd == 1;
    case MPI_COMBINER_HINDEXED_BLOCK:
        return n >= 0 && ni == 2 && na == n && nd == 1;
    case MPI_COMBINER_STRUCT:
        return n >= 0 && ni == n + 1 && na == n && nd == n;
    default:
        return 0;
    }
}

/* The run of a derived type from its constructor's arguments. */
static void decode_contents(int comb, const int *iv, const MPI_Aint *av,
                            const MPI_Datatype *tv, int depth, run *r)
{
    acc a = {1, 0, 0, 0};
    run c;
    MPI_Aint ext;
    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        /* A new lb/extent moves no bytes; the parent compares the extent. */
        decode(tv[0], depth + 1, r);
        return;
    case MPI_COMBINER_CONTIGUOUS:
        child(tv[0], depth, &c, &ext);
        add(&a, &c, ext, 0, iv[0]);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
        child(tv[0], depth, &c, &ext);
        add_vector(&a, &c, ext, iv[0], iv[1],
                   comb == MPI_COMBINER_VECTOR ? (MPI_Aint)iv[2] * ext : av[0]);
        break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
        child(tv[0], depth, &c, &ext);
        for (int i = 0; i < iv[0] && a.ok; i++)
            add(&a, &c, ext,
                comb == MPI_COMBINER_INDEXED ? (MPI_Aint)iv[1 + iv[0] + i] * ext : av[i],
                iv[1 + i]);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        child(tv[0], depth, &c, &ext);
        for (int i = 0; i < iv[0] && a.ok; i++)
            add(&a, &c, ext, comb == MPI_COMBINER_INDEXED_BLOCK ? (MPI_Aint)iv[2 + i] * ext : av[i],
                iv[1]);
        break;
    case MPI_COMBINER_STRUCT:
        for (int i = 0; i < iv[0] && a.ok; i++) {
            child(tv[i], depth, &c, &ext);
            add(&a, &c, ext, av[i], iv[1 + i]);
        }
        break;
    default:
        /* subarray, darray, MPI-1 combiners: not decoded, so "not a run" */
        a.ok = 0;
        break;
    }
    r->ok = a.ok;
    r->start = a.any ? a.start : 0;
    r->len = a.any ? a.end - a.start : 0;
}

/* get_contents hands out new handles for derived types only. */
static void free_contents(MPI_Datatype *tv, int nd)
{
    for (int i = 0; i < nd; i++) {
        int x, y, z, cb;
        if (PMPI_Type_get_envelope(tv[i], &x, &y, &z, &cb) == MPI_SUCCESS && !predefined(cb))
            PMPI_Type_free(&tv[i]);
    }
}

static void decode(MPI_Datatype t, int depth, run *r)
{
    int ni, na, nd, comb;
    r->ok = 0;
    r->start = r->len = 0;
    if (depth > MAX_DEPTH || PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS)
        return;
    if (predefined(comb)) {
        leaf(t, r);
        return;
    }
    int *iv = malloc((size_t)(ni > 0 ? ni : 1) * sizeof *iv);
    MPI_Aint *av = malloc((size_t)(na > 0 ? na : 1) * sizeof *av);
    MPI_Datatype *tv = malloc((size_t)(nd > 0 ? nd : 1) * sizeof *tv);
    if (iv && av && tv && PMPI_Type_get_contents(t, ni, na, nd, iv, av, tv) == MPI_SUCCESS) {
        if (counts_fit(comb, ni, na, nd, iv))
            decode_contents(comb, iv, av, tv, depth, r);
        free_contents(tv, nd);
    }
    free(iv);
    free(av);
    free(tv);
}

int skewshim_type_layout(MPI_Datatype t, int *size, MPI_Aint *extent, MPI_Aint *true_lb)
{
    MPI_Aint lb, tlb, text;
    if (PMPI_Type_size(t, size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(t, &lb, extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(t, &tlb, &text) != MPI_SUCCESS) {
        *size = 0;
        *extent = *true_lb = 0;
        return 0;
    }
    *true_lb = tlb;
    if (*size == 0)
        return 1;
    /* Cheap necessary conditions first: most calls pass predefined types,
     * and a type with gaps fails here without a decode. */
    if ((MPI_Aint)*size != text || text != *extent)
        return 0;
    run r;
    decode(t, 0, &r);
    return r.ok && r.start == tlb && r.len == (MPI_Aint)*size;
}
