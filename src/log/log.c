#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* The skew log (JSON Lines), its file.  Format: doc/log-format.md; the
 * other parts are listed in log_internal.h.
 *
 * Two rules shape the log:
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
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "log_internal.h"
#include "policy.h"
#include "skewshim.h"

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
int skewshim_log_write_all(int fd, const char *p, size_t n)
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
        if (skewshim_log_write_all(L.fd, L.header, strlen(L.header)))
            warn_broken("cannot write log file", errno);
    }
    return L.broken ? -1 : 0;
}

/* Threads of one process may flush rings of different communicators at
 * once (MPI_THREAD_MULTIPLE): one opener, one header, whole lines. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/* One write(2) of whole lines. */
void skewshim_log_write_lines(const sbuf *b)
{
    if (b->err || b->n == 0) return;
    pthread_mutex_lock(&log_lock);
    if (ensure_open() == 0 && skewshim_log_write_all(L.fd, b->p, b->n))
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
    skewshim_sb_init(&b, stack, sizeof stack);
    skewshim_sb_cat(&b, "{");
    skewshim_sb_key(&b, "skewshim", 1);
    skewshim_sb_str(&b, SKEWSHIM_VERSION);
    skewshim_sb_key(&b, "policy", 0);
    skewshim_sb_str(&b, p->source);
    skewshim_sb_key(&b, "level", 0);
    skewshim_sb_str(&b, level_name(L.level));
    skewshim_sb_key(&b, "sample", 0);
    skewshim_sb_printf(&b, "%d", L.sample);
    skewshim_sb_key(&b, "jobid", 0);
    skewshim_sb_str(&b, jobid);
    if (world_size > 0) {
        skewshim_sb_key(&b, "world_size", 0);
        skewshim_sb_printf(&b, "%d", world_size);
    }
    if (L.per_process) {
        skewshim_sb_key(&b, "rank", 0);
        skewshim_sb_printf(&b, "%d", world_rank);
    }
    skewshim_sb_key(&b, "time", 0);
    skewshim_sb_printf(&b, "%lld", (long long)time(NULL));
    skewshim_sb_cat(&b, "}\n");
    if (b.err || b.n >= sizeof L.header) {
        /* Only a policy source path of absurd length gets here. */
        snprintf(L.header, sizeof L.header, "{\"skewshim\": \"%s\", \"level\": \"%s\"}\n",
                 SKEWSHIM_VERSION, level_name(L.level));
    } else {
        memcpy(L.header, b.p, b.n + 1);
    }
    skewshim_sb_free(&b);

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
