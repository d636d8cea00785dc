#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* The one table of algorithm parameters.  The YAML sections (global and in
 * rules), skewshim_set_param, the tool overrides, the rules' resolved
 * parameters and the key reference test all read it, so a parameter is
 * added in one place.  Values are read from text by the same functions the
 * loader uses, so a policy file and skewshim_set_param accept the same
 * spellings. */
#include "params.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const char *const variants[] = {"coalesced", "staggered", NULL};

#define P(section, key, kind, min, excl, autok, choices, field)                         \
    {section, key, section "." key, kind, min, excl, autok, choices,                    \
     offsetof(skewshim_params, field), 0}

/* In the order of the fields of skewshim_params: bit i of a rule's
 * overrides is entry i (policy.h). */
const skewshim_param_desc skewshim_param_table[SKEWSHIM_NPARAMS] = {
    P("scattered", "block_count", SKEWSHIM_PK_INT, 1, 0, 0, NULL, scattered_block_count),
    P("tuna", "radix", SKEWSHIM_PK_INT, 2, 0, 1, NULL, tuna_radix),
    P("tuna_hier", "radix", SKEWSHIM_PK_INT, 2, 0, 1, NULL, tuna_hier_radix),
    P("tuna_hier", "block_count", SKEWSHIM_PK_INT, 1, 0, 0, NULL, tuna_hier_block_count),
    P("tuna_hier", "variant", SKEWSHIM_PK_ENUM, 0, 0, 0, variants, tuna_hier_variant),
    {"tuna_hier", "pay_check", "tuna_hier.pay_check", SKEWSHIM_PK_BOOL, 0, 0, 0, NULL,
     offsetof(skewshim_params, tuna_hier_pay_check), 1},
    P("sabre", "alpha", SKEWSHIM_PK_NUMBER, 1, 0, 0, NULL, sabre_alpha),
    P("sabre", "mtm_threshold", SKEWSHIM_PK_NUMBER, 1, 0, 0, NULL, sabre_mtm_threshold),
    P("fast", "pipeline", SKEWSHIM_PK_BOOL, 0, 0, 0, NULL, fast_pipeline),
    /* top level, and in rules */
    {NULL, "max_temp_bytes", "max_temp_bytes", SKEWSHIM_PK_SIZE, 0, 0, 0, NULL,
     offsetof(skewshim_params, max_temp_bytes), 0},
    /* the model feeds the log only; global, never in a rule */
    P("model", "intra_bw", SKEWSHIM_PK_NUMBER, 0, 1, 0, NULL, model_intra_bw),
    P("model", "inter_bw", SKEWSHIM_PK_NUMBER, 0, 1, 0, NULL, model_inter_bw),
    P("model", "latency", SKEWSHIM_PK_NUMBER, 0, 0, 0, NULL, model_latency),
    P("model", "overhead", SKEWSHIM_PK_NUMBER, 0, 0, 0, NULL, model_overhead),
    P("model", "plan_entry", SKEWSHIM_PK_NUMBER, 0, 0, 0, NULL, model_plan_entry),
};

int skewshim_param_index(const char *name)
{
    for (int i = 0; name && i < SKEWSHIM_NPARAMS; i++)
        if (strcmp(skewshim_param_table[i].name, name) == 0)
            return i;
    return -1;
}

int skewshim_param_in_rules(int i)
{
    const char *s = skewshim_param_table[i].section;
    return !s || strcmp(s, "model") != 0;
}

void skewshim_param_what(const skewshim_param_desc *d, char *buf, size_t len)
{
    switch (d->kind) {
    case SKEWSHIM_PK_INT:
        snprintf(buf, len, "an integer >= %d%s", (int)d->min, d->allow_auto ? " or 'auto'" : "");
        break;
    case SKEWSHIM_PK_NUMBER:
        snprintf(buf, len, "a number %s %g", d->exclusive ? ">" : ">=", d->min);
        break;
    case SKEWSHIM_PK_BOOL:
        snprintf(buf, len, "%s", SKEWSHIM_BOOL_WHAT);
        break;
    case SKEWSHIM_PK_SIZE:
        snprintf(buf, len, "%s", SKEWSHIM_SIZE_WHAT);
        break;
    case SKEWSHIM_PK_ENUM: {
        size_t n = (size_t)snprintf(buf, len, "one of ");
        for (int k = 0; d->choices[k] && n < len; k++)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", k ? ", " : "", d->choices[k]);
        break;
    }
    }
}

int skewshim_param_parse(const skewshim_param_desc *d, const char *s, skewshim_params *p)
{
    char *field = (char *)p + d->offset;
    long long ll;
    double x;
    uint64_t u;
    int b;
    switch (d->kind) {
    case SKEWSHIM_PK_INT:
        if (d->allow_auto && strcmp(s, "auto") == 0)
            ll = 0;
        else if (skewshim_text_ll(s, &ll) || ll < (long long)d->min || ll > 0x7fffffff)
            return -1;
        *(int *)(void *)field = (int)ll;
        return 0;
    case SKEWSHIM_PK_NUMBER:
        if (skewshim_text_double(s, &x) || x < d->min || (d->exclusive && x == d->min))
            return -1;
        *(double *)(void *)field = x;
        return 0;
    case SKEWSHIM_PK_BOOL:
        if (skewshim_text_bool(s, &b))
            return -1;
        *(int *)(void *)field = b;
        return 0;
    case SKEWSHIM_PK_SIZE:
        if (skewshim_text_size(s, &u))
            return -1;
        *(uint64_t *)(void *)field = u;
        return 0;
    case SKEWSHIM_PK_ENUM:
        for (int k = 0; d->choices[k]; k++)
            if (strcmp(s, d->choices[k]) == 0) {
                *(int *)(void *)field = k;
                return 0;
            }
        return -1;
    }
    return -1;
}

static size_t field_size(const skewshim_param_desc *d)
{
    switch (d->kind) {
    case SKEWSHIM_PK_NUMBER: return sizeof(double);
    case SKEWSHIM_PK_SIZE: return sizeof(uint64_t);
    default: return sizeof(int);
    }
}

void skewshim_param_copy(int i, skewshim_params *dst, const skewshim_params *src)
{
    const skewshim_param_desc *d = &skewshim_param_table[i];
    memcpy((char *)dst + d->offset, (const char *)src + d->offset, field_size(d));
}

void skewshim_params_copy_masked(skewshim_params *dst, const skewshim_params *src, unsigned mask)
{
    for (int i = 0; i < SKEWSHIM_NPARAMS; i++)
        if (mask & (1u << i))
            skewshim_param_copy(i, dst, src);
}

int skewshim_params_equal(const skewshim_params *a, const skewshim_params *b)
{
    for (int i = 0; i < SKEWSHIM_NPARAMS; i++) {
        const skewshim_param_desc *d = &skewshim_param_table[i];
        if (memcmp((const char *)a + d->offset, (const char *)b + d->offset, field_size(d)))
            return 0;
    }
    return 1;
}
