/* skewshim's public API.  Applications need none of it: the shim works by
 * interposition alone.  Tools (the benchmark, tests) use it to switch the
 * algorithm between calls and to read what the last call did.
 */
#ifndef SKEWSHIM_H
#define SKEWSHIM_H

#ifdef __cplusplus
extern "C" {
#endif

#define SKEWSHIM_VERSION "0.1.0"

/* The library is built with hidden visibility: these, and the MPI_ entry
 * points, are all it exports. */
#if defined(__GNUC__) || defined(__clang__)
#define SKEWSHIM_API __attribute__((visibility("default")))
#else
#define SKEWSHIM_API
#endif

/* Force an algorithm by its policy name ("native", "scattered", "tuna", ...)
 * for the following calls of this process, or go back to the policy with
 * NULL or "".  Every rank of a communicator must set the same value before
 * the same call.  Returns 0, or -1 for an unknown name. */
SKEWSHIM_API int skewshim_force_algorithm(const char *name);

/* Parameters a tool may override for the following calls (the same value on
 * every rank of a communicator, set before the same call); name as in the
 * policy ("tuna.radix", "scattered.block_count", "tuna_hier.radix",
 * "tuna_hier.block_count", "tuna_hier.variant", "sabre.alpha",
 * "sabre.mtm_threshold", "fast.pipeline", "max_temp_bytes",
 * "topology.ranks_per_node", "topology.nics_per_node").  Returns 0, or -1
 * for an unknown name or a value out of range.  value NULL restores the policy's value.  A call that
 * reuses an agreed outcome (the policy's reuse_agreement) keeps that
 * outcome, fallback included, until the next call that agrees, at most
 * reuse_agreement calls later. */
SKEWSHIM_API int skewshim_set_param(const char *name, const char *value);

/* What the last MPI_Alltoallv of this process did. */
typedef struct skewshim_last {
    int algorithm;          /* id; skewshim_algorithm_name() gives the name */
    int fallback_reason;    /* 0 when the chosen algorithm ran */
    const char *reason;     /* name of the fallback reason, "" when none */
    unsigned long long rounds, messages, bytes_sent, bytes_forwarded, tmp_bytes;
    int agreed;             /* 1 when the agreement collective ran for the call */
    int plan_cache_hit;     /* sabre/fast: 1 when the plan came from the cache, 0 when
                               the call planned; -1 for schedules without a plan cache */
} skewshim_last;
SKEWSHIM_API int skewshim_last_call(skewshim_last *out);
SKEWSHIM_API const char *skewshim_algorithm_name(int id);

/* Pass-through on (1) or off (0) for the following calls of this process,
 * as SKEWSHIM_DISABLE=1 does for a whole job: for tools that measure the
 * shim's own cost in one run.  Every rank must set the same value before
 * the same call.  Returns 0. */
SKEWSHIM_API int skewshim_set_disabled(int on);

/* Live per-communicator states (leak tests). */
SKEWSHIM_API int skewshim_live_comms(void);

#ifdef __cplusplus
}
#endif
#endif
