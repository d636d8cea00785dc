#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
/* YAML policy loading and validation (schema version 1, doc/policy.md).
 *
 * We use libyaml's document API: the whole (small) file becomes a node tree
 * whose nodes keep their start marks, so every error can name the line,
 * column and dotted key path where the user must look.  The policy is built
 * in a private copy and handed out only when all of it validated, so a
 * caller never runs with half a policy.
 */
#include "policy.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define PATHLEN 128
#define BUILTIN_NAME "<built-in default>"
/* A policy is a few KiB; anything this large is a wrong path. */
#define MAX_FILE_BYTES (16u << 20)

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

typedef struct ctx {
    yaml_document_t *doc;
    skewshim_error *err;
} ctx;

/* ---- errors -------------------------------------------------------------- */

static int fail_at(ctx *c, yaml_mark_t m, const char *path, const char *fmt, ...)
{
    skewshim_error *e = c->err;
    e->line = (int)m.line + 1;
    e->column = (int)m.column + 1;
    snprintf(e->key, sizeof e->key, "%s", path ? path : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return -1;
}

#define FAIL(c, node, path, ...) fail_at((c), (node)->start_mark, (path), __VA_ARGS__)

static const char *kind_name(const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_MAPPING_NODE: return "a mapping";
    case YAML_SEQUENCE_NODE: return "a sequence";
    default: return "a scalar";
    }
}

static const char *sval(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

/* `key:` with nothing after it, or an explicit null. */
static int is_null(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    const char *s = sval(n);
    return !s[0] || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
           !strcmp(s, "NULL");
}

/* "got 'x'" / "got a mapping" / "got nothing", for "expected ..., got ..." */
static const char *got(const yaml_node_t *n, char *buf, size_t len)
{
    if (n->type != YAML_SCALAR_NODE)
        snprintf(buf, len, "got %s", kind_name(n));
    else if (is_null(n))
        snprintf(buf, len, "got nothing");
    else
        snprintf(buf, len, "got '%.60s%s'", sval(n), strlen(sval(n)) > 60 ? "..." : "");
    return buf;
}

static int expected(ctx *c, const yaml_node_t *n, const char *path, const char *what)
{
    char g[96];
    return FAIL(c, n, path, "expected %s, %s", what, got(n, g, sizeof g));
}

/* dst = path.key (or key at top level), cut to PATHLEN-1 bytes. */
static void subpath(char *dst, const char *path, const char *key)
{
    size_t n = 0;
    for (; *path && n + 1 < PATHLEN; path++)
        dst[n++] = *path;
    if (n && n + 1 < PATHLEN)
        dst[n++] = '.';
    for (; *key && n + 1 < PATHLEN; key++)
        dst[n++] = *key;
    dst[n] = '\0';
}

/* ---- scalars ------------------------------------------------------------- */

static int parse_ll(const char *s, long long *out)
{
    if (!s[0])
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || s[0] == ' ')
        return -1;
    *out = v;
    return 0;
}

static int parse_double(const char *s, double *out)
{
    if (!s[0] || s[0] == ' ')
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int lower_eq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        if (x != *b)
            return 0;
    }
    return *a == *b;
}

static int is_inf(const char *s)
{
    return lower_eq(s, "inf") || lower_eq(s, ".inf") || lower_eq(s, "+inf") ||
           lower_eq(s, "+.inf") || lower_eq(s, "infinity");
}

/* Sizes: an integer with an optional unit.  K, M, G are powers of 1024 in
 * every spelling (K, KB, KiB): nobody sizes a buffer in powers of 1000. */
static int parse_size(const char *s, uint64_t *out)
{
    static const struct { const char *sfx; unsigned shift; } units[] = {
        {"", 0},    {"B", 0},    {"K", 10},  {"KB", 10}, {"KiB", 10},
        {"M", 20},  {"MB", 20},  {"MiB", 20}, {"G", 30}, {"GB", 30},
        {"GiB", 30},
    };
    if (!(s[0] >= '0' && s[0] <= '9'))
        return -1;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    while (*s == ' ')
        s++;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(s, units[i].sfx) == 0) {
            if (units[i].shift && v > (UINT64_MAX >> units[i].shift))
                return -1;
            *out = v << units[i].shift;
            return 0;
        }
    }
    return -1;
}

#define SIZE_WHAT "a size in bytes (an integer, optionally followed by K, KB, KiB, M, MB, MiB, G, GB or GiB)"

static int need_scalar(ctx *c, const yaml_node_t *n, const char *path, const char *what)
{
    if (n->type != YAML_SCALAR_NODE || is_null(n))
        return expected(c, n, path, what);
    return 0;
}

