#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
/* Rule matching.  Every input is rank-invariant (the policy, the comm size
 * and the agreed facts), so every rank picks the same rule: a local choice
 * would deadlock the schedules. */
#include <math.h>

#include "policy.h"

static int in_range(const skewshim_range *r, double v)
{
    if (!r->set)
        return 1;
    /* NaN (a fact nobody computed) fails both tests, so a rule that asks
     * for it never matches by accident. */
    if (!(v >= r->lo))
        return 0;
    return r->hi < 0 || v <= r->hi;
}

static int runnable(const skewshim_rule *r, unsigned unrunnable)
{
    return !(unrunnable & 1u << r->use);
}

/* Whether the checks of whether its algorithm pays off pass the rule over
 * (only tuna_hier has them): not where its author turned them off. */
static int pay_checked(const skewshim_rule *r)
{
    return r->use != SKEWSHIM_ALGO_TUNA_HIER || r->params.tuna_hier_pay_check;
}

/* A rule whose tuna_hier keeps fewer requests in flight than its line was
 * drawn with is held to the line drawn with 8 as well (topology/topo.c):
 * the mask it answers to. */
static unsigned held_to(const skewshim_rule *r, unsigned mask, unsigned few)
{
    int fewer = r->use == SKEWSHIM_ALGO_TUNA_HIER &&
                r->params.tuna_hier_block_count < SKEWSHIM_HIER_LINE_FLIGHT;
    return fewer ? mask | few : mask;
}

/* The algorithms of unrunnable (cannot run, or do not pay off) that pass
 * this rule over. */
static unsigned passes_over(const skewshim_rule *r, unsigned unrunnable, unsigned few,
                            unsigned cannot_run)
{
    return pay_checked(r) ? held_to(r, unrunnable, few) : cannot_run;
}

/* The matchers on what the communicator alone tells: one place for both
 * the per-call match and the checks made once per communicator. */
static int comm_fits(const skewshim_rule *r, int comm_size, int nodes, int nic_per_rank)
{
    return in_range(&r->comm_size, (double)comm_size) && in_range(&r->nodes, (double)nodes) &&
           in_range(&r->nic_per_rank, (double)nic_per_rank);
}

static int rule_matches(const skewshim_rule *r, const skewshim_facts *f)
{
    if (r->buffers != SKEWSHIM_BUF_ANY && r->buffers != f->buffers)
        return 0;
    if (!runnable(r, passes_over(r, f->unrunnable, f->unrunnable_few, f->cannot_run)))
        return 0;
    if (pay_checked(r) && !runnable(r, held_to(r, f->unpaid, f->unpaid_few)) &&
        skewshim_rule_uses_facts(r))
        return 0;
    return comm_fits(r, f->comm_size, f->nodes, f->nic_per_rank) &&
           in_range(&r->max_block_bytes, f->max_block_bytes) &&
           in_range(&r->avg_block_bytes, f->avg_block_bytes) &&
           in_range(&r->avg_nonempty_bytes, f->avg_nonempty_bytes) &&
           in_range(&r->mtm, f->mtm) &&
           in_range(&r->send_mtm, f->send_mtm) &&
           in_range(&r->recv_mtm, f->recv_mtm) &&
           in_range(&r->repeats, f->repeats);
}

int skewshim_policy_choose(const skewshim_policy *p, const skewshim_facts *f,
                           skewshim_algo_id *algo, const skewshim_params **params)
{
    for (int i = 0; i < p->nrules; i++) {
        if (rule_matches(&p->rules[i], f)) {
            *algo = p->rules[i].use;
            *params = &p->rules[i].params;
            return i;
        }
    }
    *algo = p->fallback;
    *params = &p->params;
    return -1;
}

/* A rule whose matchers need nothing agreed: no block size, no skew. */
int skewshim_rule_uses_facts(const skewshim_rule *r)
{
    return r->max_block_bytes.set || r->avg_block_bytes.set || r->avg_nonempty_bytes.set ||
           r->mtm.set || r->send_mtm.set || r->recv_mtm.set || r->repeats.set;
}

