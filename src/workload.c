#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Workload generators (DESIGN.md section 5).  Pure C: the benchmark and the
 * tests call these on every rank and rely on identical output everywhere,
 * so the only randomness is a self-contained PRNG seeded from the request,
 * never rand() or the clock. */

#include "workload.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const wl_names[SKEWSHIM_WL_COUNT] = {
    "equal", "uniform", "normal", "power", "zipf",
    "zero", "hot_send", "hot_recv", "moe",
};

const char *skewshim_wl_name(int kind)
{
    if (kind < 0 || kind >= SKEWSHIM_WL_COUNT)
        return "unknown";
    return wl_names[kind];
}

int skewshim_wl_from_name(const char *name)
{
    if (!name)
        return -1;
    for (int k = 0; k < SKEWSHIM_WL_COUNT; k++)
        if (strcmp(name, wl_names[k]) == 0)
            return k;
    return -1;
}

/* ---- PRNG: splitmix64.  Small, fast, good enough for workload shapes, and
 * its output is defined by integer arithmetic only, so it is the same on
 * every platform and compiler. */

typedef struct rng { uint64_t s; } rng;

static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* One independent stream per (seed, kind, row): a row's values then do not
 * depend on how many draws earlier rows needed (rejection sampling). */
static rng rng_stream(uint64_t seed, int kind, uint64_t row)
{
    rng r = { seed };
    r.s = rng_next(&r) ^ ((uint64_t)kind << 56) ^ (row * 0xd1b54a32d192ed03ULL);
    rng_next(&r);
    return r;
}

/* Uniform in [0, n] without modulo bias. */
static uint64_t rng_upto(rng *r, uint64_t n)
{
    if (n == UINT64_MAX)
        return rng_next(r);
    uint64_t span = n + 1, lim = UINT64_MAX - UINT64_MAX % span;
    uint64_t x;
    do
        x = rng_next(r);
    while (x >= lim);
    return x % span;
}

/* Uniform in [0, 1). */
static double rng_unit(rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

static uint64_t round_clamp(double v, uint64_t S)
{
    if (!(v > 0.0))
        return 0;
    double r = floor(v + 0.5);
    return r >= (double)S ? S : (uint64_t)r;
}

static void shuffle(rng *r, uint64_t *a, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)rng_upto(r, i - 1);
        uint64_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

/* ---- generators ---- */

static void gen_normal(const skewshim_wl *w, int P, uint64_t *c)
{
    double sd = (w->param > 0 ? w->param : 0.25) * (double)w->S;
    double mean = (double)w->S / 2.0;
    for (int i = 0; i < P; i++) {
        rng r = rng_stream(w->seed, SKEWSHIM_WL_NORMAL, (uint64_t)i);
        for (int j = 0; j < P; j++) {
            uint64_t v = w->S + 1;
            /* Resampling truncates without piling mass on 0 and S.  A huge
             * sd makes acceptance rare; its limit is uniform on [0, S], so
             * after a few misses draw that instead of looping on. */
            for (int tries = 0; tries < 64 && v > w->S; tries++) {
                double u1 = 1.0 - rng_unit(&r), u2 = rng_unit(&r);
                double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
                double x = mean + sd * z;
                if (x >= -0.5 && x < (double)w->S + 0.5)
                    v = round_clamp(x, w->S);
            }
            if (v > w->S)
                v = rng_upto(&r, w->S);
            c[(size_t)i * P + j] = v;
        }
    }
}

static int gen_power(const skewshim_wl *w, int P, uint64_t *c)
{
    double x = w->param > 0 ? w->param : 0.95;
    if (x > 1.0)
        return -1;   /* blocks would exceed S */
    for (int i = 0; i < P; i++) {
        uint64_t *row = c + (size_t)i * P;
        for (int j = 0; j < P; j++)
            row[j] = round_clamp((double)w->S * pow(x, j), w->S);
        row[0] = w->S;   /* exact, whatever pow rounds to */
        rng r = rng_stream(w->seed, SKEWSHIM_WL_POWER, (uint64_t)i);
        shuffle(&r, row, (size_t)P);
    }
    return 0;
}

static int gen_zipf(const skewshim_wl *w, int P, uint64_t *c)
{
    double s = w->param > 0 ? w->param : 0.8;
    size_t n = (size_t)P * P;
    /* c doubles as the permutation: c[pair] = popularity rank - 1. */
    for (size_t k = 0; k < n; k++)
        c[k] = k;
    rng r = rng_stream(w->seed, SKEWSHIM_WL_ZIPF, 0);
    shuffle(&r, c, n);
    for (size_t k = 0; k < n; k++)
        c[k] = c[k] == 0 ? w->S
                         : round_clamp((double)w->S / pow((double)(c[k] + 1), s), w->S);
    return 0;
}

static int gen_hot(const skewshim_wl *w, int P, uint64_t *c, int by_row)
{
    double f = w->param > 0 ? w->param : 1.0 / 16.0;
    if (f > 1.0)
        return -1;
    uint64_t cold = round_clamp((double)w->S * f, w->S);
    int hot = (int)(w->seed % (uint64_t)P);
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++)
            c[(size_t)i * P + j] = (by_row ? i : j) == hot ? w->S : cold;
    return 0;
}

/* Index of the first cdf entry > u (cdf strictly increasing up to cdf[n-1]). */
static int cdf_pick(const double *cdf, int n, double u)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static int moe_topk(const skewshim_wl *w, int P)
{
    int k = w->topk > 0 ? w->topk : 2;
    return k > P ? P : k;
}

