#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* The skew log (JSON Lines).  Format: doc/log-format.md.
 *
 * Two rules shape this file:
 *  - Collective behaviour depends only on rank-invariant things (the policy's
 *    level, the ring's call count), never on whether this rank's file could
 *    be opened or its memory allocated: a rank that cannot log still takes
 *    part in every reduction, or the other ranks would hang.
 *  - Every write(2) carries whole lines, so ranks appending to one shared
 *    file never interleave inside a line.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "call.h"
#include "log.h"
#include "policy.h"
#include "skewshim.h"

#define RING_DEFAULT_CAP 256
/* A preset cap is clamped to this on every rank alike, so the degraded
 * (allocation failed) path below can always take part with static buffers. */
#define RING_MAX_CAP 1024

/* ---- growable line buffer -------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t n, cap;
    int heap;  /* p is malloc'd */
    int err;   /* out of memory: the text is truncated, do not write it */
} sbuf;

static void sb_init(sbuf *b, char *stack, size_t cap)
{
    b->p = stack;
    b->n = 0;
    b->cap = cap;
    b->heap = 0;
    b->err = 0;
    if (cap) b->p[0] = '\0';
}

static void sb_free(sbuf *b)
{
    if (b->heap) free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
    b->heap = 0;
}

static int sb_reserve(sbuf *b, size_t extra)
{
    if (b->err) return -1;
    if (b->n + extra + 1 <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + extra + 1) cap *= 2;
    char *p = b->heap ? realloc(b->p, cap) : malloc(cap);
    if (!p) {
        b->err = 1;
        return -1;
    }
    if (!b->heap && b->n) memcpy(p, b->p, b->n);
    b->p = p;
    b->cap = cap;
    b->heap = 1;
    b->p[b->n] = '\0';
    return 0;
}

static void sb_mem(sbuf *b, const char *s, size_t len)
{
    if (sb_reserve(b, len)) return;
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
}

static void sb_cat(sbuf *b, const char *s)
{
    sb_mem(b, s, strlen(s));
}

static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (len < 0) {
        b->err = 1;
        return;
    }
    if ((size_t)len < sizeof tmp) {
        sb_mem(b, tmp, (size_t)len);
        return;
    }
    if (sb_reserve(b, (size_t)len)) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)len + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)len;
}

/* JSON string with escapes; non-ASCII bytes pass through (paths are UTF-8
 * in practice, and JSON allows them raw). */
static void sb_str(sbuf *b, const char *s)
{
    sb_cat(b, "\"");
    for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
        if (*c == '"' || *c == '\\') {
            char e[2] = {'\\', (char)*c};
            sb_mem(b, e, 2);
        } else if (*c < 0x20) {
            sb_printf(b, "\\u%04x", *c);
        } else {
            sb_mem(b, (const char *)c, 1);
        }
    }
    sb_cat(b, "\"");
}

/* A number Python's json reads: nan/inf become null, and a locale that
 * writes decimal commas (an application may call setlocale) is undone. */
static void sb_num(sbuf *b, double v)
{
    if (!isfinite(v)) {
        sb_cat(b, "null");
        return;
    }
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.10g", v);
    for (char *c = tmp; *c; c++)
        if (*c == ',') *c = '.';
    sb_cat(b, tmp);
}

/* An MTM is >= 1 by definition; 0 is what a call that never reached the
 * agreement (an early fallback) carries, and reads better as "unknown". */
static void sb_mtm(sbuf *b, double v)
{
    if (v > 0)
        sb_num(b, v);
    else
        sb_cat(b, "null");
}

static void sb_u64(sbuf *b, uint64_t v)
{
    sb_printf(b, "%" PRIu64, v);
}

/* ", \"key\": " */
static void sb_key(sbuf *b, const char *key, int first)
{
    if (!first) sb_cat(b, ", ");
    sb_str(b, key);
    sb_cat(b, ": ");
}

