#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Replay (skewshim_wl_replay_load): a reader for exactly the matrix line of
 * the log,
 * {"matrix": {"call": i, "comm": id, "P": n, "ranks_per_node": q,
 *             "type_size": t, "bytes": [[row 0], [row 1], ...]}}
 * One JSON object per line.  A hand-written reader keeps the shim free of a
 * JSON dependency; it accepts the keys of the inner object in any order and
 * skips unknown ones, so the log can grow fields without breaking replay. */

#include "workload/workload.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct jcur {
    const char *s;
    size_t pos;
    const char *path;
    long line;
    char *err;
    size_t errlen;
} jcur;

static int jfail(jcur *c, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->err && c->errlen)
        snprintf(c->err, c->errlen, "%s:%ld:%zu: %s", c->path, c->line,
                 c->pos + 1, msg);
    return -1;
}

static void jws(jcur *c)
{
    while (c->s[c->pos] && isspace((unsigned char)c->s[c->pos]))
        c->pos++;
}

static int jexpect(jcur *c, char ch)
{
    jws(c);
    if (c->s[c->pos] != ch)
        return jfail(c, "expected '%c'", ch);
    c->pos++;
    return 0;
}

/* Keys are short ASCII names; longer or escaped ones are read but cut. */
static int jstring(jcur *c, char *out, size_t cap)
{
    size_t n = 0;
    if (jexpect(c, '"'))
        return -1;
    for (;;) {
        char ch = c->s[c->pos];
        if (ch == '\0')
            return jfail(c, "unterminated string");
        c->pos++;
        if (ch == '"')
            break;
        if (ch == '\\') {
            if (c->s[c->pos] == '\0')
                return jfail(c, "unterminated string");
            ch = c->s[c->pos++];
        }
        if (n + 1 < cap)
            out[n++] = ch;
    }
    if (cap)
        out[n] = '\0';
    return 0;
}

