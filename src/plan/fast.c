#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* FAST (paper 004, section 4): a global schedule every rank derives from the
 * same size matrix.
 *
 * 1. Sender balancing.  For every ordered pair of nodes (A, B) the tile of
 *    blocks A -> B is spread over L = min(|A|, |B|) lanes; lane l is the rank
 *    with local id l in A and sends only to the rank with local id l in B (the
 *    peer), so no receiver NIC is shared (no incast) and every lane carries
 *    V/L bytes (+-1): the tile becomes its scalar form.  A rank keeps as much
 *    of its own row as its lane quota allows; only the excess moves to lanes
 *    short of their quota (stage 0, intra-node, into the lane's temp).
 * 2. The N x N server matrix of tile volumes is embedded and Birkhoff
 *    decomposed (birkhoff.c); each stage is a one-to-one pairing of nodes and
 *    carries, for each paired tile, the next r bytes of it (real data first,
 *    the auxiliary part is never sent), split over the lanes by the same
 *    +-1 rule, so the per-stage lane shares stay balanced.
 * 3. Redistribution.  Bytes whose final rank is not the peer land in the
 *    peer's temp and are forwarded inside B one stage later, i.e. alongside
 *    the next inter-node stage (pipeline), as in the paper's Fig. 11.
 * Intra-node blocks go directly, alongside the first inter-node stage when
 * fast_pipeline is set, otherwise in a stage of their own before it, and
 * redistribution then gets its own stage after each inter-node stage.
 */
#include <stdlib.h>
#include <string.h>

#include "birkhoff.h"
#include "plan.h"

#define OWN UINT64_MAX  /* piece still in the sender's user block */

/* A run of one user block assigned to a lane. */
typedef struct piece {
    int src, dst;       /* origin and final rank */
    uint64_t off, len;  /* within block (src -> dst) */
    uint64_t tmp;       /* offset in the lane rank's temp, or OWN */
    int lane;
} piece;

typedef struct ctx {
    const skewshim_matrix *m;
    const skewshim_topo *t;
    skewshim_sched *out;
    uint64_t *tmp_next;     /* [P] next free temp byte of each rank */
    piece *pc, *pc2;        /* pieces of the current tile, unsorted / by lane */
    int *lane_start;        /* [Q+1] */
    uint64_t *deficit;      /* [Q] bytes a lane still lacks while balancing */
    uint64_t *cur_off;      /* [Q] bytes of the current piece already sent */
    int *cur_idx;           /* [Q] current piece of each lane */
    int pipeline;
    int rank;               /* slice owner, or -1 for the global schedule */
} ctx;

static uint64_t lane_cut(uint64_t c, int L, int l)
{
    return c / (uint64_t)L + ((uint64_t)l < c % (uint64_t)L ? 1u : 0u);
}

static uint64_t blk(const ctx *c, int i, int j)
{
    return c->m->b[(size_t)i * c->m->nranks + j];
}

/* The slice planner runs the same code as the global one and keeps only the
 * moves of its rank, so both lists agree move for move by construction. */
static int keep(const ctx *c, int src, int dst)
{
    return c->rank < 0 || src == c->rank || dst == c->rank;
}

static int emit(ctx *c, int stage, int src, int src_loc, int src_blk, uint64_t src_off,
                int dst, int dst_loc, int dst_blk, uint64_t dst_off, uint64_t bytes,
                uint32_t flags)
{
    if (!keep(c, src, dst))
        return 0;
    return skewshim_sched_move(c->out, stage, src, src_loc, src_blk, src_off, dst, dst_loc,
                               dst_blk, dst_off, bytes, flags);
}

/* Stage numbers of inter-node stage s and of its redistribution. */
static int inter_stage(const ctx *c, int s) { return c->pipeline ? 1 + s : 2 + 2 * s; }
static int redist_stage(const ctx *c, int s) { return inter_stage(c, s) + 1; }
static int intra_stage(const ctx *c) { (void)c; return 1; }

/* Split tile A -> B into lane pieces and emit the balancing moves.  A dry
 * run (the slice planner's pass over tiles away from its node) only lays
 * out the pieces: no temp is allocated and nothing is emitted; donated
 * pieces get tmp 0 so they still differ from OWN. */
static int build_lanes(ctx *c, int A, int B, int *npieces, int dry)
{
    const skewshim_topo *t = c->t;
    int qa = t->node_size[A], qb = t->node_size[B];
    int L = qa < qb ? qa : qb;
    const int *ra = t->node_ranks + t->node_first[A];
    const int *rb = t->node_ranks + t->node_first[B];
    uint64_t V = 0;
    for (int x = 0; x < qa; x++)
        for (int y = 0; y < qb; y++)
            V += blk(c, ra[x], rb[y]);
    int n = 0;
    uint64_t *deficit = c->deficit;
    /* Own data first: lane l keeps the head of its own row up to its quota. */
    for (int l = 0; l < L; l++) {
        uint64_t keep = lane_cut(V, L, l);
        for (int y = 0; y < qb && keep; y++) {
            uint64_t b = blk(c, ra[l], rb[y]), take = b < keep ? b : keep;
            if (!take) continue;
            c->pc[n++] = (piece){ ra[l], rb[y], 0, take, OWN, l };
            keep -= take;
        }
        deficit[l] = keep;
    }
    /* The rest of every row fills the lanes that are short, in lane order. */
    int l = 0;
    for (int x = 0; x < qa; x++) {
        uint64_t skip = x < L ? lane_cut(V, L, x) : 0;
        for (int y = 0; y < qb; y++) {
            uint64_t b = blk(c, ra[x], rb[y]);
            uint64_t off = skip < b ? skip : b;
            skip -= off;
            while (off < b) {
                while (!deficit[l]) l++;       /* quotas sum to V: never runs off */
                uint64_t take = b - off < deficit[l] ? b - off : deficit[l];
                int lr = ra[l];
                uint64_t tmp = 0;
                if (!dry) {
                    tmp = c->tmp_next[lr];
                    c->tmp_next[lr] += take;
                    if (emit(c, 0, ra[x], SKEWSHIM_LOC_SEND, rb[y], off,
                             lr, SKEWSHIM_LOC_TMP, -1, tmp, take, 0u))
                        return -1;
                }
                c->pc[n++] = (piece){ ra[x], rb[y], off, take, tmp, l };
                off += take;
                deficit[l] -= take;
            }
        }
    }
    /* Stable counting sort by lane: own pieces stay ahead of donated ones. */
    memset(c->lane_start, 0, (size_t)(L + 1) * sizeof(int));
    for (int k = 0; k < n; k++)
        c->lane_start[c->pc[k].lane + 1]++;
    for (int k = 0; k < L; k++)
        c->lane_start[k + 1] += c->lane_start[k];
    for (int k = 0; k < n; k++)
        c->pc2[c->lane_start[c->pc[k].lane]++] = c->pc[k];
    for (int k = L; k > 0; k--)
        c->lane_start[k] = c->lane_start[k - 1];
    c->lane_start[0] = 0;
    *npieces = n;
    return L;
}

static int flush(ctx *c, skewshim_move *run, int *have)
{
    if (!*have)
        return 0;
    *have = 0;
    return keep(c, run->src, run->dst) ? skewshim_sched_add(c->out, run) : 0;
}

/* Either end of a move is a user block or (blk -1) the rank's temp; the
 * move's fields for the two ends are separate, so they are passed apart. */
static void move_end(uint8_t *loc, int32_t *blk, uint64_t *off, uint8_t where, int32_t b,
                     uint64_t at)
{
    *loc = where;
    *blk = b;
    *off = at;
}

/* Send `len` more bytes of lane l of tile A -> B in inter-node stage s. */
static int send_segment(ctx *c, int A, int B, int l, uint64_t len, int s)
{
    const skewshim_topo *t = c->t;
    int src = skewshim_topo_rank(t, A, l), dst = skewshim_topo_rank(t, B, l);
    /* Temp-to-temp slices that continue each other become one message. */
    skewshim_move run;
    int have = 0;
    while (len) {
        const piece *p = &c->pc2[c->cur_idx[l]];
        uint64_t at = c->cur_off[l], take = p->len - at < len ? p->len - at : len;
        skewshim_move mv = {
            .src = src, .dst = dst, .stage = (uint16_t)inter_stage(c, s),
            .flags = SKEWSHIM_MOVE_INTER, .bytes = take,
        };
        if (p->tmp == OWN)
            move_end(&mv.src_loc, &mv.src_blk, &mv.src_off, SKEWSHIM_LOC_SEND, p->dst,
                     p->off + at);
        else
            move_end(&mv.src_loc, &mv.src_blk, &mv.src_off, SKEWSHIM_LOC_TMP, -1, p->tmp + at);
        if (p->dst == dst) {
            move_end(&mv.dst_loc, &mv.dst_blk, &mv.dst_off, SKEWSHIM_LOC_RECV, p->src,
                     p->off + at);
        } else {
            /* Lands at the peer, the wrong rank of the right node: forward
             * it inside B one stage later (redistribution). */
            move_end(&mv.dst_loc, &mv.dst_blk, &mv.dst_off, SKEWSHIM_LOC_TMP, -1,
                     c->tmp_next[dst]);
            c->tmp_next[dst] += take;
            if (emit(c, redist_stage(c, s), dst, SKEWSHIM_LOC_TMP, -1,
                     mv.dst_off, p->dst, SKEWSHIM_LOC_RECV, p->src,
                     p->off + at, take, 0u))
                return -1;
        }
        if (have && mv.src_loc == SKEWSHIM_LOC_TMP && run.src_loc == SKEWSHIM_LOC_TMP &&
            mv.dst_loc == SKEWSHIM_LOC_TMP && run.dst_loc == SKEWSHIM_LOC_TMP &&
            run.src_off + run.bytes == mv.src_off && run.dst_off + run.bytes == mv.dst_off) {
            run.bytes += take;
        } else {
            if (flush(c, &run, &have))
                return -1;
            run = mv;
            have = 1;
        }
        len -= take;
        c->cur_off[l] += take;
        if (c->cur_off[l] == p->len) {
            c->cur_idx[l]++;
            c->cur_off[l] = 0;
        }
    }
    return flush(c, &run, &have);
}

/* Drop stage numbers no move uses (no balancing needed, no intra traffic),
 * keeping the order, so the executor does not wait on empty stages.  used[]
 * ([nst]) says which uncompacted stages carry a move anywhere in the global
 * schedule; a slice cannot see that in its own moves, so it is given. */
static void renumber(skewshim_sched *s, unsigned char *used, int nst)
{
    int *map = (int *)malloc(((size_t)nst + 1) * sizeof *map);
    int next = 0;
    if (map) {
        for (int st = 0; st < nst; st++)
            map[st] = used[st] ? next++ : -1;
        for (size_t k = 0; k < s->nmoves; k++)
            s->moves[k].stage = (uint16_t)map[s->moves[k].stage];
        free(map);
        return;
    }
    /* No room for a map: count on the fly (same numbers, slower). */
    for (size_t k = 0; k < s->nmoves; k++) {
        int st = s->moves[k].stage, n = 0;
        for (int x = 0; x < st; x++)
            n += used[x] != 0;
        s->moves[k].stage = (uint16_t)n;
    }
}

/* What a tile away from the slice's node contributes to the facts the slice
 * still needs: how much temp it takes on each lane rank (donations) and on
 * each peer (bytes that land on the wrong rank), added to tmp_next in the
 * global order, whether it balances at all, and (without the pipeline, where
 * every redistribution has its own stage) which of its Birkhoff stages
 * redistribute.  Same piece layout as build_lanes, so the same numbers. */
static int tile_usage(ctx *c, int A, int B, const int *ent_stage, const uint64_t *ent_bytes,
                      int x0, int x1, int *any_balance, unsigned char *redist_used)
{
    const skewshim_topo *t = c->t;
    const int *ra = t->node_ranks + t->node_first[A];
    const int *rb = t->node_ranks + t->node_first[B];
    int np;
    int L = build_lanes(c, A, B, &np, 1);
    if (L < 0)
        return -1;
    for (int l = 0; l < L; l++) {
        uint64_t donated = 0, foreign = 0;
        for (int k = c->lane_start[l]; k < c->lane_start[l + 1]; k++) {
            const piece *q = &c->pc2[k];
            if (q->tmp != OWN)
                donated += q->len;
            if (q->dst != rb[l])
                foreign += q->len;
        }
        c->tmp_next[ra[l]] += donated;
        c->tmp_next[rb[l]] += foreign;
        if (donated)
            *any_balance = 1;
        if (!redist_used || !foreign)
            continue;
        /* Walk the lane's stream against its per-stage segments: a segment
         * that overlaps a foreign piece redistributes in its stage. */
        int k = c->lane_start[l];
        uint64_t pos = 0, done = 0;
        for (int x = x0; x < x1; x++) {
            uint64_t next = done + ent_bytes[x];
            uint64_t s0 = lane_cut(done, L, l), s1 = lane_cut(next, L, l);
            done = next;
            if (s0 == s1)
                continue;
            while (k < c->lane_start[l + 1] && pos + c->pc2[k].len <= s0)
                pos += c->pc2[k++].len;
            uint64_t at = pos;
            for (int j = k; j < c->lane_start[l + 1] && at < s1; at += c->pc2[j++].len)
                if (c->pc2[j].dst != rb[l]) {
                    redist_used[ent_stage[x]] = 1;
                    break;
                }
        }
    }
    return 0;
}

/* The working arrays of one planning run, sized by the largest node (Q). */
static int ctx_alloc(ctx *c, int P, int Q)
{
    size_t maxpc = 2 * (size_t)Q * Q + (size_t)Q + 1;
    c->tmp_next = calloc((size_t)P, sizeof *c->tmp_next);
    c->pc = malloc(maxpc * sizeof *c->pc);
    c->pc2 = malloc(maxpc * sizeof *c->pc2);
    c->lane_start = calloc((size_t)Q + 2, sizeof *c->lane_start);
    c->deficit = calloc((size_t)Q + 1, sizeof *c->deficit);
    c->cur_off = calloc((size_t)Q + 1, sizeof *c->cur_off);
    c->cur_idx = calloc((size_t)Q + 1, sizeof *c->cur_idx);
    return c->tmp_next && c->pc && c->pc2 && c->lane_start && c->deficit && c->cur_off &&
           c->cur_idx ? 0 : -1;
}

static void ctx_free(ctx *c)
{
    free(c->tmp_next);
    free(c->pc);
    free(c->pc2);
    free(c->lane_start);
    free(c->deficit);
    free(c->cur_off);
    free(c->cur_idx);
}

/* D[a][b]: bytes node a sends node b, the diagonal left 0 (intra-node
 * blocks do not go through the Birkhoff stages).  Row by row through node
 * blocks: one node lookup per row, not per block. */
static void node_matrix(const skewshim_matrix *m, const skewshim_topo *t, uint64_t *D)
{
    int P = m->nranks, N = t->nnodes;
    for (int i = 0; i < P; i++) {
        int a = t->node_of[i];
        const uint64_t *row = m->b + (size_t)i * P;
        uint64_t *drow = D + (size_t)a * N;
        for (int j = 0; j < P; j++)
            drow[t->node_of[j]] += row[j];
        drow[a] = 0;
    }
}

/* The Birkhoff stages laid out per tile: tile e's entries are
 * [e ? cnt[e - 1] : 0, cnt[e]), in stage order, each the bytes it moves
 * and the inter-node stage that carries them. */
typedef struct tile_lists {
    int *cnt;               /* [N*N + 1] */
    int *ent_stage;
    uint64_t *ent_bytes;
    int nreal;              /* inter-node stages, light ones merged */
} tile_lists;

/* A stage whose largest tile moves in less time than one latency costs
 * more in synchronisation than it carries (long tails of tiny stages on
 * sparse or very skewed matrices).  Such light stages are merged into one
 * last stage: still peer lanes, no longer one-to-one between nodes, which
 * is harmless at that size.  Off (0) when the model is unset. */
static double light_stage_bytes(const skewshim_params *p, int Q)
{
    if (p && p->model_latency > 0 && p->model_inter_bw > 0)
        return p->model_latency * p->model_inter_bw * (double)Q;
    return 0.0;
}

/* The share of tile e = (a, perm_k(a)) in Birkhoff stage k, taken off
 * rem[]: real data first, so the auxiliary part is what the late stages
 * leave out.  0 when the stage gives the tile nothing real to carry (the
 * diagonal, or a tile already sent). */
static int stage_share(const skewshim_bvn *bvn, uint64_t *rem, int N, int k, int a,
                       size_t *e, uint64_t *r)
{
    int b = bvn->perm[(size_t)k * N + a];
    *e = (size_t)a * N + b;
    if (a == b || !rem[*e])
        return 0;
    *r = rem[*e] < bvn->weight[k] ? rem[*e] : bvn->weight[k];
    rem[*e] -= *r;
    return 1;
}

/* First pass over the stages: ks[k] becomes the inter-node stage of
 * Birkhoff stage k (-1 when it carries only auxiliary bytes) and cnt[e + 1]
 * the number of stages tile e takes part in.  Returns the
 * number of inter-node stages; *nent the entries of all tiles. */
static int number_stages(const skewshim_bvn *bvn, const uint64_t *D, uint64_t *rem, int N,
                         double light_bytes, int *ks, int *cnt, size_t *nent)
{
    int nreal = 0, nlight = 0;
    memcpy(rem, D, (size_t)N * N * sizeof *rem);
    for (int k = 0; k < bvn->nstages; k++) {
        int real = 0;
        uint64_t biggest = 0;
        for (int a = 0; a < N; a++) {
            size_t e;
            uint64_t r;
            if (!stage_share(bvn, rem, N, k, a, &e, &r))
                continue;
            if (r > biggest) biggest = r;
            cnt[e + 1]++;
            (*nent)++;
            real = 1;
        }
        if (real && (double)biggest < light_bytes) {
            ks[k] = -2;
            nlight++;
        } else {
            ks[k] = real ? nreal++ : -1;
        }
    }
    for (int k = 0; k < bvn->nstages; k++)
        if (ks[k] == -2)
            ks[k] = nreal;
    return nlight ? nreal + 1 : nreal;
}

/* Second pass, the same walk as number_stages: fill each tile's list. */
static void fill_tile_lists(const skewshim_bvn *bvn, const uint64_t *D, uint64_t *rem, int N,
                            const int *ks, tile_lists *tl)
{
    size_t NN = (size_t)N * N;
    for (size_t e = 0; e < NN; e++)
        tl->cnt[e + 1] += tl->cnt[e];
    memcpy(rem, D, NN * sizeof *rem);
    for (int k = 0; k < bvn->nstages; k++)
        for (int a = 0; a < N; a++) {
            size_t e;
            uint64_t r;
            if (!stage_share(bvn, rem, N, k, a, &e, &r))
                continue;
            tl->ent_stage[tl->cnt[e]] = ks[k];
            tl->ent_bytes[tl->cnt[e]] = r;
            tl->cnt[e]++;
        }
}

/* Decompose the node matrix and lay its stages out per tile.  The caller
 * frees tl's arrays, also on failure. */
static int tile_stages(const uint64_t *D, int N, int Q, const skewshim_params *p,
                       const ctx *c, tile_lists *tl)
{
    size_t NN = (size_t)N * N, nent = 0;
    int rc = -1;
    skewshim_bvn bvn = { 0 };
    uint64_t *rem = calloc(NN, sizeof *rem);
    int *ks = NULL;
    tl->cnt = calloc(NN + 1, sizeof *tl->cnt);
    if (!rem || !tl->cnt || skewshim_bvn_decompose(D, N, &bvn))
        goto done;
    ks = malloc(((size_t)bvn.nstages + 1) * sizeof *ks);
    if (!ks)
        goto done;
    tl->nreal = number_stages(&bvn, D, rem, N, light_stage_bytes(p, Q), ks, tl->cnt, &nent);
    if (redist_stage(c, tl->nreal) > 65535)
        goto done;
    tl->ent_stage = malloc((nent + 1) * sizeof *tl->ent_stage);
    tl->ent_bytes = malloc((nent + 1) * sizeof *tl->ent_bytes);
    if (!tl->ent_stage || !tl->ent_bytes)
        goto done;
    fill_tile_lists(&bvn, D, rem, N, ks, tl);
    rc = 0;
done:
    skewshim_bvn_free(&bvn);
    free(rem);
    free(ks);
    return rc;
}

/* Balance tile A -> B and send it stage by stage over its lanes. */
static int send_tile(ctx *c, int A, int B, const tile_lists *tl, int x0, int x1)
{
    int np;
    int L = build_lanes(c, A, B, &np, 0);
    if (L < 0)
        return -1;
    /* From the slice's own node only its own lane sends. */
    int l0 = 0, l1 = L;
    if (c->rank >= 0 && A == c->t->node_of[c->rank]) {
        l0 = c->t->local_of[c->rank];
        l1 = l0 < L ? l0 + 1 : l0;
    }
    for (int l = 0; l < L; l++) {
        c->cur_idx[l] = c->lane_start[l];
        c->cur_off[l] = 0;
    }
    uint64_t done_bytes = 0;
    for (int x = x0; x < x1; x++) {
        uint64_t next = done_bytes + tl->ent_bytes[x];
        for (int l = l0; l < l1; l++) {
            uint64_t len = lane_cut(next, L, l) - lane_cut(done_bytes, L, l);
            if (len && send_segment(c, A, B, l, len, tl->ent_stage[x]))
                return -1;
        }
        done_bytes = next;
    }
    return 0;
}

/* Every inter-node tile in the global (a, b) order, which fixes the temp
 * offsets.  A slice sends only the tiles touching its node, on a copy of
 * the temp cursors (it emits only some lanes), and tile_usage advances the
 * real cursors for every tile alike.  saved holds 2 Q cursors. */
static int send_tiles(ctx *c, const uint64_t *D, const tile_lists *tl, uint64_t *saved,
                      int *any_balance, unsigned char *redist_used)
{
    const skewshim_topo *t = c->t;
    int N = t->nnodes, rank = c->rank;
    int R = rank >= 0 ? t->node_of[rank] : -1;
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++) {
            size_t e = (size_t)a * N + b;
            if (a == b || !D[e])
                continue;
            int x0 = e ? tl->cnt[e - 1] : 0, x1 = tl->cnt[e];
            int mine = rank < 0 || a == R || b == R;
            const int *ra = t->node_ranks + t->node_first[a];
            const int *rb = t->node_ranks + t->node_first[b];
            int qa = t->node_size[a], qb = t->node_size[b];
            if (rank >= 0 && mine) {
                for (int x = 0; x < qa; x++) saved[x] = c->tmp_next[ra[x]];
                for (int y = 0; y < qb; y++) saved[qa + y] = c->tmp_next[rb[y]];
            }
            if (mine && send_tile(c, a, b, tl, x0, x1))
                return -1;
            if (rank >= 0) {
                if (mine) {
                    for (int x = 0; x < qa; x++) c->tmp_next[ra[x]] = saved[x];
                    for (int y = 0; y < qb; y++) c->tmp_next[rb[y]] = saved[qa + y];
                }
                if (tile_usage(c, a, b, tl->ent_stage, tl->ent_bytes, x0, x1, any_balance,
                               redist_used))
                    return -1;
            }
        }
    return 0;
}

