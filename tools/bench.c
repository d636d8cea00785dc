#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* skewshim-bench: times MPI_Alltoallv under skewshim's algorithms on
 * generated or replayed workloads (doc/bench.md).
 *
 * Linked against libskewshim, so MPI_Alltoallv is the shim; PMPI_Alltoallv
 * is the untouched MPI library and serves as the reference.  Measurement
 * rules from DESIGN.md section 5: the algorithms of one size run interleaved
 * (A B C A B C ...), each call is timed between a barrier and its return,
 * the per-iteration time is the max over ranks, and every algorithm's result
 * is checked byte for byte against the reference before it is timed.
 */

#define _POSIX_C_SOURCE 200809L   /* strtok_r */

#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SKEWSHIM_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "skewshim.h"
#include "topo.h"
#include "workload.h"

#define MAX_PARAMS 8
#define MAX_ITEMS 32
#define MAX_SIZES 64
#define MAX_SETS 16
#define SENTINEL 0xA5   /* receive bytes nobody should write */

typedef struct kv { char name[64], value[64]; } kv;

/* One entry of --algos: an algorithm with its parameter overrides. */
typedef struct item {
    char algo[32];
    char label[160];        /* "tuna(radix=4)" */
    kv par[MAX_PARAMS];
    int npar;
    /* per size */
    int fallbacks;          /* timed calls that went to PMPI_Alltoallv */
    char reason[64];        /* the last fallback reason */
    char ran[32];           /* the algorithm that ran last */
} item;

typedef struct opts {
    item items[MAX_ITEMS];
    int nitems;
    uint64_t sizes[MAX_SIZES];
    int nsizes;
    int wl_kind;
    double param;
    int topk, tokens;
    uint64_t seed;
    MPI_Datatype type;
    const char *type_name;
    int tsize;
    int iters, warmup;
    int ranks_per_node;     /* 0: the policy's / the machine's */
    const char *replay;
    int replay_index;
    const char *csv;
    int device;
    kv set[MAX_SETS];       /* base values of shim parameters */
    int nset;
} opts;

static int g_rank, g_size;
static int g_label_width = 30;   /* widest algo label, for aligned columns */

/* Errors in the options are the same on every rank (same argv), so every
 * rank stops on its own without talking; only rank 0 says why. */
static int usage_error(const char *fmt, const char *arg)
{
    if (g_rank == 0) {
        fprintf(stderr, "skewshim-bench: ");
        fprintf(stderr, fmt, arg);
        fprintf(stderr, "\n(see doc/bench.md or --help)\n");
    }
    return -1;
}

static void print_help(void)
{
    printf(
        "usage: mpiexec -n P skewshim-bench [options]\n"
        "  --algos LIST        algorithms, comma separated, each with optional\n"
        "                      :key=value parameters (tuna:radix=4,native,auto)\n"
        "                      default native,auto\n"
        "  --workload NAME     equal uniform normal power zipf zero hot_send\n"
        "                      hot_recv moe (default uniform)\n"
        "  --param X           workload parameter (see doc/bench.md)\n"
        "  --topk K            moe: experts per token (default 2)\n"
        "  --tokens T          moe: tokens per rank (default 1024)\n"
        "  --sizes LIST|A:B    largest block S in bytes; A:B = powers of 4\n"
        "                      from A to B (default 16:65536); k/m suffixes\n"
        "  --type T            byte, int or double (default byte)\n"
        "  --iters N           timed iterations (default 20)\n"
        "  --warmup W          untimed iterations first (default 3)\n"
        "  --ranks-per-node Q  emulate nodes of Q consecutive ranks\n"
        "  --set NAME=VALUE    any shim parameter for the whole run\n"
        "  --replay FILE[:I]   matrix I (default 0) of a matrix-level log\n"
        "  --csv FILE          also write the rows as CSV\n"
        "  --seed N            workload seed (default 1)\n"
        "  --device            device buffers (CUDA builds)\n");
}

/* ---- option parsing ---- */

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!s || *s < '0' || *s > '9')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    uint64_t mul = 1;
    if (*end == 'k' || *end == 'K')
        mul = 1024, end++;
    else if (*end == 'm' || *end == 'M')
        mul = 1024 * 1024, end++;
    if (*end != '\0' || v > UINT64_MAX / mul)
        return -1;
    *out = (uint64_t)v * mul;
    return 0;
}

static int parse_int(const char *s, int lo, int *out)
{
    uint64_t v;
    if (parse_u64(s, &v) || v < (uint64_t)lo || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_sizes(opts *o, const char *arg)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", arg);
    char *colon = strchr(buf, ':');
    o->nsizes = 0;
    if (colon) {
        uint64_t a, b;
        *colon = '\0';
        if (parse_u64(buf, &a) || parse_u64(colon + 1, &b) || a == 0 || b < a)
            return usage_error("bad --sizes range '%s' (want A:B, 0 < A <= B)", arg);
        for (uint64_t s = a; s <= b && o->nsizes < MAX_SIZES; s *= 4)
            o->sizes[o->nsizes++] = s;
        return 0;
    }
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (o->nsizes == MAX_SIZES || parse_u64(tok, &o->sizes[o->nsizes]))
            return usage_error("bad --sizes list '%s'", arg);
        o->nsizes++;
    }
    return o->nsizes ? 0 : usage_error("empty --sizes '%s'", arg);
}

