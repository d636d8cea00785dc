#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
/* Runs the forwarding schedules of src/schedule/forwarding.h with PMPI point-to-point.
 *
 * A staged round: post the metadata exchange (sizes of the blocks this rank
 * forwards), pack the outgoing units into the send stage while it flies,
 * then exchange the data as one message and unpack: final blocks to the
 * receive buffer, in-transit ones to their T slot.  Packing first is what
 * lets a round refill the T slots it empties.  Direct rounds (one block,
 * origin to destination) need neither metadata nor stages and depend on no
 * other round, so they are all posted at the start and completed at the end;
 * with r >= P - 1 that is exactly the linear exchange.  A padded round needs
 * no metadata either: every block is max_block_bytes long.
 */
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "exec.h"
#include "labcharge.h"
#include "labwait.h"
#include "schedule/forwarding.h"
#include "exec/forward.h"
#include "policy.h"

/* MPI counts are int: larger messages travel as several of at most this. */
#define FWD_CHUNK ((uint64_t)1 << 30)

typedef struct reqs {
    MPI_Request *r;
    int n, cap;
} reqs;

/* An empty message is not sent: both ends know its size (from their own
 * counts, or from the sizes that travelled with the blocks), as MPICH's
 * linear exchange skips a zero count on each side.  Counts that disagree
 * on whether a block is empty are an erroneous program that MPI's own
 * exchange leaves hanging or unmatched too. */
static int reqs_post(reqs *q, int is_send, void *buf, uint64_t bytes, int peer,
                     MPI_Comm comm)
{
    uint64_t done = 0;
    if (bytes == 0)
        return MPI_SUCCESS;
    skewshim_lab_flush();       /* the packing before this message */
    do {
        if (q->n == q->cap) {
            int cap = q->cap ? 2 * q->cap : 64;
            MPI_Request *r = realloc(q->r, (size_t)cap * sizeof *r);
            if (!r)
                return MPI_ERR_NO_MEM;
            q->r = r;
            q->cap = cap;
        }
        uint64_t len = bytes - done < FWD_CHUNK ? bytes - done : FWD_CHUNK;
        char *p = (char *)buf + done;
        int rc = is_send ? PMPI_Isend(p, (int)len, MPI_BYTE, peer, SKEWSHIM_TAG, comm, &q->r[q->n])
                         : PMPI_Irecv(p, (int)len, MPI_BYTE, peer, SKEWSHIM_TAG, comm, &q->r[q->n]);
        if (rc != MPI_SUCCESS)
            return rc;
        q->n++;
        done += len;
    } while (done < bytes);
    return MPI_SUCCESS;
}

/* GCC's -Wstringop-overflow takes MPICH's MPI_STATUSES_IGNORE, (MPI_Status *)1,
 * for a zero-sized array; a volatile read hides the constant from it. */
static MPI_Status *statuses_ignore(void)
{
    MPI_Status *volatile p = MPI_STATUSES_IGNORE;
    return p;
}

static int reqs_wait(reqs *q)
{
    skewshim_lab_flush();
    int rc = q->n ? skewshim_lab_waitall(q->n, q->r, statuses_ignore()) : MPI_SUCCESS;
    q->n = 0;
    return rc;
}

/* One run of a forwarding schedule on this rank. */
typedef struct fwd_run {
    skewshim_xargs *c;
    const skewshim_fwd *f;
    skewshim_fwd_layout L;
    unsigned char *tmp;
    MPI_Comm comm;
    int me;                   /* local id in the group */
    const int *members;       /* group ranks; NULL: the group is the communicator */
    const skewshim_topo *t;   /* TuNA_l^g only */
    int node, nodes;
    int copies;               /* local ids of every node each one here stands for */
    int err;                  /* inconsistent sizes seen: reported at the end */
    int own;                  /* copying the own block: not charged in the lab */
    reqs q, direct;
} fwd_run;

static int member(const fwd_run *x, int l)
{
    return x->members ? x->members[l] : l;
}

/* Rank that sub-block j of a unit for local id l is for: flat, l itself;
 * hier, local id l + (j / N) q of node j % N, or -1 where that node has no
 * such rank (its sub-block is always empty). */
static int dest_rank(const fwd_run *x, int j, int l)
{
    if (!x->t)
        return l;
    return skewshim_topo_rank(x->t, j % x->nodes, l + j / x->nodes * x->f->group);
}