/* Intra-node blocks go directly; a slice emits only its node's, which,
 * node ranks being listed in increasing order, is the global (i, j) order
 * restricted to that node. */
static int send_intra(ctx *c)
{
    const skewshim_topo *t = c->t;
    const skewshim_matrix *m = c->m;
    int P = m->nranks;
    if (c->rank < 0) {
        for (int i = 0; i < P; i++)
            for (int j = 0; j < P; j++)
                if (t->node_of[i] == t->node_of[j] &&
                    emit(c, intra_stage(c), i, SKEWSHIM_LOC_SEND, j, 0,
                         j, SKEWSHIM_LOC_RECV, i, 0, m->b[(size_t)i * P + j], 0u))
                    return -1;
        return 0;
    }
    int R = t->node_of[c->rank];
    const int *rr = t->node_ranks + t->node_first[R];
    int q = t->node_size[R];
    for (int x = 0; x < q; x++)
        for (int y = 0; y < q; y++)
            if (emit(c, intra_stage(c), rr[x], SKEWSHIM_LOC_SEND, rr[y], 0,
                     rr[y], SKEWSHIM_LOC_RECV, rr[x], 0,
                     m->b[(size_t)rr[x] * P + rr[y]], 0u))
                return -1;
    return 0;
}

/* Whether any node has a nonzero block between two of its ranks. */
static int any_intra_traffic(const skewshim_matrix *m, const skewshim_topo *t)
{
    int P = m->nranks;
    for (int n = 0; n < t->nnodes; n++) {
        const int *nr = t->node_ranks + t->node_first[n];
        for (int x = 0; x < t->node_size[n]; x++)
            for (int y = 0; y < t->node_size[n]; y++)
                if (m->b[(size_t)nr[x] * P + nr[y]])
                    return 1;
    }
    return 0;
}

