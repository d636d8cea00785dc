/* Reusing an agreed outcome.  A call whose choice needs the agreement pays
 * one collective before it moves a byte; where the exchange is short that
 * collective is as long as the exchange.  Jobs repeat their exchanges, so
 * once two agreed calls in a row on a communicator ended the same way, the
 * following calls take that outcome without agreeing, for runs of 1, 2, 4,
 * ... up to the policy's reuse_agreement calls between agreements, and any
 * agreed call with another outcome starts over.  The state moves only with
 * agreed outcomes and the count of calls, which are the same on every rank,
 * so every rank reuses on the same calls.  Only outcomes that are safe
 * whatever each rank's own arguments are may be reused (the caller says
 * which, doc/decisions.md).  Pure: no MPI. */
#ifndef SKEWSHIM_POLICY_REUSE_H
#define SKEWSHIM_POLICY_REUSE_H

#include <stdint.h>

typedef struct skewshim_reuse {
    int have;                 /* an agreed outcome to compare with */
    int rule, algo, reason;   /* that outcome: the rule (-1 default), what ran, why not */
    uint32_t streak;          /* agreed calls in a row that ended so */
    uint32_t left;            /* calls that may still take it without agreeing */
    uint32_t run;             /* the run granted at the next confirmation */
} skewshim_reuse;

/* Whether this call takes the reused outcome (native_only: only if it is
 * native); fills rule, algo and reason, and counts the call. */
int skewshim_reuse_take(skewshim_reuse *r, int native_only, int *rule, int *algo, int *reason);

/* After an agreed call: its outcome, whether that outcome may be reused,
 * and the longest run (0: never reuse). */
void skewshim_reuse_note(skewshim_reuse *r, int rule, int algo, int reason, int reusable,
                         uint32_t limit);

#endif