/* Rank of local id l on node n (it exists). */
static int node_rank(const fwd_run *x, int n, int l)
{
    return x->t->node_ranks[x->t->node_first[n] + l];
}

static uint64_t *u64(const fwd_run *x, uint64_t off)
{
    return (uint64_t *)(void *)(x->tmp + off);
}

static void copy(fwd_run *x, void *dst, const void *src, uint64_t n)
{
    if (n) {
        memmove(dst, src, n);
        x->c->stats.bytes_copied += n;
        if (!x->own)            /* MPI's alltoallv copies it too, free under SMPI */
            skewshim_lab_copy(1, n);
    }
}

/* Receive-buffer copy that never writes past the user's block. */
static void to_recv(fwd_run *x, int origin, const void *src, uint64_t n)
{
    uint64_t room = x->c->rbytes[origin];
    if (n > room) {
        x->err = MPI_ERR_TRUNCATE;
        n = room;
    }
    copy(x, (char *)x->c->recvbuf + x->c->roff[origin], src, n);
}

/* A unit's sub-block reached its last hop in the group. */
static void deliver(fwd_run *x, int j, int g0, const void *src, uint64_t n)
{
    int origin = member(x, g0);
    int m = x->t ? j % x->nodes : x->node, i = x->t ? j / x->nodes : 0;
    if (m == x->node) {
        if (i > 0) {            /* for a local id this node lacks: nothing to carry */
            if (n)
                x->err = MPI_ERR_INTERN;
            return;
        }
        if (x->f->padded && n > x->c->rbytes[origin])
            n = x->c->rbytes[origin];   /* strip the padding */
        to_recv(x, origin, src, n);
        return;
    }
    /* TuNA_l^g: bound for node m, kept until the inter-node phase. */
    int k = (m - x->node + x->nodes) % x->nodes;
    uint64_t xi = ((uint64_t)(k - 1) * (uint64_t)x->copies + (uint64_t)i) * (uint64_t)x->f->group
                + (uint64_t)g0;
    copy(x, x->tmp + x->L.xbuf + xi * x->L.block, src, n);
    u64(x, x->L.xsize)[xi] = n;
}

static void self_copy(fwd_run *x)
{
    skewshim_xargs *c = x->c;
    int w = x->f->width;
    x->own = 1;
    for (int j = 0; j < w; j++) {
        int d = dest_rank(x, j, x->me);
        if (!x->t || j == x->node)
            to_recv(x, d, (const char *)c->sendbuf + c->soff[d], c->sbytes[d]);
    }
    x->own = 0;
}

/* The peers of a round: this rank sends to `to` and receives from `from`. */
static int round_to(const fwd_run *x, const skewshim_fwd_round *rd)
{
    return member(x, (x->me + rd->dist) % x->f->group);
}

static int round_from(const fwd_run *x, const skewshim_fwd_round *rd)
{
    return member(x, (x->me - rd->dist + x->f->group) % x->f->group);
}

/* Post every direct round: origin send block straight into the receive block. */
static int post_direct(fwd_run *x)
{
    const skewshim_fwd *f = x->f;
    skewshim_xargs *c = x->c;
    for (int k = 0; k < f->rounds; k++) {
        skewshim_fwd_round rd;
        skewshim_fwd_round_get(f, k, &rd);
        if (skewshim_fwd_staged(f, &rd))
            continue;
        int to = round_to(x, &rd), from = round_from(x, &rd);
        int rc = reqs_post(&x->direct, 0, (char *)c->recvbuf + c->roff[from],
                           c->rbytes[from], from, x->comm);
        if (rc != MPI_SUCCESS)
            return rc;
        rc = reqs_post(&x->direct, 1, (char *)c->sendbuf + c->soff[to], c->sbytes[to],
                       to, x->comm);
        if (rc != MPI_SUCCESS)
            return rc;
        if (c->sbytes[to]) {
            c->stats.messages++;
            c->stats.bytes_sent += c->sbytes[to];
        }
    }
    return MPI_SUCCESS;
}

/* Sub-block j of unit delta as this rank sends it: the user's send block
 * on the unit's first hop, else its T slot.  The size is as recorded, not
 * yet held to the block bound (each caller treats an excess its own way). */
