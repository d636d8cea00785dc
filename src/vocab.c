#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
/* The name tables of the shim's vocabulary (src/vocab.h): the names the
 * policy, the log and the tool API print and parse. */
#include "vocab.h"

#include <string.h>

/* Indexed by skewshim_algo_id; must follow the enum's order. */
static const char *const algo_names[SKEWSHIM_ALGO_COUNT] = {
    [SKEWSHIM_ALGO_NATIVE] = "native",
    [SKEWSHIM_ALGO_SCATTERED] = "scattered",
    [SKEWSHIM_ALGO_PAIRWISE] = "pairwise",
    [SKEWSHIM_ALGO_BRUCK2] = "bruck2",
    [SKEWSHIM_ALGO_PADDED_BRUCK] = "padded_bruck",
    [SKEWSHIM_ALGO_TUNA] = "tuna",
    [SKEWSHIM_ALGO_TUNA_HIER] = "tuna_hier",
    [SKEWSHIM_ALGO_SABRE] = "sabre",
    [SKEWSHIM_ALGO_FAST] = "fast",
    [SKEWSHIM_ALGO_NCCL_FANOUT] = "nccl_fanout",
    [SKEWSHIM_ALGO_AUTO] = "auto",
};

static const char *const reason_names[SKEWSHIM_REASON_COUNT] = {
    [SKEWSHIM_REASON_NONE] = "none",
    [SKEWSHIM_REASON_DISABLED] = "disabled",
    [SKEWSHIM_REASON_NOT_INITIALIZED] = "not_initialized",
    [SKEWSHIM_REASON_IN_PLACE] = "in_place",
    [SKEWSHIM_REASON_NONCONTIG] = "noncontiguous_type",
    [SKEWSHIM_REASON_INTERCOMM] = "intercommunicator",
    [SKEWSHIM_REASON_TYPE_SIZE] = "type_size",
    [SKEWSHIM_REASON_INVALID_ARGS] = "invalid_args",
    [SKEWSHIM_REASON_MIXED_BUFFERS] = "mixed_buffers",
    [SKEWSHIM_REASON_NO_DEVICE_PATH] = "no_device_path",
    [SKEWSHIM_REASON_NO_HOST_PATH] = "no_host_path",
    [SKEWSHIM_REASON_MEMORY_CAP] = "memory_cap",
    [SKEWSHIM_REASON_NOT_IMPLEMENTED] = "not_implemented",
    [SKEWSHIM_REASON_NCCL_UNAVAILABLE] = "nccl_unavailable",
    [SKEWSHIM_REASON_LARGE_COUNT] = "large_count",
    [SKEWSHIM_REASON_INTERNAL] = "internal_error",
    [SKEWSHIM_REASON_NOT_PAID_BACK] = "not_paid_back",
};

static const char *const why_names[] = {
    [SKEWSHIM_WHY_RULE] = "rule",
    [SKEWSHIM_WHY_DEFAULT] = "default",
    [SKEWSHIM_WHY_FORCED] = "forced",
    [SKEWSHIM_WHY_FALLBACK] = "fallback",
};

static const char *const decided_names[SKEWSHIM_DECIDED_COUNT] = {
    [SKEWSHIM_DECIDED_NONE] = "none",
    [SKEWSHIM_DECIDED_FORCED] = "forced",
    [SKEWSHIM_DECIDED_FIXED] = "fixed",
    [SKEWSHIM_DECIDED_AGREED] = "agreed",
    [SKEWSHIM_DECIDED_REUSED] = "reused",
};

static const char *const buffers_names[] = {
    [SKEWSHIM_BUF_ANY] = "any",
    [SKEWSHIM_BUF_HOST] = "host",
    [SKEWSHIM_BUF_DEVICE] = "device",
};

/* The log prints whatever id it is given: never hand it NULL. */
static const char *lookup(const char *const *names, int n, int i, const char *none)
{
    return i >= 0 && i < n && names[i] ? names[i] : none;
}

#define NAMES(t) ((int)(sizeof(t) / sizeof(t)[0]))

const char *skewshim_algo_name(skewshim_algo_id a)
{
    return lookup(algo_names, NAMES(algo_names), (int)a, "unknown");
}

int skewshim_algo_from_name(const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < SKEWSHIM_ALGO_COUNT; i++)
        if (strcmp(name, algo_names[i]) == 0)
            return i;
    return -1;
}

const char *skewshim_reason_name(skewshim_reason r)
{
    return lookup(reason_names, NAMES(reason_names), (int)r, "unknown");
}

const char *skewshim_why_name(int why)
{
    return lookup(why_names, NAMES(why_names), why, "unknown");
}

const char *skewshim_decided_name(int d)
{
    return lookup(decided_names, NAMES(decided_names), d, "unknown");
}

const char *skewshim_buffers_name(int b)
{
    return lookup(buffers_names, NAMES(buffers_names), b, "any");
}
