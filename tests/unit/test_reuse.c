/* Reusing agreed outcomes (src/policy/reuse.c): which calls of a job skip
 * the agreement.  The driver plays the pipeline's part: a call either takes
 * the reused outcome or agrees, and an agreed call's outcome is what the
 * job's counts at that call would choose. */
#include <string.h>

#include "policy/reuse.h"
#include "tap.h"
#include "vocab.h"

enum { NATIVE = SKEWSHIM_ALGO_NATIVE, TUNA = SKEWSHIM_ALGO_TUNA_HIER,
       SCAT = SKEWSHIM_ALGO_SCATTERED, PAIR = SKEWSHIM_ALGO_PAIRWISE };

/* The pipeline's outcome, without the repeat count's flag (tested last). */
static int take(skewshim_reuse *r, int native_only, int *rule, int *algo, int *reason)
{
    skewshim_reuse_outcome o;
    if (!skewshim_reuse_take(r, native_only, &o))
        return 0;
    *rule = o.rule;
    *algo = o.algo;
    *reason = o.reason;
    return 1;
}

static void note(skewshim_reuse *r, int rule, int algo, int reason, int reusable, uint32_t limit)
{
    skewshim_reuse_outcome o = {.rule = rule, .algo = algo, .reason = reason};
    skewshim_reuse_note(r, o, reusable, limit);
}

/* Plays n calls whose would-be choices are want[k % period]; reusable says
 * which algorithms may be reused.  Returns the number of agreements and
 * writes 1 per call that ran something other than its choice to missed. */
static int play(const int *want, int period, int n, uint32_t limit, int native_only,
                int *agreed_at, int *missed)
{
    skewshim_reuse r;
    memset(&r, 0, sizeof r);
    int agreements = 0;
    for (int k = 0; k < n; k++) {
        int w = want[k % period], rule, algo, reason;
        if (take(&r, native_only, &rule, &algo, &reason)) {
            missed[k] = algo != w;
            agreed_at[k] = 0;
            continue;
        }
        agreements++;
        agreed_at[k] = 1;
        missed[k] = 0;
        int reusable = w == NATIVE || ((w == SCAT || w == PAIR) && !native_only);
        note(&r, w == NATIVE ? -1 : 0, w, 0, reusable, limit);
    }
    return agreements;
}

