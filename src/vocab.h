/* The shim's vocabulary: the ids every layer speaks of (algorithms, why a
 * call went to MPI, why an algorithm was chosen, buffer kinds, log levels)
 * and one name table each (src/vocab.c).  A leaf: it includes nothing of
 * the shim, so the policy, the planners, the executors and the log name
 * things alike without reaching into the core.
 */
#ifndef SKEWSHIM_VOCAB_H
#define SKEWSHIM_VOCAB_H

#include <stdint.h>

/* Names are the policy's names (DESIGN.md section 3). */
typedef enum skewshim_algo_id {
    SKEWSHIM_ALGO_NATIVE = 0,
    SKEWSHIM_ALGO_SCATTERED,
    SKEWSHIM_ALGO_PAIRWISE,
    SKEWSHIM_ALGO_BRUCK2,
    SKEWSHIM_ALGO_PADDED_BRUCK,
    SKEWSHIM_ALGO_TUNA,
    SKEWSHIM_ALGO_TUNA_HIER,
    SKEWSHIM_ALGO_SABRE,
    SKEWSHIM_ALGO_FAST,
    SKEWSHIM_ALGO_NCCL_FANOUT,
    SKEWSHIM_ALGO_AUTO,
    SKEWSHIM_ALGO_COUNT
} skewshim_algo_id;

/* Requests the linear exchange keeps in flight: MPICH's throttle and
 * scattered's default block_count, so the width of its stages, which the
 * line for a NIC per rank counts (src/topology/topo.c). */
#define SKEWSHIM_LINEAR_FLIGHT 32
/* Requests tuna_hier keeps in flight in its inter-node phase with which
 * the lab drew its line for a NIC per rank, as many as the linear exchange
 * keeps.  A rule that runs it with fewer is held to the line drawn with
 * SKEWSHIM_HIER_FEW_FLIGHT (the policy's default) as well: there a
 * phase-2 message costs more. */
#define SKEWSHIM_HIER_LINE_FLIGHT SKEWSHIM_LINEAR_FLIGHT
#define SKEWSHIM_HIER_FEW_FLIGHT 8

/* "unknown" for an id out of range, never NULL. */
const char *skewshim_algo_name(skewshim_algo_id a);
/* Returns the id, or -1 for an unknown name. */
int skewshim_algo_from_name(const char *name);

/* Why a call went to PMPI_Alltoallv.  Counted per reason. */
typedef enum skewshim_reason {
    SKEWSHIM_REASON_NONE = 0,
    SKEWSHIM_REASON_DISABLED,       /* SKEWSHIM_DISABLE=1 or a bad policy */
    SKEWSHIM_REASON_NOT_INITIALIZED,
    SKEWSHIM_REASON_IN_PLACE,
    SKEWSHIM_REASON_NONCONTIG,
    SKEWSHIM_REASON_INTERCOMM,
    SKEWSHIM_REASON_TYPE_SIZE,      /* send and receive type sizes differ */
    SKEWSHIM_REASON_INVALID_ARGS,   /* left to MPI to report */
    SKEWSHIM_REASON_MIXED_BUFFERS,
    SKEWSHIM_REASON_NO_DEVICE_PATH,
    SKEWSHIM_REASON_NO_HOST_PATH,   /* device-only algorithm on host buffers */
    SKEWSHIM_REASON_MEMORY_CAP,
    SKEWSHIM_REASON_NOT_IMPLEMENTED,
    SKEWSHIM_REASON_NCCL_UNAVAILABLE,
    SKEWSHIM_REASON_LARGE_COUNT,    /* MPI_Alltoallv_c: passed through */
    SKEWSHIM_REASON_INTERNAL,       /* allocation failure and the like */
    SKEWSHIM_REASON_NOT_PAID_BACK,  /* a rule's matrix schedule cannot pay its metadata back */
    SKEWSHIM_REASON_COUNT
} skewshim_reason;

const char *skewshim_reason_name(skewshim_reason r);

/* Why the algorithm was chosen. */
enum { SKEWSHIM_WHY_RULE = 0, SKEWSHIM_WHY_DEFAULT, SKEWSHIM_WHY_FORCED, SKEWSHIM_WHY_FALLBACK };
const char *skewshim_why_name(int why);

/* How a call's choice was made: the user's word (forced), once for the
 * communicator from rank-invariant facts (fixed), by the agreement's
 * collective (agreed: the allreduce, or the matrix exchange), or from an
 * earlier agreed outcome (reused).  What the agreement cost a job is its
 * agreed calls.  NONE: a call passed to MPI before any choice. */
enum {
    SKEWSHIM_DECIDED_NONE = 0,
    SKEWSHIM_DECIDED_FORCED,
    SKEWSHIM_DECIDED_FIXED,
    SKEWSHIM_DECIDED_AGREED,
    SKEWSHIM_DECIDED_REUSED,
    SKEWSHIM_DECIDED_COUNT
};
const char *skewshim_decided_name(int d);

/* Where a call's buffers live (ANY: a rule that does not care). */
enum { SKEWSHIM_BUF_ANY = 0, SKEWSHIM_BUF_HOST = 1, SKEWSHIM_BUF_DEVICE = 2 };
const char *skewshim_buffers_name(int b);

enum { SKEWSHIM_TUNA_COALESCED = 0, SKEWSHIM_TUNA_STAGGERED = 1 };

enum {
    SKEWSHIM_LOG_OFF = 0,
    SKEWSHIM_LOG_SUMMARY = 1,
    SKEWSHIM_LOG_CALLS = 2,
    SKEWSHIM_LOG_MATRIX = 3
};

/* The job's counters: what the core counts per call, and what the log's
 * summary reduces and writes at finalize.  Fixed-size slots so the summary's
 * one reduction has the same layout on every rank and in every build. */
enum { SKEWSHIM_COUNTER_SLOTS = 32 };
_Static_assert((int)SKEWSHIM_ALGO_COUNT <= (int)SKEWSHIM_COUNTER_SLOTS, "an algorithm without a counter");
_Static_assert((int)SKEWSHIM_REASON_COUNT <= (int)SKEWSHIM_COUNTER_SLOTS, "a reason without a counter");
typedef struct skewshim_totals {
    uint64_t calls[SKEWSHIM_COUNTER_SLOTS];     /* by algorithm */
    double time[SKEWSHIM_COUNTER_SLOTS];        /* by algorithm, this rank's seconds */
    uint64_t bytes[SKEWSHIM_COUNTER_SLOTS];
    uint64_t fallbacks[SKEWSHIM_COUNTER_SLOTS]; /* by reason */
    /* communicators on which rules choosing an algorithm were passed over
     * (it cannot run, or does not pay off, on their nodes), by algorithm */
    uint64_t passed_over[SKEWSHIM_COUNTER_SLOTS];
    /* agreed calls on which such rules were passed over because their
     * blocks leave it too little to save (skewshim_algos_unpaid) */
    uint64_t passed_over_calls[SKEWSHIM_COUNTER_SLOTS];
    uint64_t large_count_calls;                 /* MPI_Alltoallv_c: passed through */
    uint64_t decided[SKEWSHIM_DECIDED_COUNT];   /* calls by how their choice was made (slot 0 unused) */
    uint64_t plan_cache_hits, plan_cache_lookups;
} skewshim_totals;

#endif