int skewshim_wl_moe_tokens(const skewshim_wl *w, int P, uint64_t *tok)
{
    if (P < 1 || !w || !tok)
        return -1;
    double s = w->param > 0 ? w->param : 0.8;
    int topk = moe_topk(w, P);
    int tokens = w->tokens > 0 ? w->tokens : 1024;
    double *weight = malloc((size_t)P * sizeof *weight);
    double *cdf = malloc((size_t)P * sizeof *cdf);
    uint64_t *perm = malloc((size_t)P * sizeof *perm);
    int *chosen = malloc((size_t)topk * sizeof *chosen);
    if (!weight || !cdf || !perm || !chosen) {
        free(weight); free(cdf); free(perm); free(chosen);
        return -1;
    }
    /* Popularity is global (the same hot experts for every rank, as in a
     * real MoE layer) but which expert is hot is seeded, not always rank 0. */
    for (int e = 0; e < P; e++)
        perm[e] = (uint64_t)e;
    rng pr = rng_stream(w->seed, SKEWSHIM_WL_MOE, UINT64_MAX);
    shuffle(&pr, perm, (size_t)P);
    double total = 0;
    for (int e = 0; e < P; e++) {
        weight[e] = 1.0 / pow((double)(perm[e] + 1), s);
        total += weight[e];
        cdf[e] = total;
    }
    memset(tok, 0, (size_t)P * P * sizeof *tok);
    for (int i = 0; i < P; i++) {
        rng r = rng_stream(w->seed, SKEWSHIM_WL_MOE, (uint64_t)i);
        uint64_t *row = tok + (size_t)i * P;
        for (int t = 0; t < tokens; t++) {
            double left = total;
            for (int k = 0; k < topk; k++) {
                int e = -1;
                /* Rejection keeps the draw exact (conditional on distinct
                 * experts) and cheap; when the popular experts are taken and
                 * it keeps missing, scan the remaining weight instead. */
                for (int tries = 0; tries < 32 && e < 0; tries++) {
                    int cand = cdf_pick(cdf, P, rng_unit(&r) * total);
                    int dup = 0;
                    for (int q = 0; q < k; q++)
                        dup |= chosen[q] == cand;
                    if (!dup)
                        e = cand;
                }
                if (e < 0) {
                    double u = rng_unit(&r) * left;
                    for (int cand = 0; cand < P; cand++) {
                        int dup = 0;
                        for (int q = 0; q < k; q++)
                            dup |= chosen[q] == cand;
                        if (dup)
                            continue;
                        e = cand;   /* the last free one absorbs rounding */
                        if (u < weight[cand])
                            break;
                        u -= weight[cand];
                    }
                }
                chosen[k] = e;
                left -= weight[e];
                row[e]++;
            }
        }
    }
    free(weight); free(cdf); free(perm); free(chosen);
    return 0;
}

static int gen_moe(const skewshim_wl *w, int P, uint64_t *c)
{
    if (skewshim_wl_moe_tokens(w, P, c) != 0)
        return -1;
    size_t n = (size_t)P * P;
    uint64_t maxc = 0;
    for (size_t k = 0; k < n; k++)
        if (c[k] > maxc)
            maxc = c[k];
    for (size_t k = 0; k < n; k++)
        c[k] = maxc == 0 ? 0
             : c[k] == maxc ? w->S
             : round_clamp((double)c[k] * (double)w->S / (double)maxc, w->S);
    return 0;
}

int skewshim_wl_matrix(const skewshim_wl *w, int P, uint64_t *counts)
{
    if (!w || !counts || P < 1)
        return -1;
    size_t n = (size_t)P * P;
    switch (w->kind) {
    case SKEWSHIM_WL_EQUAL:
    case SKEWSHIM_WL_ZERO: {
        uint64_t v = w->kind == SKEWSHIM_WL_EQUAL ? w->S : 0;
        for (size_t k = 0; k < n; k++)
            counts[k] = v;
        return 0;
    }
    case SKEWSHIM_WL_UNIFORM:
        for (int i = 0; i < P; i++) {
            rng r = rng_stream(w->seed, SKEWSHIM_WL_UNIFORM, (uint64_t)i);
            for (int j = 0; j < P; j++)
                counts[(size_t)i * P + j] = rng_upto(&r, w->S);
        }
        return 0;
    case SKEWSHIM_WL_NORMAL:
        gen_normal(w, P, counts);
        return 0;
    case SKEWSHIM_WL_POWER:
        return gen_power(w, P, counts);
    case SKEWSHIM_WL_ZIPF:
        return gen_zipf(w, P, counts);
    case SKEWSHIM_WL_HOT_SEND:
        return gen_hot(w, P, counts, 1);
    case SKEWSHIM_WL_HOT_RECV:
        return gen_hot(w, P, counts, 0);
    case SKEWSHIM_WL_MOE:
        return gen_moe(w, P, counts);
    default:
        return -1;
    }
}

/* ---- replay: a reader for exactly the matrix line of the log ----
 * {"matrix": {"call": i, "comm": id, "P": n, "ranks_per_node": q,
 *             "type_size": t, "bytes": [[row 0], [row 1], ...]}}
 * One JSON object per line.  A hand-written reader keeps the shim free of a
 * JSON dependency; it accepts the keys of the inner object in any order and
 * skips unknown ones, so the log can grow fields without breaking replay. */

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