static uint64_t outgoing(const fwd_run *x, int delta, int first, int slot, int j,
                         const unsigned char **src)
{
    const skewshim_fwd *f = x->f;
    if (first) {
        int d = dest_rank(x, j, (x->me + delta) % f->group);
        *src = (const unsigned char *)x->c->sendbuf;
        if (d < 0)
            return 0;
        *src += x->c->soff[d];
        return x->c->sbytes[d];
    }
    uint64_t k = (uint64_t)slot * f->width + j;
    *src = x->tmp + x->L.t + k * x->L.block;
    return f->padded ? x->L.block : u64(x, x->L.tsize)[k];
}

/* Post the metadata exchange: the size of every sub-block this rank sends
 * in the round, so the receiver can size its stage before the data come.
 * Sizes go first so the exchange flies while we pack.  A padded round
 * sends every sub-block whole and needs none. */
static int post_sizes(fwd_run *x, const skewshim_fwd_round *rd, const int *deltas)
{
    const skewshim_fwd *f = x->f;
    skewshim_xargs *c = x->c;
    const int w = f->width;
    const uint64_t M = x->L.block;
    const int n = rd->units, nw = rd->units * w;
    uint64_t *mout = u64(x, x->L.meta_out);
    for (int i = 0; i < n; i++) {
        int first = skewshim_fwd_first_hop(f, deltas[i], rd->x);
        int slot = first ? -1 : skewshim_fwd_slot(f, deltas[i]);
        for (int j = 0; j < w; j++) {
            const unsigned char *src;
            uint64_t s = outgoing(x, deltas[i], first, slot, j, &src);
            if (s > M) {            /* only a rank with wrong agreed facts */
                x->err = MPI_ERR_INTERN;
                s = M;
            }
            if (!f->padded)
                mout[i * w + j] = s;
        }
    }
    if (f->padded)
        return MPI_SUCCESS;
    int rc;
    if ((rc = PMPI_Irecv(u64(x, x->L.meta_in), nw, MPI_UINT64_T, round_from(x, rd),
                         SKEWSHIM_TAG, x->comm, &x->q.r[0])) ||
        (rc = PMPI_Isend(mout, nw, MPI_UINT64_T, round_to(x, rd), SKEWSHIM_TAG, x->comm,
                         &x->q.r[1])))
        return rc;
    x->q.n = 2;
    c->stats.messages++;
    c->meta_bytes += 8 * (uint64_t)nw;
    return MPI_SUCCESS;
}

/* Pack the round's outgoing sub-blocks into the send stage: first hops
 * from the user's send buffer, forwarded ones from their T slot.  Returns
 * the bytes packed. */
static uint64_t pack_round(fwd_run *x, const skewshim_fwd_round *rd, const int *deltas)
{
    const skewshim_fwd *f = x->f;
    skewshim_xargs *c = x->c;
    const int w = f->width;
    const uint64_t M = x->L.block;
    unsigned char *sst = x->tmp + x->L.send_stage;
    uint64_t out = 0;
    for (int i = 0; i < rd->units; i++) {
        int first = skewshim_fwd_first_hop(f, deltas[i], rd->x);
        int slot = first ? -1 : skewshim_fwd_slot(f, deltas[i]);
        for (int j = 0; j < w; j++) {
            const unsigned char *src;
            uint64_t s = outgoing(x, deltas[i], first, slot, j, &src);
            if (s > M)
                s = M;
            copy(x, sst + out, src, s);
            if (f->padded && s < M) {
                /* Padding carries no data; zero it rather than send stale bytes. */
                memset(sst + out + s, 0, M - s);
                skewshim_lab_copy(1, M - s);
                s = M;
            }
            if (!first)
                c->stats.bytes_forwarded += s;
            out += s;
        }
    }
    return out;
}

/* Bytes the round brings in, from the received sizes; a size past the
 * block bound (wrong agreed facts on the sender) is cut to it, in the
 * table too, so unpacking never reads past the stage. */
static uint64_t incoming_bytes(fwd_run *x, int nw)
{
    uint64_t *min = u64(x, x->L.meta_in), in = 0;
    for (int i = 0; i < nw; i++) {
        uint64_t s = x->f->padded ? x->L.block : min[i];
        if (s > x->L.block) {
            x->err = MPI_ERR_INTERN;
            min[i] = s = x->L.block;
        }
        in += s;
    }
    return in;
}

/* Unpack the receive stage: sub-blocks at their last hop are delivered,
 * the others wait in their T slot for a later round. */
