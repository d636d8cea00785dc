/* SABRE: Algorithm 1 on hand-worked cases and on random ones (its greedy
 * rules replayed piece by piece), then the planner on many random matrices
 * in both regimes: the replay verifier, the per-NIC-group balance of the
 * inter-node stage, determinism, and the regime choice. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "plan_fixture.h"
#include "slice_check.h"
#include "sabre.h"
#include "tap.h"
#include "xorshift.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void) { return xorshift64(&rng_state); }

static uint64_t rnd_below(uint64_t n) { return n ? rnd() % n : 0; }

/* ------------------------------------------------------------------ */
/* Algorithm 1                                                         */
/* ------------------------------------------------------------------ */

typedef struct bal_result {
    skewshim_sabre_piece pc[64];
    size_t n;
    uint64_t load[8];
    int rc;
} bal_result;

static void run_balance(const uint64_t *b, const int *pref, int n, int nl, double alpha,
                        bal_result *r)
{
    int order[32];
    memset(r, 0, sizeof *r);
    r->rc = skewshim_sabre_balance(b, pref, n, nl, alpha, order, r->pc, &r->n, r->load);
}

static int piece_is(const skewshim_sabre_piece *p, int item, int lane, uint64_t off, uint64_t bytes)
{
    return p->item == item && p->lane == lane && p->off == off && p->bytes == bytes;
}

static void test_lmax(void)
{
    TAP_OK(skewshim_sabre_lmax(100, 4, 1.05) == 26, "L_max(100, 4, 1.05) = 25 + 1");
    TAP_OK(skewshim_sabre_lmax(10, 3, 1.0) == 4, "L_max rounds the mean up");
    TAP_OK(skewshim_sabre_lmax(0, 4, 1.05) == 0, "L_max of nothing is 0");
    TAP_OK(skewshim_sabre_lmax(10, 2, 0.5) == 5, "alpha below 1 is treated as 1");
    TAP_OK(skewshim_sabre_lmax(1000, 0, 1.0) == 1000, "no lanes is treated as one");
}