/* "tuna:radix=4" -> algo tuna, tuna.radix = 4.  A key with a dot, or one of
 * the global names, is passed as it is ("auto:sabre.alpha=1.2"). */
static int parse_item(item *it, const char *spec)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    memset(it, 0, sizeof *it);
    char *save = NULL;
    char *tok = strtok_r(buf, ":", &save);
    if (!tok || strlen(tok) >= sizeof it->algo)
        return usage_error("bad algorithm '%s'", spec);
    char algo[sizeof it->algo];
    strcpy(algo, tok);
    strcpy(it->algo, algo);
    size_t ll = (size_t)snprintf(it->label, sizeof it->label, "%s", tok);
    while ((tok = strtok_r(NULL, ":", &save))) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || it->npar == MAX_PARAMS)
            return usage_error("bad parameter in '%s' (want algo:key=value)", spec);
        *eq = '\0';
        kv *p = &it->par[it->npar++];
        if (strchr(tok, '.') || strcmp(tok, "max_temp_bytes") == 0)
            snprintf(p->name, sizeof p->name, "%s", tok);
        else
            snprintf(p->name, sizeof p->name, "%s.%s", algo, tok);
        snprintf(p->value, sizeof p->value, "%s", eq + 1);
        if (ll < sizeof it->label)
            ll += (size_t)snprintf(it->label + ll, sizeof it->label - ll, "%s%s=%s",
                                   it->npar == 1 ? "(" : ",", tok, eq + 1);
    }
    if (it->npar && ll < sizeof it->label)
        snprintf(it->label + ll, sizeof it->label - ll, ")");
    return 0;
}

static int parse_algos(opts *o, const char *arg)
{
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", arg);
    o->nitems = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (o->nitems == MAX_ITEMS)
            return usage_error("too many --algos items in '%s'", arg);
        if (parse_item(&o->items[o->nitems++], tok))
            return -1;
    }
    return o->nitems ? 0 : usage_error("empty --algos '%s'", arg);
}

static int add_set(opts *o, const char *name, const char *value)
{
    for (int k = 0; k < o->nset; k++)
        if (strcmp(o->set[k].name, name) == 0) {
            snprintf(o->set[k].value, sizeof o->set[k].value, "%s", value);
            return 0;
        }
    if (o->nset == MAX_SETS)
        return usage_error("too many --set (max %s)", "16");
    snprintf(o->set[o->nset].name, sizeof o->set[0].name, "%s", name);
    snprintf(o->set[o->nset].value, sizeof o->set[0].value, "%s", value);
    o->nset++;
    return 0;
}

static int set_type(opts *o, const char *name)
{
    if (strcmp(name, "byte") == 0)
        o->type = MPI_BYTE, o->tsize = 1;
    else if (strcmp(name, "int") == 0)
        o->type = MPI_INT, o->tsize = (int)sizeof(int);
    else if (strcmp(name, "double") == 0)
        o->type = MPI_DOUBLE, o->tsize = (int)sizeof(double);
    else
        return usage_error("unknown --type '%s' (byte, int, double)", name);
    o->type_name = name;
    return 0;
}

