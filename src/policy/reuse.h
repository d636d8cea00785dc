/* Reusing an agreed outcome.  A call whose choice needs the agreement pays
 * one collective before it moves a byte; where the exchange is short that
 * collective is as long as the exchange.  Jobs repeat their exchanges: one
 * exchange over and over, or a few in turn (a step's two transposes, a
 * large exchange and a small one, a dispatch, its combine and their
 * gradients).  So once the agreed calls on a communicator follow a period
 * of 1 to SKEWSHIM_REUSE_PERIOD_MAX calls (A A, A B A B, A B C A B C,
 * A A B A A B, ...), the following calls take the outcome the period gives
 * them without agreeing, for runs of 1, 2, 4, ... up to the policy's
 * reuse_agreement calls between agreements, and any agreed call that
 * breaks the period starts over, asking for longer evidence each time a
 * trusted period broke.  The state moves only with agreed
 * outcomes and the count of calls, which are the same on every rank, so
 * every rank reuses on the same calls.  Only outcomes that are safe
 * whatever each rank's own arguments are may be reused (the caller says
 * which, doc/decisions.md); a call whose turn in the period is another
 * outcome agrees as it would without reuse.  Pure: no MPI. */
#ifndef SKEWSHIM_POLICY_REUSE_H
#define SKEWSHIM_POLICY_REUSE_H

#include <stdint.h>

/* The longest period followed: a job of more exchanges in turn agrees on
 * every call, as without reuse.  Eight covers a step of four exchanges and
 * their gradients; the price of a longer one is the history's length: a
 * job leaving an outcome agreed on every call waits that long (reuse.c). */
#define SKEWSHIM_REUSE_PERIOD_MAX 8

typedef struct skewshim_reuse_outcome {
    int valid, reusable;
    int agreed;               /* seen by an agreed call, not taken from the period */
    int rule, algo, reason;   /* the rule (-1 default), what ran, why not */
    int counts;               /* the repeat count could change that outcome */
    uint32_t horizon;         /* the calls after it where the count first could (0 never) */
} skewshim_reuse_outcome;

typedef struct skewshim_reuse {
    /* the last call's outcome, the one's before, ...: two periods' worth */
    skewshim_reuse_outcome last[2 * SKEWSHIM_REUSE_PERIOD_MAX];
    int period;                       /* 0 none, else 1 to SKEWSHIM_REUSE_PERIOD_MAX */
    int open;                         /* a call agreed and its outcome is not noted yet */
    int in_run;                       /* that call fell inside a run */
    uint32_t matched;                 /* agreed calls in a row that bore the period out */
    uint32_t left;                    /* calls still inside the run */
    uint32_t run;                     /* the run granted at the next agreed call after it */
    uint32_t doubt;                   /* trusted periods broken since one held */
} skewshim_reuse;

/* Whether this call takes the reused outcome (native_only: only if it is
 * native); fills *o with it, and counts the call.  Every call that could
 * agree comes here first, so the ranks count calls alike. */
int skewshim_reuse_take(skewshim_reuse *r, int native_only, skewshim_reuse_outcome *o);

/* After an agreed call: its outcome (rule, algo, reason, counts, horizon;
 * the flags valid, reusable and agreed are set here), whether it may be
 * reused, and the longest run (0: never reuse).  A run stops short of the
 * horizon, so that the call where a rule on the repeat count could start
 * or stop matching agrees. */
void skewshim_reuse_note(skewshim_reuse *r, skewshim_reuse_outcome o, int reusable,
                         uint32_t limit);

#endif