static void unpack_round(fwd_run *x, const skewshim_fwd_round *rd, const int *deltas)
{
    const skewshim_fwd *f = x->f;
    const int w = f->width, G = f->group;
    const uint64_t M = x->L.block;
    const uint64_t *min = u64(x, x->L.meta_in);
    uint64_t *tsize = u64(x, x->L.tsize);
    unsigned char *T = x->tmp + x->L.t;
    const unsigned char *rst = x->tmp + x->L.recv_stage;
    uint64_t in = 0;
    for (int i = 0; i < rd->units; i++) {
        int fin = skewshim_fwd_final(f, deltas[i], rd->x);
        int slot = fin ? -1 : skewshim_fwd_slot(f, deltas[i]);
        int g0 = (x->me - deltas[i] % G + G) % G;
        for (int j = 0; j < w; j++) {
            uint64_t s = f->padded ? M : min[i * w + j];
            if (fin) {
                deliver(x, j, g0, rst + in, s);
            } else {
                copy(x, T + ((uint64_t)slot * w + j) * M, rst + in, s);
                if (!f->padded)     /* padded slots are always full: no size table */
                    tsize[(uint64_t)slot * w + j] = s;
            }
            in += s;
        }
    }
}

static int staged_round(fwd_run *x, const skewshim_fwd_round *rd, int *deltas)
{
    skewshim_xargs *c = x->c;
    int to = round_to(x, rd), from = round_from(x, rd);
    int rc;

    skewshim_lab_flush();       /* the last round's unpacking, before its metadata goes */
    skewshim_fwd_deltas(x->f, rd, deltas);
    if ((rc = post_sizes(x, rd, deltas)) != MPI_SUCCESS)
        return rc;
    uint64_t out = pack_round(x, rd, deltas);
    if ((rc = reqs_wait(&x->q)) != MPI_SUCCESS)
        return rc;
    uint64_t in = incoming_bytes(x, rd->units * x->f->width);
    if ((rc = reqs_post(&x->q, 0, x->tmp + x->L.recv_stage, in, from, x->comm)) ||
        (rc = reqs_post(&x->q, 1, x->tmp + x->L.send_stage, out, to, x->comm)) ||
        (rc = reqs_wait(&x->q)))
        return rc;
    if (out) {
        c->stats.messages++;
        c->stats.bytes_sent += out;
    }
    unpack_round(x, rd, deltas);
    return MPI_SUCCESS;
}

/* The rounds of x->f: self block, direct rounds posted, staged rounds in order. */
static int run_group(fwd_run *x)
{
    const skewshim_fwd *f = x->f;
    int rc = MPI_SUCCESS;
    int *deltas = NULL;

    x->c->stats.rounds += (uint64_t)f->rounds;
    self_copy(x);
    if (f->stage_units > 0) {
        deltas = malloc((size_t)f->stage_units * sizeof *deltas);
        if (!deltas)
            return MPI_ERR_NO_MEM;
        /* two slots for the metadata pair, which is posted without reqs_post */
        if (x->q.cap < 2) {
            MPI_Request *r = realloc(x->q.r, 64 * sizeof *r);
            if (!r) {
                free(deltas);
                return MPI_ERR_NO_MEM;
            }
            x->q.r = r;
            x->q.cap = 64;
        }
    }
    if ((rc = post_direct(x)) == MPI_SUCCESS) {
        for (int k = 0; k < f->rounds && rc == MPI_SUCCESS; k++) {
            skewshim_fwd_round rd;
            skewshim_fwd_round_get(f, k, &rd);
            if (skewshim_fwd_staged(f, &rd))
                rc = staged_round(x, &rd, deltas);
        }
    }
    int rc2 = reqs_wait(&x->direct);
    free(deltas);
    return rc != MPI_SUCCESS ? rc : rc2;
}

static int run_start(fwd_run *x, skewshim_xargs *c, const skewshim_fwd *f,
                     const skewshim_fwd_layout *L)
{
    memset(x, 0, sizeof *x);
    x->c = c;
    x->f = f;
    x->L = *L;
    x->comm = c->pcomm;
    memset(&c->stats, 0, sizeof c->stats);
    c->meta_bytes = 0;
    c->tmp_bytes = L->total;
    if (L->total) {
        if (!c->tmp || c->tmp_cap < L->total)
            return MPI_ERR_INTERN;      /* the plan's bound was not honoured */
        x->tmp = c->tmp;
    } else {
        /* Nothing is stored (all blocks empty, or no forwarding); a valid
         * base keeps the zero-length offsets off a null pointer. */
        static unsigned char none[8];
        x->tmp = none;
    }
    return MPI_SUCCESS;
}