static void test_balance_hand(void)
{
    bal_result r;

    /* One big block and three small ones, alpha 1: L_max = ceil(130/4) = 33.
     * The big one fills lanes 0, 1, 2 and leaves 1 byte for lane 3, which
     * then takes the three small ones as their preferred lanes are full. */
    uint64_t b1[4] = {100, 10, 10, 10};
    int p1[4] = {0, 1, 2, 3};
    run_balance(b1, p1, 4, 4, 1.0, &r);
    TAP_OK(r.rc == 0 && r.n == 7, "hot block: 7 pieces (%zu)", r.n);
    TAP_OK(r.n == 7 && piece_is(&r.pc[0], 0, 0, 0, 33) && piece_is(&r.pc[1], 0, 1, 33, 33) &&
               piece_is(&r.pc[2], 0, 2, 66, 33) && piece_is(&r.pc[3], 0, 3, 99, 1) &&
               piece_is(&r.pc[4], 1, 3, 0, 10) && piece_is(&r.pc[5], 2, 3, 0, 10) &&
               piece_is(&r.pc[6], 3, 3, 0, 10),
           "hot block: split to lanes 0,1,2,3 in L_max chunks, remainder requeued first");
    TAP_OK(r.load[0] == 33 && r.load[1] == 33 && r.load[2] == 33 && r.load[3] == 31,
           "hot block: loads 33 33 33 31");

    /* Equal blocks go to their preferred lanes, nothing split. */
    uint64_t b2[4] = {10, 10, 10, 10};
    int p2[4] = {3, 2, 1, 0};
    run_balance(b2, p2, 4, 4, 1.05, &r);
    int ok = r.rc == 0 && r.n == 4;
    for (size_t k = 0; ok && k < r.n; k++)
        ok = r.pc[k].lane == p2[r.pc[k].item] && r.pc[k].bytes == 10;
    TAP_OK(ok, "balanced blocks stay on their preferred lanes");
    TAP_OK(r.n == 4 && r.pc[0].item == 0 && r.pc[3].item == 3, "equal sizes keep index order");

    /* The tolerance lets the preferred lane run over the mean: alpha 1.1
     * gives L_max 11, so 11 bytes stay on lane 0 unsplit ... */
    uint64_t b3[2] = {9, 11};
    int p3[2] = {0, 0};
    run_balance(b3, p3, 2, 2, 1.1, &r);
    TAP_OK(r.rc == 0 && r.n == 2 && piece_is(&r.pc[0], 1, 0, 0, 11) && piece_is(&r.pc[1], 0, 1, 0, 9),
           "alpha 1.1: larger block first, on its preferred lane; the other falls back");
    /* ... while alpha 1 (L_max 10) splits it. */
    run_balance(b3, p3, 2, 2, 1.0, &r);
    TAP_OK(r.rc == 0 && r.n == 3 && piece_is(&r.pc[0], 1, 0, 0, 10) &&
               piece_is(&r.pc[1], 1, 1, 10, 1) && piece_is(&r.pc[2], 0, 1, 0, 9),
           "alpha 1: split at L_max, remainder to the least loaded lane");
    TAP_OK(r.load[0] == 10 && r.load[1] == 10, "alpha 1: exact balance");

    /* No preference: least loaded lane, lowest index on ties. */
    uint64_t b4[3] = {5, 5, 5};
    int p4[3] = {-1, -1, -1};
    run_balance(b4, p4, 3, 3, 1.0, &r);
    TAP_OK(r.rc == 0 && r.n == 3 && r.pc[0].lane == 0 && r.pc[1].lane == 1 && r.pc[2].lane == 2,
           "no preference: round over the least loaded lanes");

    /* Zero blocks make no pieces; all zero makes none at all. */
    uint64_t b5[4] = {0, 7, 0, 7};
    int p5[4] = {0, 1, 0, 0};
    run_balance(b5, p5, 4, 2, 1.05, &r);
    TAP_OK(r.rc == 0 && r.n == 2 && piece_is(&r.pc[0], 1, 1, 0, 7) && piece_is(&r.pc[1], 3, 0, 0, 7),
           "zero blocks are skipped");
    uint64_t b6[2] = {0, 0};
    run_balance(b6, p5, 2, 2, 1.05, &r);
    TAP_OK(r.rc == 0 && r.n == 0 && r.load[0] == 0 && r.load[1] == 0, "all zero: no pieces");

    /* One lane takes everything whole. */
    uint64_t b7[3] = {3, 9, 4};
    int p7[3] = {0, 0, 0};
    run_balance(b7, p7, 3, 1, 1.05, &r);
    TAP_OK(r.rc == 0 && r.n == 3 && r.load[0] == 16, "one lane: no split");

    int bad[1] = {2};
    run_balance(b7, bad, 1, 2, 1.05, &r);
    TAP_OK(r.rc == -1, "preferred lane out of range is refused");
    run_balance(b7, p7, 1, 0, 1.05, &r);
    TAP_OK(r.rc == -1, "zero lanes is refused");
}

/* Replays the greedy rules over the pieces in assignment order: a piece
 * off its preferred lane needs the preferred lane too full for it, and then
 * the least loaded lane; a split fills its lane exactly to L_max. */
static int check_greedy(const uint64_t *b, const int *pref, int n, int nl, double alpha,
                        const bal_result *r, char *why)
{
    uint64_t total = 0, load[8] = {0}, done[32] = {0};
    for (int i = 0; i < n; i++)
        total += b[i];
    uint64_t lmax = skewshim_sabre_lmax(total, nl, alpha);
    if (r->n > (size_t)n + (size_t)nl)
        return strcpy(why, "too many pieces"), 0;
    for (size_t k = 0; k < r->n; k++) {
        const skewshim_sabre_piece *p = &r->pc[k];
        uint64_t left = b[p->item] - done[p->item];
        if (p->off != done[p->item] || p->bytes == 0 || p->bytes > left)
            return strcpy(why, "pieces do not tile their block in order"), 0;
        int pr = pref[p->item];
        int fits_pref = pr >= 0 && load[pr] + left <= lmax;
        if (fits_pref && (p->lane != pr || p->bytes != left))
            return strcpy(why, "preferred lane had room but was not used whole"), 0;
        if (!fits_pref) {
            for (int l = 0; l < nl; l++)
                if (load[l] < load[p->lane] || (load[l] == load[p->lane] && l < p->lane))
                    return strcpy(why, "fallback lane is not the least loaded"), 0;
            if (p->bytes < left && load[p->lane] + p->bytes != lmax)
                return strcpy(why, "split does not fill its lane to L_max"), 0;
        }
        load[p->lane] += p->bytes;
        done[p->item] += p->bytes;
        if (load[p->lane] > lmax)
            return strcpy(why, "lane over L_max"), 0;
    }
    for (int i = 0; i < n; i++)
        if (done[i] != b[i])
            return strcpy(why, "bytes lost or duplicated"), 0;
    for (int l = 0; l < nl; l++)
        if (load[l] != r->load[l])
            return strcpy(why, "reported loads differ"), 0;
    return 1;
}

