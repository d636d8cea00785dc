#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Values from text, the same for a policy file and skewshim_set_param:
 * integers, finite numbers, sizes with units, booleans. */
#include "params.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int skewshim_text_ll(const char *s, long long *out)
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

int skewshim_text_double(const char *s, double *out)
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

int skewshim_text_lower_eq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        if (x != *b)
            return 0;
    }
    return *a == *b;
}

/* YAML 1.1's words, which users write in both files and on command lines,
 * and 1/0 as C tools pass them. */
int skewshim_text_bool(const char *s, int *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (skewshim_text_lower_eq(s, yes[i])) { *out = 1; return 0; }
        if (skewshim_text_lower_eq(s, no[i])) { *out = 0; return 0; }
    }
    return -1;
}

/* Sizes: an integer with an optional unit.  K, M, G are powers of 1024 in
 * every spelling (K, KB, KiB): nobody sizes a buffer in powers of 1000. */
int skewshim_text_size(const char *s, uint64_t *out)
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