/* Returns 0, 1 for --help, -1 on error. */
static int parse_args(opts *o, int argc, char **argv, int *type_given)
{
    memset(o, 0, sizeof *o);
    o->wl_kind = SKEWSHIM_WL_UNIFORM;
    o->seed = 1;
    o->iters = 20;
    o->warmup = 3;
    *type_given = 0;
    set_type(o, "byte");
    if (parse_algos(o, "native,auto") || parse_sizes(o, "16:65536"))
        return -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            return 1;
        if (strcmp(a, "--device") == 0) {
            o->device = 1;
            continue;
        }
        if (strncmp(a, "--", 2) != 0 || i + 1 >= argc)
            return usage_error("unknown option or missing value: '%s'", a);
        const char *v = argv[++i];
        int rc = 0;
        if (strcmp(a, "--algos") == 0)
            rc = parse_algos(o, v);
        else if (strcmp(a, "--sizes") == 0)
            rc = parse_sizes(o, v);
        else if (strcmp(a, "--workload") == 0) {
            o->wl_kind = skewshim_wl_from_name(v);
            if (o->wl_kind < 0)
                rc = usage_error("unknown --workload '%s'", v);
        } else if (strcmp(a, "--param") == 0) {
            char *end;
            o->param = strtod(v, &end);
            if (*end || end == v)
                rc = usage_error("bad --param '%s'", v);
        } else if (strcmp(a, "--topk") == 0)
            rc = parse_int(v, 1, &o->topk) ? usage_error("bad --topk '%s'", v) : 0;
        else if (strcmp(a, "--tokens") == 0)
            rc = parse_int(v, 1, &o->tokens) ? usage_error("bad --tokens '%s'", v) : 0;
        else if (strcmp(a, "--type") == 0) {
            rc = set_type(o, v);
            *type_given = 1;
        } else if (strcmp(a, "--iters") == 0)
            rc = parse_int(v, 1, &o->iters) ? usage_error("bad --iters '%s'", v) : 0;
        else if (strcmp(a, "--warmup") == 0)
            rc = parse_int(v, 0, &o->warmup) ? usage_error("bad --warmup '%s'", v) : 0;
        else if (strcmp(a, "--ranks-per-node") == 0) {
            rc = parse_int(v, 1, &o->ranks_per_node)
                     ? usage_error("bad --ranks-per-node '%s'", v)
                     : add_set(o, "topology.ranks_per_node", v);
        } else if (strcmp(a, "--set") == 0) {
            char buf[160];
            snprintf(buf, sizeof buf, "%s", v);
            char *eq = strchr(buf, '=');
            if (!eq || eq == buf)
                rc = usage_error("bad --set '%s' (want NAME=VALUE)", v);
            else {
                *eq = '\0';
                rc = add_set(o, buf, eq + 1);
            }
        } else if (strcmp(a, "--replay") == 0) {
            /* FILE[:INDEX]: only a colon followed by digits alone is an
             * index, so paths with colons still work. */
            static char path[4096];
            snprintf(path, sizeof path, "%s", v);
            char *colon = strrchr(path, ':');
            if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
                *colon = '\0';
                rc = parse_int(colon + 1, 0, &o->replay_index);
            }
            o->replay = path;
        } else if (strcmp(a, "--csv") == 0)
            o->csv = v;
        else if (strcmp(a, "--seed") == 0)
            rc = parse_u64(v, &o->seed) ? usage_error("bad --seed '%s'", v) : 0;
        else
            rc = usage_error("unknown option '%s'", a);
        if (rc)
            return -1;
    }
    return 0;
}

/* ---- the shim's knobs ---- */

static const char *base_value(const opts *o, const char *name)
{
    for (int k = 0; k < o->nset; k++)
        if (strcmp(o->set[k].name, name) == 0)
            return o->set[k].value;
    return NULL;   /* the policy's value */
}

static void item_apply(const item *it)
{
    skewshim_force_algorithm(strcmp(it->algo, "auto") == 0 ? NULL : it->algo);
    for (int k = 0; k < it->npar; k++)
        skewshim_set_param(it->par[k].name, it->par[k].value);
}

/* Back to the run's base, not to the policy: --ranks-per-node and --set
 * must survive an item that overrides the same name. */
static void item_restore(const opts *o, const item *it)
{
    for (int k = 0; k < it->npar; k++)
        skewshim_set_param(it->par[k].name, base_value(o, it->par[k].name));
    skewshim_force_algorithm(NULL);
}

/* Check every name once, up front, so a typo fails before any timing. */
static int check_knobs(const opts *o)
{
    char msg[200];
    for (int k = 0; k < o->nset; k++)
        if (skewshim_set_param(o->set[k].name, o->set[k].value) != 0) {
            snprintf(msg, sizeof msg, "%s=%s", o->set[k].name, o->set[k].value);
            return usage_error("the shim refuses parameter %s", msg);
        }
    for (int i = 0; i < o->nitems; i++) {
        const item *it = &o->items[i];
        if (strcmp(it->algo, "auto") != 0 && skewshim_force_algorithm(it->algo) != 0)
            return usage_error("unknown algorithm '%s'", it->algo);
        skewshim_force_algorithm(NULL);
        for (int k = 0; k < it->npar; k++) {
            int rc = skewshim_set_param(it->par[k].name, it->par[k].value);
            skewshim_set_param(it->par[k].name, base_value(o, it->par[k].name));
            if (rc != 0) {
                snprintf(msg, sizeof msg, "%s=%s (item %s)", it->par[k].name,
                         it->par[k].value, it->label);
                return usage_error("the shim refuses parameter %s", msg);
            }
        }
    }
    return 0;
}

/* ---- buffers: recognisable data, gaps, permuted displacements ---- */

/* The content of byte b of the block rank src sends rank dst.  A hash of
 * all three, so a block delivered to the wrong place or shifted by any
 * amount is caught, not only a missing one. */
