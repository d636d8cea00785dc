#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Spread-out, FAST's baseline (paper 004 section 4.2): every block goes
 * straight to its destination; node n sends to node (n + k) mod N in stage k,
 * a one-to-one pairing of nodes per stage, and intra-node blocks travel in
 * stage 0.  Its time is the sum over diagonals of the per-diagonal maximum,
 * which is what the simulator and FAST's Fig. 9 compare against. */
#include "plan.h"

int skewshim_plan_spread(const skewshim_matrix *m, const skewshim_topo *t,
                         const skewshim_params *p, int nics,
                         skewshim_sched *out, skewshim_plan_report *rep)
{
    (void)p;
    (void)nics;
    int P = m->nranks, N = t->nnodes;
    if (P != t->nranks || N > 65535)
        return -1;
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++) {
            int a = t->node_of[i], b = t->node_of[j];
            int stage = (b - a + N) % N;
            if (skewshim_sched_move(out, stage, i, SKEWSHIM_LOC_SEND, j, 0,
                                    j, SKEWSHIM_LOC_RECV, i, 0, m->b[(size_t)i * P + j],
                                    a != b ? SKEWSHIM_MOVE_INTER : 0u))
                return -1;
        }
    if (skewshim_sched_finish(out))
        return -1;
    if (rep) {
        rep->regime = -1;
        rep->stages = out->nstages;
        rep->mtm = 0.0;
    }
    return 0;
}
