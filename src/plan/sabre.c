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
    uint32_t fl = c->t->node_of[src] != c->t->node_of[dst] ? SKEWSHIM_MOVE_INTER : 0u;
    return skewshim_sched_move(c->out, stage, src, sloc, sblk, soff,
                               dst, dloc, dblk, doff, bytes, fl);
}

/* Blocks that never leave their node go straight to the receiver, the
 * self-block as a local copy.  Both regimes put them in a stage whose
 * intra-node links are otherwise idle. */
static int emit_node_local(const ctx *c, int stage)
{
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

static int plan_light(const ctx *c)
{
    const skewshim_topo *t = c->t;
    uint64_t *cur = calloc((size_t)c->P, sizeof *cur);
    if (!cur)
        return -1;
    int rc = 0;
    for (int u = 0; u < t->nnodes && !rc; u++) {
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
static int balance_pair(const ctx *c, int u, int w, int nl, double alpha, hscratch *sc,
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

static int plan_high(const ctx *c, int nics, double alpha)
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
    for (int u = 0; u < t->nnodes; u++)
        for (int w = 0; w < t->nnodes; w++) {
            if (u == w)
                continue;
            int nl = nics;
            if (nl > t->node_size[u]) nl = t->node_size[u];
            if (nl > t->node_size[w]) nl = t->node_size[w];
            if (balance_pair(c, u, w, nl, alpha, &sc, &h, acur, bcur))
                goto out;
        }
    /* Incoming regions follow the outgoing ones: stage 1 reads the one and
     * writes the other, so they must not overlap. */
    if (emit_high(c, &h, acur) || emit_node_local(c, 1))
        goto out;
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
 * matrix), so the stage count reports what really runs. */
static void compact_stages(skewshim_sched *s)
{
    int used[3] = {0, 0, 0}, map[3];
    for (size_t i = 0; i < s->nmoves; i++)
        used[s->moves[i].stage] = 1;
    int n = 0;
    for (int k = 0; k < 3; k++)
        map[k] = used[k] ? n++ : -1;
    for (size_t i = 0; i < s->nmoves; i++)
        s->moves[i].stage = (uint16_t)map[s->moves[i].stage];
}

int skewshim_plan_sabre(const skewshim_matrix *m, const skewshim_topo *t,
                        const skewshim_params *p, int nics,
                        skewshim_sched *out, skewshim_plan_report *rep)
{
    if (!m || !t || !out || !m->b || m->nranks != t->nranks || out->nranks != m->nranks ||
        m->nranks < 1)
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

    ctx c = {m, t, out, m->nranks};
    int rc = high ? plan_high(&c, nics, alpha) : plan_light(&c);
    if (rc)
        return -1;
    compact_stages(out);
    if (skewshim_sched_finish(out))
        return -1;
    if (rep) {
        rep->regime = high;
        rep->stages = out->nstages;
        rep->mtm = sk.mtm_inter;
    }
    return 0;
}
