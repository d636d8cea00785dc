#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* The sections of a policy file and their keys: the parameter sections
 * (top level and inside rules), the rules, log, topology and the top level
 * itself.  Values are checked by scalars.c, mappings walked by load.c. */
#include "load_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- parameter sections ---------------------------------------------------- */

/* A section of the parameter table (scattered, tuna, tuna_hier, sabre, fast,
 * model), at top level or inside a rule: its keys and value types come
 * from the table.  Each value goes into p and sets its bit (the table
 * index) in *bits. */
static int parse_params(ctx *c, yaml_node_t *n, const char *path, const char *section,
                        skewshim_params *p, unsigned *bits)
{
    const char *keys[SKEWSHIM_NPARAMS + 1];
    int entry[SKEWSHIM_NPARAMS], nk = 0;
    for (int i = 0; i < SKEWSHIM_NPARAMS; i++) {
        const char *sec = skewshim_param_table[i].section;
        if (sec && strcmp(sec, section) == 0) {
            entry[nk] = i;
            keys[nk++] = skewshim_param_table[i].key;
        }
    }
    keys[nk] = NULL;
    yaml_node_t *k, *v;
    int idx, rc;
    char sub[PATHLEN];
    FOR_PAIRS(c, n, path, keys, rc) {
        if (skewshim_pol_need_param(c, v, sub, &skewshim_param_table[entry[idx]], p))
            return -1;
        *bits |= 1u << entry[idx];
    }
    return rc;
}

/* max_temp_bytes, the one parameter outside any section. */
static int parse_top_param(ctx *c, yaml_node_t *v, const char *path, const char *name,
                           skewshim_params *p, unsigned *bits)
{
    int i = skewshim_param_index(name);
    if (skewshim_pol_need_param(c, v, path, &skewshim_param_table[i], p))
        return -1;
    *bits |= 1u << i;
    return 0;
}

/* Algorithms without parameters: the section may exist (so a policy can
 * list every algorithm) but must stay empty. */
static int parse_empty(ctx *c, yaml_node_t *n, const char *path)
{
    static const char *const keys[] = {NULL};
    yaml_node_t *k, *v;
    int idx, rc;
    char sub[PATHLEN];
    FOR_PAIRS(c, n, path, keys, rc) {
        (void)k, (void)v;
    }
    return rc;
}

/* ---- rules --------------------------------------------------------------- */

/* A boolean matcher: the range [b, b] over a fact that is 0 or 1. */
static int parse_flag(ctx *c, yaml_node_t *v, const char *path, skewshim_range *out)
{
    int b;
    if (skewshim_pol_need_bool(c, v, path, &b))
        return -1;
    out->set = 1;
    out->lo = out->hi = b;
    return 0;
}

static int parse_rule(ctx *c, yaml_node_t *n, const char *path, skewshim_rule *rule)
{
    static const char *const keys[] = {
        "comm_size", "max_block_bytes", "avg_block_bytes", "mtm", "send_mtm", "recv_mtm",
        "repeats", "buffers", "use",
        "scattered", "tuna", "tuna_hier", "sabre", "fast", "max_temp_bytes", "nodes",
        "avg_nonempty_bytes", "nic_per_rank", NULL};
    static const char *const bufs[] = {"any", "host", "device"};
    yaml_node_t *k, *v;
    int idx, rc, r = 0, have_use = 0;
    char sub[PATHLEN];
    rule->line = (int)n->start_mark.line + 1;
    if (n->type != YAML_MAPPING_NODE)
        return FAIL(c, n, path, "expected a rule (a mapping with at least 'use'), got %s",
                    skewshim_pol_is_null(n) ? "nothing" : skewshim_pol_kind_name(n));
    FOR_PAIRS(c, n, path, keys, rc) {
        skewshim_params *p = &rule->params;
        unsigned *b = &rule->overrides;
        switch (idx) {
        case 0: r = skewshim_pol_parse_range(c, v, sub, R_COUNT, &rule->comm_size); break;
        case 1: r = skewshim_pol_parse_range(c, v, sub, R_SIZE, &rule->max_block_bytes); break;
        case 2: r = skewshim_pol_parse_range(c, v, sub, R_SIZE, &rule->avg_block_bytes); break;
        case 3: r = skewshim_pol_parse_range(c, v, sub, R_NUMBER, &rule->mtm); break;
        case 4: r = skewshim_pol_parse_range(c, v, sub, R_NUMBER, &rule->send_mtm); break;
        case 5: r = skewshim_pol_parse_range(c, v, sub, R_NUMBER, &rule->recv_mtm); break;
        case 6: r = skewshim_pol_parse_range(c, v, sub, R_COUNT, &rule->repeats); break;
        case 7: r = skewshim_pol_need_enum(c, v, sub, bufs, 3, &rule->buffers); break;
        case 8: r = skewshim_pol_need_algo(c, v, sub, &rule->use); have_use = 1; break;
        case 9: case 10: case 11: case 12: case 13:
            r = parse_params(c, v, sub, sval(k), p, b);
            break;
        case 14: r = parse_top_param(c, v, sub, "max_temp_bytes", p, b); break;
        case 15: r = skewshim_pol_parse_range(c, v, sub, R_COUNT, &rule->nodes); break;
        case 16: r = skewshim_pol_parse_range(c, v, sub, R_SIZE, &rule->avg_nonempty_bytes); break;
        case 17: r = parse_flag(c, v, sub, &rule->nic_per_rank); break;
        }
        if (r)
            return -1;
    }
    if (rc)
        return -1;
    if (!have_use) {
        skewshim_pol_subpath(sub, path, "use");
        return FAIL(c, n, sub, "missing required key 'use' (the algorithm this rule selects)");
    }
    return 0;
}