/* ---- names ------------------------------------------------------------ */

static const char *algo_name(int id, char *tmp, size_t len)
{
    const char *n = NULL;
    if (id >= 0 && id < SKEWSHIM_ALGO_COUNT) n = skewshim_algo_name((skewshim_algo_id)id);
    if (n && *n) return n;
    snprintf(tmp, len, "algo_%d", id);
    return tmp;
}

static const char *reason_name(int r, char *tmp, size_t len)
{
    const char *n = NULL;
    if (r >= 0 && r < SKEWSHIM_REASON_COUNT) n = skewshim_reason_name((skewshim_reason)r);
    if (n && *n) return n;
    snprintf(tmp, len, "reason_%d", r);
    return tmp;
}

static const char *why_name(int why)
{
    switch (why) {
    case SKEWSHIM_WHY_RULE: return "rule";
    case SKEWSHIM_WHY_DEFAULT: return "default";
    case SKEWSHIM_WHY_FORCED: return "forced";
    case SKEWSHIM_WHY_FALLBACK: return "fallback";
    default: return "unknown";
    }
}

static const char *buffers_name(int b)
{
    switch (b) {
    case SKEWSHIM_BUF_HOST: return "host";
    case SKEWSHIM_BUF_DEVICE: return "device";
    default: return "any";
    }
}

static const char *level_name(int l)
{
    switch (l) {
    case SKEWSHIM_LOG_OFF: return "off";
    case SKEWSHIM_LOG_SUMMARY: return "summary";
    case SKEWSHIM_LOG_CALLS: return "calls";
    case SKEWSHIM_LOG_MATRIX: return "matrix";
    default: return "unknown";
    }
}

/* ---- the log file ------------------------------------------------------ */

static struct {
    int level;          /* the policy's: rank-invariant, drives collectives */
    int sample;
    int world_rank;
    int fd;             /* -1 until the first write */
    int own_fd;         /* fd is ours to close (not stderr) */
    int broken;         /* this rank cannot write: warned once, writes dropped */
    int per_process;    /* pattern names one file per process: own header */
    char path[1024];
    char header[1536];  /* the header line, written once per file */
} L = {SKEWSHIM_LOG_OFF, 1, 0, -1, 0, 0, 0, "", ""};

/* Expand %j %r %p %%; an unknown %x is kept as written. */
static int expand_pattern(const char *pat, int rank, const char *jobid, char *out,
                          size_t len, int *per_process)
{
    size_t o = 0;
    *per_process = 0;
    for (const char *c = pat; *c; c++) {
        char tmp[64];
        const char *ins = tmp;
        if (*c != '%' || !c[1]) {
            tmp[0] = *c;
            tmp[1] = '\0';
        } else {
            c++;
            switch (*c) {
            case 'j': ins = jobid; break;
            case 'r': snprintf(tmp, sizeof tmp, "%d", rank); *per_process = 1; break;
            case 'p': snprintf(tmp, sizeof tmp, "%ld", (long)getpid()); *per_process = 1; break;
            case '%': tmp[0] = '%'; tmp[1] = '\0'; break;
            default: tmp[0] = '%'; tmp[1] = *c; tmp[2] = '\0'; break;
            }
        }
        size_t k = strlen(ins);
        if (o + k >= len) return -1;
        memcpy(out + o, ins, k);
        o += k;
    }
    out[o] = '\0';
    return 0;
}

static void warn_broken(const char *what, int err)
{
    if (!L.broken)
        fprintf(stderr, "skewshim: rank %d: %s '%s': %s; logging disabled on this rank\n",
                L.world_rank, what, L.path, strerror(err));
    L.broken = 1;
}

