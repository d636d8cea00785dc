#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* FAST and spread-out planners, property tests: every schedule replays
 * correctly (skewshim_sched_verify), FAST is deterministic, its inter-node
 * moves only join peers (same local id) and each of its inter-node stages
 * pairs nodes one-to-one, for many shapes of matrix and topology. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "plan_fixture.h"
#include "slice_check.h"
#include "tap.h"
#include "xorshift.h"

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void) { return xorshift64(&rng_state); }

enum { K_ZERO, K_RANDOM, K_SPARSE, K_EMPTY_NODE, K_HOT_GPU, K_HOT_NODE, K_COUNT };
static const char *kind_name[K_COUNT] = {
    "zeros", "random", "sparse", "empty node", "hot gpu", "hot node"
};

static void fill(skewshim_matrix *m, const skewshim_topo *t, int kind)
{
    int P = m->nranks;
    int hot = (int)(rnd() % (uint64_t)P), hot_node = t->node_of[hot];
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++) {
            uint64_t v = rnd() % 200;
            switch (kind) {
            case K_ZERO: v = 0; break;
            case K_SPARSE: v = rnd() % 4 == 0 ? v : 0; break;
            case K_EMPTY_NODE:
                if (t->node_of[i] == hot_node || t->node_of[j] == hot_node) v = 0;
                break;
            case K_HOT_GPU:
                if (i == hot || j == hot) v = 1000 + rnd() % 5000;
                else v %= 3;
                break;
            case K_HOT_NODE:
                if (t->node_of[i] == hot_node) v = 500 + rnd() % 3000;
                break;
            default: break;
            }
            m->b[(size_t)i * P + j] = v;
        }
}

/* FAST's structural promises; returns a reason or NULL. */
static const char *check_fast_shape(const skewshim_sched *s, const skewshim_topo *t)
{
    int N = t->nnodes;
    int *to = malloc(sizeof(int) * (size_t)N * 2);
    int *from = to + N;
    const char *why = NULL;
    size_t a = 0;
    while (a < s->nmoves && !why) {
        size_t b = a;
        for (int n = 0; n < N; n++) to[n] = from[n] = -1;
        while (b < s->nmoves && s->moves[b].stage == s->moves[a].stage) {
            const skewshim_move *mv = &s->moves[b++];
            int na = t->node_of[mv->src], nb = t->node_of[mv->dst];
            int inter = na != nb;
            if (inter != !!(mv->flags & SKEWSHIM_MOVE_INTER)) { why = "INTER flag wrong"; break; }
            if (!inter) continue;
            if (t->local_of[mv->src] != t->local_of[mv->dst]) { why = "inter move not to the peer"; break; }
            if ((to[na] >= 0 && to[na] != nb) || (from[nb] >= 0 && from[nb] != na)) {
                why = "inter stage not one-to-one between nodes";
                break;
            }
            to[na] = nb;
            from[nb] = na;
        }
        a = b;
    }
    free(to);
    return why;
}

/* One check: the planner returned rc 0 and s replays m exactly.  The
 * description is the case (printf-style) followed by "verifies". */
static void ok_verifies(int rc, const skewshim_sched *s, const skewshim_matrix *m,
                        const char *fmt, ...)
{
    char what[160], err[256] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int ok = rc == 0 && skewshim_sched_verify(s, m->b, err, sizeof err) == 0;
    TAP_OK(ok, "%s verifies%s%s", what, ok ? "" : ": ", ok ? "" : err);
}

/* One check on check_slices' answer: bad < 0, else the first differing rank
 * and the reason sw.  The description is the case (printf-style). */
static void ok_slices(int bad, const char *sw, const char *fmt, ...)
{
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    TAP_OK(bad < 0, "%s%s%s", what, sw ? ": " : "", sw ? sw : "");
    if (bad >= 0)
        TAP_DIAG("first differing rank: %d", bad);
}