static int parse_rules(ctx *c, yaml_node_t *n, skewshim_policy *pol)
{
    if (skewshim_pol_is_null(n))
        return 0;
    if (n->type != YAML_SEQUENCE_NODE)
        return FAIL(c, n, "rules", "expected a sequence of rules, got %s",
                    skewshim_pol_kind_name(n));
    yaml_node_item_t *it = n->data.sequence.items.start;
    size_t count = (size_t)(n->data.sequence.items.top - it);
    if (!count)
        return 0;
    pol->rules = calloc(count, sizeof *pol->rules);
    if (!pol->rules)
        return FAIL(c, n, "rules", "out of memory");
    for (size_t i = 0; i < count; i++) {
        char path[PATHLEN];
        snprintf(path, sizeof path, "rules[%zu]", i);
        pol->nrules = (int)i + 1;
        if (parse_rule(c, yaml_document_get_node(c->doc, it[i]), path, &pol->rules[i]))
            return -1;
    }
    return 0;
}

/* A rule's params are the global ones with its own overrides on top; done
 * after the whole file is read, so global sections below the rules count. */
void skewshim_pol_resolve_rule_params(skewshim_policy *pol)
{
    for (int i = 0; i < pol->nrules; i++) {
        skewshim_rule *r = &pol->rules[i];
        skewshim_params own = r->params;
        r->params = pol->params;
        skewshim_params_copy_masked(&r->params, &own, r->overrides);
    }
}

/* ---- top level ----------------------------------------------------------- */

static int parse_log(ctx *c, yaml_node_t *n, const char *path, skewshim_policy *pol)
{
    static const char *const keys[] = {"path", "level", "sample", "stderr", NULL};
    static const char *const levels[] = {"off", "summary", "calls", "matrix"};
    yaml_node_t *k, *v;
    int idx, rc, r;
    char sub[PATHLEN];
    FOR_PAIRS(c, n, path, keys, rc) {
        switch (idx) {
        case 0: r = skewshim_pol_need_string(c, v, sub, pol->log_path, sizeof pol->log_path); break;
        case 1: r = skewshim_pol_need_enum(c, v, sub, levels, 4, &pol->log_level); break;
        case 2: r = skewshim_pol_need_int(c, v, sub, 1, 0, &pol->log_sample); break;
        default: r = skewshim_pol_need_bool(c, v, sub, &pol->log_stderr); break;
        }
        if (r)
            return -1;
    }
    return rc;
}

static int parse_topology(ctx *c, yaml_node_t *n, const char *path, skewshim_policy *pol)
{
    static const char *const keys[] = {"ranks_per_node", "nics_per_node", NULL};
    yaml_node_t *k, *v;
    int idx, rc, r;
    char sub[PATHLEN];
    FOR_PAIRS(c, n, path, keys, rc) {
        if (idx == 0)
            r = skewshim_pol_need_int(c, v, sub, 1, 1, &pol->ranks_per_node);
        else
            r = skewshim_pol_need_int(c, v, sub, 1, 0, &pol->nics_per_node);
        if (r)
            return -1;
    }
    return rc;
}

static int parse_version(ctx *c, yaml_node_t *n, const char *path, int *out)
{
    long long v;
    if (n->type != YAML_SCALAR_NODE || skewshim_text_ll(sval(n), &v) || v != 1)
        return skewshim_pol_expected(c, n, path, "1 (the only schema version this shim reads)");
    *out = 1;
    return 0;
}

int skewshim_pol_parse_root(ctx *c, yaml_node_t *root, skewshim_policy *pol)
{
    static const char *const keys[] = {
        "version", "strict", "log", "topology", "max_temp_bytes", "default", "model",
        "scattered", "pairwise", "bruck2", "padded_bruck", "tuna", "tuna_hier",
        "sabre", "fast", "nccl_fanout", "rules", "reuse_agreement", NULL};
    yaml_node_t *k, *v;
    int idx, rc, r;
    char sub[PATHLEN];
    unsigned bits = 0;            /* global sections: nothing to resolve */
    skewshim_params *p = &pol->params;
    if (root->type != YAML_MAPPING_NODE && !skewshim_pol_is_null(root))
        return FAIL(c, root, "", "expected a mapping of policy keys at the top level, got %s",
                    skewshim_pol_kind_name(root));
    FOR_PAIRS(c, root, "", keys, rc) {
        switch (idx) {
        case 0: r = parse_version(c, v, sub, &pol->version); break;
        case 1: r = skewshim_pol_need_bool(c, v, sub, &pol->strict); break;
        case 2: r = parse_log(c, v, sub, pol); break;
        case 3: r = parse_topology(c, v, sub, pol); break;
        case 4: r = parse_top_param(c, v, sub, "max_temp_bytes", p, &bits); break;
        case 5: r = skewshim_pol_need_algo(c, v, sub, &pol->fallback); break;
        case 6: case 7: case 11: case 12: case 13: case 14:
            r = parse_params(c, v, sub, sval(k), p, &bits);
            break;
        case 16: r = parse_rules(c, v, pol); break;
        case 17: r = skewshim_pol_need_int(c, v, sub, 0, 0, &pol->reuse_agreement); break;
        default: r = parse_empty(c, v, sub); break;   /* pairwise, bruck2, ... */
        }
        if (r)
            return -1;
    }
    return rc;
}
