#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
/* Algorithm names as the policy, the log and the tool API spell them, and the
 * one place that formats a policy error, so every caller prints the same
 * "file:line:col: key: msg" that editors and grep understand. */
#include "policy.h"

#include <stdio.h>
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

const char *skewshim_algo_name(skewshim_algo_id a)
{
    /* The log prints whatever id it is given; never hand it NULL. */
    if ((int)a < 0 || a >= SKEWSHIM_ALGO_COUNT)
        return "unknown";
    return algo_names[a];
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

void skewshim_error_format(const skewshim_error *e, char *buf, size_t len)
{
    if (!buf || len == 0)
        return;
    const char *file = e->file[0] ? e->file : "<policy>";
    /* Line 0 means no position (an unreadable file); an empty key means the
     * YAML itself is malformed, before any key was known.  Leave those parts
     * out rather than print ":0:0:" or an empty field. */
    char where[64] = "";
    if (e->line > 0 && e->column > 0)
        snprintf(where, sizeof where, ":%d:%d", e->line, e->column);
    else if (e->line > 0)
        snprintf(where, sizeof where, ":%d", e->line);
    if (e->key[0])
        snprintf(buf, len, "%s%s: %s: %s", file, where, e->key, e->msg);
    else
        snprintf(buf, len, "%s%s: %s", file, where, e->msg);
}
