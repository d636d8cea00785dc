#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
/* YAML policy loading and validation (schema version 1, doc/policy.md).
 *
 * We use libyaml's document API: the whole (small) file becomes a node tree
 * whose nodes keep their start marks, so every error can name the line,
 * column and dotted key path where the user must look.  The policy is built
 * in a private copy and handed out only when all of it validated, so a
 * caller never runs with half a policy.  This file holds the entry points
 * and the walk over mappings; the other parts are listed in
 * load_internal.h.
 */
#include "load_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUILTIN_NAME "<built-in default>"
/* A policy is a few KiB; anything this large is a wrong path. */
#define MAX_FILE_BYTES (16u << 20)

/* ---- mappings ------------------------------------------------------------ */

/* Walks a mapping's pairs in file order, so the first error reported is the
 * first one in the file.  Checks that the map is a map (null counts as
 * empty), that each key is a known scalar and appears once.  Returns 1 with
 * the pair (and the key's index in keys) while there are pairs, 0 at the
 * end, -1 on error. */
int skewshim_pol_map_next(ctx *c, yaml_node_t *map, const char *path,
                          const char *const *keys, size_t *pos,
                          yaml_node_t **k, yaml_node_t **v, int *idx)
{
    if (skewshim_pol_is_null(map))
        return 0;
    if (map->type != YAML_MAPPING_NODE)
        return FAIL(c, map, path, "expected a mapping, got %s", skewshim_pol_kind_name(map));
    yaml_node_pair_t *start = map->data.mapping.pairs.start;
    yaml_node_pair_t *pair = start + *pos;
    if (pair >= map->data.mapping.pairs.top)
        return 0;
    (*pos)++;
    *k = yaml_document_get_node(c->doc, pair->key);
    *v = yaml_document_get_node(c->doc, pair->value);
    if ((*k)->type != YAML_SCALAR_NODE)
        return FAIL(c, *k, path, "expected a scalar key, got %s", skewshim_pol_kind_name(*k));
    const char *name = sval(*k);
    char sub[PATHLEN];
    skewshim_pol_subpath(sub, path, name);
    for (yaml_node_pair_t *q = start; q < pair; q++) {
        yaml_node_t *qk = yaml_document_get_node(c->doc, q->key);
        if (qk->type == YAML_SCALAR_NODE && strcmp(sval(qk), name) == 0)
            return FAIL(c, *k, sub, "duplicate key '%s' (first at line %d)", name,
                        (int)qk->start_mark.line + 1);
    }
    for (int i = 0; keys[i]; i++) {
        if (strcmp(keys[i], name) == 0) {
            *idx = i;
            return 1;
        }
    }
    char list[320] = "";
    for (int i = 0; keys[i]; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, keys[i], sizeof list - strlen(list) - 1);
    }
    if (!keys[0])
        return FAIL(c, *k, sub, "unknown key '%s'; this section accepts no keys", name);
    return FAIL(c, *k, sub, "unknown key '%s'; accepted keys: %s", name, list);
}

/* ---- entry points -------------------------------------------------------- */

void skewshim_params_default(skewshim_params *p)
{
    memset(p, 0, sizeof *p);
    p->scattered_block_count = SKEWSHIM_LINEAR_FLIGHT;
    p->tuna_radix = 0;
    p->tuna_hier_radix = 0;
    p->tuna_hier_block_count = SKEWSHIM_HIER_FEW_FLIGHT;
    p->tuna_hier_variant = SKEWSHIM_TUNA_COALESCED;
    p->tuna_hier_pay_check = 1;
    p->sabre_alpha = 1.05;
    p->sabre_mtm_threshold = 2.2;
    p->fast_pipeline = 1;
    p->max_temp_bytes = (uint64_t)1 << 30;
    p->model_intra_bw = 150e9;
    p->model_inter_bw = 25e9;
    p->model_latency = 5e-6;
    p->model_overhead = 2e-7;
    p->model_plan_entry = 7e-8;
}

void skewshim_policy_init_default(skewshim_policy *p)
{
    memset(p, 0, sizeof *p);
    p->version = 1;
    p->strict = 0;
    snprintf(p->source, sizeof p->source, "%s", BUILTIN_NAME);
    snprintf(p->log_path, sizeof p->log_path, "%s", "skewshim-%j.jsonl");
    p->log_level = SKEWSHIM_LOG_SUMMARY;
    p->log_sample = 1;
    p->log_stderr = 0;
    p->ranks_per_node = 0;
    p->nics_per_node = 1;
    p->reuse_agreement = 64;
    p->fallback = SKEWSHIM_ALGO_NATIVE;
    skewshim_params_default(&p->params);
    p->rules = NULL;
    p->nrules = 0;
}