/* Whole buffer, retrying partial writes and EINTR. */
static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int ensure_open(void)
{
    if (L.fd >= 0) return 0;
    if (L.broken || !L.path[0]) return -1;
    if (strcmp(L.path, "-") == 0 || strcmp(L.path, "stderr") == 0) {
        L.fd = STDERR_FILENO;
        L.own_fd = 0;
    } else {
        int fd = open(L.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) {
            warn_broken("cannot open log file", errno);
            return -1;
        }
        L.fd = fd;
        L.own_fd = 1;
    }
    /* A shared file gets one header, from world rank 0 (which opens at once,
     * before anyone else can have a record); a per-process file its own. */
    if (L.per_process || L.world_rank == 0) {
        if (write_all(L.fd, L.header, strlen(L.header))) warn_broken("cannot write log file", errno);
    }
    return L.broken ? -1 : 0;
}

/* Threads of one process may flush rings of different communicators at
 * once (MPI_THREAD_MULTIPLE): one opener, one header, whole lines. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/* One write(2) of whole lines. */
static void write_lines(const sbuf *b)
{
    if (b->err || b->n == 0) return;
    pthread_mutex_lock(&log_lock);
    if (ensure_open() == 0 && write_all(L.fd, b->p, b->n))
        warn_broken("cannot write log file", errno);
    pthread_mutex_unlock(&log_lock);
}

int skewshim_log_open(const skewshim_policy *p, int world_rank, const char *jobid)
{
    skewshim_log_close();
    L.broken = 0;
    L.world_rank = world_rank;
    L.level = p ? p->log_level : SKEWSHIM_LOG_OFF;
    L.sample = (p && p->log_sample >= 1) ? p->log_sample : 1;
    if (L.level <= SKEWSHIM_LOG_OFF) return 0;
    if (!jobid || !*jobid) jobid = "unknown";

    if (expand_pattern(p->log_path, world_rank, jobid, L.path, sizeof L.path, &L.per_process)) {
        L.path[0] = '\0';
        fprintf(stderr, "skewshim: rank %d: log path pattern too long; logging disabled on this rank\n",
                world_rank);
        L.broken = 1;
        return -1;
    }

    int world_size = 0, inited = 0, finalized = 0;
    PMPI_Initialized(&inited);
    PMPI_Finalized(&finalized);
    if (inited && !finalized) PMPI_Comm_size(MPI_COMM_WORLD, &world_size);

    char stack[1536];
    sbuf b;
    sb_init(&b, stack, sizeof stack);
    sb_cat(&b, "{");
    sb_key(&b, "skewshim", 1);
    sb_str(&b, SKEWSHIM_VERSION);
    sb_key(&b, "policy", 0);
    sb_str(&b, p->source);
    sb_key(&b, "level", 0);
    sb_str(&b, level_name(L.level));
    sb_key(&b, "sample", 0);
    sb_printf(&b, "%d", L.sample);
    sb_key(&b, "jobid", 0);
    sb_str(&b, jobid);
    if (world_size > 0) {
        sb_key(&b, "world_size", 0);
        sb_printf(&b, "%d", world_size);
    }
    if (L.per_process) {
        sb_key(&b, "rank", 0);
        sb_printf(&b, "%d", world_rank);
    }
    sb_key(&b, "time", 0);
    sb_printf(&b, "%lld", (long long)time(NULL));
    sb_cat(&b, "}\n");
    if (b.err || b.n >= sizeof L.header) {
        /* Only a policy source path of absurd length gets here. */
        snprintf(L.header, sizeof L.header, "{\"skewshim\": \"%s\", \"level\": \"%s\"}\n",
                 SKEWSHIM_VERSION, level_name(L.level));
    } else {
        memcpy(L.header, b.p, b.n + 1);
    }
    sb_free(&b);

    if (world_rank == 0 && !L.per_process) {
        pthread_mutex_lock(&log_lock);
        int rc = ensure_open();
        pthread_mutex_unlock(&log_lock);
        return rc;
    }
    return 0;
}

