/* The period is read off the last two calls' outcomes (reused calls count
 * with the outcome they took), so an agreed call's expectation is simply
 * the outcome one or two calls back.  A new period is founded on agreed
 * outcomes only: a reused one is the old period's guess.  A run is granted only at an agreed
 * call outside a run: runs of 1, 2, 4, ... calls put the next such call
 * n + 1 calls on, an odd step from a run of 2 on, so with a period of 2
 * the granting call falls on each kind of exchange in turn and both are
 * seen again within two runs; with a period of 1 a job that starts to
 * alternate is seen on both kinds within two runs too.  Once the runs
 * reach the limit the agreement's cost per call is 1 / (limit + 1). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "policy/reuse.h"
#include "vocab.h"

static void push(skewshim_reuse *r, skewshim_reuse_outcome o)
{
    r->last[1] = r->last[0];
    r->last[0] = o;
}

static int same(const skewshim_reuse_outcome *a, const skewshim_reuse_outcome *b)
{
    return a->valid && b->valid && a->rule == b->rule && a->algo == b->algo &&
           a->reason == b->reason;
}

static int seen_before(const skewshim_reuse_outcome *o, const skewshim_reuse_outcome *then)
{
    return then->agreed && same(o, then);
}

int skewshim_reuse_take(skewshim_reuse *r, int native_only, skewshim_reuse_outcome *o)
{
    if (r->open) {   /* the last call agreed and never said how it ended */
        skewshim_reuse_outcome unknown = {0};
        push(r, unknown);
        r->period = 0;
        r->left = 0;
    }
    r->in_run = r->left > 0;
    if (r->in_run)
        r->left--;
    skewshim_reuse_outcome p = r->period ? r->last[r->period - 1] : (skewshim_reuse_outcome){0};
    if (r->in_run && p.valid && p.reusable && (!native_only || p.algo == SKEWSHIM_ALGO_NATIVE)) {
        r->open = 0;
        p.agreed = 0;
        push(r, p);
        *o = p;
        return 1;
    }
    r->open = 1;
    return 0;
}

void skewshim_reuse_note(skewshim_reuse *r, skewshim_reuse_outcome o, int reusable,
                         uint32_t limit)
{
    o.valid = 1;
    o.reusable = reusable != 0;
    o.agreed = 1;
    int in_run = r->open && r->in_run;
    r->open = 0;
    r->in_run = 0;
    if (!limit) {
        memset(r, 0, sizeof *r);
        return;
    }
    if (r->period && same(&o, &r->last[r->period - 1])) {
        r->matched++;
    } else {
        in_run = 0;
        r->left = 0;
        r->run = 1;
        r->matched = 1;
        r->period = seen_before(&o, &r->last[0]) ? 1 : seen_before(&o, &r->last[1]) ? 2 : 0;
    }
    push(r, o);
    /* A period of 2 is trusted once both kinds have come back. */
    if (r->period && !in_run && !r->left && r->matched >= (uint32_t)r->period) {
        r->left = r->run < limit ? r->run : limit;
        r->run = r->run < limit / 2 ? 2 * r->run : limit;
    }
}
