#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* The sections of a policy file and their keys: the parameter sections
 * (top level and inside rules), the rules, log, topology and the top level
 * itself.  Values are checked by scalars.c, mappings walked by load.c. */
#include "load_internal.h"

#include <stdio.h>
#include <stdlib.h>

/* Bits of skewshim_rule.overrides: bit i is field i of skewshim_params, in
 * declaration order, as policy.h promises. */
enum {
    PB_SCATTERED_BLOCK_COUNT = 0,
    PB_TUNA_RADIX,
    PB_TUNA_HIER_RADIX,
    PB_TUNA_HIER_BLOCK_COUNT,
    PB_TUNA_HIER_VARIANT,
    PB_SABRE_ALPHA,
    PB_SABRE_MTM_THRESHOLD,
    PB_FAST_PIPELINE,
    PB_MAX_TEMP_BYTES,
    PB_MODEL_INTRA_BW,
    PB_MODEL_INTER_BW,
    PB_MODEL_LATENCY
};
#define BIT(b) (1u << (b))

/* ---- parameter sections ---------------------------------------------------- */

/* The sections that may appear both at top level and inside a rule.  Each
 * parser writes the fields it finds into p and sets their bits in *bits. */
static int parse_scattered(ctx *c, yaml_node_t *n, const char *path,
                           skewshim_params *p, unsigned *bits)
{
    static const char *const keys[] = {"block_count", NULL};
    yaml_node_t *k, *v;
    int idx, rc;
    char sub[PATHLEN];
    FOR_PAIRS(c, n, path, keys, rc) {
        if (skewshim_pol_need_int(c, v, sub, 1, 0, &p->scattered_block_count))
            return -1;
        *bits |= BIT(PB_SCATTERED_BLOCK_COUNT);
    }
    return rc;
}

static int parse_tuna(ctx *c, yaml_node_t *n, const char *path,
                      skewshim_params *p, unsigned *bits)
{
    static const char *const keys[] = {"radix", NULL};
    yaml_node_t *k, *v;
    int idx, rc;
    char sub[PATHLEN];
    FOR_PAIRS(c, n, path, keys, rc) {
        if (skewshim_pol_need_int(c, v, sub, 2, 1, &p->tuna_radix))
            return -1;
        *bits |= BIT(PB_TUNA_RADIX);
    }
    return rc;
}

static int parse_tuna_hier(ctx *c, yaml_node_t *n, const char *path,
                           skewshim_params *p, unsigned *bits)
{
    static const char *const keys[] = {"radix", "block_count", "variant", NULL};
    static const char *const variants[] = {"coalesced", "staggered"};
    yaml_node_t *k, *v;
    int idx, rc, r = 0;
    char sub[PATHLEN];
    FOR_PAIRS(c, n, path, keys, rc) {
        switch (idx) {
        case 0: r = skewshim_pol_need_int(c, v, sub, 2, 1, &p->tuna_hier_radix);
                *bits |= BIT(PB_TUNA_HIER_RADIX); break;
        case 1: r = skewshim_pol_need_int(c, v, sub, 1, 0, &p->tuna_hier_block_count);
                *bits |= BIT(PB_TUNA_HIER_BLOCK_COUNT); break;
        default: r = skewshim_pol_need_enum(c, v, sub, variants, 2, &p->tuna_hier_variant);
                 *bits |= BIT(PB_TUNA_HIER_VARIANT); break;
        }
        if (r)
            return -1;
    }
    return rc;
}

static int parse_sabre(ctx *c, yaml_node_t *n, const char *path,
                       skewshim_params *p, unsigned *bits)
{
    static const char *const keys[] = {"alpha", "mtm_threshold", NULL};
    yaml_node_t *k, *v;
    int idx, rc, r;
    char sub[PATHLEN];
    FOR_PAIRS(c, n, path, keys, rc) {
        if (idx == 0) {
            r = skewshim_pol_need_number(c, v, sub, 1.0, 0, &p->sabre_alpha);
            *bits |= BIT(PB_SABRE_ALPHA);
        } else {
            r = skewshim_pol_need_number(c, v, sub, 1.0, 0, &p->sabre_mtm_threshold);
            *bits |= BIT(PB_SABRE_MTM_THRESHOLD);
        }
        if (r)
            return -1;
    }
    return rc;
}

static int parse_fast(ctx *c, yaml_node_t *n, const char *path,
                      skewshim_params *p, unsigned *bits)
{
    static const char *const keys[] = {"pipeline", NULL};
    yaml_node_t *k, *v;
    int idx, rc;
    char sub[PATHLEN];
    FOR_PAIRS(c, n, path, keys, rc) {
        if (skewshim_pol_need_bool(c, v, sub, &p->fast_pipeline))
            return -1;
        *bits |= BIT(PB_FAST_PIPELINE);
    }
    return rc;
}

