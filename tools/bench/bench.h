/* What the files of skewshim-bench share, private to tools/bench/.
 *   main.c      the run: setup, then one point per size (or the replay)
 *   options.c   the command line and the shim parameters it sets
 *   workload.c  --replay and the workload's label
 *   buffers.c   buffers of a point, device memory, verification
 *   run.c       a point: checks, then the timed loop
 *   report.c    header, table and CSV (rank 0)
 */
#ifndef SKEWSHIM_BENCH_H
#define SKEWSHIM_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

#define MAX_PARAMS 8
#define MAX_ITEMS 32
#define MAX_SIZES 64
#define MAX_SETS 16
#define MAX_ALTERNATE 7   /* --alternate: a job of up to eight exchanges in turn */

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
    int planned;            /* timed calls that planned (a plan-cache miss); -1: none
                               of them used a plan cache */
    int agreed;             /* timed calls that ran the agreement collective */
    /* What the timed calls ran, in order of first appearance: a job whose
     * exchanges change sees auto run more than one thing. */
    char seen[4][32];
    int seen_n[4];
    int nseen;
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
    /* --reference: what items are held to; past REF_MPI there is no
     * PMPI_Alltoallv reference call, and REF_NONE checks nothing */
    enum { REF_MPI, REF_PATTERN, REF_NONE } reference;
    double link_gbps;       /* --link-gbps: per-rank inter-node link, for T_LB */
    char baseline[32];      /* --baseline: the algo the ratio column divides by */
    kv set[MAX_SETS];       /* base values of shim parameters */
    int nset;
    int vary;               /* --vary: a matrix of its own for every iteration */
    /* --alternate S2[,S3,...]: each timed call follows an untimed one of
     * the same item on the workload at each of these sizes, in order */
    uint64_t alternate[MAX_ALTERNATE];
    int nalternate;
} opts;

/* --vary: the point's matrix drawn again with another seed (rows and
 * columns of every rank, as the point's own); collective, 0 or -1. */
typedef struct matrix_source {
    int (*draw)(void *ctx, uint64_t seed, uint64_t *row, uint64_t *col);
    void *ctx;
} matrix_source;

/* The buffers of one point. */
typedef struct layout {
    int *scount, *sdispl, *rcount, *rdispl;   /* elements, as MPI wants */
    size_t sbytes, rbytes;
    int *sorder, *rorder;                     /* ranks in buffer order */
    int me;
    unsigned char *sbuf, *rbuf;
    unsigned char *spristine, *rref, *rexp;   /* NULL under --reference pattern */
    void *dsbuf, *drbuf;                      /* --device */
    size_t payload;                           /* bytes this rank sends */
    void *scratch;                            /* memcpy item; device memory with --device */
    double t_lb;                              /* seconds; 0 without --link-gbps */
} layout;

/* The "memcpy" item is no MPI call: one copy of this rank's payload, the
 * bandwidth an alltoallv on one rank or one device can hope for. */
#define BENCH_MEMCPY "memcpy"

/* This process in MPI_COMM_WORLD (main.c). */
extern int skewshim_bench_rank, skewshim_bench_size;

/* ---- options.c ---- */

void skewshim_bench_print_help(void);
/* Returns 0, 1 for --help, -1 on error (rank 0 said why). */
int skewshim_bench_parse_args(opts *o, int argc, char **argv, int *type_given);
/* A shim parameter for the whole run; 0 or -1. */
int skewshim_bench_add_set(opts *o, const char *name, const char *value);
/* --type from an element size (8 double, 4 int, else byte). */
int skewshim_bench_type_for_size(opts *o, int ts);
/* Every parameter name and algorithm tried once, before any timing. */
int skewshim_bench_check_knobs(const opts *o);
/* Set the shim up for one item; restore sets the run's base values back. */
void skewshim_bench_item_apply(const item *it);
void skewshim_bench_item_restore(const opts *o, const item *it);

/* ---- workload.c ---- */

/* Collective: rank 0 reads the --replay matrix and keeps it (bytes, P x P);
 * the other ranks get NULL.  *q and *ts are the log's ranks_per_node and
 * type size (every rank).  0 or -1. */
int skewshim_bench_load_replay(const opts *o, uint64_t **counts, int *q, int *ts,
                               MPI_Comm comm);
void skewshim_bench_workload_label(const opts *o, char *out, size_t len);

/* ---- buffers.c ---- */

/* Returns 0, -1 out of memory, -2 counts beyond int. */
/* row[j]: elements this rank sends rank j; col[j]: elements rank j sends
 * this rank. */
int skewshim_bench_layout_build(layout *L, const opts *o, const uint64_t *row,
                                const uint64_t *col, int P, int me);
void skewshim_bench_layout_free(layout *L);
void *skewshim_bench_send_ptr(const opts *o, layout *L);
void *skewshim_bench_recv_ptr(const opts *o, layout *L);
void skewshim_bench_device_sync(const opts *o);
/* The memcpy item: this rank's payload copied once (device to device with
 * --device); -1 when its scratch buffer cannot be had. */
int skewshim_bench_copy_payload(const opts *o, layout *L);
/* --device: one CUDA device per rank of a node; collective, 0 or -1. */
int skewshim_bench_device_setup(const opts *o, MPI_Comm comm);
/* PMPI_Alltoallv into L->rref, held to the pattern; aborts on a mismatch. */
void skewshim_bench_run_reference(const opts *o, layout *L, const char *wl, uint64_t S,
                                  MPI_Comm comm);
/* One call of the item, held to the reference; aborts on a mismatch. */
void skewshim_bench_run_item_checked(const opts *o, item *it, layout *L, const char *wl,
                                     uint64_t S, MPI_Comm comm);
/* --vary: the receive buffer poisoned before a timed call, and afterwards
 * held to the reference; aborts on a mismatch. */
void skewshim_bench_clear_recv(layout *L);
void skewshim_bench_check_result(const opts *o, const item *it, layout *L, const char *wl,
                                 uint64_t S, MPI_Comm comm);

/* ---- run.c ---- */

/* Records in it what the shim says ran last, and a fallback. */
int skewshim_bench_note_last(item *it);   /* the call's plan_cache_hit */
/* --alternate: the other exchanges' rows and columns (elements). */
typedef struct alt_matrix {
    const uint64_t *row[MAX_ALTERNATE], *col[MAX_ALTERNATE];
    const uint64_t *S;
    int n;
} alt_matrix;

/* One point: build buffers, check every item, time them all, report. */
void skewshim_bench_run_point(opts *o, const uint64_t *row, const uint64_t *col,
                              const char *wl, uint64_t S, int q, FILE *csv,
                              const matrix_source *vary, const alt_matrix *alt,
                              MPI_Comm comm);

/* ---- report.c (rank 0) ---- */

void skewshim_bench_print_header(const opts *o, int q, int argc, char **argv, FILE *csv);
void skewshim_bench_report(const opts *o, const double *tmax, const char *wl, uint64_t S,
                           int q, double t_lb, FILE *csv);

#endif