static uint64_t pat_word(int src, int dst, uint64_t w)
{
    uint64_t z = (uint64_t)src * 0x9e3779b97f4a7c15ULL ^ (uint64_t)dst * 0xc2b2ae3d27d4eb4fULL ^
                 (w + 1) * 0x165667b19e3779f9ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void pat_fill(unsigned char *p, int src, int dst, size_t nbytes)
{
    for (size_t b = 0; b < nbytes; b += 8) {
        uint64_t w = pat_word(src, dst, b / 8);
        for (size_t k = 0; k < 8 && b + k < nbytes; k++)
            p[b + k] = (unsigned char)(w >> (8 * k));
    }
}

typedef struct layout {
    int *scount, *sdispl, *rcount, *rdispl;   /* elements, as MPI wants */
    size_t sbytes, rbytes;
    unsigned char *sbuf, *spristine, *rbuf, *rref, *rexp;
    void *dsbuf, *drbuf;                      /* --device */
} layout;

/* Block order in the buffer is a seeded permutation of the ranks, with a
 * gap of 1..3 elements before each block: a schedule that assumes blocks
 * are contiguous and in rank order writes the wrong place or a gap. */
static int place_blocks(const int *count, int *displ, int P, uint64_t seed, size_t *total)
{
    int *order = malloc((size_t)P * sizeof *order);
    if (!order)
        return -1;
    for (int j = 0; j < P; j++)
        order[j] = j;
    uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
    for (int j = P - 1; j > 0; j--) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int r = (int)(x % (uint64_t)(j + 1));
        int t = order[j];
        order[j] = order[r];
        order[r] = t;
    }
    uint64_t off = 0;
    for (int k = 0; k < P; k++) {
        int j = order[k];
        off += 1 + (uint64_t)(j + k) % 3;
        displ[j] = (int)(off > INT_MAX ? INT_MAX : off);
        off += (uint64_t)count[j];
        if (off > INT_MAX) {
            free(order);
            return -2;   /* MPI_Alltoallv displacements are int */
        }
    }
    *total = (size_t)off + 1;
    free(order);
    return 0;
}

static void layout_free(layout *L)
{
    free(L->scount); free(L->sdispl); free(L->rcount); free(L->rdispl);
    free(L->sbuf); free(L->spristine); free(L->rbuf); free(L->rref); free(L->rexp);
#ifdef SKEWSHIM_HAVE_CUDA
    if (L->dsbuf)
        cudaFree(L->dsbuf);
    if (L->drbuf)
        cudaFree(L->drbuf);
#endif
    memset(L, 0, sizeof *L);
}

/* Returns 0, -1 out of memory, -2 counts beyond int. */
static int layout_build(layout *L, const opts *o, const uint64_t *counts, int P, int me)
{
    memset(L, 0, sizeof *L);
    L->scount = malloc((size_t)P * sizeof(int));
    L->sdispl = malloc((size_t)P * sizeof(int));
    L->rcount = malloc((size_t)P * sizeof(int));
    L->rdispl = malloc((size_t)P * sizeof(int));
    if (!L->scount || !L->sdispl || !L->rcount || !L->rdispl)
        return -1;
    for (int j = 0; j < P; j++) {
        uint64_t s = counts[(size_t)me * P + j], r = counts[(size_t)j * P + me];
        if (s > INT_MAX || r > INT_MAX)
            return -2;
        L->scount[j] = (int)s;
        L->rcount[j] = (int)r;
    }
    size_t se, re;
    int rc = place_blocks(L->scount, L->sdispl, P, o->seed ^ (uint64_t)me << 20, &se);
    if (rc == 0)
        rc = place_blocks(L->rcount, L->rdispl, P, o->seed ^ (uint64_t)me << 20 ^ 0x5bd1e995, &re);
    if (rc)
        return rc;
    size_t ts = (size_t)o->tsize;
    L->sbytes = se * ts;
    L->rbytes = re * ts;
    L->sbuf = malloc(L->sbytes);
    L->spristine = malloc(L->sbytes);
    L->rbuf = malloc(L->rbytes);
    L->rref = malloc(L->rbytes);
    L->rexp = malloc(L->rbytes);
    if (!L->sbuf || !L->spristine || !L->rbuf || !L->rref || !L->rexp)
        return -1;
    memset(L->sbuf, SENTINEL, L->sbytes);
    memset(L->rexp, SENTINEL, L->rbytes);
    for (int j = 0; j < P; j++) {
        pat_fill(L->sbuf + (size_t)L->sdispl[j] * ts, me, j, (size_t)L->scount[j] * ts);
        pat_fill(L->rexp + (size_t)L->rdispl[j] * ts, j, me, (size_t)L->rcount[j] * ts);
    }
    memcpy(L->spristine, L->sbuf, L->sbytes);
#ifdef SKEWSHIM_HAVE_CUDA
    if (o->device) {
        if (cudaMalloc(&L->dsbuf, L->sbytes) != cudaSuccess ||
            cudaMalloc(&L->drbuf, L->rbytes) != cudaSuccess)
            return -1;
        cudaMemcpy(L->dsbuf, L->sbuf, L->sbytes, cudaMemcpyHostToDevice);
    }
#endif
    return 0;
}

static void *send_ptr(const opts *o, layout *L)
{
    return o->device ? L->dsbuf : L->sbuf;
}

static void *recv_ptr(const opts *o, layout *L)
{
    return o->device ? L->drbuf : L->rbuf;
}

