/* What the files of the policy loader share, private to src/policy/.
 *   load.c      entry points, the YAML document, the mapping walk
 *   scalars.c   values and ranges, with their error messages
 *   sections.c  the sections, their keys, the top level
 * Every check fails through skewshim_pol_fail_at, which fills ctx's
 * skewshim_error with line, column and dotted key path, and returns -1.
 */
#ifndef SKEWSHIM_POLICY_LOAD_INTERNAL_H
#define SKEWSHIM_POLICY_LOAD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "params.h"
#include "policy.h"

#define PATHLEN 128

typedef struct ctx {
    yaml_document_t *doc;
    skewshim_error *err;
} ctx;

/* ---- errors and nodes (scalars.c) ---- */

int skewshim_pol_fail_at(ctx *c, yaml_mark_t m, const char *path, const char *fmt, ...);
#define FAIL(c, node, path, ...) skewshim_pol_fail_at((c), (node)->start_mark, (path), __VA_ARGS__)

static inline const char *sval(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

/* "a mapping", "a sequence" or "a scalar". */
const char *skewshim_pol_kind_name(const yaml_node_t *n);
/* `key:` with nothing after it, or an explicit null. */
int skewshim_pol_is_null(const yaml_node_t *n);
/* "expected <what>, got ..." at n. */
int skewshim_pol_expected(ctx *c, const yaml_node_t *n, const char *path, const char *what);
/* dst = path.key (or key at top level), cut to PATHLEN-1 bytes. */
void skewshim_pol_subpath(char *dst, const char *path, const char *key);

/* ---- scalars (scalars.c): 0, or -1 with the error filled ---- */

/* An integer >= min; with allow_auto, 'auto' gives 0. */
int skewshim_pol_need_int(ctx *c, const yaml_node_t *n, const char *path, int min,
                          int allow_auto, int *out);
int skewshim_pol_need_bool(ctx *c, const yaml_node_t *n, const char *path, int *out);
/* A value of the parameter table's entry d, into its field of p. */
int skewshim_pol_need_param(ctx *c, const yaml_node_t *n, const char *path,
                            const skewshim_param_desc *d, skewshim_params *p);
/* One of names[0..count-1]; the index goes to *out. */
int skewshim_pol_need_enum(ctx *c, const yaml_node_t *n, const char *path,
                           const char *const *names, int count, int *out);
/* A concrete algorithm (not 'auto'). */
int skewshim_pol_need_algo(ctx *c, const yaml_node_t *n, const char *path,
                           skewshim_algo_id *out);
int skewshim_pol_need_string(ctx *c, const yaml_node_t *n, const char *path, char *dst,
                             size_t cap);

enum range_kind { R_COUNT, R_SIZE, R_NUMBER };
/* A matcher: one value (exactly that) or [lo, hi], inclusive, hi may be inf. */
int skewshim_pol_parse_range(ctx *c, yaml_node_t *n, const char *path, enum range_kind kind,
                             skewshim_range *r);

/* ---- mappings (load.c) ---- */

/* The next pair of a mapping, in file order, with its key checked against
 * keys (NULL-terminated) and for duplicates.  1 with the pair, 0 at the end,
 * -1 on error. */
int skewshim_pol_map_next(ctx *c, yaml_node_t *map, const char *path,
                          const char *const *keys, size_t *pos,
                          yaml_node_t **k, yaml_node_t **v, int *idx);

/* Iterate the pairs of map; the body sees k, v, idx and sub (the value's
 * dotted path).  Leaves rc at 0 after the last pair or -1 on error. */
#define FOR_PAIRS(c, map, path, keys, rc)                                              \
    for (size_t pos_ = 0; ((rc) = skewshim_pol_map_next((c), (map), (path), (keys),     \
                                                        &pos_, &k, &v, &idx)) > 0 &&    \
                          (skewshim_pol_subpath(sub, (path), sval(k)), 1);)

/* ---- sections (sections.c) ---- */

/* The whole document into pol. */
int skewshim_pol_parse_root(ctx *c, yaml_node_t *root, skewshim_policy *pol);
/* A rule's params are the global ones with its own overrides on top; called
 * after the whole file is read, so global sections below the rules count. */
void skewshim_pol_resolve_rule_params(skewshim_policy *pol);

#endif