static void test_balance_random(void)
{
    int bad = 0, trials = 2000;
    char why[128] = "";
    for (int t = 0; t < trials && !bad; t++) {
        int n = 1 + (int)rnd_below(16);
        int nl = 1 + (int)rnd_below(8);
        double alpha = 1.0 + (double)rnd_below(200) / 1000.0;
        uint64_t b[32];
        int pref[32];
        int shape = (int)rnd_below(4);
        for (int i = 0; i < n; i++) {
            if (shape == 0)
                b[i] = rnd_below(1000);
            else if (shape == 1)
                b[i] = rnd_below(4) ? rnd_below(10) : 1000000 + rnd_below(1000);
            else if (shape == 2)
                b[i] = rnd_below(2) ? 0 : 1 + rnd_below(3);
            else
                b[i] = 1ull << rnd_below(30);
            pref[i] = rnd_below(5) ? (int)rnd_below((uint64_t)nl) : -1;
        }
        bal_result r;
        run_balance(b, pref, n, nl, alpha, &r);
        if (r.rc != 0) {
            strcpy(why, "returned an error");
            bad = 1;
        } else if (!check_greedy(b, pref, n, nl, alpha, &r, why)) {
            bad = 1;
        }
        if (bad)
            TAP_DIAG("trial %d: n=%d nl=%d alpha=%.3f: %s", t, n, nl, alpha, why);
    }
    TAP_OK(!bad, "Algorithm 1 on %d random subproblems: loads <= L_max, bytes kept, greedy rules hold",
           trials);
}

/* ------------------------------------------------------------------ */
/* The planner                                                         */
/* ------------------------------------------------------------------ */

enum { SHAPE_ZERO, SHAPE_UNIFORM, SHAPE_POWER, SHAPE_HOT_RANK, SHAPE_HOT_NODE, SHAPE_SPARSE,
       SHAPE_COUNT };
static const char *shape_name[SHAPE_COUNT] = {"zero", "uniform", "power-law", "hot rank",
                                              "hot node", "sparse"};

static void fill(skewshim_matrix *m, const skewshim_topo *t, int shape)
{
    int P = m->nranks;
    int hot = (int)rnd_below((uint64_t)P);
    int hot_node = t->node_of[hot];
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++) {
            uint64_t v = 0;
            switch (shape) {
            case SHAPE_ZERO: v = 0; break;
            case SHAPE_UNIFORM: v = rnd_below(200); break;
            case SHAPE_POWER: v = rnd_below(3) ? (1ull << rnd_below(12)) : 0; break;
            case SHAPE_HOT_RANK:
                v = (i == hot || j == hot) ? 1000 + rnd_below(5000) : rnd_below(20);
                break;
            case SHAPE_HOT_NODE:
                v = (t->node_of[i] == hot_node || t->node_of[j] == hot_node) ? 500 + rnd_below(900)
                                                                             : rnd_below(10);
                break;
            default: v = rnd_below(8) ? 0 : 1 + rnd_below(3000); break;
            }
            m->b[(size_t)i * P + j] = v;
        }
}

static void params_for(skewshim_params *p, double thr, double alpha)
{
    memset(p, 0, sizeof *p);
    p->sabre_alpha = alpha;
    p->sabre_mtm_threshold = thr;
}

static int same_plan(const skewshim_sched *a, const skewshim_sched *b)
{
    if (a->nmoves != b->nmoves || a->nstages != b->nstages)
        return 0;
    for (size_t k = 0; k < a->nmoves; k++) {
        const skewshim_move *x = &a->moves[k], *y = &b->moves[k];
        if (x->src != y->src || x->dst != y->dst || x->src_loc != y->src_loc ||
            x->dst_loc != y->dst_loc || x->stage != y->stage || x->flags != y->flags ||
            x->src_blk != y->src_blk || x->dst_blk != y->dst_blk || x->src_off != y->src_off ||
            x->dst_off != y->dst_off || x->bytes != y->bytes)
            return 0;
    }
    for (int r = 0; r < a->nranks; r++)
        if (a->tmp_bytes[r] != b->tmp_bytes[r])
            return 0;
    return 1;
}

/* Highly skewed: the inter-node bytes each NIC group of node u sends to node
 * w must stay within L_max of that pair.  A group is the sending rank's
 * local id modulo the lanes of the pair; stage 1 holds all inter moves. */