static int parse_model(ctx *c, yaml_node_t *n, const char *path, skewshim_params *p)
{
    static const char *const keys[] = {"intra_bw", "inter_bw", "latency", NULL};
    yaml_node_t *k, *v;
    int idx, rc, r;
    char sub[PATHLEN];
    FOR_PAIRS(c, n, path, keys, rc) {
        if (idx == 0)
            r = skewshim_pol_need_number(c, v, sub, 0.0, 1, &p->model_intra_bw);
        else if (idx == 1)
            r = skewshim_pol_need_number(c, v, sub, 0.0, 1, &p->model_inter_bw);
        else
            r = skewshim_pol_need_number(c, v, sub, 0.0, 0, &p->model_latency);
        if (r)
            return -1;
    }
    return rc;
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

static int parse_rule(ctx *c, yaml_node_t *n, const char *path, skewshim_rule *rule)
{
    static const char *const keys[] = {
        "comm_size", "max_block_bytes", "avg_block_bytes", "mtm", "buffers", "use",
        "scattered", "tuna", "tuna_hier", "sabre", "fast", "max_temp_bytes", NULL};
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
        case 4: r = skewshim_pol_need_enum(c, v, sub, bufs, 3, &rule->buffers); break;
        case 5: r = skewshim_pol_need_algo(c, v, sub, &rule->use); have_use = 1; break;
        case 6: r = parse_scattered(c, v, sub, p, b); break;
        case 7: r = parse_tuna(c, v, sub, p, b); break;
        case 8: r = parse_tuna_hier(c, v, sub, p, b); break;
        case 9: r = parse_sabre(c, v, sub, p, b); break;
        case 10: r = parse_fast(c, v, sub, p, b); break;
        default: r = skewshim_pol_need_size(c, v, sub, &p->max_temp_bytes);
                 *b |= BIT(PB_MAX_TEMP_BYTES); break;
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
        skewshim_params o = r->params, *p = &r->params;
        unsigned b = r->overrides;
        *p = pol->params;
        if (b & BIT(PB_SCATTERED_BLOCK_COUNT)) p->scattered_block_count = o.scattered_block_count;
        if (b & BIT(PB_TUNA_RADIX)) p->tuna_radix = o.tuna_radix;
        if (b & BIT(PB_TUNA_HIER_RADIX)) p->tuna_hier_radix = o.tuna_hier_radix;
        if (b & BIT(PB_TUNA_HIER_BLOCK_COUNT)) p->tuna_hier_block_count = o.tuna_hier_block_count;
        if (b & BIT(PB_TUNA_HIER_VARIANT)) p->tuna_hier_variant = o.tuna_hier_variant;
        if (b & BIT(PB_SABRE_ALPHA)) p->sabre_alpha = o.sabre_alpha;
        if (b & BIT(PB_SABRE_MTM_THRESHOLD)) p->sabre_mtm_threshold = o.sabre_mtm_threshold;
        if (b & BIT(PB_FAST_PIPELINE)) p->fast_pipeline = o.fast_pipeline;
        if (b & BIT(PB_MAX_TEMP_BYTES)) p->max_temp_bytes = o.max_temp_bytes;
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
    if (n->type != YAML_SCALAR_NODE || skewshim_pol_parse_ll(sval(n), &v) || v != 1)
        return skewshim_pol_expected(c, n, path, "1 (the only schema version this shim reads)");
    *out = 1;
    return 0;
}

int skewshim_pol_parse_root(ctx *c, yaml_node_t *root, skewshim_policy *pol)
{
    static const char *const keys[] = {
        "version", "strict", "log", "topology", "max_temp_bytes", "default", "model",
        "scattered", "pairwise", "bruck2", "padded_bruck", "tuna", "tuna_hier",
        "sabre", "fast", "nccl_fanout", "rules", NULL};
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
        case 4: r = skewshim_pol_need_size(c, v, sub, &p->max_temp_bytes); break;
        case 5: r = skewshim_pol_need_algo(c, v, sub, &pol->fallback); break;
        case 6: r = parse_model(c, v, sub, p); break;
        case 7: r = parse_scattered(c, v, sub, p, &bits); break;
        case 11: r = parse_tuna(c, v, sub, p, &bits); break;
        case 12: r = parse_tuna_hier(c, v, sub, p, &bits); break;
        case 13: r = parse_sabre(c, v, sub, p, &bits); break;
        case 14: r = parse_fast(c, v, sub, p, &bits); break;
        case 16: r = parse_rules(c, v, pol); break;
        default: r = parse_empty(c, v, sub); break;   /* pairwise, bruck2, ... */
        }
        if (r)
            return -1;
    }
    return rc;
}
