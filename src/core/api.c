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
    if (!name || !*name) {
        skewshim_g.tool_forced = -1;
        return 0;
    }
    int id = skewshim_algo_from_name(name);
    if (id < 0)
        return -1;
    skewshim_g.tool_forced = id == SKEWSHIM_ALGO_AUTO ? -1 : id;
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

static int parse_double(const char *v, double lo, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !(x >= lo))
        return -1;
    *out = x;
    return 0;
}

int skewshim_set_param(const char *name, const char *value)
{
    static const struct {
        const char *name;
        unsigned bit;
    } keys[] = {
        {"scattered.block_count", SKEWSHIM_OV_SCATTERED_BLOCK_COUNT},
        {"tuna.radix", SKEWSHIM_OV_TUNA_RADIX},
        {"tuna_hier.radix", SKEWSHIM_OV_TUNA_HIER_RADIX},
        {"tuna_hier.block_count", SKEWSHIM_OV_TUNA_HIER_BLOCK_COUNT},
        {"tuna_hier.variant", SKEWSHIM_OV_TUNA_HIER_VARIANT},
        {"sabre.alpha", SKEWSHIM_OV_SABRE_ALPHA},
        {"sabre.mtm_threshold", SKEWSHIM_OV_SABRE_MTM},
        {"fast.pipeline", SKEWSHIM_OV_FAST_PIPELINE},
        {"max_temp_bytes", SKEWSHIM_OV_MAX_TEMP},
        {"topology.ranks_per_node", SKEWSHIM_OV_RANKS_PER_NODE},
    };
    unsigned bit = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (name && !strcmp(name, keys[i].name))
            bit = keys[i].bit;
    if (!bit)
        return -1;
    if (!value) {
        skewshim_g.ov_mask &= ~bit;
        return 0;
    }
    skewshim_params *o = &skewshim_g.ov;
    long x;
    double d;
    int auto_ok = !strcmp(value, "auto");
    switch (bit) {
    case SKEWSHIM_OV_SCATTERED_BLOCK_COUNT:
        if (parse_int(value, 1, &x)) return -1;
        o->scattered_block_count = (int)x;
        break;
    case SKEWSHIM_OV_TUNA_RADIX:
        if (auto_ok) x = 0; else if (parse_int(value, 2, &x)) return -1;
        o->tuna_radix = (int)x;
        break;
    case SKEWSHIM_OV_TUNA_HIER_RADIX:
        if (auto_ok) x = 0; else if (parse_int(value, 2, &x)) return -1;
        o->tuna_hier_radix = (int)x;
        break;
    case SKEWSHIM_OV_TUNA_HIER_BLOCK_COUNT:
        if (parse_int(value, 1, &x)) return -1;
        o->tuna_hier_block_count = (int)x;
        break;
    case SKEWSHIM_OV_TUNA_HIER_VARIANT:
        if (!strcmp(value, "coalesced")) o->tuna_hier_variant = SKEWSHIM_TUNA_COALESCED;
        else if (!strcmp(value, "staggered")) o->tuna_hier_variant = SKEWSHIM_TUNA_STAGGERED;
        else return -1;
        break;
    case SKEWSHIM_OV_SABRE_ALPHA:
        if (parse_double(value, 1.0, &d)) return -1;
        o->sabre_alpha = d;
        break;
    case SKEWSHIM_OV_SABRE_MTM:
        if (parse_double(value, 1.0, &d)) return -1;
        o->sabre_mtm_threshold = d;
        break;
    case SKEWSHIM_OV_FAST_PIPELINE:
        if (!strcmp(value, "true") || !strcmp(value, "1")) o->fast_pipeline = 1;
        else if (!strcmp(value, "false") || !strcmp(value, "0")) o->fast_pipeline = 0;
        else return -1;
        break;
    case SKEWSHIM_OV_MAX_TEMP:
        if (parse_int(value, 0, &x)) return -1;
        o->max_temp_bytes = (uint64_t)x;
        break;
    case SKEWSHIM_OV_RANKS_PER_NODE:
        if (auto_ok) x = 0; else if (parse_int(value, 1, &x)) return -1;
        skewshim_g.ov_ranks_per_node = (int)x;
        break;
    }
    skewshim_g.ov_mask |= bit;
    return 0;
}

void skewshim_apply_overrides(skewshim_params *p)
{
    unsigned m = skewshim_g.ov_mask;
    const skewshim_params *o = &skewshim_g.ov;
    if (m & SKEWSHIM_OV_SCATTERED_BLOCK_COUNT) p->scattered_block_count = o->scattered_block_count;
    if (m & SKEWSHIM_OV_TUNA_RADIX) p->tuna_radix = o->tuna_radix;
    if (m & SKEWSHIM_OV_TUNA_HIER_RADIX) p->tuna_hier_radix = o->tuna_hier_radix;
    if (m & SKEWSHIM_OV_TUNA_HIER_BLOCK_COUNT) p->tuna_hier_block_count = o->tuna_hier_block_count;
    if (m & SKEWSHIM_OV_TUNA_HIER_VARIANT) p->tuna_hier_variant = o->tuna_hier_variant;
    if (m & SKEWSHIM_OV_SABRE_ALPHA) p->sabre_alpha = o->sabre_alpha;
    if (m & SKEWSHIM_OV_SABRE_MTM) p->sabre_mtm_threshold = o->sabre_mtm_threshold;
    if (m & SKEWSHIM_OV_FAST_PIPELINE) p->fast_pipeline = o->fast_pipeline;
    if (m & SKEWSHIM_OV_MAX_TEMP) p->max_temp_bytes = o->max_temp_bytes;
}

int skewshim_ranks_per_node(void)
{
    if (skewshim_g.ov_mask & SKEWSHIM_OV_RANKS_PER_NODE)
        return skewshim_g.ov_ranks_per_node;
    return skewshim_g.policy.ranks_per_node;
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

int skewshim_live_comms(void) { return skewshim_comm_live(); }
