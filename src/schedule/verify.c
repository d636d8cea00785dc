/* The replay checker behind every planner's property tests.  Each send byte
 * carries a tag naming its origin, destination and offset; the schedule is
 * replayed stage by stage (reads of a stage before its writes, as concurrent
 * moves would see them) and every receive byte must end up holding its own
 * tag, written exactly once. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule/sched.h"

typedef struct rank_mem {
    uint64_t *tmp;       /* tags */
    uint64_t *recv;      /* tags, receive blocks laid out by origin */
    uint8_t *writes;     /* writes per receive byte, saturating */
} rank_mem;

typedef struct interval {
    int rank;
    uint64_t lo, hi;
} interval;

typedef struct verifier {
    const skewshim_sched *s;
    const uint64_t *bytes;
    int P;
    uint64_t *rdisp;     /* [P*P]: offset of block (i -> j) in j's receive area */
    uint64_t *rtotal;    /* [P] */
    rank_mem *mem;
    char *err;
    size_t errlen;
} verifier;

static int fail(verifier *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->err, v->errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static uint64_t tag_of(int P, int i, int j, uint64_t k)
{
    return ((uint64_t)i * (uint64_t)P + (uint64_t)j + 1) << 40 | k;
}

static int check_move(verifier *v, size_t idx, const skewshim_move *m)
{
    int P = v->P;
    if (m->src < 0 || m->src >= P || m->dst < 0 || m->dst >= P)
        return fail(v, "move %zu: rank out of range", idx);
    switch (m->src_loc) {
    case SKEWSHIM_LOC_SEND:
        if (m->src_blk < 0 || m->src_blk >= P)
            return fail(v, "move %zu: bad send block %d", idx, m->src_blk);
        if (m->src_off + m->bytes > v->bytes[(size_t)m->src * P + m->src_blk])
            return fail(v, "move %zu: reads past send block %d->%d", idx, m->src, m->src_blk);
        break;
    case SKEWSHIM_LOC_RECV:
        if (m->src_blk < 0 || m->src_blk >= P)
            return fail(v, "move %zu: bad recv block %d", idx, m->src_blk);
        if (m->src_off + m->bytes > v->bytes[(size_t)m->src_blk * P + m->src])
            return fail(v, "move %zu: reads past recv block", idx);
        break;
    case SKEWSHIM_LOC_TMP:
        if (m->src_off + m->bytes > v->s->tmp_bytes[m->src])
            return fail(v, "move %zu: reads past declared temp of rank %d", idx, m->src);
        break;
    default:
        return fail(v, "move %zu: bad src loc", idx);
    }
    switch (m->dst_loc) {
    case SKEWSHIM_LOC_SEND:
        return fail(v, "move %zu: writes into the user's send buffer", idx);
    case SKEWSHIM_LOC_RECV:
        if (m->dst_blk < 0 || m->dst_blk >= P)
            return fail(v, "move %zu: bad recv block %d", idx, m->dst_blk);
        if (m->dst_off + m->bytes > v->bytes[(size_t)m->dst_blk * P + m->dst])
            return fail(v, "move %zu: writes past recv block %d of rank %d", idx, m->dst_blk,
                        m->dst);
        break;
    case SKEWSHIM_LOC_TMP:
        if (m->dst_off + m->bytes > v->s->tmp_bytes[m->dst])
            return fail(v, "move %zu: writes past declared temp of rank %d", idx, m->dst);
        break;
    default:
        return fail(v, "move %zu: bad dst loc", idx);
    }
    return 0;
}

static int cmp_interval(const void *a, const void *b)
{
    const interval *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return 0;
}

/* Within a stage, temp written by one move must be neither read nor written
 * by another: concurrent moves have no order. */
static int check_stage_temp(verifier *v, size_t a, size_t b, interval *w, interval *r)
{
    size_t nw = 0, nr = 0;
    for (size_t i = a; i < b; i++) {
        const skewshim_move *m = &v->s->moves[i];
        if (m->dst_loc == SKEWSHIM_LOC_TMP)
            w[nw++] = (interval){m->dst, m->dst_off, m->dst_off + m->bytes};
        if (m->src_loc == SKEWSHIM_LOC_TMP)
            r[nr++] = (interval){m->src, m->src_off, m->src_off + m->bytes};
    }
    qsort(w, nw, sizeof *w, cmp_interval);
    for (size_t i = 1; i < nw; i++)
        if (w[i].rank == w[i - 1].rank && w[i].lo < w[i - 1].hi)
            return fail(v, "stage %d: two moves write the same temp of rank %d",
                        v->s->moves[a].stage, w[i].rank);
    for (size_t i = 0; i < nr; i++) {
        /* binary search for the last write starting before r.hi */
        size_t lo = 0, hi = nw;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (cmp_interval(&w[mid], &(interval){r[i].rank, r[i].hi, 0}) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo > 0 && w[lo - 1].rank == r[i].rank && w[lo - 1].hi > r[i].lo)
            return fail(v, "stage %d: temp of rank %d read and written in the same stage",
                        v->s->moves[a].stage, r[i].rank);
    }
    return 0;
}

static uint64_t *src_ptr_tags(verifier *v, const skewshim_move *m, uint64_t *scratch)
{
    int P = v->P;
    switch (m->src_loc) {
    case SKEWSHIM_LOC_SEND:
        for (uint64_t k = 0; k < m->bytes; k++)
            scratch[k] = tag_of(P, m->src, m->src_blk, m->src_off + k);
        return scratch;
    case SKEWSHIM_LOC_RECV:
        memcpy(scratch, v->mem[m->src].recv + v->rdisp[(size_t)m->src_blk * P + m->src] + m->src_off,
               m->bytes * sizeof *scratch);
        return scratch;
    default:
        memcpy(scratch, v->mem[m->src].tmp + m->src_off, m->bytes * sizeof *scratch);
        return scratch;
    }
}

static int replay(verifier *v)
{
    const skewshim_sched *s = v->s;
    int P = v->P;
    interval *w = malloc((s->nmoves + 1) * sizeof *w);
    interval *r = malloc((s->nmoves + 1) * sizeof *r);
    uint64_t **staged = calloc(s->nmoves + 1, sizeof *staged);
    int rc = 0;
    if (!w || !r || !staged) {
        rc = fail(v, "out of memory");
        goto out;
    }
    for (size_t a = 0; a < s->nmoves && !rc;) {
        size_t b = a;
        while (b < s->nmoves && s->moves[b].stage == s->moves[a].stage)
            b++;
        if (b < s->nmoves && s->moves[b].stage < s->moves[a].stage) {
            rc = fail(v, "moves not sorted by stage (call skewshim_sched_finish)");
            break;
        }
        if ((rc = check_stage_temp(v, a, b, w, r)))
            break;
        for (size_t i = a; i < b; i++) {
            staged[i] = malloc(s->moves[i].bytes * sizeof(uint64_t));
            if (!staged[i]) {
                rc = fail(v, "out of memory");
                break;
            }
            src_ptr_tags(v, &s->moves[i], staged[i]);
        }
        for (size_t i = a; i < b && !rc; i++) {
            const skewshim_move *m = &s->moves[i];
            if (m->dst_loc == SKEWSHIM_LOC_TMP) {
                memcpy(v->mem[m->dst].tmp + m->dst_off, staged[i], m->bytes * sizeof(uint64_t));
            } else {
                uint64_t base = v->rdisp[(size_t)m->dst_blk * P + m->dst] + m->dst_off;
                memcpy(v->mem[m->dst].recv + base, staged[i], m->bytes * sizeof(uint64_t));
                for (uint64_t k = 0; k < m->bytes; k++)
                    if (v->mem[m->dst].writes[base + k] < 255)
                        v->mem[m->dst].writes[base + k]++;
            }
        }
        for (size_t i = a; i < b; i++) {
            free(staged[i]);
            staged[i] = NULL;
        }
        a = b;
    }
out:
    free(w);
    free(r);
    free(staged);
    return rc;
}

static int check_result(verifier *v)
{
    int P = v->P;
    for (int j = 0; j < P; j++)
        for (int i = 0; i < P; i++) {
            uint64_t n = v->bytes[(size_t)i * P + j];
            uint64_t base = v->rdisp[(size_t)i * P + j];
            for (uint64_t k = 0; k < n; k++) {
                if (v->mem[j].writes[base + k] != 1)
                    return fail(v, "rank %d, block from %d, byte %llu written %d times", j, i,
                                (unsigned long long)k, v->mem[j].writes[base + k]);
                if (v->mem[j].recv[base + k] != tag_of(P, i, j, k))
                    return fail(v, "rank %d, block from %d, byte %llu holds the wrong data", j, i,
                                (unsigned long long)k);
            }
        }
    return 0;
}

int skewshim_sched_verify(const skewshim_sched *global, const uint64_t *bytes,
                          char *err, size_t errlen)
{
    verifier v = {.s = global, .bytes = bytes, .P = global->nranks, .err = err, .errlen = errlen};
    int P = v.P, rc = 0;
    if (errlen)
        err[0] = 0;
    if (global->rank >= 0)
        return fail(&v, "verify needs a global schedule");
    v.rdisp = calloc((size_t)P * P + 1, sizeof *v.rdisp);
    v.rtotal = calloc((size_t)P + 1, sizeof *v.rtotal);
    v.mem = calloc((size_t)P + 1, sizeof *v.mem);
    if (!v.rdisp || !v.rtotal || !v.mem) {
        rc = fail(&v, "out of memory");
        goto out;
    }
    for (int j = 0; j < P; j++)
        for (int i = 0; i < P; i++) {
            v.rdisp[(size_t)i * P + j] = v.rtotal[j];
            v.rtotal[j] += bytes[(size_t)i * P + j];
        }
    for (int j = 0; j < P; j++) {
        v.mem[j].tmp = calloc(global->tmp_bytes[j] + 1, sizeof(uint64_t));
        v.mem[j].recv = calloc(v.rtotal[j] + 1, sizeof(uint64_t));
        v.mem[j].writes = calloc(v.rtotal[j] + 1, 1);
        if (!v.mem[j].tmp || !v.mem[j].recv || !v.mem[j].writes) {
            rc = fail(&v, "out of memory");
            goto out;
        }
    }
    for (size_t i = 0; i < global->nmoves && !rc; i++)
        rc = check_move(&v, i, &global->moves[i]);
    if (!rc)
        rc = replay(&v);
    if (!rc)
        rc = check_result(&v);
out:
    if (v.mem)
        for (int j = 0; j < P; j++) {
            free(v.mem[j].tmp);
            free(v.mem[j].recv);
            free(v.mem[j].writes);
        }
    free(v.mem);
    free(v.rdisp);
    free(v.rtotal);
    return rc;
}