static int run_end(fwd_run *x, int rc)
{
    skewshim_lab_flush();
    free(x->q.r);
    free(x->direct.r);
    return rc != MPI_SUCCESS ? rc : x->err;
}

static int run_flat(skewshim_xargs *c, const skewshim_fwd *f, const skewshim_fwd_layout *L)
{
    fwd_run x;
    int rc = run_start(&x, c, f, L);
    if (rc == MPI_SUCCESS) {
        x.me = c->rank;
        rc = run_group(&x);
    }
    return run_end(&x, rc);
}

/* ---- TuNA_l^g ---------------------------------------------------------- */

/* Node step k's destinations here: local ids me + i q of node + k, for i
 * below this. */
static int step_dests(const fwd_run *x, int k)
{
    int size = x->t->node_size[(x->node + k) % x->nodes], q = x->f->group;
    if (x->me >= size)
        return 0;
    int n = (size - x->me + q - 1) / q;
    return n < x->copies ? n : x->copies;
}

/* Block from origin local id g0 of this node for local id me + i q of node
 * this + k: our own one still sits in the send buffer. */
static const unsigned char *xblock(fwd_run *x, int k, int i, int g0, uint64_t *size)
{
    skewshim_xargs *c = x->c;
    if (g0 == x->me) {
        int d = dest_rank(x, (x->node + k) % x->nodes + i * x->nodes, x->me);
        *size = d < 0 ? 0 : c->sbytes[d];
        return (const unsigned char *)c->sendbuf + (d < 0 ? 0 : c->soff[d]);
    }
    uint64_t xi = ((uint64_t)(k - 1) * (uint64_t)x->copies + (uint64_t)i) * (uint64_t)x->f->group
                + (uint64_t)g0;
    *size = u64(x, x->L.xsize)[xi];
    return x->tmp + x->L.xbuf + xi * x->L.block;
}

/* The rank of node n this rank hears from in phase 2: the one standing for
 * our local id there. */
static int agent_of(const fwd_run *x, int n)
{
    return node_rank(x, n, x->me % x->t->node_size[n]);
}

/* Coalesced: node step k sends the q blocks for each (node + k, me + i q)
 * as one message.  They are first packed to the front of their region, in
 * sending order (in place: each block moves left, and never past a block
 * not yet moved). */
static int inter_coalesced(fwd_run *x, const skewshim_fwd_hier *h)
{
    skewshim_xargs *c = x->c;
    const int N = h->nodes, q = h->per_node, Q = h->max_per_node;
    const uint64_t M = x->L.block;
    unsigned char *xbuf = x->tmp + x->L.xbuf, *xrecv = x->tmp + x->L.xrecv;
    uint64_t pos = 0, sent = 0;
    int rc;

    for (int k = 1; k < N; k++)
        for (int i = 0, nd = step_dests(x, k); i < nd; i++)
            for (int g0 = 0; g0 < q; g0++) {
                uint64_t s;
                const unsigned char *src = xblock(x, k, i, g0, &s);
                if (s > M)
                    s = M;
                copy(x, xbuf + pos, src, s);
                pos += s;
            }
    for (int k0 = 1; k0 < N; k0 += h->inter_batch) {
        int k1 = k0 + h->inter_batch < N ? k0 + h->inter_batch : N;
        for (int k = k0; k < k1; k++) {
            int sn = (x->node - k + N) % N, qs = x->t->node_size[sn];
            uint64_t want = 0;
            for (int g0 = 0; g0 < qs; g0++)
                want += c->rbytes[node_rank(x, sn, g0)];
            if (want > (uint64_t)Q * M)
                want = (uint64_t)Q * M;     /* MPI reports the truncation */
            rc = reqs_post(&x->q, 0, xrecv + (uint64_t)(k - k0) * Q * M, want,
                           agent_of(x, sn), x->comm);
            if (rc != MPI_SUCCESS)
                return rc;
        }
        for (int k = k0; k < k1; k++)
            for (int i = 0, nd = step_dests(x, k); i < nd; i++) {
                uint64_t len = 0, fwd = 0;
                for (int g0 = 0; g0 < q; g0++) {
                    uint64_t s;
                    xblock(x, k, i, g0, &s);
                    s = s < M ? s : M;
                    len += s;
                    if (g0 != x->me)
                        fwd += s;
                }
                rc = reqs_post(&x->q, 1, xbuf + sent, len,
                               node_rank(x, (x->node + k) % N, x->me + i * q), x->comm);
                if (rc != MPI_SUCCESS)
                    return rc;
                sent += len;
                c->stats.messages += len != 0;
                c->stats.bytes_sent += len;
                c->stats.bytes_forwarded += fwd;
            }
        if ((rc = reqs_wait(&x->q)) != MPI_SUCCESS)
            return rc;
        for (int k = k0; k < k1; k++) {
            int sn = (x->node - k + N) % N, qs = x->t->node_size[sn];
            const unsigned char *p = xrecv + (uint64_t)(k - k0) * Q * M;
            uint64_t used = 0;
            for (int g0 = 0; g0 < qs; g0++) {
                int o = node_rank(x, sn, g0);
                uint64_t s = c->rbytes[o];
                if (used + s > (uint64_t)Q * M)
                    s = used > (uint64_t)Q * M ? 0 : (uint64_t)Q * M - used;
                to_recv(x, o, p + used, s);
                used += s;
            }
        }
    }
    return MPI_SUCCESS;
}