static void device_sync(const opts *o)
{
#ifdef SKEWSHIM_HAVE_CUDA
    if (o->device)
        cudaDeviceSynchronize();
#else
    (void)o;
#endif
}

/* ---- verification ---- */

static void describe_offset(const layout *L, const opts *o, int P, size_t off,
                            char *out, size_t len)
{
    size_t ts = (size_t)o->tsize;
    for (int s = 0; s < P; s++) {
        size_t lo = (size_t)L->rdispl[s] * ts, hi = lo + (size_t)L->rcount[s] * ts;
        if (off >= lo && off < hi) {
            snprintf(out, len, "in the block from rank %d, element %zu of %d", s,
                     (off - lo) / ts, L->rcount[s]);
            return;
        }
    }
    snprintf(out, len, "in a gap between blocks (written where nothing was sent)");
}

static size_t first_diff(const unsigned char *a, const unsigned char *b, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (a[k] != b[k])
            return k;
    return n;
}

/* Collective over comm; aborts the job on any mismatch.  what: the item's
 * label, or NULL for the reference itself. */
static void verify_or_abort(const opts *o, layout *L, const unsigned char *got,
                            const unsigned char *want, const char *what,
                            const char *wl, uint64_t S, MPI_Comm comm)
{
    int P = g_size;
    int bad = 0;
    char where[160], msg[400];
    size_t off = first_diff(got, want, L->rbytes);
    if (off < L->rbytes) {
        bad = 1;
        describe_offset(L, o, P, off, where, sizeof where);
        snprintf(msg, sizeof msg, "receive buffer byte %zu %s: got 0x%02x, want 0x%02x",
                 off, where, got[off], want[off]);
    } else if (what && (off = first_diff(L->sbuf, L->spristine, L->sbytes)) < L->sbytes) {
        bad = 1;
        snprintf(msg, sizeof msg, "the send buffer was modified at byte %zu", off);
    }
    int any = 0;
    PMPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm);
    if (!any)
        return;
    if (bad)
        fprintf(stderr, "skewshim-bench: rank %d: %s, %s, S=%llu: %s\n", g_rank,
                what ? what : "reference PMPI_Alltoallv", wl, (unsigned long long)S, msg);
    fflush(stderr);
    PMPI_Barrier(comm);
    if (g_rank == 0)
        fprintf(stderr, "skewshim-bench: VERIFICATION FAILED: %s on %s, S=%llu bytes: "
                "%s (per-rank details above); aborting, a wrong result is never timed\n",
                what ? what : "PMPI_Alltoallv", wl, (unsigned long long)S,
                what ? "result differs from PMPI_Alltoallv on the same inputs, or the "
                       "send buffer was modified"
                     : "the reference differs from the pattern the bench sent");
    fflush(stderr);
    MPI_Abort(comm, 3);
}

/* The reference: PMPI_Alltoallv on host buffers, held to the pattern the
 * bench itself computed (this catches a layout bug in the bench). */
static void run_reference(const opts *o, layout *L, const char *wl, uint64_t S, MPI_Comm comm)
{
    memset(L->rref, SENTINEL, L->rbytes);
    PMPI_Alltoallv(L->sbuf, L->scount, L->sdispl, o->type, L->rref, L->rcount, L->rdispl,
                   o->type, comm);
    verify_or_abort(o, L, L->rref, L->rexp, NULL, wl, S, comm);
}

static void note_last(item *it)
{
    skewshim_last last;
    memset(&last, 0, sizeof last);
    if (skewshim_last_call(&last) != 0)
        return;
    const char *name = skewshim_algorithm_name(last.algorithm);
    snprintf(it->ran, sizeof it->ran, "%s", name ? name : "?");
    if (last.fallback_reason != 0) {
        it->fallbacks++;
        snprintf(it->reason, sizeof it->reason, "%s",
                 last.reason && *last.reason ? last.reason : "unknown");
    }
}

static void run_item_checked(const opts *o, item *it, layout *L, const char *wl, uint64_t S,
                             MPI_Comm comm)
{
    memset(L->rbuf, SENTINEL, L->rbytes);
#ifdef SKEWSHIM_HAVE_CUDA
    if (o->device)
        cudaMemset(L->drbuf, SENTINEL, L->rbytes);
#endif
    item_apply(it);
    MPI_Alltoallv(send_ptr(o, L), L->scount, L->sdispl, o->type, recv_ptr(o, L), L->rcount,
                  L->rdispl, o->type, comm);
    device_sync(o);
    note_last(it);
    item_restore(o, it);
#ifdef SKEWSHIM_HAVE_CUDA
    if (o->device) {
        cudaMemcpy(L->rbuf, L->drbuf, L->rbytes, cudaMemcpyDeviceToHost);
        cudaMemcpy(L->sbuf, L->dsbuf, L->sbytes, cudaMemcpyDeviceToHost);
    }
#endif
    verify_or_abort(o, L, L->rbuf, L->rref, it->label, wl, S, comm);
}