static int ju64(jcur *c, uint64_t *v)
{
    jws(c);
    if (!isdigit((unsigned char)c->s[c->pos]))
        return jfail(c, "expected a non-negative integer");
    uint64_t x = 0;
    while (isdigit((unsigned char)c->s[c->pos])) {
        unsigned d = (unsigned)(c->s[c->pos] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return jfail(c, "integer out of range");
        x = x * 10 + d;
        c->pos++;
    }
    char nx = c->s[c->pos];
    if (nx == '.' || nx == 'e' || nx == 'E')
        return jfail(c, "expected an integer");
    *v = x;
    return 0;
}

static int jint(jcur *c, int *v, int lo, const char *what)
{
    uint64_t x;
    if (ju64(c, &x))
        return -1;
    if (x < (uint64_t)lo || x > 0x7fffffff)
        return jfail(c, "%s out of range", what);
    *v = (int)x;
    return 0;
}

/* Skip any JSON value (unknown keys). */
static int jskip(jcur *c, int depth)
{
    jws(c);
    char ch = c->s[c->pos];
    if (depth > 64)
        return jfail(c, "nesting too deep");
    if (ch == '"') {
        char dummy[1];
        return jstring(c, dummy, sizeof dummy);
    }
    if (ch == '{' || ch == '[') {
        char close = ch == '{' ? '}' : ']';
        c->pos++;
        jws(c);
        if (c->s[c->pos] == close) {
            c->pos++;
            return 0;
        }
        for (;;) {
            if (ch == '{') {
                char key[2];
                if (jstring(c, key, sizeof key) || jexpect(c, ':'))
                    return -1;
            }
            if (jskip(c, depth + 1))
                return -1;
            jws(c);
            if (c->s[c->pos] == ',') {
                c->pos++;
                continue;
            }
            return jexpect(c, close);
        }
    }
    size_t start = c->pos;
    while (c->s[c->pos] && (isalnum((unsigned char)c->s[c->pos]) ||
                            strchr("+-.", c->s[c->pos])))
        c->pos++;
    return c->pos > start ? 0 : jfail(c, "expected a value");
}

/* bytes: an array of rows of integers; the shape is checked against P by
 * the caller, since the keys may come in any order. */
static int jbytes(jcur *c, uint64_t **vals, size_t *nvals, int *rows, int *cols)
{
    size_t cap = 0;
    *nvals = 0;
    *rows = 0;
    *cols = -1;
    if (jexpect(c, '['))
        return -1;
    jws(c);
    if (c->s[c->pos] == ']') {
        c->pos++;
        return 0;
    }
    for (;;) {
        int n = 0;
        if (jexpect(c, '['))
            return -1;
        jws(c);
        if (c->s[c->pos] != ']') {
            for (;;) {
                uint64_t v;
                if (ju64(c, &v))
                    return -1;
                if (*nvals == cap) {
                    size_t ncap = cap ? 2 * cap : 256;
                    uint64_t *nv = realloc(*vals, ncap * sizeof *nv);
                    if (!nv)
                        return jfail(c, "out of memory");
                    *vals = nv;
                    cap = ncap;
                }
                (*vals)[(*nvals)++] = v;
                n++;
                jws(c);
                if (c->s[c->pos] == ',') {
                    c->pos++;
                    continue;
                }
                break;
            }
        }
        if (jexpect(c, ']'))
            return -1;
        if (*cols >= 0 && n != *cols)
            return jfail(c, "row %d has %d entries, row 0 has %d", *rows, n, *cols);
        *cols = n;
        (*rows)++;
        jws(c);
        if (c->s[c->pos] == ',') {
            c->pos++;
            continue;
        }
        return jexpect(c, ']');
    }
}

static int parse_matrix(jcur *c, skewshim_matrix *m, int *q, int *ts)
{
    int P = -1, rows = 0, cols = 0, have_bytes = 0;
    uint64_t *vals = NULL;
    size_t nvals = 0;
    *q = 0;
    *ts = 1;
    if (jexpect(c, '{'))
        goto fail;
    for (;;) {
        char key[32];
        if (jstring(c, key, sizeof key) || jexpect(c, ':'))
            goto fail;
        if (strcmp(key, "P") == 0) {
            if (jint(c, &P, 1, "P"))
                goto fail;
        } else if (strcmp(key, "ranks_per_node") == 0) {
            if (jint(c, q, 0, "ranks_per_node"))
                goto fail;
        } else if (strcmp(key, "type_size") == 0) {
            if (jint(c, ts, 1, "type_size"))
                goto fail;
        } else if (strcmp(key, "bytes") == 0) {
            if (jbytes(c, &vals, &nvals, &rows, &cols))
                goto fail;
            have_bytes = 1;
        } else if (jskip(c, 0)) {
            goto fail;
        }
        jws(c);
        if (c->s[c->pos] == ',') {
            c->pos++;
            continue;
        }
        if (jexpect(c, '}'))
            goto fail;
        break;
    }
    if (jexpect(c, '}'))
        goto fail;
    jws(c);
    if (c->s[c->pos] != '\0') {
        jfail(c, "trailing characters after the record");
        goto fail;
    }
    if (P < 0 || !have_bytes) {
        jfail(c, "matrix record without %s", P < 0 ? "\"P\"" : "\"bytes\"");
        goto fail;
    }
    if (rows != P || (P > 0 && cols != P)) {
        jfail(c, "bytes is %dx%d, P is %d", rows, cols < 0 ? 0 : cols, P);
        goto fail;
    }
    if (skewshim_matrix_alloc(m, P) != 0) {
        jfail(c, "out of memory");
        goto fail;
    }
    memcpy(m->b, vals, nvals * sizeof *vals);
    free(vals);
    return 0;
fail:
    free(vals);
    return -1;
}

/* One line, any length.  NULL at end of file, or with *oom set. */
static char *read_line(FILE *f, char **buf, size_t *cap, int *oom)
{
    size_t n = 0;
    if (!*buf) {
        *cap = 4096;
        if (!(*buf = malloc(*cap))) {
            *oom = 1;
            return NULL;
        }
    }
    while (fgets(*buf + n, (int)(*cap - n), f)) {
        n += strlen(*buf + n);
        if ((n > 0 && (*buf)[n - 1] == '\n') || n + 1 < *cap)
            return *buf;   /* whole line, or the last one without '\n' */
        if (*cap > (size_t)0x3fffffff) {
            *oom = 1;      /* fgets takes an int size */
            return NULL;
        }
        char *nb = realloc(*buf, *cap * 2);
        if (!nb) {
            *oom = 1;
            return NULL;
        }
        *buf = nb;
        *cap *= 2;
    }
    return n ? *buf : NULL;
}

/* A matrix record is a line whose first key is "matrix"; the log's other
 * record types start with other keys and are skipped unread. */
static int is_matrix_line(jcur *c)
{
    char key[16];
    jws(c);
    if (c->s[c->pos] != '{')
        return 0;
    c->pos++;
    jws(c);
    if (c->s[c->pos] != '"' || jstring(c, key, sizeof key) != 0)
        return 0;
    return strcmp(key, "matrix") == 0;
}

int skewshim_wl_replay_load(const char *path, int index, skewshim_matrix *m,
                            int *ranks_per_node, int *type_size,
                            char *err, size_t errlen)
{
    jcur c = { NULL, 0, path, 0, err, errlen };
    if (err && errlen)
        err[0] = '\0';
    if (index < 0)
        return jfail(&c, "matrix index %d is negative", index);
    FILE *f = fopen(path, "r");
    if (!f) {
        if (err && errlen)
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *buf = NULL;
    size_t cap = 0;
    int seen = 0, rc = -1, oom = 0;
    while (read_line(f, &buf, &cap, &oom)) {
        c.s = buf;
        c.pos = 0;
        c.line++;
        if (!is_matrix_line(&c))
            continue;
        if (seen++ < index)
            continue;
        int q, ts;
        if (jexpect(&c, ':') == 0 && parse_matrix(&c, m, &q, &ts) == 0) {
            *ranks_per_node = q;
            *type_size = ts;
            rc = 0;
        }
        break;
    }
    if (seen <= index && err && errlen) {
        if (oom || ferror(f))
            snprintf(err, errlen, "%s:%ld: %s", path, c.line + 1,
                     oom ? "line too long for memory" : "read error");
        else
            snprintf(err, errlen, "%s: matrix index %d asked, the file has %d "
                     "matrix records", path, index, seen);
    }
    free(buf);
    fclose(f);
    return rc;
}
