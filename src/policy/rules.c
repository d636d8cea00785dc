#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
/* Rule matching.  Every input is rank-invariant (the policy, the comm size
 * and the agreed facts), so every rank picks the same rule: a local choice
 * would deadlock the schedules. */
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

static int rule_matches(const skewshim_rule *r, const skewshim_facts *f)
{
    if (r->buffers != SKEWSHIM_BUF_ANY && r->buffers != f->buffers)
        return 0;
    return in_range(&r->comm_size, (double)f->comm_size) &&
           in_range(&r->max_block_bytes, f->max_block_bytes) &&
           in_range(&r->avg_block_bytes, f->avg_block_bytes) &&
           in_range(&r->mtm, f->mtm);
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

int skewshim_policy_needs_facts(const skewshim_policy *p)
{
    for (int i = 0; i < p->nrules; i++) {
        const skewshim_rule *r = &p->rules[i];
        if (r->max_block_bytes.set || r->avg_block_bytes.set || r->mtm.set)
            return 1;
        /* Ranks may disagree on where their buffers live (one rank host,
         * another device), so the buffer kind must be agreed too. */
        if (r->buffers != SKEWSHIM_BUF_ANY)
            return 1;
    }
    return 0;
}
