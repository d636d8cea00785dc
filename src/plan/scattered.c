/* MPICH's scattered alltoallv: batches of block_count exchanges, rotated so
 * that in batch b rank r receives from r+k and sends to r-k for the k of
 * that batch.  Sender and receiver of a pair compute the same k, hence the
 * same stage.  A local planner: this rank's slice from its own sizes. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "plan.h"

int skewshim_plan_scattered(const skewshim_local *l, int block_count, skewshim_sched *out)
{
    int P = l->nranks, me = l->rank;
    int bs = block_count >= 1 && block_count < P ? block_count : P;
    for (int k = 0; k < P; k++) {
        int stage = k / (bs > 0 ? bs : 1);
        int from = (me + k) % P;
        int to = (me - k + P) % P;
        if (k == 0) {
            if (skewshim_sched_move(out, stage, me, SKEWSHIM_LOC_SEND, me, 0, me,
                                    SKEWSHIM_LOC_RECV, me, 0, l->sbytes[me], 0))
                return -1;
            continue;
        }
        if (skewshim_sched_move(out, stage, from, SKEWSHIM_LOC_SEND, me, 0, me, SKEWSHIM_LOC_RECV,
                                from, 0, l->rbytes[from], 0) ||
            skewshim_sched_move(out, stage, me, SKEWSHIM_LOC_SEND, to, 0, to, SKEWSHIM_LOC_RECV, me,
                                0, l->sbytes[to], 0))
            return -1;
    }
    return skewshim_sched_finish(out);
}
