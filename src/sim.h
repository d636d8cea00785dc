/* Two-tier simulator for global schedules (doc/simulator.md has the model
 * in full).  Pure C: it only reads a schedule and the topology.
 *
 * Resources, each with a bandwidth per direction:
 *   intra: every rank has an out port and an in port at B1;
 *   inter: every node has m NICs (rails) at B2 each, m*B2 per node and
 *          direction; rank with local id l uses rail l mod m, and when the
 *          node has fewer ranks than NICs a rank drives every rail
 *          congruent to its id (so a node always owns all m*B2).
 * A stage's moves split into its intra phase and its inter phase.  Each tier
 * runs its phases in stage order, one at a time; within a phase every
 * resource starts its share when the phase may begin (its tier is free, and
 * with `barrier` the previous stage has ended) and the temp regions its own
 * moves read have been written (the writing moves completed), then runs for
 * bytes on it / its bandwidth.  A move completes when both its resources
 * have finished, plus latency; the phase ends with its slowest resource,
 * plus latency.  The two tiers run concurrently, so redistribution overlaps
 * the next inter-node stage when the data allow.
 * Local copies (src == dst) cost nothing.
 */
#ifndef SKEWSHIM_SIM_H
#define SKEWSHIM_SIM_H

#include <stdint.h>

#include "schedule/sched.h"
#include "topology/topo.h"

typedef struct skewshim_sim_model {
    double B1;        /* intra-node bytes/s per rank and direction */
    double B2;        /* inter-node bytes/s per NIC and direction */
    int m;            /* NICs per node */
    double latency;   /* seconds added to every non-empty phase */
    int barrier;      /* 1: a stage starts only after the previous one ended */
} skewshim_sim_model;

typedef struct skewshim_sim_detail {
    double time;              /* completion, seconds */
    double inter_busy;        /* sum of inter phase durations */
    double intra_busy;        /* sum of intra phase durations */
    int inter_phases, intra_phases;
    uint64_t inter_bytes, intra_bytes, copy_bytes;
    uint64_t messages;        /* moves with src != dst */
} skewshim_sim_detail;

/* Completion time of a global schedule (rank < 0) in seconds, or a negative
 * value when the schedule or model is unusable.  opt may be NULL. */
double skewshim_sim_time(const skewshim_sched *global, const skewshim_topo *t,
                         const skewshim_sim_model *mo, skewshim_sim_detail *opt);

#endif