/* The stages the global schedule uses, which a slice cannot read off its
 * own moves: balancing when any tile balances, the intra stage when any
 * node talks to itself, every inter-node stage, and each redistribution
 * that some tile needs (all of them when that was not tracked). */
static void slice_used_stages(const ctx *c, unsigned char *used, int any_balance,
                              int any_intra, int nreal, const unsigned char *redist_used)
{
    used[0] = (unsigned char)any_balance;
    used[intra_stage(c)] = (unsigned char)any_intra;
    for (int s = 0; s < nreal; s++) {
        used[inter_stage(c, s)] = 1;
        /* With the pipeline a redistribution shares the next inter
         * stage, and the last one is the last stage number, so its use
         * renumbers nothing; marking it is harmless. */
        used[redist_stage(c, s)] |= redist_used ? redist_used[s] : 1;
    }
}

static uint64_t max_temp(const ctx *c)
{
    uint64_t mt = 0;
    for (int i = 0; i < c->t->nranks; i++)
        if (c->tmp_next[i] > mt)
            mt = c->tmp_next[i];
    return mt;
}

/* One planner for both: rank < 0 builds the global schedule, else only the
 * moves of `rank` (with *max_tmp the largest temp of any rank). */
static int plan_fast(const skewshim_matrix *m, const skewshim_topo *t,
                     const skewshim_params *p, int rank, skewshim_sched *out,
                     uint64_t *max_tmp, skewshim_plan_report *rep)
{
    int P = m->nranks, N = t->nnodes, Q = t->max_per_node;
    if (P != t->nranks || P < 1 || out->nranks != P || rank >= P)
        return -1;
    int rc = -1;
    ctx c = { .m = m, .t = t, .out = out, .pipeline = p ? p->fast_pipeline : 1,
              .rank = rank };
    tile_lists tl = { 0 };
    uint64_t *D = calloc((size_t)N * N, sizeof *D);
    uint64_t *saved = malloc(2 * ((size_t)Q + 1) * sizeof *saved);
    unsigned char *used = NULL, *redist_used = NULL;
    if (ctx_alloc(&c, P, Q) || !D || !saved)
        goto done;
    node_matrix(m, t, D);
    if (tile_stages(D, N, Q, p, &c, &tl))
        goto done;

    /* Global facts a slice needs to number its stages as the global plan
     * does: which stages carry anything anywhere. */
    int nst = redist_stage(&c, tl.nreal) + 1;
    used = calloc((size_t)nst + 1, 1);
    if (!used)
        goto done;
    if (rank >= 0 && !c.pipeline) {
        redist_used = calloc((size_t)tl.nreal + 1, 1);
        if (!redist_used)
            goto done;
    }
    int any_balance = 0;
    if (send_tiles(&c, D, &tl, saved, &any_balance, redist_used) || send_intra(&c))
        goto done;
    if (rank < 0) {
        for (size_t k = 0; k < out->nmoves; k++)
            used[out->moves[k].stage] = 1;
    } else {
        slice_used_stages(&c, used, any_balance, any_intra_traffic(m, t), tl.nreal,
                          redist_used);
        if (max_tmp)
            *max_tmp = max_temp(&c);
    }
    renumber(out, used, nst);
    if (skewshim_sched_finish(out))
        goto done;
    if (rep) {
        rep->regime = -1;
        rep->stages = tl.nreal;
        rep->mtm = 0.0;
    }
    rc = 0;
done:
    free(tl.cnt);
    free(tl.ent_stage);
    free(tl.ent_bytes);
    free(D);
    free(saved);
    free(used);
    free(redist_used);
    ctx_free(&c);
    return rc;
}

int skewshim_plan_fast(const skewshim_matrix *m, const skewshim_topo *t,
                       const skewshim_params *p, int nics,
                       skewshim_sched *out, skewshim_plan_report *rep)
{
    (void)nics;     /* lanes are ranks: FAST assumes one NIC per GPU */
    return plan_fast(m, t, p, -1, out, NULL, rep);
}

int skewshim_plan_fast_slice(const skewshim_matrix *m, const skewshim_topo *t,
                             const skewshim_params *p, int nics, int rank,
                             skewshim_sched *out_slice, uint64_t *max_tmp_all_ranks,
                             skewshim_plan_report *rep)
{
    (void)nics;
    if (rank < 0 || !out_slice || out_slice->rank != rank)
        return -1;
    return plan_fast(m, t, p, rank, out_slice, max_tmp_all_ranks, rep);
}
