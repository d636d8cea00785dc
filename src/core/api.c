/* include/skewshim.h: what tools (the benchmark, tests) may steer. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "core/internal.h"
#include "skewshim.h"

static _Thread_local skewshim_last last;

int skewshim_force_algorithm(const char *name)
{
    /* Atomic: under MPI_THREAD_MULTIPLE another thread's call reads it. */
    if (!name || !*name) {
        __atomic_store_n(&skewshim_g.tool_forced, -1, __ATOMIC_RELAXED);
        return 0;
    }
    int id = skewshim_algo_from_name(name);
    if (id < 0)
        return -1;
    __atomic_store_n(&skewshim_g.tool_forced, id == SKEWSHIM_ALGO_AUTO ? -1 : id,
                     __ATOMIC_RELAXED);
    return 0;
}

static int parse_int(const char *v, long lo, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo)
        return -1;
    *out = x;
    return 0;
}

/* Bits of skewshim_g.ov_mask for the topology keys, after the parameter
 * table's bits (bit i: table entry i). */
#define OV_RANKS_PER_NODE (1u << SKEWSHIM_NPARAMS)
#define OV_NICS_PER_NODE (1u << (SKEWSHIM_NPARAMS + 1))
#define OV_TOPOLOGY (OV_RANKS_PER_NODE | OV_NICS_PER_NODE)

int skewshim_set_param(const char *name, const char *value)
{
    int i = skewshim_param_index(name);
    unsigned bit = i >= 0 ? 1u << i : 0;
    if (name && strcmp(name, "topology.ranks_per_node") == 0)
        bit = OV_RANKS_PER_NODE;
    if (name && strcmp(name, "topology.nics_per_node") == 0)
        bit = OV_NICS_PER_NODE;
    if (!bit || (i >= 0 && skewshim_param_table[i].load_only))
        return -1;
    /* Parsed into a copy, published under the lock: a call in another
     * thread copies the overrides under the same lock, never half of one. */
    skewshim_params v;
    long x = 0;
    if (value && bit == OV_RANKS_PER_NODE) {
        if (strcmp(value, "auto") != 0 && parse_int(value, 1, &x))
            return -1;
    } else if (value && bit == OV_NICS_PER_NODE) {
        if (parse_int(value, 1, &x) || x > 1 << 20)
            return -1;
    } else if (value && skewshim_param_parse(&skewshim_param_table[i], value, &v)) {
        return -1;
    }
    pthread_mutex_lock(&skewshim_g.lock);
    if (!value)
        __atomic_and_fetch(&skewshim_g.ov_mask, ~bit, __ATOMIC_RELEASE);
    else if (bit == OV_RANKS_PER_NODE)
        skewshim_g.ov_ranks_per_node = (int)x;
    else if (bit == OV_NICS_PER_NODE)
        skewshim_g.ov_nics_per_node = (int)x;
    else
        skewshim_param_copy(i, &skewshim_g.ov, &v);
    if (value)
        __atomic_or_fetch(&skewshim_g.ov_mask, bit, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&skewshim_g.lock);
    return 0;
}

void skewshim_apply_overrides(skewshim_params *p)
{
    /* The common case, no override at all, takes no lock. */
    if (!(__atomic_load_n(&skewshim_g.ov_mask, __ATOMIC_RELAXED) & ~OV_TOPOLOGY))
        return;
    pthread_mutex_lock(&skewshim_g.lock);
    skewshim_params_copy_masked(p, &skewshim_g.ov, skewshim_g.ov_mask & ~OV_TOPOLOGY);
    pthread_mutex_unlock(&skewshim_g.lock);
}

/* A topology key in force: the tool's override (read under the lock, as
 * skewshim_set_param writes it), else the policy's value. */
static int topology_value(unsigned bit, const int *ov, int policy_value)
{
    if (!(__atomic_load_n(&skewshim_g.ov_mask, __ATOMIC_RELAXED) & bit))
        return policy_value;
    pthread_mutex_lock(&skewshim_g.lock);
    int v = skewshim_g.ov_mask & bit ? *ov : policy_value;
    pthread_mutex_unlock(&skewshim_g.lock);
    return v;
}

int skewshim_ranks_per_node(void)
{
    return topology_value(OV_RANKS_PER_NODE, &skewshim_g.ov_ranks_per_node,
                          skewshim_g.policy.ranks_per_node);
}

int skewshim_nics_per_node(void)
{
    return topology_value(OV_NICS_PER_NODE, &skewshim_g.ov_nics_per_node,
                          skewshim_g.policy.nics_per_node);
}

void skewshim_set_last(const skewshim_call *c, skewshim_reason reason)
{
    last.algorithm = c->algo;
    last.fallback_reason = reason;
    last.reason = reason == SKEWSHIM_REASON_NONE ? "" : skewshim_reason_name(reason);
    last.rounds = c->stats.rounds;
    last.messages = c->stats.messages;
    last.bytes_sent = c->stats.bytes_sent;
    last.bytes_forwarded = c->stats.bytes_forwarded;
    last.tmp_bytes = c->tmp_bytes;
    last.agreed = c->ag.valid;
    last.plan_cache_hit = c->info.cache_hit;
}

int skewshim_last_call(skewshim_last *out)
{
    *out = last;
    if (!out->reason)
        out->reason = "";
    return 0;
}

const char *skewshim_algorithm_name(int id)
{
    return skewshim_algo_name((skewshim_algo_id)id);
}

int skewshim_set_disabled(int on)
{
    __atomic_store_n(&skewshim_g.tool_disabled, on != 0, __ATOMIC_RELAXED);
    return 0;
}

int skewshim_live_comms(void) { return skewshim_comm_live(); }