/* Staggered: one message per block, straight into the receive buffer.
 * Message number (k - 1) Q + g0 is node step k, origin local id g0, on
 * both sides, so a batch of numbers holds both ends of each message (on
 * unequal nodes some numbers name no block). */
static int inter_staggered(fwd_run *x, const skewshim_fwd_hier *h)
{
    skewshim_xargs *c = x->c;
    const int N = h->nodes, q = h->per_node, Q = h->max_per_node;
    const int total = (N - 1) * Q;
    int rc;

    for (int i0 = 0; i0 < total; i0 += h->inter_batch) {
        int i1 = i0 + h->inter_batch < total ? i0 + h->inter_batch : total;
        for (int i = i0; i < i1; i++) {
            int k = i / Q + 1, g0 = i % Q, sn = (x->node - k + N) % N;
            if (g0 >= x->t->node_size[sn])
                continue;
            int o = node_rank(x, sn, g0);
            rc = reqs_post(&x->q, 0, (char *)c->recvbuf + c->roff[o], c->rbytes[o],
                           agent_of(x, sn), x->comm);
            if (rc != MPI_SUCCESS)
                return rc;
        }
        for (int i = i0; i < i1; i++) {
            int k = i / Q + 1, g0 = i % Q;
            if (g0 >= q)
                continue;
            for (int d = 0, nd = step_dests(x, k); d < nd; d++) {
                uint64_t s;
                const unsigned char *src = xblock(x, k, d, g0, &s);
                rc = reqs_post(&x->q, 1, (void *)src, s,
                               node_rank(x, (x->node + k) % N, x->me + d * q), x->comm);
                if (rc != MPI_SUCCESS)
                    return rc;
                c->stats.messages += s != 0;
                c->stats.bytes_sent += s;
                if (g0 != x->me)
                    c->stats.bytes_forwarded += s;
            }
        }
        if ((rc = reqs_wait(&x->q)) != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

static int run_hier(skewshim_xargs *c, const skewshim_fwd_hier *h, const skewshim_fwd_layout *L)
{
    fwd_run x;
    const skewshim_topo *t = c->topo;
    if (!t || t->nranks != c->size || t->nnodes != h->nodes ||
        t->node_size[t->node_of[c->rank]] != h->per_node || t->max_per_node != h->max_per_node)
        return MPI_ERR_INTERN;
    int rc = run_start(&x, c, &h->intra, L);
    if (rc == MPI_SUCCESS) {
        x.t = t;
        x.node = t->node_of[c->rank];
        x.nodes = t->nnodes;
        x.copies = h->copies;
        x.me = t->local_of[c->rank];
        x.members = t->node_ranks + t->node_first[x.node];
        rc = run_group(&x);
        if (rc == MPI_SUCCESS && h->nodes > 1) {
            c->stats.rounds += (uint64_t)h->inter_rounds;
            rc = h->variant == SKEWSHIM_TUNA_STAGGERED ? inter_staggered(&x, h)
                                                       : inter_coalesced(&x, h);
        }
    }
    return run_end(&x, rc);
}

int skewshim_exec_forward(const void *plan, skewshim_xargs *x)
{
    const skewshim_fwd_plan *p = plan;
    return p->hier ? run_hier(x, &p->h, &p->L) : run_flat(x, &p->flat, &p->L);
}
