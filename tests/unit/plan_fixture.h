/* Set-up shared by the planner unit tests (SABRE, FAST, the simulator): a
 * block topology with its size matrix, FAST's parameters, and a global plan
 * into a fresh schedule. */
#ifndef SKEWSHIM_PLAN_FIXTURE_H
#define SKEWSHIM_PLAN_FIXTURE_H

#include <string.h>

#include "plan.h"

/* P ranks, per_node to a node in rank order, and a P x P matrix of zeros. */
static inline void grid_alloc(skewshim_topo *t, skewshim_matrix *m, int P, int per_node)
{
    skewshim_topo_blocks(t, P, per_node);
    skewshim_matrix_alloc(m, P);
}

static inline void grid_free(skewshim_topo *t, skewshim_matrix *m)
{
    skewshim_matrix_free(m);
    skewshim_topo_free(t);
}

/* Every parameter zero (so no latency model) but FAST's pipeline. */
static inline void fast_params(skewshim_params *p, int pipeline)
{
    memset(p, 0, sizeof *p);
    p->fast_pipeline = pipeline;
}

/* The global plan of m by plan, into s initialised here; plan's rc. */
static inline int plan_global(skewshim_global_planner plan, const skewshim_matrix *m,
                              const skewshim_topo *t, const skewshim_params *p, int nics,
                              skewshim_sched *s, skewshim_plan_report *rep)
{
    skewshim_sched_init(s, m->nranks, -1);
    return plan(m, t, p, nics, s, rep);
}

#endif
