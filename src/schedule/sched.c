#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule/sched.h"

int skewshim_sched_init(skewshim_sched *s, int nranks, int rank)
{
    memset(s, 0, sizeof *s);
    s->nranks = nranks;
    s->rank = rank;
    s->tmp_bytes = calloc(rank < 0 ? (size_t)(nranks > 0 ? nranks : 1) : 1, sizeof *s->tmp_bytes);
    return s->tmp_bytes ? 0 : -1;
}

void skewshim_sched_reset(skewshim_sched *s)
{
    s->nmoves = 0;
    s->nstages = 0;
    memset(&s->stats, 0, sizeof s->stats);
    memset(s->tmp_bytes, 0, (s->rank < 0 ? (size_t)(s->nranks > 0 ? s->nranks : 1) : 1) *
                                sizeof *s->tmp_bytes);
}

void skewshim_sched_free(skewshim_sched *s)
{
    free(s->moves);
    free(s->tmp_bytes);
    memset(s, 0, sizeof *s);
}

int skewshim_sched_add(skewshim_sched *s, const skewshim_move *m)
{
    if (s->nmoves == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        skewshim_move *n = realloc(s->moves, cap * sizeof *n);
        if (!n)
            return -1;
        s->moves = n;
        s->cap = cap;
    }
    s->moves[s->nmoves++] = *m;
    return 0;
}

int skewshim_sched_move(skewshim_sched *s, int stage,
                        int src, int src_loc, int src_blk, uint64_t src_off,
                        int dst, int dst_loc, int dst_blk, uint64_t dst_off,
                        uint64_t bytes, uint32_t flags)
{
    if (bytes == 0)
        return 0;
    skewshim_move m = {
        .src = src, .dst = dst,
        .src_loc = (uint8_t)src_loc, .dst_loc = (uint8_t)dst_loc,
        .stage = (uint16_t)stage, .flags = flags,
        .src_blk = src_loc == SKEWSHIM_LOC_TMP ? -1 : src_blk,
        .dst_blk = dst_loc == SKEWSHIM_LOC_TMP ? -1 : dst_blk,
        .src_off = src_off, .dst_off = dst_off, .bytes = bytes,
    };
    return skewshim_sched_add(s, &m);
}

static void add_stats(const skewshim_move *m, int rank, skewshim_sched_stats *st)
{
    if (m->src == m->dst) {
        if (rank < 0 || m->src == rank)
            st->bytes_copied += m->bytes;
        return;
    }
    if (rank < 0 || m->src == rank) {
        st->messages++;
        st->bytes_sent += m->bytes;
        /* Data leaving from anywhere but the send buffer was staged on the
         * way: it is another rank's data, or this rank's own data sent twice. */
        if (m->src_loc != SKEWSHIM_LOC_SEND)
            st->bytes_forwarded += m->bytes;
    }
}

static void compute_stats(const skewshim_sched *s, int rank, skewshim_sched_stats *st)
{
    memset(st, 0, sizeof *st);
    int last_stage = -1;
    for (size_t i = 0; i < s->nmoves; i++) {
        const skewshim_move *m = &s->moves[i];
        add_stats(m, rank, st);
        int involved = m->src != m->dst && (rank < 0 || m->src == rank || m->dst == rank);
        if (involved && m->stage != last_stage) {
            st->rounds++;
            last_stage = m->stage;
        }
    }
}

void skewshim_sched_rank_stats(const skewshim_sched *s, int rank, skewshim_sched_stats *st)
{
    compute_stats(s, rank, st);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int64_t skewshim_sched_pair_messages(const skewshim_sched *s)
{
    uint64_t *key = malloc((s->nmoves ? s->nmoves : 1) * sizeof *key);
    if (!key)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < s->nmoves; i++) {
        const skewshim_move *m = &s->moves[i];
        if (m->src != m->dst)
            key[n++] = (uint64_t)m->stage << 48 | (uint64_t)(uint32_t)m->src << 24 |
                       (uint64_t)(uint32_t)m->dst;
    }
    qsort(key, n, sizeof *key, cmp_u64);
    int64_t pairs = 0;
    for (size_t i = 0; i < n; i++)
        pairs += !i || key[i] != key[i - 1];
    free(key);
    return pairs;
}

/* Counting sort by stage: stable and linear, stages are small integers. */
static int sort_by_stage(skewshim_sched *s)
{
    int maxst = -1;
    int sorted = 1;
    for (size_t i = 0; i < s->nmoves; i++) {
        if ((int)s->moves[i].stage > maxst)
            maxst = s->moves[i].stage;
        if (i && s->moves[i].stage < s->moves[i - 1].stage)
            sorted = 0;
    }
    s->nstages = maxst + 1;
    if (sorted)
        return 0;
    size_t *start = calloc((size_t)maxst + 2, sizeof *start);
    skewshim_move *out = malloc(s->nmoves * sizeof *out);
    if (!start || !out) {
        free(start);
        free(out);
        return -1;
    }
    for (size_t i = 0; i < s->nmoves; i++)
        start[s->moves[i].stage + 1]++;
    for (int k = 0; k <= maxst; k++)
        start[k + 1] += start[k];
    for (size_t i = 0; i < s->nmoves; i++)
        out[start[s->moves[i].stage]++] = s->moves[i];
    free(start);
    free(s->moves);
    s->moves = out;
    s->cap = s->nmoves;
    return 0;
}

