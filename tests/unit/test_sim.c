#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Simulator worked examples, computed by hand (doc/simulator.md):
 *  1. FAST Fig. 9 in spirit: a 4-server matrix where spread-out's time (sum
 *     of per-diagonal maxima, 16) exceeds the largest row/column sum (14),
 *     which FAST's Birkhoff stages reach exactly.
 *  2. FAST Fig. 10 in spirit: a GPU matrix whose per-GPU bound (8) drops to
 *     the balanced server bound (6) once intra-server balancing runs.
 *  3. Overlap: a dependent redistribution overlaps the next inter stage
 *     unless stages are barriers. */
#include <math.h>

#include "plan.h"
#include "plan_fixture.h"
#include "sim.h"
#include "tap.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9 * (1.0 + fabs(b)))

static double plan_and_sim(skewshim_global_planner plan, const skewshim_matrix *m,
                           const skewshim_topo *t, const skewshim_sim_model *mo,
                           int pipeline, int *stages)
{
    skewshim_params p;
    fast_params(&p, pipeline);
    skewshim_sched s;
    skewshim_plan_report rep = { 0, 0, 0 };
    double r = -1.0;
    if (plan_global(plan, m, t, &p, mo->m, &s, &rep) == 0)
        r = skewshim_sim_time(&s, t, mo, NULL);
    if (stages)
        *stages = rep.stages;
    skewshim_sched_free(&s);
    return r;
}

static void fig9(void)
{
    static const uint64_t d[16] = {
        0, 1, 1, 4,
        5, 0, 1, 5,
        1, 1, 0, 5,
        6, 1, 1, 0,
    };
    skewshim_topo t;
    skewshim_matrix m;
    grid_alloc(&t, &m, 4, 1);
    for (int k = 0; k < 16; k++)
        m.b[k] = d[k] * 1000;
    skewshim_sim_model mo = { .B1 = 9000.0, .B2 = 1000.0, .m = 1, .latency = 0.0 };
    double lb = skewshim_lower_bound(&m, &t, 1, mo.B2);
    TAP_OK(NEAR(lb, 14.0), "fig9: T_LB = largest column sum 14 (got %g)", lb);
    /* diagonals: max(1,1,5,6) + max(1,5,1,1) + max(4,5,1,1) = 6 + 5 + 5 */
    double sp = plan_and_sim(skewshim_plan_spread, &m, &t, &mo, 1, NULL);
    TAP_OK(NEAR(sp, 16.0), "fig9: spread-out takes 16 (got %g)", sp);
    int st = 0;
    double fa = plan_and_sim(skewshim_plan_fast, &m, &t, &mo, 1, &st);
    TAP_OK(NEAR(fa, 14.0), "fig9: FAST's Birkhoff stages take exactly 14 (got %g)", fa);
    /* Every real stage pays one latency on the single-tier path. */
    mo.latency = 0.5;
    double sp2 = plan_and_sim(skewshim_plan_spread, &m, &t, &mo, 1, NULL);
    double fa2 = plan_and_sim(skewshim_plan_fast, &m, &t, &mo, 1, NULL);
    TAP_OK(NEAR(sp2, 16.0 + 3 * 0.5), "fig9: spread-out with latency 16 + 3 * 0.5 (got %g)", sp2);
    TAP_OK(NEAR(fa2, 14.0 + st * 0.5), "fig9: FAST with latency 14 + %d * 0.5 (got %g)", st, fa2);
    grid_free(&t, &m);
}

static void fig10(void)
{
    /* Ranks 0, 1 on server A; 2, 3 on server B; one NIC per GPU.  B's GPU 2
     * sends 8 (6 to rank 0, 2 to rank 1), GPU 3 sends 4 (2 and 2). */
    skewshim_topo t;
    skewshim_matrix m;
    grid_alloc(&t, &m, 4, 2);
    m.b[2 * 4 + 0] = 6;
    m.b[2 * 4 + 1] = 2;
    m.b[3 * 4 + 0] = 2;
    m.b[3 * 4 + 1] = 2;
    skewshim_sim_model mo = { .B1 = 9.0, .B2 = 1.0, .m = 2, .latency = 0.0 };
    double lb = skewshim_lower_bound(&m, &t, 2, mo.B2);
    TAP_OK(NEAR(lb, 6.0), "fig10: server bound 12 / (2 NICs) = 6 (got %g)", lb);
    /* Spread-out: GPU 2's NIC carries 8 and rank 0's NIC receives 8. */
    double sp = plan_and_sim(skewshim_plan_spread, &m, &t, &mo, 1, NULL);
    TAP_OK(NEAR(sp, 8.0), "fig10: spread-out bound by the hot GPU, 8 (got %g)", sp);
    /* FAST: balancing 2 bytes 2 -> 3 (2/9), one inter stage of 6 per lane
     * (6), then rank 1 forwards rank 0's 2 bytes (2/9). */
    double want = 2.0 / 9.0 + 6.0 + 2.0 / 9.0;
    double fa = plan_and_sim(skewshim_plan_fast, &m, &t, &mo, 1, NULL);
    TAP_OK(NEAR(fa, want), "fig10: FAST 6 + 4/9 after balancing (got %.12g)", fa);
    double fa0 = plan_and_sim(skewshim_plan_fast, &m, &t, &mo, 0, NULL);
    TAP_OK(NEAR(fa0, want), "fig10: same without pipeline (got %.12g)", fa0);
    grid_free(&t, &m);
}