static int check_lane_balance(const skewshim_matrix *m, const skewshim_topo *t, int nics,
                              double alpha, const skewshim_sched *s, char *why)
{
    int N = t->nnodes, P = m->nranks;
    if (nics > t->max_per_node)
        nics = t->max_per_node;
    if (nics < 1)
        nics = 1;
    uint64_t *carried = calloc((size_t)N * N * t->max_per_node + 1, sizeof *carried);
    uint64_t *v = calloc((size_t)N * N + 1, sizeof *v);
    int ok = carried && v;
    for (int i = 0; ok && i < P; i++)
        for (int j = 0; j < P; j++)
            v[(size_t)t->node_of[i] * N + t->node_of[j]] += m->b[(size_t)i * P + j];
    for (size_t k = 0; ok && k < s->nmoves; k++) {
        const skewshim_move *x = &s->moves[k];
        int u = t->node_of[x->src], w = t->node_of[x->dst];
        if (u == w) {
            if (x->flags & SKEWSHIM_MOVE_INTER) {
                strcpy(why, "INTER flag on an intra-node move");
                ok = 0;
            }
            continue;
        }
        if (!(x->flags & SKEWSHIM_MOVE_INTER)) {
            strcpy(why, "inter-node move without INTER flag");
            ok = 0;
        }
        int nl = nics;
        if (nl > t->node_size[u]) nl = t->node_size[u];
        if (nl > t->node_size[w]) nl = t->node_size[w];
        if (t->local_of[x->src] % nl != t->local_of[x->dst] % nl) {
            strcpy(why, "inter-node move leaves its NIC group");
            ok = 0;
        }
        carried[((size_t)u * N + w) * t->max_per_node + t->local_of[x->src] % nl] += x->bytes;
    }
    for (int u = 0; ok && u < N; u++)
        for (int w = 0; ok && w < N; w++) {
            if (u == w)
                continue;
            int nl = nics;
            if (nl > t->node_size[u]) nl = t->node_size[u];
            if (nl > t->node_size[w]) nl = t->node_size[w];
            uint64_t lmax = skewshim_sabre_lmax(v[(size_t)u * N + w], nl, alpha);
            for (int l = 0; l < nl; l++)
                if (carried[((size_t)u * N + w) * t->max_per_node + l] > lmax) {
                    strcpy(why, "NIC group over L_max");
                    ok = 0;
                }
        }
    free(carried);
    free(v);
    return ok;
}

static void test_planner_random(void)
{
    static const int Ps[] = {1, 2, 3, 5, 8, 16, 33};
    static const int Qs[] = {1, 2, 3, 4, 8};
    static const int nics_list[] = {1, 2, 16};
    int runs = 0, failures = 0, nondet = 0, unbalanced = 0, regime_wrong = 0, slices_wrong = 0;
    char err[256];
    for (size_t pi = 0; pi < sizeof Ps / sizeof *Ps; pi++)
        for (size_t qi = 0; qi < sizeof Qs / sizeof *Qs; qi++)
            for (int shape = 0; shape < SHAPE_COUNT; shape++)
                for (size_t ni = 0; ni < sizeof nics_list / sizeof *nics_list; ni++)
                    for (int force = 0; force < 2; force++) {
                        int P = Ps[pi], q = Qs[qi], nics = nics_list[ni];
                        skewshim_topo t;
                        /* every third case interleaves nodes (round-robin
                         * keys) so no code may assume contiguous nodes */
                        if ((runs % 3) == 2) {
                            int *key = malloc(sizeof(int) * (size_t)P);
                            int nn = (P + q - 1) / q;
                            for (int r = 0; r < P; r++)
                                key[r] = r % nn;
                            skewshim_topo_from_keys(&t, P, key);
                            free(key);
                        } else {
                            skewshim_topo_blocks(&t, P, q);
                        }
                        skewshim_matrix m;
                        skewshim_matrix_alloc(&m, P);
                        fill(&m, &t, shape);
                        skewshim_params prm;
                        double alpha = (runs % 2) ? 1.05 : 1.0;
                        params_for(&prm, force ? 1.0 : 1e30, alpha);
                        skewshim_sched a, b;
                        skewshim_plan_report rep = {-1, -1, 0};
                        int rc = plan_global(skewshim_plan_sabre, &m, &t, &prm, nics, &a, &rep);
                        int rc2 = plan_global(skewshim_plan_sabre, &m, &t, &prm, nics, &b, NULL);
                        runs++;
                        const char *what = NULL;
                        if (rc || rc2)
                            what = "planner failed";
                        else if (skewshim_sched_verify(&a, m.b, err, sizeof err))
                            what = err;
                        if (what) {
                            if (failures++ < 5)
                                TAP_DIAG("P=%d q=%d nics=%d %s %s: %s", P, q, nics,
                                         shape_name[shape], force ? "high" : "low", what);
                        } else {
                            if (!same_plan(&a, &b))
                                nondet++;
                            const char *sw = NULL;
                            int bad = check_slices(skewshim_plan_sabre_slice, &m, &t, &prm, nics, &a, &rep, &sw);
                            if (bad >= 0 && slices_wrong++ < 5)
                                TAP_DIAG("P=%d q=%d nics=%d %s %s: rank %d: %s", P, q, nics,
                                         shape_name[shape], force ? "high" : "low", bad, sw);
                            if (rep.regime != force || rep.stages != a.nstages)
                                regime_wrong++;
                            if (force && !check_lane_balance(&m, &t, nics, alpha, &a, err)) {
                                if (unbalanced++ < 5)
                                    TAP_DIAG("P=%d q=%d nics=%d %s: %s", P, q, nics,
                                             shape_name[shape], err);
                            }
                        }
                        skewshim_sched_free(&a);
                        skewshim_sched_free(&b);
                        grid_free(&t, &m);
                    }
    TAP_OK(failures == 0, "%d random plans verify (%d failed)", runs, failures);
    TAP_OK(nondet == 0, "two plans from one matrix are identical move for move (%d differ)", nondet);
    TAP_OK(slices_wrong == 0,
           "every rank's slice plan equals the slice of the global plan, max temp too (%d differ)",
           slices_wrong);
    TAP_OK(regime_wrong == 0, "forced regime and stage count reported (%d wrong)", regime_wrong);
    TAP_OK(unbalanced == 0, "highly skewed: every NIC group within L_max per node pair (%d not)",
           unbalanced);
}