/* ---- timing and output ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct stats { double median, min, max; } stats;

static stats stats_of(double *v, int n)
{
    stats s;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    s.min = v[0];
    s.max = v[n - 1];
    s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    return s;
}

/* Times all items interleaved; rank 0 gets the per-iteration max over ranks
 * in tmax[iter * nitems + item] (seconds). */
static void time_items(opts *o, layout *L, double *tmax, MPI_Comm comm)
{
    int n = o->nitems, total = o->warmup + o->iters;
    double *t = calloc((size_t)o->iters * (size_t)n, sizeof *t);
    if (!t) {
        fprintf(stderr, "skewshim-bench: rank %d: out of memory\n", g_rank);
        MPI_Abort(comm, 2);
    }
    for (int i = 0; i < n; i++) {
        o->items[i].fallbacks = 0;
        o->items[i].reason[0] = '\0';
    }
    for (int it = 0; it < total; it++) {
        for (int i = 0; i < n; i++) {
            item *x = &o->items[i];
            item_apply(x);
            device_sync(o);
            PMPI_Barrier(comm);
            double t0 = MPI_Wtime();
            MPI_Alltoallv(send_ptr(o, L), L->scount, L->sdispl, o->type, recv_ptr(o, L),
                          L->rcount, L->rdispl, o->type, comm);
            device_sync(o);
            double t1 = MPI_Wtime();
            if (it >= o->warmup) {
                t[(size_t)(it - o->warmup) * n + i] = t1 - t0;
                note_last(x);
            }
            item_restore(o, x);
        }
    }
    PMPI_Reduce(t, tmax, o->iters * n, MPI_DOUBLE, MPI_MAX, 0, comm);
    free(t);
}

static void csv_field(FILE *f, const char *s, int last)
{
    if (strpbrk(s, ",\"")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
    fputc(last ? '\n' : ',', f);
}

/* A fallback must never read as a result of the algorithm asked for. */
static void status_of(const opts *o, const item *x, char *out, size_t len)
{
    if (x->fallbacks == o->iters)
        snprintf(out, len, "FALLBACK(%s)", x->reason);
    else if (x->fallbacks)
        snprintf(out, len, "FALLBACK(%s)x%d/%d", x->reason, x->fallbacks, o->iters);
    else if (strcmp(x->algo, "auto") == 0 || strcmp(x->algo, x->ran) != 0)
        snprintf(out, len, "ran=%s", x->ran);
    else
        snprintf(out, len, "ok");
}

static void report(const opts *o, const double *tmax, const char *wl, uint64_t S,
                   int q, FILE *csv)
{
    int n = o->nitems;
    double *col = malloc((size_t)o->iters * sizeof *col);
    stats *st = malloc((size_t)n * sizeof *st);
    if (!col || !st) {
        free(col);
        free(st);
        return;
    }
    double native = -1;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < o->iters; k++)
            col[k] = tmax[(size_t)k * n + i] * 1e6;
        st[i] = stats_of(col, o->iters);
        if (native < 0 && strcmp(o->items[i].algo, "native") == 0)
            native = st[i].median;
    }
    for (int i = 0; i < n; i++) {
        const item *x = &o->items[i];
        char ratio[32], status[128];
        if (native > 0)
            snprintf(ratio, sizeof ratio, "%.3f", st[i].median / native);
        else
            snprintf(ratio, sizeof ratio, "-");
        status_of(o, x, status, sizeof status);
        printf("%-18s %9llu  %-*s %11.2f %11.2f %11.2f %7s  %s\n", wl,
               (unsigned long long)S, g_label_width, x->label, st[i].median, st[i].min, st[i].max, ratio,
               status);
        if (csv) {
            char num[64];
            csv_field(csv, wl, 0);
            fprintf(csv, "%d,%d,%s,%llu,", g_size, q, o->type_name, (unsigned long long)S);
            csv_field(csv, x->label, 0);
            for (int k = 0; k < 3; k++) {
                double v = k == 0 ? st[i].median : k == 1 ? st[i].min : st[i].max;
                snprintf(num, sizeof num, "%.3f", v);
                csv_field(csv, num, 0);
            }
            csv_field(csv, ratio, 0);
            csv_field(csv, status, 1);
        }
    }
    fflush(stdout);
    if (csv)
        fflush(csv);
    free(col);
    free(st);
}

/* ---- setup: reproduce line, replay, device ---- */

static void print_reproduce(int argc, char **argv)
{
    printf("# reproduce: mpiexec -n %d", g_size);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (*a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                            "0123456789_./:=,+-@%") == strlen(a)) {
            printf(" %s", a);
            continue;
        }
        /* Single quotes make any argument literal for a POSIX shell. */
        printf(" '");
        for (; *a; a++)
            if (*a == '\'')
                printf("'\\''");
            else
                putchar(*a);
        printf("'");
    }
    printf("\n");
}

/* Rank 0 reads the log and broadcasts, so the file need only exist where
 * rank 0 runs.  counts gets bytes; returns 0 or -1 (on every rank). */
