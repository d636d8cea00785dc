/* Open MPI's pairwise exchange: in round k every rank sends to rank+k and
 * receives from rank-k, one partner each way per round, P-1 rounds. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "plan.h"

int skewshim_plan_pairwise(const skewshim_local *l, skewshim_sched *out)
{
    int P = l->nranks, me = l->rank;
    if (skewshim_sched_move(out, 0, me, SKEWSHIM_LOC_SEND, me, 0, me, SKEWSHIM_LOC_RECV, me, 0,
                            l->sbytes[me], 0))
        return -1;
    for (int k = 1; k < P; k++) {
        int to = (me + k) % P, from = (me - k + P) % P;
        if (skewshim_sched_move(out, k, from, SKEWSHIM_LOC_SEND, me, 0, me, SKEWSHIM_LOC_RECV, from,
                                0, l->rbytes[from], 0) ||
            skewshim_sched_move(out, k, me, SKEWSHIM_LOC_SEND, to, 0, to, SKEWSHIM_LOC_RECV, me, 0,
                                l->sbytes[to], 0))
            return -1;
    }
    return skewshim_sched_finish(out);
}
