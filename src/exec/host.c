/* The host executor: a schedule over PMPI point-to-point on the private
 * communicator.  Per stage: every receive is posted first (so no send of
 * the stage waits on an unposted receive), then every send, then the local
 * copies; then the stage's requests complete.  Messages of one pair within
 * a stage are posted in list order on both sides, which MPI's
 * non-overtaking rule matches.
 *
 * Coalescing: FAST and SABRE cut a block into many pieces, and one sender
 * often has several for one receiver in one stage (16 a pair on average
 * for FAST at 256 ranks).  Sent apart, each pays a message's overhead and,
 * in the lab, a flow of SimGrid's solver.  Coalesced, the pieces of a pair
 * in a stage travel as one message described by an hindexed datatype over
 * their addresses: the MPI library packs what it must.  Both sides walk
 * the same pieces in the same order and cut groups by the same sizes, so
 * the groups match without a word exchanged. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "labcharge.h"

/* Larger moves travel as several messages of at most this many bytes, so
 * an int count never overflows; both sides split the same way.  A
 * coalesced group stays within it too: its datatype's size is an int. */
#define CHUNK ((uint64_t)1 << 30)

typedef struct reqs {
    MPI_Request *r;
    MPI_Status *st;         /* a real array: MPICH's MPI_STATUSES_IGNORE trips gcc's bounds check */
    size_t n, cap;
} reqs;

/* One rank's view of one stage: the moves it receives and sends, each
 * list ordered by peer and, within a peer, by list position. */
typedef struct stage_run {
    const skewshim_sched *s;
    int rank;
    const void *sendbuf;
    const uint64_t *soff;
    void *recvbuf;
    const uint64_t *roff;
    void *tmp;
    MPI_Comm pcomm;
    uint64_t coalesce;      /* pieces below this many bytes travel grouped */
    reqs q;
    size_t stage0;          /* the stage's first move */
    uint64_t *idx;          /* its pieces, receives then sends: peer << 32 | position */
    size_t idx_cap;
    const skewshim_move **grp;  /* the open group of one peer's pieces */
    size_t ngrp;
    int *len;               /* its datatype: block lengths */
    MPI_Aint *disp;         /*   and displacements from its first piece */
    size_t grp_cap;
    MPI_Datatype *types;    /* committed this stage, freed after its wait */
    size_t ntypes, types_cap;
    uint64_t unpack_pieces, unpack_bytes;   /* coalesced receives, charged after the wait */
    uint64_t messages;      /* what this rank sent */
} stage_run;

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

static char *src_addr(const stage_run *x, const skewshim_move *m)
{
    switch (m->src_loc) {
    case SKEWSHIM_LOC_SEND:
        return (char *)x->sendbuf + x->soff[m->src_blk] + m->src_off;
    case SKEWSHIM_LOC_RECV:
        return (char *)x->recvbuf + x->roff[m->src_blk] + m->src_off;
    default:
        return (char *)x->tmp + m->src_off;
    }
}