static int sum(const int *v, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

int main(void)
{
    enum { N = 1000 };
    static int ag[N], miss[N];
    const int native[] = {NATIVE};
    int a = play(native, 1, N, 64, 0, ag, miss);
    /* calls 0, 1, 2 agree (the period of 1 founded, then borne out once
     * more); then runs 1, 2, 4, ..., 32 and 60 at the limit (a step of 61,
     * the largest prime up to 65): agreements at 0 1 2 4 7 12 21 38 71 132
     * 193 ... */
    TAP_OK(ag[0] && ag[1] && ag[2] && !ag[3] && ag[4] && !ag[5] && !ag[6] && ag[7] && ag[12] &&
               ag[21],
           "a settled native job agrees at calls 0 1 2 4 7 12 21 (runs 1, 2, 4, 8)");
    TAP_OK(ag[71] && ag[132] && ag[193] && !ag[192] && !ag[136] && ag[254],
           "then every 61st call (limit 64)");
    TAP_OK(a == 24 && !sum(miss, N), "1000 native calls: %d agreements (24), no miss", a);

    a = play(native, 1, N, 0, 0, ag, miss);
    TAP_OK(a == N, "reuse_agreement 0: every call agrees");
    a = play(native, 1, N, 1, 0, ag, miss);
    TAP_OK(a == 501 || a == 500, "limit 1: every other call agrees");

    const int tuna[] = {TUNA};
    a = play(tuna, 1, N, 64, 0, ag, miss);
    TAP_OK(a == N, "an outcome that reads agreed figures (tuna_hier) is never reused");

    const int scat[] = {SCAT};
    a = play(scat, 1, N, 64, 0, ag, miss);
    TAP_OK(a < 25 && !sum(miss, N), "scattered, planned from a rank's own sizes, is reused");
    a = play(scat, 1, N, 64, 1, ag, miss);
    TAP_OK(a == N, "in place only native is reused");

    /* A job that alternates a native-sized and a tuna-sized exchange: once
     * both have come back (N T N T), the native turns are reused and the
     * tuna_hier turns, which read agreed figures, agree. */
    const int alt[] = {NATIVE, TUNA};
    a = play(alt, 2, N, 64, 0, ag, miss);
    int native_agreed = 0;
    for (int k = 0; k < N; k += 2)
        native_agreed += ag[k];
    TAP_OK(a >= N / 2 && a <= N / 2 + 16 && !sum(miss, N),
           "alternating native / tuna_hier: every tuna_hier call agrees, native ones are reused, "
           "none missed (%d agreements)", a);
    TAP_OK(native_agreed >= 4 && ag[6] && !ag[8],
           "the native turns still agree at the ends of runs (%d of %d)", native_agreed, N / 2);

    const int alt2[] = {NATIVE, SCAT};
    a = play(alt2, 2, N, 64, 0, ag, miss);
    TAP_OK(a <= 26 && !sum(miss, N),
           "alternating native / scattered (both reusable): %d agreements, none missed", a);
    TAP_OK(ag[0] && ag[1] && ag[2] && ag[3] && ag[4] && !ag[5] && ag[6] && !ag[7] && !ag[8] &&
               ag[9],
           "A B A B A agree, then runs of 1, 2: agreements at 0 1 2 3 4 6 9");
    int kinds[2] = {0, 0};
    for (int k = 4; k < N; k++)
        kinds[k % 2] += ag[k];
    TAP_OK(kinds[0] >= 3 && kinds[1] >= 3,
           "the agreements after the first four fall on both kinds (%d, %d)", kinds[0], kinds[1]);
    int in_place_alt = play(alt2, 2, N, 64, 1, ag, miss);
    TAP_OK(in_place_alt >= N / 2 && in_place_alt <= N / 2 + 16 && !sum(miss, N),
           "in place the same job reuses only its native turns (%d agreements)", in_place_alt);

    /* Periods of 3 and 4: each turn reused, those that read agreed
     * figures agreeing.  Before, every call of these jobs agreed. */
    const int three[] = {NATIVE, SCAT, TUNA};
    a = play(three, 3, N, 64, 0, ag, miss);
    TAP_OK(a >= N / 3 && a <= N / 3 + 20 && !sum(miss, N),
           "a period of 3 (native, scattered, tuna_hier): only the tuna_hier turns agree "
           "(%d agreements), none missed", a);
    const int four[] = {NATIVE, SCAT, PAIR, SCAT};
    a = play(four, 4, N, 64, 0, ag, miss);
    TAP_OK(a <= 40 && !sum(miss, N),
           "a period of 4 (native, scattered, pairwise, scattered): %d agreements, none missed", a);
    /* A period whose turns repeat an outcome (A A B): the shortest period
     * with the outcome one period back is 1 at every A A, which reused A
     * for a quarter of the calls (the B ones) before the history had to
     * bear the period out. */
    const int aab[] = {NATIVE, NATIVE, SCAT};
    a = play(aab, 3, N, 64, 0, ag, miss);
    TAP_OK(a <= 40 && sum(miss, N) <= 3,
           "A A B: %d agreements, %d calls ran the other turn's outcome (at most 3, at the start)",
           a, sum(miss, N));
    const int aabb[] = {NATIVE, NATIVE, SCAT, SCAT};
    a = play(aabb, 4, N, 64, 0, ag, miss);
    TAP_OK(a <= 40 && sum(miss, N) <= 3, "A A B B: %d agreements, %d missed", a, sum(miss, N));
    const int five[] = {NATIVE, SCAT, PAIR, TUNA, SCAT};
    a = play(five, 5, N, 64, 0, ag, miss);
    TAP_OK(a >= N / 5 && a <= N / 5 + 30 && !sum(miss, N),
           "a period of 5: only the tuna_hier turns agree (%d agreements), none missed", a);

    /* Periods of 5 to 8 made of outcomes that differ only in their rule
     * are followed; one of 9 is not (every call agrees). */
    for (int period = 5; period <= 9; period++) {
        skewshim_reuse q;
        memset(&q, 0, sizeof q);
        int agreed = 0, wrong = 0, ru, al, re;
        for (int k = 0; k < N; k++) {
            if (take(&q, 0, &ru, &al, &re)) {
                wrong += ru != k % period;
                continue;
            }
            agreed++;
            note(&q, k % period, NATIVE, 0, 1, 64);
        }
        if (period < 9)
            TAP_OK(agreed <= 60 && !wrong, "a period of %d: %d agreements in %d calls, none missed",
                   period, agreed, N);
        else
            TAP_OK(agreed == N, "a period of 9 is not followed: %d of %d calls agree", agreed, N);
    }

    /* A A A A B: a period of 1 at A A, whose runs hid the B turns; at the
     * limit the agreed call fell 65 calls on, always on an A, and B ran A's
     * outcome on every fifth call to the end (200 of 1000).  A prime step
     * falls on a B within five runs, and then the period of 5 is followed. */
    const int a4b[] = {NATIVE, NATIVE, NATIVE, NATIVE, SCAT};
    a = play(a4b, 5, N, 64, 0, ag, miss);
    int last = -1;
    for (int k = 0; k < N; k++)
        if (miss[k])
            last = k;
    TAP_OK(sum(miss, N) <= 64 && last < 400 && a <= 60,
           "A A A A B: %d calls ran A's outcome for B, the last at call %d (before 400), %d "
           "agreements", sum(miss, N), last, a);

    /* Every job of two outcomes in turn with a period of up to 8 (472 of
     * them, each period primitive): the period is found, and no call runs
     * the other turn's outcome once the job has settled.  Before a broken
     * trusted period asked for longer evidence, 28 of them refounded the
     * same wrong period on the same few calls to the end: A B A B B A B
     * ran the other turn's outcome on 1855 of 4000 calls, and 26598 calls
     * after call 1000 did so over all of them. */
    {
        enum { CALLS = 4000, SETTLED = 1000 };
        int jobs = 0, worst = 0, late_wrong = 0, most_agreed = 0;
        for (int len = 1; len <= SKEWSHIM_REUSE_PERIOD_MAX; len++)
            for (unsigned mask = 0; mask < 1u << len; mask++) {
                int primitive = 1;
                for (int d = 1; d < len && primitive; d++) {
                    int repeats = len % d == 0;
                    for (int i = d; i < len && repeats; i++)
                        repeats = ((mask >> i) & 1) == ((mask >> (i - d)) & 1);
                    primitive = !repeats;
                }
                if (!primitive)
                    continue;
                jobs++;
                skewshim_reuse q;
                memset(&q, 0, sizeof q);
                int wrong = 0, agreed = 0, ru, al, re;
                for (int k = 0; k < CALLS; k++) {
                    int w = (mask >> (k % len)) & 1 ? SCAT : NATIVE;
                    if (take(&q, 0, &ru, &al, &re)) {
                        wrong += al != w;
                        late_wrong += al != w && k >= SETTLED;
                        continue;
                    }
                    agreed++;
                    note(&q, w == NATIVE ? -1 : 0, w, 0, 1, 64);
                }
                worst = wrong > worst ? wrong : worst;
                most_agreed = agreed > most_agreed ? agreed : most_agreed;
            }
        TAP_OK(jobs == 472 && !late_wrong && worst <= 64 && most_agreed <= 120,
               "every job of two outcomes in turn, periods up to 8 (%d jobs, %d calls): none runs "
               "the other turn's outcome after call %d (%d calls did), at most %d calls each "
               "before (64), at most %d agreements (120)",
               jobs, CALLS, SETTLED, late_wrong, worst, most_agreed);
    }

    /* Settled on native for 300 calls, then alternating: the change is seen
     * within two agreements of it, since runs after the first are odd steps. */
    static int want[N];
    for (int k = 0; k < N; k++)
        want[k] = k < 300 ? NATIVE : (k % 2 ? TUNA : NATIVE);
    a = play(want, N, N, 64, 0, ag, miss);
    int first_tuna_agreed = -1;
    for (int k = 300; k < N && first_tuna_agreed < 0; k++)
        if (ag[k] && want[k] == TUNA)
            first_tuna_agreed = k;
    TAP_OK(first_tuna_agreed > 300 && first_tuna_agreed <= 300 + 2 * 65,
           "a settled job that starts alternating is seen within two runs");
    int late = 0, late_agreed = 0;
    for (int k = first_tuna_agreed + 1; k < N; k++)
        late += miss[k], late_agreed += ag[k];
    TAP_OK(late == 0, "and from then on no call misses its choice");
    TAP_OK(late_agreed < (N - first_tuna_agreed) / 2 + 12,
           "and its native turns are reused again (%d agreements after)", late_agreed);

    /* Settled alternating native / scattered, then the scattered turns
     * become native-sized: a settled period of 2 is checked on each kind
     * within two runs, so the stale turns are at most two runs' worth. */
    for (int k = 0; k < N; k++)
        want[k] = k < 400 ? (k % 2 ? SCAT : NATIVE) : NATIVE;
    a = play(want, N, N, 64, 0, ag, miss);
    int stale = 0, last_miss = -1;
    for (int k = 400; k < N; k++)
        if (miss[k])
            stale++, last_miss = k;
    TAP_OK(stale <= 64 && last_miss < 400 + 2 * 65 + 2,
           "a period-2 job whose one kind changes: %d stale turns, the last at call %d",
           stale, last_miss);
    int after = 0;
    for (int k = 600; k < N; k++)
        after += ag[k];
    TAP_OK(after <= 8, "then settles on native (%d agreements in the last 400 calls)", after);

    /* The same change under a limit of 63: runs of 63 put the agreed call
     * 64 calls on, always on the same kind of a period of 2, and the kind
     * that changed ran stale to the end (300 calls); the step at the limit
     * is now a prime (61). */
    a = play(want, N, N, 63, 0, ag, miss);
    stale = 0;
    for (int k = 400; k < N; k++)
        stale += miss[k];
    TAP_OK(stale <= 64, "limit 63: the kind that changed runs stale %d times (at most 64)", stale);

    /* A period of 3 whose one kind changes is seen on that kind within
     * three runs: at most about 64 of its own calls stale. */
    for (int k = 0; k < N; k++)
        want[k] = k % 3 == 0 ? NATIVE : k % 3 == 1 ? SCAT : k < 400 ? PAIR : NATIVE;
    a = play(want, N, N, 64, 0, ag, miss);
    stale = 0;
    last_miss = -1;
    for (int k = 400; k < N; k++)
        if (miss[k])
            stale++, last_miss = k;
    TAP_OK(stale <= 66 && last_miss < 400 + 3 * 65 + 3,
           "a period-3 job whose one kind changes: %d stale turns, the last at call %d", stale,
           last_miss);

    /* A job that moves from an outcome agreed on every call (tuna_hier,
     * or scattered in a CUDA build) to native: the history must bear the
     * new period out, so native is reused once the tuna_hier outcomes
     * have left it and one more call has borne it out: 18 agreed calls on
     * it (the history's length, and one), and nothing is reused wrongly
     * meanwhile.  That tuna_hier's period broke costs nothing more: it
     * was never reused. */
    for (int k = 0; k < N; k++)
        want[k] = k < 9 ? TUNA : NATIVE;
    a = play(want, N, N, 64, 0, ag, miss);
    int settled_at = -1;
    for (int k = 9; k < N && settled_at < 0; k++)
        if (!ag[k])
            settled_at = k;
    TAP_OK(settled_at == 27 && !sum(miss, N) && a <= 9 + 18 + 24,
           "tuna_hier for 9 calls, then native: the first reused call is call %d (27), none "
           "missed, %d agreements", settled_at, a);

    /* A rule on the repeat count (native from FROM repeats of the matrix,
     * scattered before): a run never reaches the call whose count is FROM,
     * so that call agrees and sees it.  Without the horizon the runs of the
     * settled scattered outcome went past it, and the rule took effect
     * only where an agreed call happened to fall (FROM 3: at call 4). */
    {
        int stale = 0, worst_from = 0, ru, al, re;
        for (int from = 1; from <= 40; from++) {
            skewshim_reuse q;
            memset(&q, 0, sizeof q);
            for (int k = 0; k < 200; k++) {   /* one matrix: its count is k */
                int w = k >= from ? NATIVE : SCAT;
                if (take(&q, 0, &ru, &al, &re)) {
                    if (al != w && !stale++)
                        worst_from = from;
                    continue;
                }
                skewshim_reuse_outcome o = {.rule = w == SCAT ? -1 : 0, .algo = w, .counts = 1,
                                            .horizon = k < from ? (uint32_t)(from - k) : 0};
                skewshim_reuse_note(&q, o, 1, 64);
            }
        }
        TAP_OK(!stale, "a rule on repeats from 1 to 40: no reused call runs past its bound "
               "(%d did, the first with the bound at %d)", stale, worst_from);
    }

    /* A call that agreed but whose outcome was never noted still counts,
     * and nothing is reused on a guess about it. */
    {
        skewshim_reuse q;
        memset(&q, 0, sizeof q);
        int ru, al, re;
        for (int k = 0; k < 6; k++) {
            (void)take(&q, 0, &ru, &al, &re);
            note(&q, -1, NATIVE, 0, 1, 64);
        }
        int t1 = take(&q, 0, &ru, &al, &re);   /* in a run or not */
        if (!t1)
            note(&q, -1, NATIVE, 0, 1, 64);
        while (take(&q, 0, &ru, &al, &re))
            ;
        /* this call agreed; its note never comes */
        TAP_OK(!take(&q, 0, &ru, &al, &re),
               "the call after an unnoted agreed call agrees");
    }

    /* The cost bound: misses only happen inside runs granted before a change. */
    for (int k = 0; k < N; k++)
        want[k] = k < 500 ? NATIVE : TUNA;
    a = play(want, N, N, 64, 0, ag, miss);
    TAP_OK(sum(miss, N) <= 64, "a switch to a new regime costs at most one run of native calls");

    /* A different reason or rule is a different outcome. */
    skewshim_reuse r;
    memset(&r, 0, sizeof r);
    for (int k = 0; k < 3; k++)
        note(&r, 2, NATIVE, 0, 1, 64);
    int rule, algo, reason;
    TAP_OK(take(&r, 0, &rule, &algo, &reason) && rule == 2 && algo == NATIVE,
           "three alike: the next call reuses rule 2's outcome");
    note(&r, 2, NATIVE, SKEWSHIM_REASON_NOT_PAID_BACK, 1, 64);
    TAP_OK(!take(&r, 0, &rule, &algo, &reason),
           "the same rule falling back for a reason starts over");
    note(&r, 2, NATIVE, SKEWSHIM_REASON_NOT_PAID_BACK, 1, 64);
    TAP_OK(!take(&r, 0, &rule, &algo, &reason),
           "and, after a trusted period broke, two alike are not evidence enough");
    for (int k = 0; k < 2; k++)
        note(&r, 2, NATIVE, SKEWSHIM_REASON_NOT_PAID_BACK, 1, 64);
    TAP_OK(take(&r, 0, &rule, &algo, &reason) &&
               reason == SKEWSHIM_REASON_NOT_PAID_BACK,
           "and the reason is reused with it");
    note(&r, 2, SCAT, 0, 0, 64);
    TAP_OK(!take(&r, 0, &rule, &algo, &reason),
           "an outcome that may not be reused breaks the period");

    /* Whether the repeat count could change an outcome goes with it to the
     * calls that reuse it, each turn of a period its own. */
    skewshim_reuse_outcome a1 = {.rule = 3, .algo = SCAT, .counts = 1};
    skewshim_reuse_outcome b1 = {.rule = 4, .algo = NATIVE, .counts = 0};
    skewshim_reuse_outcome got;
    memset(&r, 0, sizeof r);
    int turns_ok = 1, reused = 0;
    for (int k = 0; k < 40; k++) {
        const skewshim_reuse_outcome *w = k % 2 ? &b1 : &a1;
        if (skewshim_reuse_take(&r, 0, &got)) {
            reused++;
            turns_ok &= got.rule == w->rule && got.counts == w->counts;
        } else {
            skewshim_reuse_note(&r, *w, 1, 64);
        }
    }
    TAP_OK(reused > 10 && turns_ok,
           "a period of two reuses each turn with its own count flag (%d of 40 reused)", reused);
    return TAP_DONE();
}