static void run(int P, const int *keys, int q, int kind)
{
    skewshim_topo t;
    if (keys)
        skewshim_topo_from_keys(&t, P, keys);
    else
        skewshim_topo_blocks(&t, P, q);
    skewshim_matrix m;
    skewshim_matrix_alloc(&m, P);
    fill(&m, &t, kind);
    char name[96];
    snprintf(name, sizeof name, "P=%d %s%d/node %s", P, keys ? "uneven " : "", q,
             kind_name[kind]);
    for (int pipe = 0; pipe <= 1; pipe++) {
        skewshim_params p;
        fast_params(&p, pipe);
        skewshim_sched s, s2;
        skewshim_plan_report rep = { 0, 0, 0 };
        int rc = plan_global(skewshim_plan_fast, &m, &t, &p, q, &s, &rep);
        ok_verifies(rc, &s, &m, "fast %s pipeline=%d", name, pipe);
        const char *why = rc ? "planner failed" : check_fast_shape(&s, &t);
        TAP_OK(!why, "fast %s pipeline=%d: peers only, one-to-one stages%s%s", name, pipe,
               why ? ": " : "", why ? why : "");
        int N = t.nnodes;
        TAP_OK(rep.stages >= 0 && rep.stages <= N * N - 2 * N + 2 && rep.regime == -1,
               "fast %s: %d Birkhoff stages within N^2-2N+2", name, rep.stages);
        rc = plan_global(skewshim_plan_fast, &m, &t, &p, q, &s2, NULL);
        TAP_OK(rc == 0 && same_moves(&s, &s2), "fast %s pipeline=%d deterministic", name, pipe);
        const char *sw = NULL;
        int bad = check_slices(skewshim_plan_fast_slice, &m, &t, &p, q, &s, &rep, &sw);
        ok_slices(bad, sw, "fast %s pipeline=%d: every rank's slice plan equals its slice", name,
                  pipe);
        skewshim_sched_free(&s);
        skewshim_sched_free(&s2);
    }
    /* With a latency model, light stages merge into one: still correct. */
    {
        skewshim_params p;
        fast_params(&p, 1);
        p.model_latency = 1e-3;
        p.model_inter_bw = 1e5;     /* 100 bytes per latency per lane */
        skewshim_sched s;
        skewshim_plan_report rep = { 0, 0, 0 };
        int rc = plan_global(skewshim_plan_fast, &m, &t, &p, q, &s, &rep);
        ok_verifies(rc, &s, &m, "fast %s light stages merged (%d stages)", name, rep.stages);
        for (int pipe = 0; pipe <= 1; pipe++) {
            p.fast_pipeline = pipe;
            skewshim_sched g;
            skewshim_plan_report grep = { 0, 0, 0 };
            const char *sw = "global planner failed";
            int bad = plan_global(skewshim_plan_fast, &m, &t, &p, q, &g, &grep)
                          ? 0
                          : check_slices(skewshim_plan_fast_slice, &m, &t, &p, q, &g, &grep, &sw);
            ok_slices(bad, sw, "fast %s merged light stages pipeline=%d: slices equal", name, pipe);
            skewshim_sched_free(&g);
        }
        skewshim_sched_free(&s);
    }
    skewshim_sched s;
    int rc = plan_global(skewshim_plan_spread, &m, &t, NULL, q, &s, NULL);
    ok_verifies(rc, &s, &m, "spread %s", name);
    skewshim_sched_free(&s);
    grid_free(&t, &m);
}

int main(void)
{
    static const int sizes[] = { 1, 2, 3, 8, 16, 33 };
    static const int per_node[] = { 1, 2, 3, 4, 8 };
    for (size_t a = 0; a < sizeof sizes / sizeof *sizes; a++)
        for (size_t b = 0; b < sizeof per_node / sizeof *per_node; b++)
            for (int k = 0; k < K_COUNT; k++)
                run(sizes[a], NULL, per_node[b], k);
    /* Nodes of sizes 3, 1, 4, 2 with interleaved ranks. */
    static const int keys[10] = { 7, 2, 7, 5, 5, 9, 5, 7, 5, 9 };
    for (int k = 0; k < K_COUNT; k++)
        run(10, keys, 4, k);

    /* A hand-checked case: 2 nodes of 2, rank 0 sends 8 to each of node 1
     * and rank 1 sends nothing.  Balancing hands 8 of rank 0's bytes to
     * rank 1, so each lane carries 8 bytes over the peer links. */
    {
        skewshim_topo t;
        skewshim_matrix m;
        grid_alloc(&t, &m, 4, 2);
        m.b[0 * 4 + 2] = 8;
        m.b[0 * 4 + 3] = 8;
        skewshim_params p;
        fast_params(&p, 1);
        skewshim_sched s;
        plan_global(skewshim_plan_fast, &m, &t, &p, 2, &s, NULL);
        uint64_t lane[4] = { 0 }, balance = 0;
        for (size_t x = 0; x < s.nmoves; x++) {
            if (s.moves[x].flags & SKEWSHIM_MOVE_INTER)
                lane[s.moves[x].src] += s.moves[x].bytes;
            else if (s.moves[x].src == 0 && s.moves[x].dst == 1)
                balance += s.moves[x].bytes;
        }
        TAP_OK(lane[0] == 8 && lane[1] == 8 && balance == 8,
               "hot sender split evenly over both lanes (%llu, %llu; balanced %llu)",
               (unsigned long long)lane[0], (unsigned long long)lane[1],
               (unsigned long long)balance);
        skewshim_sched_free(&s);
        grid_free(&t, &m);
    }
    return TAP_DONE();
}
