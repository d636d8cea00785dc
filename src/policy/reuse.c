/* The period is read off the last calls' outcomes (reused calls count
 * with the outcome they took), so an agreed call's expectation is simply
 * the outcome one period back.  A new period is founded on agreed outcomes
 * only (a reused one is the old period's guess): the shortest that puts
 * the same outcome one period back and that the agreed outcomes of the
 * last calls bear out.  It is trusted once more than a period's worth of
 * agreed calls in a row has borne it out, each against an agreed outcome
 * one period back (matching a guess proves nothing): then every kind has
 * come back and been seen again.  A period founded on a few calls can
 * still be wrong (A B A A B A A C reads as a period of 3 until its C), and
 * once broken the state starts over on a history of guesses and would
 * found the same wrong period on the same few calls, forever: a job of
 * seven exchanges in turn ran the other turn's outcome on almost half its
 * calls.  So each trusted period that breaks where it would have reused
 * doubles the evidence asked of the next (up to the history's length,
 * where every kind of a period of up to 8 is seen twice), and a period
 * that then holds through runs of 1 to 8 (a run of 16 granted: longer
 * than any evidence asks) clears that doubt, so that a job that changes
 * its exchanges now and then pays it once a change, not for good.  A run is
 * granted only at an agreed call outside a run: runs of 1, 2, 4, ...
 * calls put the next such call n + 1 calls on, and that agreed call is the
 * one that sees whether its kind of exchange changed.  So that it falls on
 * every kind in turn, the run at the limit puts it a prime number of calls
 * on (61 for a limit of 64) that does not divide the period: then it also
 * falls on every turn of a longer period that the runs hide (A A A A B
 * read as a period of 1 at A A: 65 calls on, it always fell on an A, and
 * B ran A's outcome on every fifth call to the job's end).  The growing
 * runs' steps (2, 3, 5, 9, ...) reach every kind too.  A kind that changes
 * is then seen within about `period` runs, 61 of its own calls at the
 * limit.  Once the runs reach the limit the agreement's cost per call is
 * about 1 / 61.  A run also stops short of the outcome's horizon, the call
 * where the repeat count would reach a bound of a rule on repeats: a
 * reused call cannot take such a rule, so that call must agree. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "policy/reuse.h"
#include "vocab.h"

enum { HISTORY = 2 * SKEWSHIM_REUSE_PERIOD_MAX, DOUBT_MAX = 4 };
_Static_assert((1 << DOUBT_MAX) >= HISTORY, "the doubt reaches the history's length");

static void push(skewshim_reuse *r, skewshim_reuse_outcome o)
{
    memmove(&r->last[1], &r->last[0], (HISTORY - 1) * sizeof r->last[0]);
    r->last[0] = o;
}

static int is_prime(uint32_t n)
{
    if (n < 2)
        return 0;
    for (uint32_t d = 2; d <= n / d; d++)
        if (n % d == 0)
            return 0;
    return 1;
}

/* The run at the limit: the longest whose step (run + 1) is a prime that
 * does not divide the period; 0 where there is none (a limit of 1 and a
 * period of 2: every call of the job agrees, which a run of 1 would put
 * on one kind forever). */
static uint32_t limit_run(uint32_t limit, uint32_t period)
{
    for (uint32_t step = limit + 1; step >= 2; step--)
        if (is_prime(step) && period % step != 0)
            return step - 1;
    return 0;
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

/* The shortest period that puts o one period back and that no two agreed
 * outcomes of the history, a period apart, contradict; 0 if none.  The
 * shortest alone would read A A B A A B as a period of 1 at every A A,
 * and reuse A for every B until a run's end fell on one.  The price: a
 * job that moves from an outcome agreed on every call (tuna_hier, or
 * scattered in a CUDA build) to another finds its new period only once
 * the old outcomes have left the history: the 17th agreed call of the
 * new finds it, the 18th trusts it. */
static int found(const skewshim_reuse *r, const skewshim_reuse_outcome *o)
{
    for (int p = 1; p <= SKEWSHIM_REUSE_PERIOD_MAX; p++) {
        if (!seen_before(o, &r->last[p - 1]))
            continue;
        int ok = 1;
        for (int i = 0; i + p < HISTORY && ok; i++) {
            const skewshim_reuse_outcome *a = &r->last[i], *b = &r->last[i + p];
            ok = !(a->agreed && b->agreed && !same(a, b));
        }
        if (ok)
            return p;
    }
    return 0;
}

/* Agreed calls in a row, beyond the founding one, that must bear the
 * period out before it is trusted: a period's worth, doubled for each
 * trusted period broken lately, at most the history's length. */
static uint32_t evidence(const skewshim_reuse *r)
{
    uint32_t n = (uint32_t)r->period << r->doubt;
    return n < HISTORY ? n : HISTORY;
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
        if (r->last[r->period - 1].agreed)
            r->matched++;
    } else {
        /* trusted (a run was granted) where it would have reused */
        if (r->run > 1 && r->last[r->period - 1].reusable && r->doubt < DOUBT_MAX)
            r->doubt++;
        in_run = 0;
        r->left = 0;
        r->run = 1;
        r->matched = 1;
        r->period = found(r, &o);
    }
    push(r, o);
    if (r->period && !in_run && !r->left && r->matched > evidence(r)) {
        if (r->run >= HISTORY || r->run >= limit)   /* it held longer than any evidence asks */
            r->doubt = 0;
        r->left = r->run < limit ? r->run : limit_run(limit, (uint32_t)r->period);
        if (o.horizon && r->left > o.horizon - 1)
            r->left = o.horizon - 1;
        r->run = r->run < limit / 2 ? 2 * r->run : limit;
    }
}