/* An integer >= min; with allow_auto, 'auto' gives 0. */
static int need_int(ctx *c, const yaml_node_t *n, const char *path, int min,
                    int allow_auto, int *out)
{
    char what[64];
    snprintf(what, sizeof what, "an integer >= %d%s", min, allow_auto ? " or 'auto'" : "");
    if (need_scalar(c, n, path, what))
        return -1;
    if (allow_auto && strcmp(sval(n), "auto") == 0) {
        *out = 0;
        return 0;
    }
    long long v;
    if (parse_ll(sval(n), &v) || v < min || v > 0x7fffffff)
        return expected(c, n, path, what);
    *out = (int)v;
    return 0;
}

/* A finite number >= min, or > min when exclusive. */
static int need_number(ctx *c, const yaml_node_t *n, const char *path, double min,
                       int exclusive, double *out)
{
    char what[64];
    snprintf(what, sizeof what, "a number %s %g", exclusive ? ">" : ">=", min);
    if (need_scalar(c, n, path, what))
        return -1;
    double v;
    if (parse_double(sval(n), &v) || v < min || (exclusive && v == min))
        return expected(c, n, path, what);
    *out = v;
    return 0;
}

static int need_bool(ctx *c, const yaml_node_t *n, const char *path, int *out)
{
    static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no", "off"};
    const char *what = "a boolean (true or false)";
    if (need_scalar(c, n, path, what))
        return -1;
    for (int i = 0; i < 3; i++) {
        if (lower_eq(sval(n), yes[i])) { *out = 1; return 0; }
        if (lower_eq(sval(n), no[i])) { *out = 0; return 0; }
    }
    return expected(c, n, path, what);
}

static int need_size(ctx *c, const yaml_node_t *n, const char *path, uint64_t *out)
{
    if (need_scalar(c, n, path, SIZE_WHAT) || parse_size(sval(n), out))
        return expected(c, n, path, SIZE_WHAT);
    return 0;
}

/* One of names[0..count-1]; the index goes to *out. */
static int need_enum(ctx *c, const yaml_node_t *n, const char *path,
                     const char *const *names, int count, int *out)
{
    char what[160] = "one of ";
    for (int i = 0; i < count; i++) {
        strncat(what, names[i], sizeof what - strlen(what) - 1);
        strncat(what, i + 1 < count ? ", " : "", sizeof what - strlen(what) - 1);
    }
    if (need_scalar(c, n, path, what))
        return -1;
    for (int i = 0; i < count; i++) {
        if (strcmp(sval(n), names[i]) == 0) {
            *out = i;
            return 0;
        }
    }
    return expected(c, n, path, what);
}

#define ALGO_WHAT "an algorithm name (native, scattered, pairwise, bruck2, padded_bruck, tuna, tuna_hier, sabre, fast, nccl_fanout)"

/* A concrete algorithm: 'auto' names the rules themselves, so it can be
 * neither a rule's outcome nor the fallback. */
static int need_algo(ctx *c, const yaml_node_t *n, const char *path, skewshim_algo_id *out)
{
    if (need_scalar(c, n, path, ALGO_WHAT))
        return -1;
    int a = skewshim_algo_from_name(sval(n));
    if (a == SKEWSHIM_ALGO_AUTO)
        return FAIL(c, n, path, "'auto' is not allowed here: name a concrete algorithm; "
                                "expected " ALGO_WHAT);
    if (a < 0)
        return expected(c, n, path, ALGO_WHAT);
    *out = (skewshim_algo_id)a;
    return 0;
}

static int need_string(ctx *c, const yaml_node_t *n, const char *path, char *dst, size_t cap)
{
    if (need_scalar(c, n, path, "a non-empty string"))
        return -1;
    if (n->data.scalar.length >= cap)
        return FAIL(c, n, path, "expected a string shorter than %zu bytes, got %zu bytes",
                    cap, n->data.scalar.length);
    memcpy(dst, sval(n), n->data.scalar.length + 1);
    return 0;
}

/* ---- mappings ------------------------------------------------------------ */

/* Walks a mapping's pairs in file order, so the first error reported is the
 * first one in the file.  Checks that the map is a map (null counts as
 * empty), that each key is a known scalar and appears once.  Returns 1 with
 * the pair (and the key's index in keys) while there are pairs, 0 at the
 * end, -1 on error. */