void skewshim_log_close(void)
{
    pthread_mutex_lock(&log_lock);
    if (L.fd >= 0 && L.own_fd) close(L.fd);
    L.fd = -1;
    L.own_fd = 0;
    /* A late write must not reopen the file (and repeat its header). */
    L.path[0] = '\0';
    pthread_mutex_unlock(&log_lock);
}

int skewshim_log_level(void)
{
    return L.level;
}

int skewshim_log_sample(void)
{
    return L.sample;
}

/* ---- per-call records --------------------------------------------------- */

static void record_to(sbuf *b, const skewshim_record *r)
{
    char tmp[32];
    sb_cat(b, "{");
    sb_key(b, "call", 1);
    sb_u64(b, r->index);
    sb_key(b, "comm", 0);
    sb_printf(b, "%d", r->comm_id);
    sb_key(b, "size", 0);
    sb_printf(b, "%d", r->comm_size);
    sb_key(b, "nodes", 0);
    sb_printf(b, "%d", r->nnodes);
    sb_key(b, "algo", 0);
    sb_str(b, algo_name(r->algo, tmp, sizeof tmp));
    sb_key(b, "why", 0);
    sb_str(b, why_name(r->why));
    if (r->rule >= 0) {
        sb_key(b, "rule", 0);
        sb_printf(b, "%d", r->rule);
    }
    if (r->reason > 0) {
        sb_key(b, "reason", 0);
        sb_str(b, reason_name(r->reason, tmp, sizeof tmp));
    }
    sb_key(b, "buffers", 0);
    sb_str(b, buffers_name(r->buffers));
    sb_key(b, "total_bytes", 0);
    sb_u64(b, r->total_bytes);
    sb_key(b, "max_block_bytes", 0);
    sb_u64(b, r->max_block_bytes);
    sb_key(b, "mean_block_bytes", 0);
    sb_num(b, r->mean_block_bytes);
    sb_key(b, "send_mtm_inter", 0);
    sb_mtm(b, r->send_mtm_inter);
    sb_key(b, "recv_mtm_inter", 0);
    sb_mtm(b, r->recv_mtm_inter);
    sb_key(b, "send_mtm_all", 0);
    sb_mtm(b, r->send_mtm_all);
    sb_key(b, "recv_mtm_all", 0);
    sb_mtm(b, r->recv_mtm_all);
    sb_key(b, "time_us", 0);
    sb_num(b, r->time * 1e6);
    sb_key(b, "rounds", 0);
    sb_u64(b, r->rounds);
    sb_key(b, "messages", 0);
    sb_u64(b, r->messages);
    sb_key(b, "bytes_sent", 0);
    sb_u64(b, r->bytes_sent);
    sb_key(b, "bytes_forwarded", 0);
    sb_u64(b, r->bytes_forwarded);
    /* planner extras: only when the planner reported them */
    if (r->regime >= 0) {
        sb_key(b, "regime", 0);
        sb_str(b, r->regime ? "high" : "low");
    }
    if (r->stages > 0) {
        sb_key(b, "stages", 0);
        sb_printf(b, "%d", r->stages);
    }
    if (r->cache_hit >= 0) {
        sb_key(b, "cache_hit", 0);
        sb_cat(b, r->cache_hit ? "true" : "false");
    }
    if (r->t_pred > 0) {
        sb_key(b, "t_pred_us", 0);
        sb_num(b, r->t_pred * 1e6);
    }
    if (r->t_lb > 0) {
        sb_key(b, "t_lb_us", 0);
        sb_num(b, r->t_lb * 1e6);
    }
    if (r->meta_bytes > 0 || r->meta_time > 0) {
        sb_key(b, "meta_bytes", 0);
        sb_u64(b, r->meta_bytes);
        sb_key(b, "meta_time_us", 0);
        sb_num(b, r->meta_time * 1e6);
    }
    sb_key(b, "tmp_bytes", 0);
    sb_u64(b, r->tmp_bytes);
    sb_cat(b, "}\n");
}

