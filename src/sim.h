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

/* Before a byte moves: what a schedule that gathers the whole size matrix
 * (SABRE, FAST) is predicted to cost against the MPI library's direct
 * exchange, from the agreed figures only (rank-invariant, so every rank
 * decides alike), on the same two-tier model.  doc/policy.md
 * ("Pay-back guard") gives the formulas. */
typedef struct skewshim_predict_in {
    int P, nodes, per_node;       /* ranks, nodes, largest node */
    int m;                        /* NICs per node */
    double B1, B2;                /* bytes/s: intra per rank, inter per NIC */
    double latency;               /* seconds per hop */
    double overhead;              /* seconds of a rank per message it posts */
    uint64_t max_isend, max_irecv;/* largest per-rank inter-node totals */
    uint64_t sum_isend;           /* all inter-node bytes */
    uint64_t max_send, max_recv;  /* largest per-rank totals */
    double msg_factor;            /* messages per rank, relative to native's P - 1 */
    double plan_entry;            /* seconds a plan-cache miss costs per matrix entry */
    double plan_factor;           /* this planner's share of plan_entry */
} skewshim_predict_in;

typedef struct skewshim_predict_out {
    double t_native;              /* direct exchange */
    double t_meta;                /* the P x P matrix exchange (an allgather) */
    double t_sched;               /* the balanced schedule, without t_meta */
    double t_plan;                /* planning it when the plan is not cached */
} skewshim_predict_out;

/* Returns 0, or -1 when the model is unusable. */
int skewshim_predict(const skewshim_predict_in *in, skewshim_predict_out *out);
/* Messages per rank a matrix schedule posts, relative to the direct
 * exchange's P - 1 (SABRE 2: a relay hop for most bytes; FAST 3: an intra
 * shuffle before and after each inter-node stage). */
#define SKEWSHIM_SABRE_MSG_FACTOR 2.0
#define SKEWSHIM_FAST_MSG_FACTOR 3.0
/* Planning time per matrix entry relative to the model's plan_entry, which
 * is SABRE's: FAST's slice planner took 22 ns per entry where SABRE's took
 * 66-71 ns on the same machine (doc/lab.md, "The charge"). */
#define SKEWSHIM_SABRE_PLAN_FACTOR 1.0
#define SKEWSHIM_FAST_PLAN_FACTOR 0.3

#endif