static int load_replay(const opts *o, uint64_t **counts, int *q, int *ts, MPI_Comm comm)
{
    int hdr[4] = { 0, 0, 0, 0 };   /* ok, P, q, type_size */
    skewshim_matrix m = { 0, NULL };
    char err[512] = "";
    if (g_rank == 0) {
        if (skewshim_wl_replay_load(o->replay, o->replay_index, &m, &hdr[2], &hdr[3], err,
                                    sizeof err) == 0) {
            hdr[0] = 1;
            hdr[1] = m.nranks;
        }
    }
    PMPI_Bcast(hdr, 4, MPI_INT, 0, comm);
    if (!hdr[0] || hdr[1] != g_size) {
        if (g_rank == 0) {
            if (!hdr[0])
                fprintf(stderr, "skewshim-bench: --replay: %s\n", err);
            else
                fprintf(stderr, "skewshim-bench: --replay: matrix %d of %s has P=%d, "
                        "this run has %d ranks (run with mpiexec -n %d)\n",
                        o->replay_index, o->replay, hdr[1], g_size, hdr[1]);
        }
        skewshim_matrix_free(&m);
        return -1;
    }
    size_t n = (size_t)g_size * (size_t)g_size;
    *counts = malloc(n * sizeof **counts);
    if (!*counts)
        MPI_Abort(comm, 2);
    if (g_rank == 0)
        memcpy(*counts, m.b, n * sizeof **counts);
    skewshim_matrix_free(&m);
    PMPI_Bcast(*counts, (int)n, MPI_UINT64_T, 0, comm);
    *q = hdr[2];
    *ts = hdr[3];
    return 0;
}

static int device_setup(const opts *o, MPI_Comm comm)
{
    if (!o->device)
        return 0;
#ifdef SKEWSHIM_HAVE_CUDA
    MPI_Comm local;
    int lrank = 0, ndev = 0;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_free(&local);
    int ok = cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0 &&
             cudaSetDevice(lrank % ndev) == cudaSuccess;
    int all = 0;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    if (!all && g_rank == 0)
        fprintf(stderr, "skewshim-bench: --device: no usable CUDA device on some rank\n");
    return all ? 0 : -1;
#else
    (void)comm;
    if (g_rank == 0)
        fprintf(stderr, "skewshim-bench: --device needs a build with CUDA (configure found "
                "no CUDA runtime); this build times host buffers only\n");
    return -1;
#endif
}

static void workload_label(const opts *o, char *out, size_t len)
{
    if (o->replay) {
        const char *base = strrchr(o->replay, '/');
        snprintf(out, len, "replay(%s:%d)", base ? base + 1 : o->replay, o->replay_index);
    } else if (o->wl_kind == SKEWSHIM_WL_MOE) {
        snprintf(out, len, "moe(s=%g,k=%d)", o->param > 0 ? o->param : 0.8,
                 o->topk > 0 ? o->topk : 2);
    } else if (o->param > 0) {
        snprintf(out, len, "%s(%g)", skewshim_wl_name(o->wl_kind), o->param);
    } else {
        snprintf(out, len, "%s", skewshim_wl_name(o->wl_kind));
    }
}

/* One point: build buffers, check every item, time them all. */
static void run_point(opts *o, const uint64_t *counts, const char *wl, uint64_t S, int q,
                      FILE *csv, MPI_Comm comm)
{
    layout L;
    int rc = layout_build(&L, o, counts, g_size, g_rank), worst = 0;
    int mine = -rc;
    PMPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm);
    if (worst) {
        if (g_rank == 0)
            fprintf(stderr, "skewshim-bench: S=%llu: %s; point skipped\n",
                    (unsigned long long)S,
                    worst == 2 ? "counts or displacements exceed INT_MAX elements"
                               : "out of memory (host or device)");
        layout_free(&L);
        return;
    }
    run_reference(o, &L, wl, S, comm);
    for (int i = 0; i < o->nitems; i++)
        run_item_checked(o, &o->items[i], &L, wl, S, comm);
    double *tmax = malloc((size_t)o->iters * (size_t)o->nitems * sizeof *tmax);
    if (!tmax)
        MPI_Abort(comm, 2);
    time_items(o, &L, tmax, comm);
    if (g_rank == 0)
        report(o, tmax, wl, S, q, csv);
    free(tmax);
    layout_free(&L);
}

