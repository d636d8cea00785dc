/* Plans of the global planners, cached per communicator and keyed by the
 * size matrix and everything else the plan depends on.  Applications repeat
 * their exchanges (every MoE layer, every solver iteration), so the planner
 * runs once per distinct matrix.  A hit compares the whole matrix, not just
 * its hash: a collision must never run the wrong plan.  The hash is taken
 * over the matrix's column digests, which the call has computed anyway, so
 * a hit costs one digest pass and one compare of the matrix, no more. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>

#include "schedule/plan_cache.h"

void skewshim_plan_cache_free(void *p)
{
    skewshim_plan_cache *pc = p;
    if (!pc)
        return;
    for (int i = 0; i < SKEWSHIM_PLAN_CACHE_SLOTS; i++)
        skewshim_plan_entry_clear(&pc->slot[i]);
    free(pc->gathered);
    free(pc->digest);
    free(pc);
}

/* Also an entry being made and not yet used: its schedule may be partly
 * built (an empty slot's is all zero, which frees nothing). */
void skewshim_plan_entry_clear(skewshim_plan_entry *e)
{
    skewshim_sched_free(&e->slice);
    free(e->matrix);
    memset(e, 0, sizeof *e);
}

uint64_t skewshim_plan_hash(const uint64_t *digest, int n, const skewshim_plan_key *k)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = (const unsigned char *)digest;
    for (size_t i = 0; i < (size_t)n * sizeof *digest; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    p = (const unsigned char *)k;
    for (size_t i = 0; i < sizeof *k; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static int same_matrix(const uint64_t *m, const uint64_t *rows, int n, size_t stride)
{
    for (int i = 0; i < n; i++)
        if (memcmp(m + (size_t)i * n, rows + (size_t)i * stride, (size_t)n * sizeof *m))
            return 0;
    return 1;
}

skewshim_plan_entry *skewshim_plan_lookup(skewshim_plan_cache *pc, uint64_t hash,
                                          const skewshim_plan_key *k, const uint64_t *rows,
                                          int n, size_t stride)
{
    for (int i = 0; i < SKEWSHIM_PLAN_CACHE_SLOTS; i++) {
        skewshim_plan_entry *e = &pc->slot[i];
        if (e->used && e->hash == hash && e->n == (size_t)n * n &&
            !memcmp(&e->key, k, sizeof *k) && same_matrix(e->matrix, rows, n, stride)) {
            e->last_use = ++pc->clock;
            return e;
        }
    }
    return NULL;
}

skewshim_plan_entry *skewshim_plan_victim(skewshim_plan_cache *pc)
{
    skewshim_plan_entry *v = &pc->slot[0];
    for (int i = 0; i < SKEWSHIM_PLAN_CACHE_SLOTS; i++) {
        if (!pc->slot[i].used)
            return &pc->slot[i];
        if (pc->slot[i].last_use < v->last_use)
            v = &pc->slot[i];
    }
    skewshim_plan_entry_clear(v);
    return v;
}

int skewshim_plan_seen_note(skewshim_plan_seen *s, uint64_t hash)
{
    int i = 0;
    while (i < s->n && s->hash[i] != hash)
        i++;
    int seen = i < s->n;
    if (!seen && s->n < SKEWSHIM_PLAN_CACHE_SLOTS)
        s->n++;
    if (i == s->n)   /* not seen, and full: the oldest drops out */
        i--;
    memmove(s->hash + 1, s->hash, (size_t)i * sizeof *s->hash);
    s->hash[0] = hash;
    return seen;
}
