#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* SABRE (paper 000) as a pure global planner.  Every rank runs it on the same
 * size matrix and topology and gets the same schedule move for move: all
 * loops run in index order, every sort has a total order, and the only
 * floating point is the MTM (compared once against the threshold) and the
 * tolerance L_max (src/plan/sabre_balance.c), both computed identically
 * from identical inputs.  doc/algorithms/sabre.md explains the stages. */

#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "sabre.h"

#define SABRE_DEFAULT_ALPHA 1.05
#define SABRE_DEFAULT_MTM 2.2

typedef struct ctx {
    const skewshim_matrix *m;
    const skewshim_topo *t;
    skewshim_sched *out;
    int P;
    int rank;           /* slice owner, or -1 for the global schedule */
    /* Uncompacted stages 0..2 that carry a move anywhere in the global plan
     * (a slice cannot see that in its own moves) and, per rank, the temp
     * the global plan declares; both filled by the slice planner only. */
    int used[3];
    uint64_t *tmp_all;
} ctx;

static uint64_t blk(const ctx *c, int i, int j)
{
    return c->m->b[(size_t)i * (size_t)c->P + (size_t)j];
}

/* The INTER flag tells the simulator and the device executor which link a
 * move uses; it follows from the ranks alone. */
static int emit(const ctx *c, int stage, int src, int sloc, int sblk, uint64_t soff,
                int dst, int dloc, int dblk, uint64_t doff, uint64_t bytes)
{
    /* The slice planner runs the global code and keeps its rank's moves, so
     * the two agree move for move by construction. */
    if (c->rank >= 0 && src != c->rank && dst != c->rank)
        return 0;
    uint32_t fl = c->t->node_of[src] != c->t->node_of[dst] ? SKEWSHIM_MOVE_INTER : 0u;
    return skewshim_sched_move(c->out, stage, src, sloc, sblk, soff,
                               dst, dloc, dblk, doff, bytes, fl);
}

/* Blocks that never leave their node go straight to the receiver, the
 * self-block as a local copy.  Both regimes put them in a stage whose
 * intra-node links are otherwise idle. */