static char *dst_addr(const stage_run *x, const skewshim_move *m)
{
    if (m->dst_loc == SKEWSHIM_LOC_RECV)
        return (char *)x->recvbuf + x->roff[m->dst_blk] + m->dst_off;
    return (char *)x->tmp + m->dst_off;
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

/* x->idx holds (peer << 32 | position in the stage): sorted as numbers,
 * the pieces come by peer and, within a peer, in list order, the order
 * both sides of a pair post in.  qsort needs no context that way, and
 * calls on other threads (MPI_THREAD_MULTIPLE) share nothing. */
static const skewshim_move *move_at(const stage_run *x, size_t k)
{
    return &x->s->moves[x->stage0 + (size_t)(x->idx[k] & 0xffffffffu)];
}

static int peer_of(const skewshim_move *m, int is_send)
{
    return is_send ? m->dst : m->src;
}

static int by_key(const void *a, const void *b)
{
    uint64_t u = *(const uint64_t *)a, v = *(const uint64_t *)b;
    return u < v ? -1 : u > v;
}

/* The moves of the stage this rank receives (is_send 0) or sends, into
 * x->idx from position at; returns how many. */
static size_t collect(stage_run *x, size_t nstage, int is_send, size_t at)
{
    size_t n = 0;
    for (size_t i = 0; i < nstage; i++) {
        const skewshim_move *m = &x->s->moves[x->stage0 + i];
        int mine = is_send ? m->src == x->rank : m->dst == x->rank;
        if (mine && m->src != m->dst)
            x->idx[at + n++] = (uint64_t)(uint32_t)peer_of(m, is_send) << 32 | (uint64_t)i;
    }
    if (x->coalesce > 1 && n > 1)
        qsort(x->idx + at, n, sizeof *x->idx, by_key);
    return n;
}

static int grow_group(stage_run *x, size_t n)
{
    if (n <= x->grp_cap)
        return 0;
    const skewshim_move **grp = realloc(x->grp, n * sizeof *grp);
    if (!grp)
        return -1;
    x->grp = grp;
    int *len = realloc(x->len, n * sizeof *len);
    if (!len)
        return -1;
    x->len = len;
    MPI_Aint *disp = realloc(x->disp, n * sizeof *disp);
    if (!disp)
        return -1;
    x->disp = disp;
    x->grp_cap = n;
    return 0;
}

/* The x->ngrp pieces of x->grp, all to or from one peer, as one message. */
static int post_group(stage_run *x, int is_send, uint64_t total)
{
    size_t n = x->ngrp;
    x->ngrp = 0;
    if (!n)
        return MPI_SUCCESS;
    const skewshim_move *first = x->grp[0];
    int peer = peer_of(first, is_send);
    char *base = is_send ? src_addr(x, first) : dst_addr(x, first);
    if (is_send)
        x->messages++;
    if (n == 1)
        return post(&x->q, is_send, base, first->bytes, peer, x->pcomm);
    MPI_Aint b0;
    int rc = PMPI_Get_address(base, &b0);
    for (size_t j = 0; j < n && rc == MPI_SUCCESS; j++) {
        MPI_Aint a;
        rc = PMPI_Get_address(is_send ? src_addr(x, x->grp[j]) : dst_addr(x, x->grp[j]), &a);
        x->len[j] = (int)x->grp[j]->bytes;
        x->disp[j] = a - b0;
    }
    if (rc != MPI_SUCCESS)
        return rc;
    if (x->ntypes == x->types_cap) {
        size_t cap = x->types_cap ? 2 * x->types_cap : 16;
        MPI_Datatype *t = realloc(x->types, cap * sizeof *t);
        if (!t)
            return MPI_ERR_NO_MEM;
        x->types = t;
        x->types_cap = cap;
    }
    MPI_Datatype *t = &x->types[x->ntypes];
    rc = PMPI_Type_create_hindexed((int)n, x->len, x->disp, MPI_BYTE, t);
    if (rc != MPI_SUCCESS)
        return rc;
    x->ntypes++;
    rc = PMPI_Type_commit(t);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Request *r = next_req(&x->q);
    if (!r)
        return MPI_ERR_NO_MEM;
    /* What the library packs or unpacks is a copy a real MPI pays for,
     * free under SMPI unless the lab charges it: the sender's before the
     * message leaves, the receiver's once it has arrived. */
    if (is_send) {
        skewshim_lab_copy(n, total);
        skewshim_lab_flush();
        return PMPI_Isend(base, 1, *t, peer, SKEWSHIM_TAG, x->pcomm, r);
    }
    x->unpack_pieces += n;
    x->unpack_bytes += total;
    return PMPI_Irecv(base, 1, *t, peer, SKEWSHIM_TAG, x->pcomm, r);
}

/* Posts the n pieces from x->idx[at], peer by peer.  A piece below
 * x->coalesce joins its peer's open group, which leaves as one message when
 * the next would take it past a CHUNK and when the peer's pieces end; a
 * larger piece leaves alone, contiguous (in chunks past a CHUNK), when it
 * is met.  The order depends only on the pair's pieces, which both sides
 * walk alike. */
static int post_side(stage_run *x, int is_send, size_t at, size_t n)
{
    int rc = MPI_SUCCESS;
    uint64_t total = 0;
    x->ngrp = 0;
    for (size_t k = at; k < at + n && rc == MPI_SUCCESS; k++) {
        const skewshim_move *m = move_at(x, k);
        if (m->bytes < x->coalesce && m->bytes < CHUNK) {
            if (x->ngrp && total + m->bytes > CHUNK)
                rc = post_group(x, is_send, total);
            if (rc == MPI_SUCCESS && !x->ngrp)
                total = 0;
            if (rc == MPI_SUCCESS && grow_group(x, x->ngrp + 1))
                rc = MPI_ERR_NO_MEM;
            if (rc == MPI_SUCCESS) {
                x->grp[x->ngrp++] = m;
                total += m->bytes;
            }
        } else {
            rc = post(&x->q, is_send, is_send ? src_addr(x, m) : dst_addr(x, m), m->bytes,
                      peer_of(m, is_send), x->pcomm);
            if (is_send)
                x->messages++;
        }
        int last = k + 1 == at + n || peer_of(move_at(x, k + 1), is_send) != peer_of(m, is_send);
        if (rc == MPI_SUCCESS && last)
            rc = post_group(x, is_send, total);
    }
    return rc;
}

static int run_stage(stage_run *x, size_t a, size_t b)
{
    if (b - a > x->idx_cap) {
        uint64_t *idx = realloc(x->idx, (b - a) * sizeof *idx);
        if (!idx)
            return MPI_ERR_NO_MEM;
        x->idx = idx;
        x->idx_cap = b - a;
    }
    x->q.n = 0;
    x->unpack_pieces = x->unpack_bytes = 0;
    x->stage0 = a;
    size_t nr = collect(x, b - a, 0, 0);
    size_t ns = collect(x, b - a, 1, nr);
    int rc = post_side(x, 0, 0, nr);
    if (rc == MPI_SUCCESS)
        rc = post_side(x, 1, nr, ns);
    for (size_t i = a; i < b && rc == MPI_SUCCESS; i++) {
        const skewshim_move *m = &x->s->moves[i];
        if (m->src == x->rank && m->dst == x->rank) {
            memmove(dst_addr(x, m), src_addr(x, m), m->bytes);
            /* The own block (send to receive buffer) is copied by MPI's
             * alltoallv too, for free under SMPI: only the others are
             * the schedule's own cost. */
            if (m->src_loc != SKEWSHIM_LOC_SEND || m->dst_loc != SKEWSHIM_LOC_RECV)
                skewshim_lab_copy(1, m->bytes);
        }
    }
    skewshim_lab_flush();
    if (x->q.n) {
        int wrc = PMPI_Waitall((int)x->q.n, x->q.r, x->q.st);
        if (rc == MPI_SUCCESS)
            rc = wrc;
    }
    skewshim_lab_copy(x->unpack_pieces, x->unpack_bytes);
    skewshim_lab_flush();
    for (size_t i = 0; i < x->ntypes; i++)
        PMPI_Type_free(&x->types[i]);
    x->ntypes = 0;
    return rc;
}

int skewshim_exec_host(const skewshim_sched *s, int rank,
                       const void *sendbuf, const uint64_t *soff,
                       void *recvbuf, const uint64_t *roff,
                       void *tmp, MPI_Comm pcomm, uint64_t coalesce, uint64_t *messages)
{
    stage_run x = {
        .s = s, .rank = rank, .sendbuf = sendbuf, .soff = soff, .recvbuf = recvbuf,
        .roff = roff, .tmp = tmp, .pcomm = pcomm, .coalesce = coalesce,
    };
    int rc = MPI_SUCCESS;
    for (size_t a = 0; a < s->nmoves && rc == MPI_SUCCESS;) {
        size_t b = a;
        while (b < s->nmoves && s->moves[b].stage == s->moves[a].stage)
            b++;
        rc = run_stage(&x, a, b);
        a = b;
    }
    if (messages)
        *messages = x.messages;
    free(x.q.r);
    free(x.q.st);
    free(x.idx);
    free(x.grp);
    free(x.len);
    free(x.disp);
    free(x.types);
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
    /* Coalesced, the wire carries fewer messages than the schedule has
     * moves between ranks: report what was sent. */
    return skewshim_exec_host(s, x->rank, x->sendbuf, x->soff, x->recvbuf, x->roff,
                              need ? x->tmp : NULL, x->pcomm, x->coalesce, &x->stats.messages);
}
