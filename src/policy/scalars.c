#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Scalars of the policy file: integers, numbers, sizes, booleans, enums,
 * algorithm names, strings and rule ranges, each with the message that
 * names the line, column and key path when a value does not fit.  The
 * error state lives in ctx (load_internal.h). */
#include "load_internal.h"
#include "params.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors -------------------------------------------------------------- */

int skewshim_pol_fail_at(ctx *c, yaml_mark_t m, const char *path, const char *fmt, ...)
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

const char *skewshim_pol_kind_name(const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_MAPPING_NODE: return "a mapping";
    case YAML_SEQUENCE_NODE: return "a sequence";
    default: return "a scalar";
    }
}

/* `key:` with nothing after it, or an explicit null. */
int skewshim_pol_is_null(const yaml_node_t *n)
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
        snprintf(buf, len, "got %s", skewshim_pol_kind_name(n));
    else if (skewshim_pol_is_null(n))
        snprintf(buf, len, "got nothing");
    else
        snprintf(buf, len, "got '%.60s%s'", sval(n), strlen(sval(n)) > 60 ? "..." : "");
    return buf;
}

int skewshim_pol_expected(ctx *c, const yaml_node_t *n, const char *path, const char *what)
{
    char g[96];
    return FAIL(c, n, path, "expected %s, %s", what, got(n, g, sizeof g));
}

/* dst = path.key (or key at top level), cut to PATHLEN-1 bytes. */
void skewshim_pol_subpath(char *dst, const char *path, const char *key)
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

static int is_inf(const char *s)
{
    return skewshim_text_lower_eq(s, "inf") || skewshim_text_lower_eq(s, ".inf") ||
           skewshim_text_lower_eq(s, "+inf") || skewshim_text_lower_eq(s, "+.inf") ||
           skewshim_text_lower_eq(s, "infinity");
}

static int need_scalar(ctx *c, const yaml_node_t *n, const char *path, const char *what)
{
    if (n->type != YAML_SCALAR_NODE || skewshim_pol_is_null(n))
        return skewshim_pol_expected(c, n, path, what);
    return 0;
}

/* An integer >= min; with allow_auto, 'auto' gives 0. */
int skewshim_pol_need_int(ctx *c, const yaml_node_t *n, const char *path, int min,
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
    if (skewshim_text_ll(sval(n), &v) || v < min || v > 0x7fffffff)
        return skewshim_pol_expected(c, n, path, what);
    *out = (int)v;
    return 0;
}

int skewshim_pol_need_bool(ctx *c, const yaml_node_t *n, const char *path, int *out)
{
    if (need_scalar(c, n, path, SKEWSHIM_BOOL_WHAT) || skewshim_text_bool(sval(n), out))
        return skewshim_pol_expected(c, n, path, SKEWSHIM_BOOL_WHAT);
    return 0;
}

int skewshim_pol_need_param(ctx *c, const yaml_node_t *n, const char *path,
                            const skewshim_param_desc *d, skewshim_params *p)
{
    char what[200];
    skewshim_param_what(d, what, sizeof what);
    if (need_scalar(c, n, path, what) || skewshim_param_parse(d, sval(n), p))
        return skewshim_pol_expected(c, n, path, what);
    return 0;
}

/* One of names[0..count-1]; the index goes to *out. */
int skewshim_pol_need_enum(ctx *c, const yaml_node_t *n, const char *path,
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
    return skewshim_pol_expected(c, n, path, what);
}

#define ALGO_WHAT "an algorithm name (native, scattered, pairwise, bruck2, padded_bruck, tuna, tuna_hier, sabre, fast, nccl_fanout)"

/* A concrete algorithm: 'auto' names the rules themselves, so it can be
 * neither a rule's outcome nor the fallback. */
int skewshim_pol_need_algo(ctx *c, const yaml_node_t *n, const char *path,
                           skewshim_algo_id *out)
{
    if (need_scalar(c, n, path, ALGO_WHAT))
        return -1;
    int a = skewshim_algo_from_name(sval(n));
    if (a == SKEWSHIM_ALGO_AUTO)
        return FAIL(c, n, path, "'auto' is not allowed here: name a concrete algorithm; "
                                "expected " ALGO_WHAT);
    if (a < 0)
        return skewshim_pol_expected(c, n, path, ALGO_WHAT);
    *out = (skewshim_algo_id)a;
    return 0;
}

int skewshim_pol_need_string(ctx *c, const yaml_node_t *n, const char *path, char *dst,
                             size_t cap)
{
    if (need_scalar(c, n, path, "a non-empty string"))
        return -1;
    if (n->data.scalar.length >= cap)
        return FAIL(c, n, path, "expected a string shorter than %zu bytes, got %zu bytes",
                    cap, n->data.scalar.length);
    memcpy(dst, sval(n), n->data.scalar.length + 1);
    return 0;
}

/* ---- rule ranges --------------------------------------------------------- */

static int range_value(ctx *c, yaml_node_t *n, const char *path, enum range_kind kind,
                       int allow_inf, double *out)
{
    char what[200];
    const char *base = kind == R_COUNT ? "an integer >= 0"
                       : kind == R_SIZE ? SKEWSHIM_SIZE_WHAT : "a number >= 0";
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
        if (skewshim_text_ll(s, &ll) || ll < 0)
            return skewshim_pol_expected(c, n, path, what);
        *out = (double)ll;
        break;
    case R_SIZE:
        if (skewshim_text_size(s, &u))
            return skewshim_pol_expected(c, n, path, what);
        *out = (double)u;
        break;
    default:
        if (skewshim_text_double(s, &d) || d < 0)
            return skewshim_pol_expected(c, n, path, what);
        *out = d;
        break;
    }
    return 0;
}

/* A matcher: one value (exactly that) or [lo, hi], inclusive, hi may be inf. */
int skewshim_pol_parse_range(ctx *c, yaml_node_t *n, const char *path, enum range_kind kind,
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
        return FAIL(c, n, path, "expected a value or a range [lo, hi], got %s",
                    skewshim_pol_kind_name(n));
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