static int emit_node_local(const ctx *c, int stage)
{
    if (c->rank >= 0) {
        /* Node ranks are listed in increasing order: this is the global
         * (i, j) order restricted to the slice's node. */
        const skewshim_topo *t = c->t;
        int R = t->node_of[c->rank], q = t->node_size[R];
        const int *rr = t->node_ranks + t->node_first[R];
        for (int x = 0; x < q; x++)
            for (int y = 0; y < q; y++)
                if (emit(c, stage, rr[x], SKEWSHIM_LOC_SEND, rr[y], 0,
                         rr[y], SKEWSHIM_LOC_RECV, rr[x], 0, blk(c, rr[x], rr[y])))
                    return -1;
        return 0;
    }
    for (int i = 0; i < c->P; i++)
        for (int j = 0; j < c->P; j++)
            if (c->t->node_of[i] == c->t->node_of[j] &&
                emit(c, stage, i, SKEWSHIM_LOC_SEND, j, 0,
                     j, SKEWSHIM_LOC_RECV, i, 0, blk(c, i, j)))
                return -1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Lightly skewed: pipelined 2D (paper section 6.2).                   */
/*   stage 0: direct exchange with the inter-node group (same local id) */
/*            + forwarding to the proxy whose local id is the target's  */
/*   stage 1: proxies send the forwarded data on across nodes           */
/*            + the intra-node exchange                                 */
/* ------------------------------------------------------------------ */

/* The rank on node u that carries traffic for destination d.  A smaller
 * source node has no rank with d's local id; wrap around so the load still
 * spreads over the node. */
static int light_proxy(const skewshim_topo *t, int u, int d)
{
    int l = t->local_of[d] % t->node_size[u];
    return skewshim_topo_rank(t, u, l);
}

/* A slice's part of node u's loop when u is another node: only blocks to
 * the slice's rank r touch it.  Its proxy's temp cursor at that point is
 * what the proxy forwarded for earlier destinations, recomputed here. */
static int light_into_rank(const ctx *c, int u)
{
    const skewshim_topo *t = c->t;
    int r = c->rank, p = light_proxy(t, u, r), q = t->node_size[u];
    const int *ru = t->node_ranks + t->node_first[u];
    uint64_t cur = 0;
    for (int d = 0; d < r; d++) {
        if (t->node_of[d] == u || light_proxy(t, u, d) != p)
            continue;
        for (int k = 0; k < q; k++)
            if (ru[k] != p)
                cur += blk(c, ru[k], d);
    }
    for (int k = 0; k < q; k++) {
        int s = ru[k];
        uint64_t b = blk(c, s, r);
        if (b == 0)
            continue;
        if (p == s) {
            if (emit(c, 0, s, SKEWSHIM_LOC_SEND, r, 0, r, SKEWSHIM_LOC_RECV, s, 0, b))
                return -1;
            continue;
        }
        if (emit(c, 1, p, SKEWSHIM_LOC_TMP, -1, cur, r, SKEWSHIM_LOC_RECV, s, 0, b))
            return -1;
        cur += b;
    }
    return 0;
}

/* What a slice needs from the whole light plan: the stages it uses and
 * every proxy's temp (what it forwards), row by row. */
static void light_facts(ctx *c)
{
    const skewshim_topo *t = c->t;
    for (int s = 0; s < c->P; s++) {
        int u = t->node_of[s], q = t->node_size[u];
        const int *ru = t->node_ranks + t->node_first[u];
        const uint64_t *row = c->m->b + (size_t)s * (size_t)c->P;
        for (int d = 0; d < c->P; d++) {
            if (!row[d])
                continue;
            if (t->node_of[d] == u) {
                c->used[1] = 1;
                continue;
            }
            c->used[0] = 1;
            int p = ru[t->local_of[d] % q];
            if (p != s) {
                c->used[1] = 1;
                c->tmp_all[p] += row[d];
            }
        }
    }
}

static int plan_light(ctx *c)
{
    const skewshim_topo *t = c->t;
    uint64_t *cur = calloc((size_t)c->P, sizeof *cur);
    if (!cur)
        return -1;
    int rc = 0;
    int R = c->rank >= 0 ? t->node_of[c->rank] : -1;
    for (int u = 0; u < t->nnodes && !rc; u++) {
        if (R >= 0 && u != R) {
            rc = light_into_rank(c, u);
            continue;
        }
        for (int d = 0; d < c->P && !rc; d++) {
            if (t->node_of[d] == u)
                continue;
            int p = light_proxy(t, u, d);
            for (int k = 0; k < t->node_size[u] && !rc; k++) {
                int s = t->node_ranks[t->node_first[u] + k];
                uint64_t b = blk(c, s, d);
                if (b == 0)
                    continue;
                if (p == s) {
                    rc = emit(c, 0, s, SKEWSHIM_LOC_SEND, d, 0, d, SKEWSHIM_LOC_RECV, s, 0, b);
                    continue;
                }
                /* The proxy's temp is written in stage 0 and only read in
                 * stage 1, so no stage reads what it writes. */
                rc = emit(c, 0, s, SKEWSHIM_LOC_SEND, d, 0, p, SKEWSHIM_LOC_TMP, -1, cur[p], b);
                if (!rc)
                    rc = emit(c, 1, p, SKEWSHIM_LOC_TMP, -1, cur[p], d, SKEWSHIM_LOC_RECV, s, 0, b);
                cur[p] += b;
            }
        }
    }
    if (!rc)
        rc = emit_node_local(c, 1);
    if (!rc && c->rank >= 0)
        light_facts(c);
    free(cur);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Highly skewed: three phases (paper section 5.3).                    */
/*   stage 0: intra-node gathering to the proxies Algorithm 1 chose    */
/*   stage 1: inter-node transfers between proxies of one NIC group    */
/*            + the intra-node exchange                                 */
/*   stage 2: redistribution within the destination node               */
/* ------------------------------------------------------------------ */

/* One piece of one block on its way through the node pair (u, w). */
typedef struct hpiece {
    int s, d;           /* origin and final destination */
    int sp, rp;         /* sending proxy on u, receiving proxy on w */
    int kind;           /* 0: TMP->TMP, 1: TMP->RECV, 2: SEND->TMP, 3: SEND->RECV */
    int seq;            /* position in Algorithm 1's output, the last tie-break */
    uint64_t off, bytes; /* within block s -> d */
    uint64_t aoff;      /* in sp's outgoing region (kind 0, 1) */
    uint64_t boff;      /* in rp's incoming region, relative (kind 0, 2) */
} hpiece;

static int cmp_hpiece(const void *a, const void *b)
{
    const hpiece *x = a, *y = b;
    if (x->sp != y->sp) return x->sp < y->sp ? -1 : 1;
    if (x->rp != y->rp) return x->rp < y->rp ? -1 : 1;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

/* The member of NIC group `lane` on node n that handles data for `want`
 * (a rank on that node): want itself when it is in the group, else the rank
 * with local id `alt` when that exists and is in the group, else the group's
 * first rank.  With one rank per NIC (nl = ranks per node) this is exactly
 * the paper's rule: the rank whose local id is the lane. */
static int lane_member(const skewshim_topo *t, int n, int nl, int lane, int want, int alt)
{
    if (t->local_of[want] % nl == lane)
        return want;
    if (alt >= 0 && alt < t->node_size[n] && alt % nl == lane)
        return skewshim_topo_rank(t, n, alt);
    return skewshim_topo_rank(t, n, lane);
}

typedef struct hplan {
    hpiece *pc;
    size_t n, cap;
} hplan;

static int hplan_push(hplan *h, const hpiece *p)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 256;
        hpiece *np = realloc(h->pc, cap * sizeof *np);
        if (!np)
            return -1;
        h->pc = np;
        h->cap = cap;
    }
    h->pc[h->n++] = *p;
    return 0;
}

/* Scratch sized for the largest node pair. */
typedef struct hscratch {
    uint64_t *bytes;
    int *pref, *order;
    skewshim_sabre_piece *pieces;
    uint64_t *load;
} hscratch;

/* Algorithm 1 for the pair (u, w), then proxies and temp offsets for every
 * piece.  acur / bcur are the per-rank cursors of the outgoing and incoming
 * temp regions. */
static int balance_pair(ctx *c, int u, int w, int nl, double alpha, hscratch *sc,
                        hplan *h, uint64_t *acur, uint64_t *bcur)
{
    const skewshim_topo *t = c->t;
    int gu = t->node_size[u], gw = t->node_size[w];
    const int *ru = t->node_ranks + t->node_first[u];
    const int *rw = t->node_ranks + t->node_first[w];
    int nitems = gu * gw;
    for (int a = 0; a < gu; a++)
        for (int b = 0; b < gw; b++) {
            sc->bytes[a * gw + b] = blk(c, ru[a], rw[b]);
            /* Preferred proxy: the rank with the destination's local id
             * (folded onto the NIC groups), so the piece lands on its final
             * rank and phase 3 has nothing to move. */
            sc->pref[a * gw + b] = b % nl;
        }
    size_t np = 0;
    if (skewshim_sabre_balance(sc->bytes, sc->pref, nitems, nl, alpha, sc->order,
                               sc->pieces, &np, sc->load))
        return -1;
    size_t first = h->n;
    for (size_t k = 0; k < np; k++) {
        const skewshim_sabre_piece *q = &sc->pieces[k];
        hpiece p;
        memset(&p, 0, sizeof p);
        p.s = ru[q->item / gw];
        p.d = rw[q->item % gw];
        p.sp = lane_member(t, u, nl, q->lane, p.s, t->local_of[p.d]);
        p.rp = lane_member(t, w, nl, q->lane, p.d, t->local_of[p.s]);
        p.kind = (p.sp == p.s ? 2 : 0) + (p.rp == p.d ? 1 : 0);
        p.seq = (int)k;
        p.off = q->off;
        p.bytes = q->bytes;
        if (hplan_push(h, &p))
            return -1;
    }
    /* Grouping by proxy pair, TMP->TMP first, puts those pieces side by
     * side in both proxies' temp, so stage 1 sends them as one message: the
     * paper's batched node-to-node transfer. */
    if (h->n > first)
        qsort(h->pc + first, h->n - first, sizeof *h->pc, cmp_hpiece);
    for (size_t k = first; k < h->n; k++) {
        hpiece *p = &h->pc[k];
        if (p->sp != p->s) {
            p->aoff = acur[p->sp];
            acur[p->sp] += p->bytes;
        }
        if (p->rp != p->d) {
            p->boff = bcur[p->rp];
            bcur[p->rp] += p->bytes;
        }
    }
    return 0;
}

/* A node pair away from the slice's node: Algorithm 1 only for the temp
 * each proxy takes (the totals do not depend on the order balance_pair
 * sorts the pieces in) and for the stages the global plan uses. */
static int pair_usage(ctx *c, int u, int w, int nl, double alpha, hscratch *sc,
                      uint64_t *acur, uint64_t *bcur)
{
    const skewshim_topo *t = c->t;
    int gu = t->node_size[u], gw = t->node_size[w];
    const int *ru = t->node_ranks + t->node_first[u];
    const int *rw = t->node_ranks + t->node_first[w];
    for (int a = 0; a < gu; a++) {
        const uint64_t *row = c->m->b + (size_t)ru[a] * (size_t)c->P;
        for (int b = 0; b < gw; b++) {
            sc->bytes[a * gw + b] = row[rw[b]];
            sc->pref[a * gw + b] = b % nl;
        }
    }
    size_t np = 0;
    if (skewshim_sabre_balance(sc->bytes, sc->pref, gu * gw, nl, alpha, sc->order,
                               sc->pieces, &np, sc->load))
        return -1;
    for (size_t k = 0; k < np; k++) {
        const skewshim_sabre_piece *q = &sc->pieces[k];
        int s = ru[q->item / gw], d = rw[q->item % gw];
        int sp = lane_member(t, u, nl, q->lane, s, t->local_of[d]);
        int rp = lane_member(t, w, nl, q->lane, d, t->local_of[s]);
        c->used[1] = 1;
        if (sp != s) {
            acur[sp] += q->bytes;
            c->used[0] = 1;
        }
        if (rp != d) {
            bcur[rp] += q->bytes;
            c->used[2] = 1;
        }
    }
    return 0;
}

static int emit_high(const ctx *c, const hplan *h, const uint64_t *bbase)
{
    /* stage 0: gathering */
    for (size_t k = 0; k < h->n; k++) {
        const hpiece *p = &h->pc[k];
        if (p->sp != p->s &&
            emit(c, 0, p->s, SKEWSHIM_LOC_SEND, p->d, p->off,
                 p->sp, SKEWSHIM_LOC_TMP, -1, p->aoff, p->bytes))
            return -1;
    }
    /* stage 1: inter-node, contiguous TMP->TMP runs merged */
    for (size_t k = 0; k < h->n;) {
        const hpiece *p = &h->pc[k];
        if (p->kind == 0) {
            uint64_t len = p->bytes;
            size_t e = k + 1;
            while (e < h->n && h->pc[e].kind == 0 && h->pc[e].sp == p->sp &&
                   h->pc[e].rp == p->rp && h->pc[e].aoff == p->aoff + len &&
                   h->pc[e].boff == p->boff + len) {
                len += h->pc[e].bytes;
                e++;
            }
            if (emit(c, 1, p->sp, SKEWSHIM_LOC_TMP, -1, p->aoff,
                     p->rp, SKEWSHIM_LOC_TMP, -1, bbase[p->rp] + p->boff, len))
                return -1;
            k = e;
            continue;
        }
        int sfrom_tmp = p->sp != p->s, dto_tmp = p->rp != p->d;
        if (emit(c, 1, p->sp,
                 sfrom_tmp ? SKEWSHIM_LOC_TMP : SKEWSHIM_LOC_SEND, p->d,
                 sfrom_tmp ? p->aoff : p->off,
                 p->rp,
                 dto_tmp ? SKEWSHIM_LOC_TMP : SKEWSHIM_LOC_RECV, p->s,
                 dto_tmp ? bbase[p->rp] + p->boff : p->off, p->bytes))
            return -1;
        k++;
    }
    /* stage 2: redistribution to the final rank */
    for (size_t k = 0; k < h->n; k++) {
        const hpiece *p = &h->pc[k];
        if (p->rp != p->d &&
            emit(c, 2, p->rp, SKEWSHIM_LOC_TMP, -1, bbase[p->rp] + p->boff,
                 p->d, SKEWSHIM_LOC_RECV, p->s, p->off, p->bytes))
            return -1;
    }
    return 0;
}

static int plan_high(ctx *c, int nics, double alpha)
{
    const skewshim_topo *t = c->t;
    int Q = t->max_per_node;
    size_t items = (size_t)Q * (size_t)Q;
    hscratch sc;
    hplan h = {0};
    sc.bytes = malloc((items + 1) * sizeof *sc.bytes);
    sc.pref = malloc((items + 1) * sizeof *sc.pref);
    sc.order = malloc((items + 1) * sizeof *sc.order);
    sc.pieces = malloc(SKEWSHIM_SABRE_MAX_PIECES(items + 1, Q) * sizeof *sc.pieces);
    sc.load = malloc(((size_t)Q + 1) * sizeof *sc.load);
    uint64_t *acur = calloc((size_t)c->P, sizeof *acur);
    uint64_t *bcur = calloc((size_t)c->P, sizeof *bcur);
    int rc = -1;
    if (!sc.bytes || !sc.pref || !sc.order || !sc.pieces || !sc.load || !acur || !bcur)
        goto out;
    int R = c->rank >= 0 ? t->node_of[c->rank] : -1;
    for (int u = 0; u < t->nnodes; u++)
        for (int w = 0; w < t->nnodes; w++) {
            if (u == w)
                continue;
            int nl = nics;
            if (nl > t->node_size[u]) nl = t->node_size[u];
            if (nl > t->node_size[w]) nl = t->node_size[w];
            /* Temp offsets run over all pairs in order, so a slice still
             * balances every pair; it keeps the pieces of its node's only. */
            if (R >= 0 && u != R && w != R) {
                if (pair_usage(c, u, w, nl, alpha, &sc, acur, bcur))
                    goto out;
                continue;
            }
            size_t first = h.n;
            if (balance_pair(c, u, w, nl, alpha, &sc, &h, acur, bcur))
                goto out;
            for (size_t k = first; R >= 0 && k < h.n; k++) {
                c->used[1] = 1;
                c->used[0] |= h.pc[k].sp != h.pc[k].s;
                c->used[2] |= h.pc[k].rp != h.pc[k].d;
            }
        }
    if (R >= 0)
        for (int x = 0; x < c->P; x++)
            c->tmp_all[x] = acur[x] + bcur[x];
    /* Incoming regions follow the outgoing ones: stage 1 reads the one and
     * writes the other, so they must not overlap. */
    if (emit_high(c, &h, acur) || emit_node_local(c, 1))
        goto out;
    /* Intra-node blocks use stage 1 whichever pairs there are. */
    for (int x = 0; R >= 0 && !c->used[1] && x < c->P; x++) {
        const int *nr = t->node_ranks + t->node_first[t->node_of[x]];
        for (int y = 0; y < t->node_size[t->node_of[x]]; y++)
            if (blk(c, x, nr[y])) {
                c->used[1] = 1;
                break;
            }
    }
    rc = 0;
out:
    free(sc.bytes);
    free(sc.pref);
    free(sc.order);
    free(sc.pieces);
    free(sc.load);
    free(acur);
    free(bcur);
    free(h.pc);
    return rc;
}

/* Drop stage numbers no move uses (one node, no forwarding, an empty
 * matrix), so the stage count reports what really runs.  used[] says which
 * stages the global plan uses; NULL means look at the moves (global). */
static void compact_stages(skewshim_sched *s, const int *given)
{
    int used[3] = {0, 0, 0}, map[3];
    if (given)
        memcpy(used, given, sizeof used);
    else
        for (size_t i = 0; i < s->nmoves; i++)
            used[s->moves[i].stage] = 1;
    int n = 0;
    for (int k = 0; k < 3; k++)
        map[k] = used[k] ? n++ : -1;
    for (size_t i = 0; i < s->nmoves; i++)
        s->moves[i].stage = (uint16_t)map[s->moves[i].stage];
}

static int plan_sabre(const skewshim_matrix *m, const skewshim_topo *t,
                      const skewshim_params *p, int nics, int rank,
                      skewshim_sched *out, uint64_t *max_tmp, skewshim_plan_report *rep)
{
    if (!m || !t || !out || !m->b || m->nranks != t->nranks || out->nranks != m->nranks ||
        m->nranks < 1 || rank >= m->nranks)
        return -1;
    double alpha = p ? p->sabre_alpha : SABRE_DEFAULT_ALPHA;
    double thr = p ? p->sabre_mtm_threshold : SABRE_DEFAULT_MTM;
    /* More NICs than ranks on a node cannot be used by a rank-per-NIC
     * schedule; fewer than one means the default, one. */
    if (nics < 1)
        nics = 1;
    if (nics > t->max_per_node)
        nics = t->max_per_node;

    skewshim_skew sk;
    skewshim_skew_of_matrix(m, t, &sk);
    int high = sk.mtm_inter >= thr;

    ctx c = {m, t, out, m->nranks, rank, {0, 0, 0}, NULL};
    if (rank >= 0 && !(c.tmp_all = calloc((size_t)m->nranks, sizeof *c.tmp_all)))
        return -1;
    int rc = high ? plan_high(&c, nics, alpha) : plan_light(&c);
    if (rc) {
        free(c.tmp_all);
        return -1;
    }
    compact_stages(out, rank >= 0 ? c.used : NULL);
    if (max_tmp && c.tmp_all) {
        uint64_t mt = 0;
        for (int x = 0; x < m->nranks; x++)
            if (c.tmp_all[x] > mt)
                mt = c.tmp_all[x];
        *max_tmp = mt;
    }
    free(c.tmp_all);
    if (skewshim_sched_finish(out))
        return -1;
    if (rep) {
        rep->regime = high;
        /* A slice may miss stages its rank has no part in: report the
         * global count, as the global planner does. */
        rep->stages = rank >= 0 ? c.used[0] + c.used[1] + c.used[2] : out->nstages;
        rep->mtm = sk.mtm_inter;
    }
    return 0;
}

int skewshim_plan_sabre(const skewshim_matrix *m, const skewshim_topo *t,
                        const skewshim_params *p, int nics,
                        skewshim_sched *out, skewshim_plan_report *rep)
{
    return plan_sabre(m, t, p, nics, -1, out, NULL, rep);
}

int skewshim_plan_sabre_slice(const skewshim_matrix *m, const skewshim_topo *t,
                              const skewshim_params *p, int nics, int rank,
                              skewshim_sched *out_slice, uint64_t *max_tmp_all_ranks,
                              skewshim_plan_report *rep)
{
    if (rank < 0 || !out_slice || out_slice->rank != rank)
        return -1;
    return plan_sabre(m, t, p, nics, rank, out_slice, max_tmp_all_ranks, rep);
}