static int map_next(ctx *c, yaml_node_t *map, const char *path,
                    const char *const *keys, size_t *pos,
                    yaml_node_t **k, yaml_node_t **v, int *idx)
{
    if (is_null(map))
        return 0;
    if (map->type != YAML_MAPPING_NODE)
        return FAIL(c, map, path, "expected a mapping, got %s", kind_name(map));
    yaml_node_pair_t *start = map->data.mapping.pairs.start;
    yaml_node_pair_t *pair = start + *pos;
    if (pair >= map->data.mapping.pairs.top)
        return 0;
    (*pos)++;
    *k = yaml_document_get_node(c->doc, pair->key);
    *v = yaml_document_get_node(c->doc, pair->value);
    if ((*k)->type != YAML_SCALAR_NODE)
        return FAIL(c, *k, path, "expected a scalar key, got %s", kind_name(*k));
    const char *name = sval(*k);
    char sub[PATHLEN];
    subpath(sub, path, name);
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

/* Iterate the pairs of map; the body sees k, v, idx and sub (the value's
 * dotted path).  Leaves rc at 0 after the last pair or -1 on error. */
#define FOR_PAIRS(c, map, path, keys, rc)                                           \
    for (size_t pos_ = 0; ((rc) = map_next((c), (map), (path), (keys), &pos_, &k,    \
                                           &v, &idx)) > 0 &&                         \
                          (subpath(sub, (path), sval(k)), 1);)

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
        if (need_int(c, v, sub, 1, 0, &p->scattered_block_count))
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
        if (need_int(c, v, sub, 2, 1, &p->tuna_radix))
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
        case 0: r = need_int(c, v, sub, 2, 1, &p->tuna_hier_radix);
                *bits |= BIT(PB_TUNA_HIER_RADIX); break;
        case 1: r = need_int(c, v, sub, 1, 0, &p->tuna_hier_block_count);
                *bits |= BIT(PB_TUNA_HIER_BLOCK_COUNT); break;
        default: r = need_enum(c, v, sub, variants, 2, &p->tuna_hier_variant);
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
            r = need_number(c, v, sub, 1.0, 0, &p->sabre_alpha);
            *bits |= BIT(PB_SABRE_ALPHA);
        } else {
            r = need_number(c, v, sub, 1.0, 0, &p->sabre_mtm_threshold);
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
        if (need_bool(c, v, sub, &p->fast_pipeline))
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
            r = need_number(c, v, sub, 0.0, 1, &p->model_intra_bw);
        else if (idx == 1)
            r = need_number(c, v, sub, 0.0, 1, &p->model_inter_bw);
        else
            r = need_number(c, v, sub, 0.0, 0, &p->model_latency);
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

enum range_kind { R_COUNT, R_SIZE, R_NUMBER };

static int range_value(ctx *c, yaml_node_t *n, const char *path, enum range_kind kind,
                       int allow_inf, double *out)
{
    char what[200];
    const char *base = kind == R_COUNT ? "an integer >= 0"
                       : kind == R_SIZE ? SIZE_WHAT : "a number >= 0";
    snprintf(what, sizeof what, "%s%s", base, allow_inf ? " or 'inf'" : "");
    if (need_scalar(c, n, path, what))
        return -1;
    const char *s = sval(n);
    if (allow_inf && is_inf(s)) {
        *out = -1.0;              /* policy.h: hi < 0 is unbounded */
        return 0;
    }
    long long ll;
    uint64_t u;
    double d;
    switch (kind) {
    case R_COUNT:
        if (parse_ll(s, &ll) || ll < 0)
            return expected(c, n, path, what);
        *out = (double)ll;
        break;
    case R_SIZE:
        if (parse_size(s, &u))
            return expected(c, n, path, what);
        *out = (double)u;
        break;
    default:
        if (parse_double(s, &d) || d < 0)
            return expected(c, n, path, what);
        *out = d;
        break;
    }
    return 0;
}

/* A matcher: one value (exactly that) or [lo, hi], inclusive, hi may be inf. */
static int parse_range(ctx *c, yaml_node_t *n, const char *path, enum range_kind kind,
                       skewshim_range *r)
{
    r->set = 1;
    if (n->type == YAML_SCALAR_NODE) {
        if (range_value(c, n, path, kind, 0, &r->lo))
            return -1;
        r->hi = r->lo;
        return 0;
    }
    if (n->type != YAML_SEQUENCE_NODE)
        return FAIL(c, n, path, "expected a value or a range [lo, hi], got %s", kind_name(n));
    yaml_node_item_t *it = n->data.sequence.items.start;
    long count = (long)(n->data.sequence.items.top - it);
    if (count != 2)
        return FAIL(c, n, path, "expected a range [lo, hi] with 2 elements, got %ld", count);
    char sub[PATHLEN];
    snprintf(sub, sizeof sub, "%s[0]", path);
    if (range_value(c, yaml_document_get_node(c->doc, it[0]), sub, kind, 0, &r->lo))
        return -1;
    snprintf(sub, sizeof sub, "%s[1]", path);
    if (range_value(c, yaml_document_get_node(c->doc, it[1]), sub, kind, 1, &r->hi))
        return -1;
    if (r->hi >= 0 && r->lo > r->hi)
        return FAIL(c, n, path, "inverted range: lo %g is greater than hi %g", r->lo, r->hi);
    return 0;
}

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
                    is_null(n) ? "nothing" : kind_name(n));
    FOR_PAIRS(c, n, path, keys, rc) {
        skewshim_params *p = &rule->params;
        unsigned *b = &rule->overrides;
        switch (idx) {
        case 0: r = parse_range(c, v, sub, R_COUNT, &rule->comm_size); break;
        case 1: r = parse_range(c, v, sub, R_SIZE, &rule->max_block_bytes); break;
        case 2: r = parse_range(c, v, sub, R_SIZE, &rule->avg_block_bytes); break;
        case 3: r = parse_range(c, v, sub, R_NUMBER, &rule->mtm); break;
        case 4: r = need_enum(c, v, sub, bufs, 3, &rule->buffers); break;
        case 5: r = need_algo(c, v, sub, &rule->use); have_use = 1; break;
        case 6: r = parse_scattered(c, v, sub, p, b); break;
        case 7: r = parse_tuna(c, v, sub, p, b); break;
        case 8: r = parse_tuna_hier(c, v, sub, p, b); break;
        case 9: r = parse_sabre(c, v, sub, p, b); break;
        case 10: r = parse_fast(c, v, sub, p, b); break;
        default: r = need_size(c, v, sub, &p->max_temp_bytes);
                 *b |= BIT(PB_MAX_TEMP_BYTES); break;
        }
        if (r)
            return -1;
    }
    if (rc)
        return -1;
    if (!have_use) {
        subpath(sub, path, "use");
        return FAIL(c, n, sub, "missing required key 'use' (the algorithm this rule selects)");
    }
    return 0;
}