static int type_for_size(opts *o, int ts)
{
    return set_type(o, ts == 8 ? "double" : ts == 4 ? "int" : "byte");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Comm_rank(comm, &g_rank);
    MPI_Comm_size(comm, &g_size);

    static opts o;
    int type_given;
    int rc = parse_args(&o, argc, argv, &type_given);
    if (rc == 1 && g_rank == 0)
        print_help();
    if (rc == 0)
        rc = check_knobs(&o) ? -1 : 0;
    if (rc == 0)
        rc = device_setup(&o, comm);
    if (rc != 0) {
        MPI_Finalize();
        return rc == 1 ? 0 : 2;
    }

    size_t n = (size_t)g_size * (size_t)g_size;
    uint64_t *replay = NULL;
    int q = o.ranks_per_node;
    if (o.replay) {
        int lq, lts;
        if (load_replay(&o, &replay, &lq, &lts, comm) != 0) {
            MPI_Finalize();
            return 2;
        }
        if (!type_given)
            type_for_size(&o, lts);
        /* Emulate the recorded node layout unless told otherwise. */
        if (!q && lq > 0 && lq < g_size) {
            char v[16];
            snprintf(v, sizeof v, "%d", lq);
            if (add_set(&o, "topology.ranks_per_node", v) == 0 &&
                skewshim_set_param("topology.ranks_per_node", v) == 0)
                q = lq;
        }
    }

    FILE *csv = NULL;
    if (o.csv && g_rank == 0) {
        csv = fopen(o.csv, "w");
        if (!csv)
            perror(o.csv);
    }
    int csv_ok = !o.csv || csv;
    PMPI_Bcast(&csv_ok, 1, MPI_INT, 0, comm);
    if (!csv_ok) {
        MPI_Finalize();
        return 2;
    }

    char wl[128];
    workload_label(&o, wl, sizeof wl);
    if (g_rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n,")] = '\0';
        print_reproduce(argc, argv);
        char qs[16];
        snprintf(qs, sizeof qs, q ? "%d" : "policy", q);
        printf("# skewshim-bench %s: P=%d ranks_per_node=%s type=%s(%d B) iters=%d "
               "warmup=%d seed=%llu buffers=%s\n# mpi: %s\n", SKEWSHIM_VERSION, g_size,
               qs, o.type_name, o.tsize, o.iters, o.warmup,
               (unsigned long long)o.seed, o.device ? "device" : "host", lib);
        if (g_size == 1)
            printf("# warning: one rank; was the launcher from the MPI this was built with?\n");
        printf("# times in us: max over ranks per iteration, then median/min/max over "
               "iterations; ratio = median / native median\n");
        for (int i = 0; i < o.nitems; i++)
            if ((int)strlen(o.items[i].label) > g_label_width)
                g_label_width = (int)strlen(o.items[i].label);
        printf("%-18s %9s  %-*s %11s %11s %11s %7s  %s\n", "workload", "S_bytes",
               g_label_width, "algo",
               "median_us", "min_us", "max_us", "ratio", "status");
        if (csv)
            fprintf(csv, "workload,P,ranks_per_node,type,S_bytes,algo,median_us,min_us,"
                         "max_us,ratio,status\n");
        fflush(stdout);
    }

    uint64_t *counts = malloc(n * sizeof *counts);
    if (!counts)
        MPI_Abort(comm, 2);
    int status = 0;
    if (replay) {
        uint64_t S = 0;
        int divisible = 1;
        for (size_t k = 0; k < n; k++) {
            divisible &= replay[k] % (uint64_t)o.tsize == 0;
            counts[k] = replay[k] / (uint64_t)o.tsize;
            S = replay[k] > S ? replay[k] : S;
        }
        if (!divisible) {
            if (g_rank == 0)
                fprintf(stderr, "skewshim-bench: --replay: some blocks are not a multiple "
                        "of --type %s (%d bytes)\n", o.type_name, o.tsize);
            status = 2;
        } else {
            run_point(&o, counts, wl, S, q, csv, comm);
        }
    } else {
        for (int s = 0; s < o.nsizes; s++) {
            uint64_t S = o.sizes[s];
            if (S % (uint64_t)o.tsize) {
                if (g_rank == 0)
                    fprintf(stderr, "skewshim-bench: size %llu is not a multiple of --type "
                            "%s (%d bytes); skipped\n", (unsigned long long)S, o.type_name,
                            o.tsize);
                continue;
            }
            skewshim_wl w = { .kind = o.wl_kind, .S = S / (uint64_t)o.tsize,
                              .param = o.param, .seed = o.seed, .topk = o.topk,
                              .tokens = o.tokens };
            /* The generators are deterministic, but pow/log may round
             * differently across libm builds on unlike nodes, and one count
             * differing between sender and receiver breaks the call: rank 0
             * generates, everyone receives. */
            int ok = g_rank != 0 || skewshim_wl_matrix(&w, g_size, counts) == 0;
            PMPI_Bcast(&ok, 1, MPI_INT, 0, comm);
            if (ok)
                PMPI_Bcast(counts, (int)n, MPI_UINT64_T, 0, comm);
            if (!ok) {
                if (g_rank == 0)
                    fprintf(stderr, "skewshim-bench: workload %s refuses --param %g\n",
                            skewshim_wl_name(o.wl_kind), o.param);
                status = 2;
                break;
            }
            run_point(&o, counts, wl, S, q, csv, comm);
        }
    }
    if (csv)
        fclose(csv);
    free(counts);
    free(replay);
    MPI_Finalize();
    return status;
}