void skewshim_record_json(const skewshim_record *r, FILE *f)
{
    char stack[1024];
    sbuf b;
    sb_init(&b, stack, sizeof stack);
    record_to(&b, r);
    if (!b.err) fwrite(b.p, 1, b.n, f);
    sb_free(&b);
}

/* ---- the ring ------------------------------------------------------------
 *
 * One allocation: cap records, then the reduction buffers, so the
 * non-blocking flush has buffers that live until its finish without any
 * field beyond those of skewshim_ring.  What is merged how:
 *   MAX (double): time, rounds, meta_time, tmp_bytes (busiest rank),
 *                 t_pred, t_lb (identical on every rank, max is a no-op)
 *   SUM (uint64): messages, bytes_sent, bytes_forwarded, meta_bytes
 * The other fields are rank-invariant (agreed figures, choice, plan); rank
 * 0's copy is written.
 */
enum { KD = 6, KU = 4 };
_Static_assert(sizeof(skewshim_record) % sizeof(double) == 0,
               "the reduction arrays follow the records in one allocation");

typedef struct ring_ws {
    double *dsend, *drecv;
    uint64_t *usend, *urecv;
} ring_ws;

/* For a rank whose ring could not be allocated: zeros are neutral for MAX
 * of non-negative values and for SUM, so it joins the reductions without
 * changing anything.  Its recv side is scratch that is never read. */
static double degraded_d[2][RING_MAX_CAP * KD];
static uint64_t degraded_u[2][RING_MAX_CAP * KU];

static int ring_cap_of(const skewshim_ring *ring)
{
    int cap = ring->cap < 0 ? -ring->cap : ring->cap;
    if (cap == 0) cap = RING_DEFAULT_CAP;
    if (cap > RING_MAX_CAP) cap = RING_MAX_CAP;
    return cap;
}

static void ring_ws_of(const skewshim_ring *ring, ring_ws *ws)
{
    if (!ring->r) {
        ws->dsend = degraded_d[0];
        ws->drecv = degraded_d[1];
        ws->usend = degraded_u[0];
        ws->urecv = degraded_u[1];
        return;
    }
    /* sizeof(skewshim_record) is a multiple of 8: the arrays stay aligned */
    double *d = (double *)(void *)(ring->r + ring->cap);
    ws->dsend = d;
    ws->drecv = d + (size_t)ring->cap * KD;
    uint64_t *u = (uint64_t *)(void *)(ws->drecv + (size_t)ring->cap * KD);
    ws->usend = u;
    ws->urecv = u + (size_t)ring->cap * KU;
}

/* First push: allocate.  A failure keeps counting (cap < 0, r NULL) so the
 * flushes still happen at the same call on every rank. */
static void ring_alloc(skewshim_ring *ring)
{
    int cap = ring_cap_of(ring);
    size_t bytes = (size_t)cap * (sizeof(skewshim_record) + 2 * KD * sizeof(double) +
                                  2 * KU * sizeof(uint64_t));
    ring->r = malloc(bytes);
    ring->cap = ring->r ? cap : -cap;
    ring->n = 0;
}

int skewshim_ring_push(skewshim_ring *ring, const skewshim_record *rec, MPI_Comm pcomm, int rank)
{
    if (L.level < SKEWSHIM_LOG_CALLS || !ring || !rec) return 0;
    if (!ring->r && ring->cap >= 0) ring_alloc(ring);
    int cap = ring_cap_of(ring);
    if (ring->n >= cap) {
        int rc = skewshim_ring_flush(ring, pcomm, rank);
        if (rc) return rc;
    }
    if (ring->r) ring->r[ring->n] = *rec;
    ring->n++;
    if (ring->n >= cap) return skewshim_ring_flush(ring, pcomm, rank);
    return 0;
}