/* The hand-worked planner cases: eight ranks on two nodes of four, SABRE at
 * MTM threshold 2.2 and alpha 1.05. */
typedef struct hand_case {
    skewshim_topo t;
    skewshim_matrix m;
    skewshim_params prm;
    skewshim_sched s;
    skewshim_plan_report rep;
} hand_case;

/* Sets the case up with `count` blocks of `bytes` each from block `first` of
 * the row-major matrix (the rest zero) and plans it over four NICs per node.
 * One check: the plan replays the matrix exactly. */
static void hand_case_plan(hand_case *c, int first, int count, uint64_t bytes, const char *what)
{
    grid_alloc(&c->t, &c->m, 8, 4);
    params_for(&c->prm, 2.2, 1.05);
    for (int k = first; k < first + count; k++)
        c->m.b[k] = bytes;
    char err[256] = "";
    int rc = plan_global(skewshim_plan_sabre, &c->m, &c->t, &c->prm, 4, &c->s, &c->rep);
    TAP_OK(rc == 0 && skewshim_sched_verify(&c->s, c->m.b, err, sizeof err) == 0,
           "%s plan verifies %s", what, err);
}

/* One hot GPU (paper figure 4): rank 0 sends 1000 bytes to each rank of the
 * other node; nothing else moves.  Algorithm 1 keeps every block on the
 * proxy with its destination's local id, so rank 0 gathers nothing to
 * itself for lane 0, forwards 1000 to each of ranks 1..3, and each lane
 * carries exactly 1000 across, straight into the receive block. */