void skewshim_policy_free(skewshim_policy *p)
{
    if (!p)
        return;
    free(p->rules);
    p->rules = NULL;
    p->nrules = 0;
}

static int parser_error(ctx *c, yaml_parser_t *ps, const char *yaml, size_t len)
{
    char msg[256];
    snprintf(msg, sizeof msg, "malformed YAML: %s%s%s%s",
             ps->problem ? ps->problem : "parser error",
             ps->context ? " (" : "", ps->context ? ps->context : "",
             ps->context ? ")" : "");
    /* libyaml's complaint about a tab says nothing of tabs; say it. */
    if (ps->problem_mark.index < len && yaml[ps->problem_mark.index] == '\t')
        strncat(msg, "; tabs cannot indent YAML, use spaces", sizeof msg - strlen(msg) - 1);
    return skewshim_pol_fail_at(c, ps->problem_mark, "", "%s", msg);
}

int skewshim_policy_load_string(const char *yaml, size_t len, const char *name,
                                skewshim_policy *out, skewshim_error *err)
{
    skewshim_error scratch;
    if (!err)
        err = &scratch;
    memset(err, 0, sizeof *err);
    if (!name)
        name = "<string>";
    snprintf(err->file, sizeof err->file, "%s", name);

    skewshim_policy pol;
    skewshim_policy_init_default(&pol);
    snprintf(pol.source, sizeof pol.source, "%s", name);

    yaml_parser_t parser;
    yaml_document_t doc, extra;
    ctx c = {&doc, err};
    int rc = -1;
    if (!yaml_parser_initialize(&parser)) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        goto out;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)(yaml ? yaml : ""),
                                 yaml ? len : 0);
    if (!yaml_parser_load(&parser, &doc)) {
        parser_error(&c, &parser, yaml, len);
        goto out_parser;
    }
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    /* An empty file is a valid policy: all defaults. */
    rc = root ? skewshim_pol_parse_root(&c, root, &pol) : 0;
    if (rc == 0) {
        /* A second document would be silently ignored; refuse it instead. */
        if (!yaml_parser_load(&parser, &extra)) {
            rc = parser_error(&c, &parser, yaml, len);
        } else {
            yaml_node_t *r2 = yaml_document_get_root_node(&extra);
            if (r2)
                rc = skewshim_pol_fail_at(&c, extra.start_mark, "",
                                          "expected one YAML document, found a second one");
            yaml_document_delete(&extra);
        }
    }
    yaml_document_delete(&doc);
out_parser:
    yaml_parser_delete(&parser);
out:
    if (rc) {
        skewshim_policy_free(&pol);
        skewshim_policy_init_default(out);
        return -1;
    }
    skewshim_pol_resolve_rule_params(&pol);
    *out = pol;
    return 0;
}

int skewshim_policy_load_file(const char *path, skewshim_policy *out, skewshim_error *err)
{
    skewshim_error scratch;
    if (!err)
        err = &scratch;
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", path ? path : "(null)");
    skewshim_policy_init_default(out);
    if (!path) {
        snprintf(err->msg, sizeof err->msg, "no file name given");
        return -1;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err->msg, sizeof err->msg, "cannot open: %s", strerror(errno));
        return -1;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int bad = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? 2 * cap : 4096;
            char *nb = cap > MAX_FILE_BYTES ? NULL : realloc(buf, cap);
            if (!nb) {
                bad = cap > MAX_FILE_BYTES ? EFBIG : ENOMEM;
                break;
            }
            buf = nb;
        }
        size_t got_n = fread(buf + len, 1, cap - len, f);
        len += got_n;
        if (got_n == 0) {
            if (ferror(f))
                bad = errno ? errno : EIO;
            break;
        }
    }
    fclose(f);
    if (bad) {
        free(buf);
        snprintf(err->msg, sizeof err->msg, "cannot read: %s", strerror(bad));
        return -1;
    }
    int rc = skewshim_policy_load_string(buf ? buf : "", len, path, out, err);
    free(buf);
    return rc;
}

int skewshim_policy_load_builtin(skewshim_policy *out, skewshim_error *err)
{
    return skewshim_policy_load_string(skewshim_default_yaml, strlen(skewshim_default_yaml),
                                       BUILTIN_NAME, out, err);
}