int skewshim_ring_flush_start(skewshim_ring *ring, MPI_Comm pcomm, int rank, MPI_Request reqs[2])
{
    reqs[0] = reqs[1] = MPI_REQUEST_NULL;
    if (!ring || ring->n <= 0) return 0;
    ring_ws ws;
    ring_ws_of(ring, &ws);
    int n = ring->n;
    if (ring->r) {
        for (int i = 0; i < n; i++) {
            const skewshim_record *r = &ring->r[i];
            double *d = ws.dsend + (size_t)i * KD;
            uint64_t *u = ws.usend + (size_t)i * KU;
            d[0] = r->time;
            d[1] = (double)r->rounds;
            d[2] = r->meta_time;
            d[3] = (double)r->tmp_bytes;
            d[4] = r->t_pred;
            d[5] = r->t_lb;
            u[0] = r->messages;
            u[1] = r->bytes_sent;
            u[2] = r->bytes_forwarded;
            u[3] = r->meta_bytes;
        }
    }
    int rc = PMPI_Ireduce(ws.dsend, ws.drecv, n * KD, MPI_DOUBLE, MPI_MAX, 0, pcomm, &reqs[0]);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Ireduce(ws.usend, ws.urecv, n * KU, MPI_UINT64_T, MPI_SUM, 0, pcomm, &reqs[1]);
    if (rc != MPI_SUCCESS) {
        /* Errors are fatal by default; with a non-fatal handler, drop the
         * buffered records rather than write half-merged figures. */
        if (reqs[0] != MPI_REQUEST_NULL) PMPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        reqs[0] = reqs[1] = MPI_REQUEST_NULL;
        ring->n = 0;
        return rc;
    }
    (void)rank;
    return 0;
}

int skewshim_ring_flush_finish(skewshim_ring *ring, int rank)
{
    if (!ring || ring->n <= 0) return 0;
    if (rank == 0 && ring->r) {
        ring_ws ws;
        ring_ws_of(ring, &ws);
        char stack[4096];
        sbuf b;
        sb_init(&b, stack, sizeof stack);
        for (int i = 0; i < ring->n; i++) {
            skewshim_record r = ring->r[i];
            const double *d = ws.drecv + (size_t)i * KD;
            const uint64_t *u = ws.urecv + (size_t)i * KU;
            r.time = d[0];
            r.rounds = (uint64_t)d[1];
            r.meta_time = d[2];
            r.tmp_bytes = (uint64_t)d[3];
            r.t_pred = d[4];
            r.t_lb = d[5];
            r.messages = u[0];
            r.bytes_sent = u[1];
            r.bytes_forwarded = u[2];
            r.meta_bytes = u[3];
            record_to(&b, &r);
        }
        write_lines(&b);
        sb_free(&b);
    }
    ring->n = 0;
    return 0;
}

int skewshim_ring_flush(skewshim_ring *ring, MPI_Comm pcomm, int rank)
{
    /* Built on the non-blocking pair so every flush of a ring is the same
     * kind of collective: MPI never matches a blocking reduction with a
     * non-blocking one, and finalize uses the non-blocking form. */
    MPI_Request reqs[2];
    int rc = skewshim_ring_flush_start(ring, pcomm, rank, reqs);
    if (rc != MPI_SUCCESS) return rc;
    MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: gcc 12 warns on it (false positive) */
    rc = PMPI_Waitall(2, reqs, st);
    if (rc != MPI_SUCCESS) {
        ring->n = 0;
        return rc;
    }
    return skewshim_ring_flush_finish(ring, rank);
}

void skewshim_ring_free(skewshim_ring *ring)
{
    if (!ring) return;
    free(ring->r);
    ring->r = NULL;
    ring->n = 0;
    ring->cap = 0;
}

/* ---- matrix ---------------------------------------------------------------- */

