/* The plan cache's record of the matrices seen lately, which the pay-back
 * guard reads to price planning: most recent first, as many as the cache
 * holds, a repeat moves to the front and the oldest drops out. */
#include <stdint.h>

#include "schedule/plan_cache.h"
#include "tap.h"

int main(void)
{
    skewshim_plan_seen s = {0};
    TAP_OK(!skewshim_plan_seen_note(&s, 11), "first matrix: not seen");
    TAP_OK(skewshim_plan_seen_note(&s, 11), "the same again: seen");
    TAP_OK(s.n == 1, "a repeat takes no second place (%d)", s.n);
    for (uint64_t h = 1; h <= 3; h++)
        skewshim_plan_seen_note(&s, h);
    TAP_OK(s.n == SKEWSHIM_PLAN_CACHE_SLOTS && s.hash[0] == 3 && s.hash[3] == 11,
           "most recent first, the oldest last");
    TAP_OK(skewshim_plan_seen_note(&s, 11), "the oldest, still held: seen");
    TAP_OK(s.hash[0] == 11 && s.hash[1] == 3 && s.hash[3] == 1, "a repeat moves to the front");
    TAP_OK(!skewshim_plan_seen_note(&s, 99), "a new matrix when full: not seen");
    TAP_OK(!skewshim_plan_seen_note(&s, 1), "the least recent dropped out for it");
    TAP_OK(skewshim_plan_seen_note(&s, 99) && skewshim_plan_seen_note(&s, 11),
           "the others still held");
    return TAP_DONE();
}