static int parse_rules(ctx *c, yaml_node_t *n, skewshim_policy *pol)
{
    if (is_null(n))
        return 0;
    if (n->type != YAML_SEQUENCE_NODE)
        return FAIL(c, n, "rules", "expected a sequence of rules, got %s", kind_name(n));
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
static void resolve_rule_params(skewshim_policy *pol)
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
        case 0: r = need_string(c, v, sub, pol->log_path, sizeof pol->log_path); break;
        case 1: r = need_enum(c, v, sub, levels, 4, &pol->log_level); break;
        case 2: r = need_int(c, v, sub, 1, 0, &pol->log_sample); break;
        default: r = need_bool(c, v, sub, &pol->log_stderr); break;
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
            r = need_int(c, v, sub, 1, 1, &pol->ranks_per_node);
        else
            r = need_int(c, v, sub, 1, 0, &pol->nics_per_node);
        if (r)
            return -1;
    }
    return rc;
}

static int parse_version(ctx *c, yaml_node_t *n, const char *path, int *out)
{
    long long v;
    if (n->type != YAML_SCALAR_NODE || parse_ll(sval(n), &v) || v != 1)
        return expected(c, n, path, "1 (the only schema version this shim reads)");
    *out = 1;
    return 0;
}

static int parse_root(ctx *c, yaml_node_t *root, skewshim_policy *pol)
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
    if (root->type != YAML_MAPPING_NODE && !is_null(root))
        return FAIL(c, root, "", "expected a mapping of policy keys at the top level, got %s",
                    kind_name(root));
    FOR_PAIRS(c, root, "", keys, rc) {
        switch (idx) {
        case 0: r = parse_version(c, v, sub, &pol->version); break;
        case 1: r = need_bool(c, v, sub, &pol->strict); break;
        case 2: r = parse_log(c, v, sub, pol); break;
        case 3: r = parse_topology(c, v, sub, pol); break;
        case 4: r = need_size(c, v, sub, &p->max_temp_bytes); break;
        case 5: r = need_algo(c, v, sub, &pol->fallback); break;
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

/* ---- entry points -------------------------------------------------------- */

void skewshim_params_default(skewshim_params *p)
{
    memset(p, 0, sizeof *p);
    p->scattered_block_count = 32;
    p->tuna_radix = 0;
    p->tuna_hier_radix = 0;
    p->tuna_hier_block_count = 8;
    p->tuna_hier_variant = SKEWSHIM_TUNA_COALESCED;
    p->sabre_alpha = 1.05;
    p->sabre_mtm_threshold = 2.2;
    p->fast_pipeline = 1;
    p->max_temp_bytes = (uint64_t)1 << 30;
    p->model_intra_bw = 150e9;
    p->model_inter_bw = 25e9;
    p->model_latency = 5e-6;
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
    return fail_at(c, ps->problem_mark, "", "%s", msg);
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
    rc = root ? parse_root(&c, root, &pol) : 0;
    if (rc == 0) {
        /* A second document would be silently ignored; refuse it instead. */
        if (!yaml_parser_load(&parser, &extra)) {
            rc = parser_error(&c, &parser, yaml, len);
        } else {
            yaml_node_t *r2 = yaml_document_get_root_node(&extra);
            if (r2)
                rc = fail_at(&c, extra.start_mark, "",
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
    resolve_rule_params(&pol);
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