int skewshim_log_matrix(int comm_id, uint64_t index, const skewshim_matrix *m,
                        const skewshim_topo *t)
{
    if (L.level < SKEWSHIM_LOG_MATRIX || !m || !m->b || m->nranks <= 0) return 0;
    int P = m->nranks;
    int q = (t && t->nranks == P && t->max_per_node > 0) ? t->max_per_node : P;
    sbuf b;
    sb_init(&b, NULL, 0);
    sb_cat(&b, "{\"matrix\": {");
    sb_key(&b, "call", 1);
    sb_u64(&b, index);
    sb_key(&b, "comm", 0);
    sb_printf(&b, "%d", comm_id);
    sb_key(&b, "P", 0);
    sb_printf(&b, "%d", P);
    sb_key(&b, "ranks_per_node", 0);
    sb_printf(&b, "%d", q);
    /* The real node of every rank, for uneven or non-consecutive nodes
     * that ranks_per_node alone cannot describe. */
    if (t && t->nranks == P && t->node_of) {
        sb_key(&b, "nodes", 0);
        sb_printf(&b, "%d", t->nnodes);
        sb_key(&b, "node_of", 0);
        sb_cat(&b, "[");
        for (int i = 0; i < P; i++) sb_printf(&b, i ? ", %d" : "%d", t->node_of[i]);
        sb_cat(&b, "]");
    }
    sb_key(&b, "type_size", 0);
    sb_cat(&b, "1");
    sb_key(&b, "bytes", 0);
    sb_cat(&b, "[");
    for (int i = 0; i < P; i++) {
        sb_cat(&b, i ? ", [" : "[");
        const uint64_t *row = m->b + (size_t)i * P;
        for (int j = 0; j < P; j++) {
            if (j) sb_cat(&b, ", ");
            sb_u64(&b, row[j]);
        }
        sb_cat(&b, "]");
    }
    sb_cat(&b, "]}}\n");
    int rc = b.err ? -1 : 0;
    write_lines(&b);
    sb_free(&b);
    return rc;
}

/* ---- job summary ------------------------------------------------------------ */

enum { NT = 32 };
/* The uint64 counters of skewshim_totals, packed for one SUM reduction. */
enum { U_CALLS = 0, U_BYTES = NT, U_FALLBACKS = 2 * NT, U_LARGE = 3 * NT, U_HITS, U_LOOKUPS, U_N };

static void human_bytes(double v, char *out, size_t len)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int k = 0;
    while (v >= 1024.0 && k < 5) {
        v /= 1024.0;
        k++;
    }
    snprintf(out, len, k ? "%.1f %s" : "%.0f %s", v, unit[k]);
}

static void summary_stderr(const uint64_t *u, const double *tm)
{
    char stack[2048], tmp[32], hb[32];
    sbuf b;
    sb_init(&b, stack, sizeof stack);
    uint64_t ncalls = 0;
    for (int a = 0; a < NT; a++) ncalls += u[U_CALLS + a];
    sb_printf(&b, "skewshim: %" PRIu64 " MPI_Alltoallv calls\n", ncalls);
    if (ncalls) {
        sb_printf(&b, "skewshim: %-14s %10s %12s %12s\n", "algorithm", "calls", "time_s", "bytes");
        for (int a = 0; a < NT; a++) {
            if (!u[U_CALLS + a]) continue;
            human_bytes((double)u[U_BYTES + a], hb, sizeof hb);
            sb_printf(&b, "skewshim: %-14s %10" PRIu64 " %12.6f %12s\n",
                      algo_name(a, tmp, sizeof tmp), u[U_CALLS + a], tm[a], hb);
        }
    }
    for (int r = 1; r < NT; r++)
        if (u[U_FALLBACKS + r])
            sb_printf(&b, "skewshim: fallback %-20s %10" PRIu64 "\n",
                      reason_name(r, tmp, sizeof tmp), u[U_FALLBACKS + r]);
    if (u[U_LARGE])
        sb_printf(&b, "skewshim: large-count calls passed through: %" PRIu64 "\n", u[U_LARGE]);
    if (u[U_LOOKUPS])
        sb_printf(&b, "skewshim: plan cache %" PRIu64 "/%" PRIu64 " hits (%.1f%%)\n", u[U_HITS],
                  u[U_LOOKUPS], 100.0 * (double)u[U_HITS] / (double)u[U_LOOKUPS]);
    if (!b.err) (void)write_all(STDERR_FILENO, b.p, b.n);
    sb_free(&b);
}