/* The end of b continues a on both sides: one move can carry both. */
static int continues(const skewshim_move *a, const skewshim_move *b)
{
    return a->src_loc == b->src_loc && a->src_blk == b->src_blk &&
           a->src_off + a->bytes == b->src_off && a->dst_loc == b->dst_loc &&
           a->dst_blk == b->dst_blk && a->dst_off + a->bytes == b->dst_off &&
           a->flags == b->flags;
}

/* Within each stage, a move of one pair that continues the pair's previous
 * move on both sides is folded into it: the same bytes, one message fewer,
 * and no copy to pay (a planner that cuts blocks into pieces per lane or
 * per NIC leaves many such runs: FAST's 281,464 moves at P = 256 on MoE
 * routing become 137,091).  Decided from the pair's own moves in list order only, so a
 * slice folds exactly as the global schedule does, and the order in which
 * both sides post a pair's messages is kept.  Keys (src, dst, position) are
 * sorted per stage to find each pair's moves; moves fold in place and the
 * list is compacted at the end. */
static int merge_continuing(skewshim_sched *s)
{
    uint64_t *key = NULL;
    unsigned char *gone = NULL;
    size_t cap = 0, any = 0;
    for (size_t a = 0; a < s->nmoves;) {
        size_t b = a;
        while (b < s->nmoves && s->moves[b].stage == s->moves[a].stage)
            b++;
        size_t n = b - a;
        if (n > 1) {
            if (n > cap) {
                uint64_t *k = realloc(key, n * sizeof *k);
                if (!k) {
                    free(key);
                    free(gone);
                    return -1;
                }
                key = k;
                cap = n;
            }
            if (!gone && !(gone = calloc(s->nmoves, 1))) {
                free(key);
                return -1;
            }
            /* 20 bits of rank each and 24 of position: exact to 1 M ranks
             * and 16 M moves a stage; beyond, nothing is folded. */
            int fits = s->nranks <= (1 << 20) && n <= ((size_t)1 << 24);
            for (size_t i = 0; fits && i < n; i++) {
                const skewshim_move *m = &s->moves[a + i];
                key[i] = (uint64_t)(uint32_t)m->src << 44 | (uint64_t)(uint32_t)m->dst << 24 |
                         (uint64_t)i;
            }
            if (fits)
                qsort(key, n, sizeof *key, cmp_u64);
            for (size_t i = 1, last = 0; fits && i < n; i++) {
                size_t pi = a + (size_t)(key[last] & 0xffffffu), ci = a + (size_t)(key[i] & 0xffffffu);
                if (key[i] >> 24 == key[last] >> 24 && continues(&s->moves[pi], &s->moves[ci])) {
                    s->moves[pi].bytes += s->moves[ci].bytes;
                    gone[ci] = 1;
                    any = 1;
                } else {
                    last = i;
                }
            }
        }
        a = b;
    }
    if (any) {
        size_t w = 0;
        for (size_t i = 0; i < s->nmoves; i++)
            if (!gone[i])
                s->moves[w++] = s->moves[i];
        s->nmoves = w;
    }
    free(key);
    free(gone);
    return 0;
}

int skewshim_sched_finish(skewshim_sched *s)
{
    if (sort_by_stage(s) || merge_continuing(s))
        return -1;
    size_t nt = s->rank < 0 ? (size_t)(s->nranks > 0 ? s->nranks : 1) : 1;
    memset(s->tmp_bytes, 0, nt * sizeof *s->tmp_bytes);
    for (size_t i = 0; i < s->nmoves; i++) {
        const skewshim_move *m = &s->moves[i];
        if (m->src_loc == SKEWSHIM_LOC_TMP && (s->rank < 0 || m->src == s->rank)) {
            uint64_t *t = &s->tmp_bytes[s->rank < 0 ? m->src : 0];
            if (m->src_off + m->bytes > *t)
                *t = m->src_off + m->bytes;
        }
        if (m->dst_loc == SKEWSHIM_LOC_TMP && (s->rank < 0 || m->dst == s->rank)) {
            uint64_t *t = &s->tmp_bytes[s->rank < 0 ? m->dst : 0];
            if (m->dst_off + m->bytes > *t)
                *t = m->dst_off + m->bytes;
        }
    }
    compute_stats(s, s->rank, &s->stats);
    return 0;
}

int skewshim_sched_slice(const skewshim_sched *global, int rank, skewshim_sched *out)
{
    if (skewshim_sched_init(out, global->nranks, rank))
        return -1;
    for (size_t i = 0; i < global->nmoves; i++) {
        const skewshim_move *m = &global->moves[i];
        if ((m->src == rank || m->dst == rank) && skewshim_sched_add(out, m))
            return -1;
    }
    return skewshim_sched_finish(out);
}
