/* The host executor: a schedule over PMPI point-to-point on the private
 * communicator.  Per stage: every receive is posted first (so no send of
 * the stage waits on an unposted receive), then every send, then the local
 * copies; then the stage's requests complete.  Messages of one pair within
 * a stage are posted in list order on both sides, which MPI's
 * non-overtaking rule matches. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "labcharge.h"
#include "labwait.h"

/* Larger moves travel as several messages of at most this many bytes, so
 * an int count never overflows; both sides split the same way. */
#define CHUNK ((uint64_t)1 << 30)

typedef struct reqs {
    MPI_Request *r;
    MPI_Status *st;         /* a real array: MPICH's MPI_STATUSES_IGNORE trips gcc's bounds check */
    size_t n, cap;
} reqs;

static MPI_Request *next_req(reqs *q)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 64;
        MPI_Request *r = realloc(q->r, cap * sizeof *r);
        if (!r)
            return NULL;
        q->r = r;
        MPI_Status *st = realloc(q->st, cap * sizeof *st);
        if (!st)
            return NULL;
        q->st = st;
        q->cap = cap;
    }
    return &q->r[q->n++];
}

static char *src_addr(const skewshim_move *m, const void *sendbuf, const uint64_t *soff,
                      void *recvbuf, const uint64_t *roff, void *tmp)
{
    switch (m->src_loc) {
    case SKEWSHIM_LOC_SEND:
        return (char *)sendbuf + soff[m->src_blk] + m->src_off;
    case SKEWSHIM_LOC_RECV:
        return (char *)recvbuf + roff[m->src_blk] + m->src_off;
    default:
        return (char *)tmp + m->src_off;
    }
}

static char *dst_addr(const skewshim_move *m, void *recvbuf, const uint64_t *roff, void *tmp)
{
    if (m->dst_loc == SKEWSHIM_LOC_RECV)
        return (char *)recvbuf + roff[m->dst_blk] + m->dst_off;
    return (char *)tmp + m->dst_off;
}

static int post(reqs *q, int is_send, char *buf, uint64_t bytes, int peer, MPI_Comm pcomm)
{
    for (uint64_t off = 0; off < bytes; off += CHUNK) {
        uint64_t n = bytes - off < CHUNK ? bytes - off : CHUNK;
        MPI_Request *r = next_req(q);
        if (!r)
            return MPI_ERR_NO_MEM;
        int rc = is_send ? PMPI_Isend(buf + off, (int)n, MPI_BYTE, peer, SKEWSHIM_TAG, pcomm, r)
                         : PMPI_Irecv(buf + off, (int)n, MPI_BYTE, peer, SKEWSHIM_TAG, pcomm, r);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int skewshim_exec_host(const skewshim_sched *s, int rank,
                       const void *sendbuf, const uint64_t *soff,
                       void *recvbuf, const uint64_t *roff,
                       void *tmp, MPI_Comm pcomm)
{
    reqs q = {0};
    int rc = MPI_SUCCESS;
    for (size_t a = 0; a < s->nmoves && rc == MPI_SUCCESS;) {
        size_t b = a;
        while (b < s->nmoves && s->moves[b].stage == s->moves[a].stage)
            b++;
        q.n = 0;
        for (size_t i = a; i < b && rc == MPI_SUCCESS; i++) {
            const skewshim_move *m = &s->moves[i];
            if (m->dst == rank && m->src != rank)
                rc = post(&q, 0, dst_addr(m, recvbuf, roff, tmp), m->bytes, m->src, pcomm);
        }
        for (size_t i = a; i < b && rc == MPI_SUCCESS; i++) {
            const skewshim_move *m = &s->moves[i];
            if (m->src == rank && m->dst != rank)
                rc = post(&q, 1, src_addr(m, sendbuf, soff, recvbuf, roff, tmp), m->bytes, m->dst,
                          pcomm);
        }
        for (size_t i = a; i < b && rc == MPI_SUCCESS; i++) {
            const skewshim_move *m = &s->moves[i];
            if (m->src == rank && m->dst == rank) {
                memmove(dst_addr(m, recvbuf, roff, tmp),
                        src_addr(m, sendbuf, soff, recvbuf, roff, tmp), m->bytes);
                /* The own block (send to receive buffer) is copied by MPI's
                 * alltoallv too, for free under SMPI: only the others are
                 * the schedule's own cost. */
                if (m->src_loc != SKEWSHIM_LOC_SEND || m->dst_loc != SKEWSHIM_LOC_RECV)
                    skewshim_lab_copy(1, m->bytes);
            }
        }
        skewshim_lab_flush();
        if (q.n) {
            int wrc = skewshim_lab_waitall((int)q.n, q.r, q.st);
            if (rc == MPI_SUCCESS)
                rc = wrc;
        }
        a = b;
    }
    free(q.r);
    free(q.st);
    return rc;
}

int skewshim_exec_sched(const void *plan, skewshim_xargs *x)
{
    const skewshim_sched *s = plan;
    uint64_t need = !s->tmp_bytes ? 0 : s->rank < 0 ? s->tmp_bytes[x->rank] : s->tmp_bytes[0];
    if (need > x->tmp_cap)
        return MPI_ERR_INTERN;          /* the plan's bound was not honoured */
    x->tmp_bytes = need;
    if (s->rank < 0)
        skewshim_sched_rank_stats(s, x->rank, &x->stats);
    else
        x->stats = s->stats;
    return skewshim_exec_host(s, x->rank, x->sendbuf, x->soff, x->recvbuf, x->roff,
                              need ? x->tmp : NULL, x->pcomm);
}