int skewshim_log_summary(const skewshim_totals *t, MPI_Comm world, int to_stderr)
{
    /* Rank-invariant test: either every rank reduces or none does. */
    if (L.level < SKEWSHIM_LOG_SUMMARY && !to_stderr) return 0;
    if (!t) return -1;
    int rank = 0;
    PMPI_Comm_rank(world, &rank);

    uint64_t u[U_N], ur[U_N];
    double tm[NT];
    memcpy(u + U_CALLS, t->calls, sizeof t->calls);
    memcpy(u + U_BYTES, t->bytes, sizeof t->bytes);
    memcpy(u + U_FALLBACKS, t->fallbacks, sizeof t->fallbacks);
    u[U_LARGE] = t->large_count_calls;
    u[U_HITS] = t->plan_cache_hits;
    u[U_LOOKUPS] = t->plan_cache_lookups;
    int rc = PMPI_Reduce(u, ur, U_N, MPI_UINT64_T, MPI_SUM, 0, world);
    if (rc == MPI_SUCCESS) rc = PMPI_Reduce(t->time, tm, NT, MPI_DOUBLE, MPI_MAX, 0, world);
    if (rc != MPI_SUCCESS || rank != 0) return rc;

    if (L.level >= SKEWSHIM_LOG_SUMMARY) {
        char stack[2048], tmp[32];
        sbuf b;
        sb_init(&b, stack, sizeof stack);
        sb_cat(&b, "{\"summary\": {\"calls\": {");
        int first = 1;
        for (int a = 0; a < NT; a++) {
            if (!ur[U_CALLS + a]) continue;
            sb_key(&b, algo_name(a, tmp, sizeof tmp), first);
            sb_u64(&b, ur[U_CALLS + a]);
            first = 0;
        }
        sb_cat(&b, "}, \"time_s\": {");
        first = 1;
        for (int a = 0; a < NT; a++) {
            if (!ur[U_CALLS + a]) continue;
            sb_key(&b, algo_name(a, tmp, sizeof tmp), first);
            sb_num(&b, tm[a]);
            first = 0;
        }
        sb_cat(&b, "}, \"bytes\": {");
        first = 1;
        for (int a = 0; a < NT; a++) {
            if (!ur[U_CALLS + a]) continue;
            sb_key(&b, algo_name(a, tmp, sizeof tmp), first);
            sb_u64(&b, ur[U_BYTES + a]);
            first = 0;
        }
        sb_cat(&b, "}, \"fallbacks\": {");
        first = 1;
        for (int r = 1; r < NT; r++) {
            if (!ur[U_FALLBACKS + r]) continue;
            sb_key(&b, reason_name(r, tmp, sizeof tmp), first);
            sb_u64(&b, ur[U_FALLBACKS + r]);
            first = 0;
        }
        sb_cat(&b, "}, ");
        sb_key(&b, "large_count_calls", 1);
        sb_u64(&b, ur[U_LARGE]);
        sb_cat(&b, ", \"plan_cache\": {\"hits\": ");
        sb_u64(&b, ur[U_HITS]);
        sb_cat(&b, ", \"lookups\": ");
        sb_u64(&b, ur[U_LOOKUPS]);
        sb_cat(&b, "}}}\n");
        write_lines(&b);
        sb_free(&b);
    }
    if (to_stderr) summary_stderr(ur, tm);
    return 0;
}
