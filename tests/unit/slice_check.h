/* Shared by the SABRE and FAST unit tests: a rank's slice planner must give
 * exactly that rank's part of the global plan, or the shim (which plans only
 * its own slice) would run a different schedule from the one the simulator
 * and the log describe. */
#ifndef SKEWSHIM_SLICE_CHECK_H
#define SKEWSHIM_SLICE_CHECK_H

#include <stdint.h>
#include <string.h>

#include "plan.h"

typedef int (*slice_planner)(const skewshim_matrix *, const skewshim_topo *,
                             const skewshim_params *, int, int, skewshim_sched *,
                             uint64_t *, skewshim_plan_report *);

/* Moves compared byte for byte, in order, and the stage count. */
static inline int same_moves(const skewshim_sched *x, const skewshim_sched *y)
{
    return x->nmoves == y->nmoves && x->nstages == y->nstages &&
           (!x->nmoves || !memcmp(x->moves, y->moves, x->nmoves * sizeof *x->moves));
}

/* Every rank's slice against skewshim_sched_slice of the global plan g: same
 * moves in the same order, same stages, temp and stats, the same largest temp
 * over ranks and the same report as the global planner gave (grep).  The
 * report fields start as junk so that a slice planner that leaves one unset
 * is caught.  Returns the first rank that differs (reason in why), or -1. */
static inline int check_slices(slice_planner plan, const skewshim_matrix *m,
                               const skewshim_topo *t, const skewshim_params *p, int nics,
                               const skewshim_sched *g, const skewshim_plan_report *grep,
                               const char **why)
{
    int P = m->nranks;
    uint64_t gmax = 0;
    for (int r = 0; r < P; r++)
        if (g->tmp_bytes[r] > gmax)
            gmax = g->tmp_bytes[r];
    for (int r = 0; r < P; r++) {
        skewshim_sched want, got;
        skewshim_plan_report rep = {7, 7, 7.0};
        uint64_t mt = 12345;
        skewshim_sched_slice(g, r, &want);
        skewshim_sched_init(&got, P, r);
        int rc = plan(m, t, p, nics, r, &got, &mt, &rep);
        *why = NULL;
        if (rc)
            *why = "slice planner failed";
        else if (!same_moves(&want, &got))
            *why = "moves or stages differ";
        else if (want.tmp_bytes[0] != got.tmp_bytes[0])
            *why = "tmp_bytes differ";
        else if (memcmp(&want.stats, &got.stats, sizeof want.stats))
            *why = "stats differ";
        else if (mt != gmax)
            *why = "max temp over ranks differs";
        else if (rep.stages != grep->stages || rep.regime != grep->regime || rep.mtm != grep->mtm)
            *why = "report differs";
        skewshim_sched_free(&want);
        skewshim_sched_free(&got);
        if (*why)
            return r;
    }
    return -1;
}

#endif