static void test_hot_gpu(void)
{
    hand_case c;
    hand_case_plan(&c, 4, 4, 1000, "hot GPU");   /* row 0, columns 4..7 */
    char err[256] = "";
    TAP_OK(c.rep.regime == 1 && c.rep.mtm > 2.2, "hot GPU: MTM %.2f picks the highly skewed regime",
           c.rep.mtm);
    int gathers = 0, inter = 0, lanes_ok = 1, redistribute = 0;
    for (size_t k = 0; k < c.s.nmoves; k++) {
        const skewshim_move *x = &c.s.moves[k];
        if (x->flags & SKEWSHIM_MOVE_INTER) {
            inter++;
            lanes_ok &= x->bytes == 1000 && x->dst == x->src + 4 && x->dst_loc == SKEWSHIM_LOC_RECV;
        } else if (x->dst_loc == SKEWSHIM_LOC_TMP) {
            gathers++;
            lanes_ok &= x->src == 0 && x->bytes == 1000;
        } else {
            redistribute++;
        }
    }
    TAP_OK(gathers == 3 && inter == 4 && redistribute == 0 && lanes_ok,
           "hot GPU: 3 gathers, 4 lane transfers of 1000 into the receive blocks, no redistribution");
    TAP_OK(c.s.nstages == 2 && c.s.tmp_bytes[1] == 1000 && c.s.tmp_bytes[0] == 0,
           "hot GPU: two stages, proxies hold 1000 bytes of temp");
    skewshim_sched_free(&c.s);

    /* One NIC per node: nothing to balance, every block goes direct. */
    int rc = plan_global(skewshim_plan_sabre, &c.m, &c.t, &c.prm, 1, &c.s, &c.rep);
    int direct = rc == 0 && c.s.nmoves == 4;
    for (size_t k = 0; direct && k < c.s.nmoves; k++)
        direct = c.s.moves[k].src == 0 && c.s.moves[k].src_loc == SKEWSHIM_LOC_SEND &&
                 c.s.moves[k].dst_loc == SKEWSHIM_LOC_RECV;
    TAP_OK(direct && skewshim_sched_verify(&c.s, c.m.b, err, sizeof err) == 0,
           "one NIC per node: the hot GPU sends everything itself");
    skewshim_sched_free(&c.s);
    grid_free(&c.t, &c.m);
}

/* A uniform matrix is lightly skewed; the 2D plan forwards exactly the
 * inter-node blocks whose destination has another local id. */
static void test_uniform_light(void)
{
    hand_case c;
    hand_case_plan(&c, 0, 64, 100, "uniform");   /* every block */
    char err[256] = "";
    TAP_OK(c.rep.regime == 0 && c.rep.mtm == 1.0 && c.rep.stages == 2,
           "uniform: MTM 1, lightly skewed, 2 stages");
    /* 8 ranks x 4 remote destinations, 3 of them via a proxy */
    TAP_OK(c.s.stats.bytes_forwarded == 8 * 3 * 100, "uniform: forwarded %llu bytes, expected 2400",
           (unsigned long long)c.s.stats.bytes_forwarded);
    int inter_pairs_ok = 1;
    for (size_t k = 0; k < c.s.nmoves; k++)
        if (c.s.moves[k].flags & SKEWSHIM_MOVE_INTER)
            inter_pairs_ok &= c.t.local_of[c.s.moves[k].src] == c.t.local_of[c.s.moves[k].dst];
    TAP_OK(inter_pairs_ok, "uniform: every inter-node move stays within its local-id group");
    /* the intra-node exchange overlaps the proxies' forwarding (phase 2) */
    int local_in_phase2 = 1;
    for (size_t k = 0; k < c.s.nmoves; k++)
        if (c.s.moves[k].src_loc == SKEWSHIM_LOC_SEND &&
            c.s.moves[k].dst_loc == SKEWSHIM_LOC_RECV &&
            c.t.node_of[c.s.moves[k].src] == c.t.node_of[c.s.moves[k].dst])
            local_in_phase2 &= c.s.moves[k].stage == 1;
    TAP_OK(local_in_phase2, "uniform: intra-node blocks run in stage 1 with the forwarding");
    skewshim_sched_free(&c.s);

    /* P = 1: one local copy */
    skewshim_topo t1;
    skewshim_matrix m1;
    grid_alloc(&t1, &m1, 1, 4);
    m1.b[0] = 42;
    int rc = plan_global(skewshim_plan_sabre, &m1, &t1, NULL, 2, &c.s, &c.rep);
    TAP_OK(rc == 0 && c.s.nmoves == 1 && c.s.moves[0].src == 0 && c.s.moves[0].dst == 0 &&
               c.s.nstages == 1 && skewshim_sched_verify(&c.s, m1.b, err, sizeof err) == 0,
           "P = 1 with default parameters: one self copy, one stage");
    skewshim_sched_free(&c.s);
    grid_free(&t1, &m1);

    /* mismatched sizes are refused, not planned */
    skewshim_sched_init(&c.s, 4, -1);
    TAP_OK(skewshim_plan_sabre(&c.m, &c.t, &c.prm, 1, &c.s, NULL) == -1,
           "matrix/schedule size mismatch refused");
    skewshim_sched_free(&c.s);
    grid_free(&c.t, &c.m);
}

int main(void)
{
    test_lmax();
    test_balance_hand();
    test_balance_random();
    test_hot_gpu();
    test_uniform_light();
    test_planner_random();
    return TAP_DONE();
}
