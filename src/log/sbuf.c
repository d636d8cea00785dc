#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* The growable line buffer of the log and the JSON values written into it.
 * Records are built whole in memory so that each reaches the file in a
 * single write(2) (log.c); a stack buffer covers the common case and the
 * heap takes over only for long lines (matrices). */

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_internal.h"

void skewshim_sb_init(sbuf *b, char *stack, size_t cap)
{
    b->p = stack;
    b->n = 0;
    b->cap = cap;
    b->heap = 0;
    b->err = 0;
    if (cap) b->p[0] = '\0';
}

void skewshim_sb_free(sbuf *b)
{
    if (b->heap) free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
    b->heap = 0;
}

static int sb_reserve(sbuf *b, size_t extra)
{
    if (b->err) return -1;
    if (b->n + extra + 1 <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + extra + 1) cap *= 2;
    char *p = b->heap ? realloc(b->p, cap) : malloc(cap);
    if (!p) {
        b->err = 1;
        return -1;
    }
    if (!b->heap && b->n) memcpy(p, b->p, b->n);
    b->p = p;
    b->cap = cap;
    b->heap = 1;
    b->p[b->n] = '\0';
    return 0;
}

static void sb_mem(sbuf *b, const char *s, size_t len)
{
    if (sb_reserve(b, len)) return;
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
}

void skewshim_sb_cat(sbuf *b, const char *s)
{
    sb_mem(b, s, strlen(s));
}

void skewshim_sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (len < 0) {
        b->err = 1;
        return;
    }
    if ((size_t)len < sizeof tmp) {
        sb_mem(b, tmp, (size_t)len);
        return;
    }
    if (sb_reserve(b, (size_t)len)) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)len + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)len;
}

/* JSON string with escapes; non-ASCII bytes pass through (paths are UTF-8
 * in practice, and JSON allows them raw). */
void skewshim_sb_str(sbuf *b, const char *s)
{
    skewshim_sb_cat(b, "\"");
    for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
        if (*c == '"' || *c == '\\') {
            char e[2] = {'\\', (char)*c};
            sb_mem(b, e, 2);
        } else if (*c < 0x20) {
            skewshim_sb_printf(b, "\\u%04x", *c);
        } else {
            sb_mem(b, (const char *)c, 1);
        }
    }
    skewshim_sb_cat(b, "\"");
}

/* A number Python's json reads: nan/inf become null, and a locale that
 * writes decimal commas (an application may call setlocale) is undone. */
void skewshim_sb_num(sbuf *b, double v)
{
    if (!isfinite(v)) {
        skewshim_sb_cat(b, "null");
        return;
    }
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.10g", v);
    for (char *c = tmp; *c; c++)
        if (*c == ',') *c = '.';
    skewshim_sb_cat(b, tmp);
}

void skewshim_sb_u64(sbuf *b, uint64_t v)
{
    skewshim_sb_printf(b, "%" PRIu64, v);
}

/* ", \"key\": " */
void skewshim_sb_key(sbuf *b, const char *key, int first)
{
    if (!first) skewshim_sb_cat(b, ", ");
    skewshim_sb_str(b, key);
    skewshim_sb_cat(b, ": ");
}