int skewshim_policy_repeats_decide(const skewshim_policy *p, const skewshim_facts *f, int rule,
                                   uint32_t *horizon)
{
    /* A later rule is not reached while the chosen one still matches. */
    int last = rule >= 0 && rule < p->nrules ? rule : p->nrules - 1, decides = 0;
    double now = f->repeats, next = INFINITY;
    for (int i = 0; i <= last; i++) {
        const skewshim_rule *r = &p->rules[i];
        if (!r->repeats.set)
            continue;
        skewshim_facts g = *f;
        g.repeats = r->repeats.lo;   /* a count inside its range */
        if (!rule_matches(r, &g))
            continue;
        decides = 1;
        /* counts are whole: the first inside the range, the first past it */
        double bounds[2] = {ceil(r->repeats.lo), r->repeats.hi < 0 ? -1 : floor(r->repeats.hi) + 1};
        for (int b = 0; b < 2; b++)
            if (bounds[b] > now && bounds[b] < next)
                next = bounds[b];
    }
    if (horizon)
        *horizon = !(now >= 0) || isinf(next) || next - now > UINT32_MAX ? 0
                                                                           : (uint32_t)(next - now);
    return decides;
}

static int size_only(const skewshim_rule *r)
{
    return !skewshim_rule_uses_facts(r);
}

static int same_outcome(const skewshim_policy *p, int a, int b)
{
    skewshim_algo_id ua = a >= 0 ? p->rules[a].use : p->fallback;
    skewshim_algo_id ub = b >= 0 ? p->rules[b].use : p->fallback;
    const skewshim_params *pa = a >= 0 ? &p->rules[a].params : &p->params;
    const skewshim_params *pb = b >= 0 ? &p->rules[b].params : &p->params;
    return ua == ub && skewshim_params_equal(pa, pb);
}

/* Whether a rule could match a call on this communicator, if its
 * algorithm can run there. */
static int can_reach(const skewshim_rule *r, const skewshim_comm_facts *cf)
{
    return comm_fits(r, cf->comm_size, cf->nodes, cf->nic_per_rank) &&
           (r->buffers != SKEWSHIM_BUF_DEVICE || cf->device_possible);
}

/* Whether it can match any call there. */
static int can_match(const skewshim_rule *r, const skewshim_comm_facts *cf)
{
    return can_reach(r, cf) &&
           runnable(r, passes_over(r, cf->unrunnable, cf->unrunnable_few, cf->cannot_run));
}

/* Whether it matches whatever the call looks like: nothing after it counts. */
static int matches_every_call(const skewshim_rule *r, int device_possible)
{
    return size_only(r) && (r->buffers == SKEWSHIM_BUF_ANY ||
                            (r->buffers == SKEWSHIM_BUF_HOST && !device_possible));
}

int skewshim_policy_fixed_choice(const skewshim_policy *p, const skewshim_comm_facts *cf,
                                 int *rule)
{
    int first = -2;
    for (int i = 0; i < p->nrules; i++) {
        const skewshim_rule *r = &p->rules[i];
        if (!can_match(r, cf))
            continue;
        if (first == -2)
            first = i;
        else if (!same_outcome(p, first, i))
            return 0;
        if (matches_every_call(r, cf->device_possible)) {
            *rule = first;
            return 1;
        }
    }
    if (first != -2 && !same_outcome(p, first, -1))
        return 0;
    *rule = first == -2 ? -1 : first;
    return 1;
}

unsigned skewshim_policy_candidates(const skewshim_policy *p, const skewshim_comm_facts *cf)
{
    unsigned mask = 0;
    for (int i = 0; i < p->nrules; i++) {
        const skewshim_rule *r = &p->rules[i];
        if (!can_match(r, cf))
            continue;
        mask |= 1u << r->use;
        if (matches_every_call(r, cf->device_possible))
            return mask;
    }
    return mask | 1u << p->fallback;
}

unsigned skewshim_policy_passed_over(const skewshim_policy *p, const skewshim_comm_facts *cf)
{
    unsigned mask = 0;
    for (int i = 0; i < p->nrules; i++) {
        const skewshim_rule *r = &p->rules[i];
        if (!can_reach(r, cf))
            continue;
        if (!runnable(r, passes_over(r, cf->unrunnable, cf->unrunnable_few, cf->cannot_run)))
            mask |= 1u << r->use;
        else if (matches_every_call(r, cf->device_possible))
            break;
    }
    return mask;
}