static void overlap(void)
{
    skewshim_topo t;
    skewshim_topo_blocks(&t, 4, 2);
    skewshim_sched s;
    skewshim_sched_init(&s, 4, -1);
    /* stage 0: 9 bytes 0 -> temp of 2 (inter, 9 s);
     * stage 1: 2 forwards them to 3 (intra, 1 s, depends on stage 0);
     * stage 2: 9 more bytes 0 -> 2 (inter, 9 s, independent). */
    skewshim_sched_move(&s, 0, 0, SKEWSHIM_LOC_SEND, 3, 0, 2, SKEWSHIM_LOC_TMP, -1, 0, 9,
                        SKEWSHIM_MOVE_INTER);
    skewshim_sched_move(&s, 1, 2, SKEWSHIM_LOC_TMP, -1, 0, 3, SKEWSHIM_LOC_RECV, 0, 0, 9, 0);
    skewshim_sched_move(&s, 2, 0, SKEWSHIM_LOC_SEND, 2, 0, 2, SKEWSHIM_LOC_RECV, 0, 0, 9,
                        SKEWSHIM_MOVE_INTER);
    skewshim_sched_finish(&s);
    skewshim_sim_model mo = { .B1 = 9.0, .B2 = 1.0, .m = 2, .latency = 0.0 };
    skewshim_sim_detail d;
    double x = skewshim_sim_time(&s, &t, &mo, &d);
    TAP_OK(NEAR(x, 18.0), "overlap: redistribution hidden under the next inter stage, 18 (got %g)", x);
    TAP_OK(d.inter_phases == 2 && d.intra_phases == 1 && d.inter_bytes == 18 &&
           d.intra_bytes == 9 && d.messages == 3, "overlap: detail counts");
    mo.barrier = 1;
    x = skewshim_sim_time(&s, &t, &mo, NULL);
    TAP_OK(NEAR(x, 19.0), "overlap: with stage barriers 9 + 1 + 9 = 19 (got %g)", x);
    mo.barrier = 0;
    mo.latency = 0.25;
    x = skewshim_sim_time(&s, &t, &mo, NULL);
    TAP_OK(NEAR(x, 18.5), "overlap: one latency per inter phase on the critical path, 18.5 (got %g)", x);
    mo.m = 0;
    TAP_OK(skewshim_sim_time(&s, &t, &mo, NULL) < 0, "no NICs: model rejected");
    skewshim_sched_free(&s);
    skewshim_topo_free(&t);
}

/* The pay-back guard's prediction: at P = 256 (32 nodes of 8, one NIC per
 * node) a mildly skewed 1 MB-max exchange cannot pay the P x P exchange
 * back, while a strongly skewed 64 MiB one at P = 16 can; the exchange is
 * priced with the log2 P rounds of the shim's Bruck allgather (8 here, not
 * a ring's 255). */
static void predict(void)
{
    skewshim_predict_in in = {
        .P = 256, .nodes = 32, .per_node = 8, .m = 1, .B1 = 150e9, .B2 = 25e9,
        .latency = 5e-6, .overhead = 2e-7, .max_isend = 1000000, .max_irecv = 900000,
        .sum_isend = 256ull * 300000, .max_send = 1100000, .max_recv = 1000000,
        .msg_factor = SKEWSHIM_SABRE_MSG_FACTOR,
        .plan_entry = 7e-8, .plan_factor = SKEWSHIM_SABRE_PLAN_FACTOR,
    };
    skewshim_predict_out o;
    TAP_OK(skewshim_predict(&in, &o) == 0, "predict: P = 256 model usable");
    TAP_OK(fabs(o.t_plan - 65536 * 7e-8) < 1e-12, "predict: an uncached SABRE plan at P = 256 "
           "is P^2 entries' worth (%.0f us)", o.t_plan * 1e6);
    skewshim_predict_in f = in;
    skewshim_predict_out fo;
    f.plan_factor = SKEWSHIM_FAST_PLAN_FACTOR;
    TAP_OK(skewshim_predict(&f, &fo) == 0 && fo.t_plan < o.t_plan && fo.t_plan > 0,
           "predict: FAST plans cheaper than SABRE (%.0f us)", fo.t_plan * 1e6);
    f.plan_entry = -1;
    TAP_OK(skewshim_predict(&f, &fo) == -1, "predict: a negative plan cost, no model");
    /* 8 latencies, P - 1 overheads and 8 x 248 rows of 2080 B over the NIC */
    double want = 8 * 5e-6 + 255 * 2e-7 + 8.0 * 248 * 2080 / 25e9 + 7.0 * 2080 / 150e9;
    TAP_OK(fabs(o.t_meta - want) < 1e-9, "predict: P = 256 matrix exchange in log2 P rounds "
           "(%.1f us, want %.1f)", o.t_meta * 1e6, want * 1e6);
    TAP_OK(o.t_sched < o.t_native, "predict: balancing alone would gain (%.0f < %.0f us)",
           o.t_sched * 1e6, o.t_native * 1e6);
    TAP_OK(o.t_sched + o.t_meta >= o.t_native, "predict: but not the matrix exchange back");
    skewshim_predict_in big = in;
    big.P = 16;
    big.nodes = 2;
    big.max_isend = big.max_irecv = 400ull << 20;
    big.sum_isend = 16ull * (40ull << 20);
    big.max_send = big.max_recv = 500ull << 20;
    TAP_OK(skewshim_predict(&big, &o) == 0 && o.t_sched + o.t_meta < o.t_native,
           "predict: P = 16, 400 MiB on a hot rank pays back (%.0f + %.0f < %.0f us)",
           o.t_sched * 1e6, o.t_meta * 1e6, o.t_native * 1e6);
    TAP_OK(o.t_meta < 255 * 5e-6 / 4, "predict: P = 16 exchange in log2 rounds");
    big.m = 0;
    TAP_OK(skewshim_predict(&big, &o) == -1, "predict: no NIC, no model");
}

int main(void)
{
    predict();
    fig9();
    fig10();
    overlap();
    return TAP_DONE();
}
