/* Runs of 1, 2, 4, ... calls between agreements: after a run of n calls
 * the next agreed call is n + 1 calls on, an odd step from a run of 2 on,
 * so a job that alternates two kinds of exchange is seen on both kinds
 * within two agreements, and the agreement's cost per call falls to
 * 1 / limit once a job settles. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "policy/reuse.h"
#include "vocab.h"

int skewshim_reuse_take(skewshim_reuse *r, int native_only, int *rule, int *algo, int *reason)
{
    if (!r->have || !r->left || (native_only && r->algo != SKEWSHIM_ALGO_NATIVE))
        return 0;
    r->left--;
    *rule = r->rule;
    *algo = r->algo;
    *reason = r->reason;
    return 1;
}

void skewshim_reuse_note(skewshim_reuse *r, int rule, int algo, int reason, int reusable,
                         uint32_t limit)
{
    if (!reusable || !limit) {
        memset(r, 0, sizeof *r);
        return;
    }
    if (r->have && r->rule == rule && r->algo == algo && r->reason == reason) {
        r->streak++;
    } else {
        r->have = 1;
        r->rule = rule;
        r->algo = algo;
        r->reason = reason;
        r->streak = 1;
        r->run = 1;
    }
    r->left = 0;
    if (r->streak >= 2) {
        r->left = r->run < limit ? r->run : limit;
        r->run = r->run < limit / 2 ? 2 * r->run : limit;
    }
}
