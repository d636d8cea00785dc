/* The table of algorithm parameters (params.c) and the text readers that
 * the policy file and skewshim_set_param share (text.c).  Pure C: no MPI,
 * no YAML. */
#ifndef SKEWSHIM_POLICY_PARAMS_H
#define SKEWSHIM_POLICY_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "policy.h"

typedef enum skewshim_param_kind {
    SKEWSHIM_PK_INT,      /* int >= min; 'auto' = 0 where allowed */
    SKEWSHIM_PK_NUMBER,   /* double >= min (> min when exclusive) */
    SKEWSHIM_PK_BOOL,     /* int 0 / 1 */
    SKEWSHIM_PK_SIZE,     /* uint64_t bytes, optional K/M/G unit */
    SKEWSHIM_PK_ENUM      /* int index into choices */
} skewshim_param_kind;

typedef struct skewshim_param_desc {
    const char *section;          /* YAML section; NULL: top level */
    const char *key;              /* key inside it */
    const char *name;             /* "section.key", as skewshim_set_param takes it */
    skewshim_param_kind kind;
    double min;
    int exclusive;
    int allow_auto;
    const char *const *choices;   /* NULL-terminated, SKEWSHIM_PK_ENUM */
    size_t offset;                /* in skewshim_params */
    /* Read only where the rules are matched, from the copies the policy
     * holds: skewshim_set_param, which changes the parameters a chosen
     * algorithm runs with, refuses it rather than take it and do nothing. */
    int load_only;
} skewshim_param_desc;

#define SKEWSHIM_NPARAMS 15
extern const skewshim_param_desc skewshim_param_table[SKEWSHIM_NPARAMS];

/* Index of a dotted name, or -1. */
int skewshim_param_index(const char *name);
/* Whether a rule may override entry i (the model is global only). */
int skewshim_param_in_rules(int i);
/* What a value must look like, for error messages. */
void skewshim_param_what(const skewshim_param_desc *d, char *buf, size_t len);
/* Text to the field of p; 0, or -1 when the text does not fit. */
int skewshim_param_parse(const skewshim_param_desc *d, const char *text, skewshim_params *p);
void skewshim_param_copy(int i, skewshim_params *dst, const skewshim_params *src);
/* Copy the fields whose bit (1 << table index) is set in mask. */
void skewshim_params_copy_masked(skewshim_params *dst, const skewshim_params *src, unsigned mask);

/* ---- text readers (text.c): 0, or -1 when the text does not fit ---- */

#define SKEWSHIM_SIZE_WHAT "a size in bytes (an integer, optionally followed by K, KB, KiB, M, MB, MiB, G, GB or GiB)"
#define SKEWSHIM_BOOL_WHAT "a boolean (true/false, yes/no, on/off or 1/0)"

int skewshim_text_ll(const char *s, long long *out);
int skewshim_text_double(const char *s, double *out);   /* finite */
int skewshim_text_size(const char *s, uint64_t *out);
int skewshim_text_bool(const char *s, int *out);        /* any case */
/* Case-insensitive s == lower (lower is all lower case). */
int skewshim_text_lower_eq(const char *s, const char *lower);

#endif
