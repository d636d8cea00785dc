/* Reusing agreed outcomes (src/policy/reuse.c): which calls of a job skip
 * the agreement.  The driver plays the pipeline's part: a call either takes
 * the reused outcome or agrees, and an agreed call's outcome is what the
 * job's counts at that call would choose. */
#include <string.h>

#include "policy/reuse.h"
#include "tap.h"
#include "vocab.h"

enum { NATIVE = SKEWSHIM_ALGO_NATIVE, TUNA = SKEWSHIM_ALGO_TUNA_HIER,
       SCAT = SKEWSHIM_ALGO_SCATTERED };

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
        if (skewshim_reuse_take(&r, native_only, &rule, &algo, &reason)) {
            missed[k] = algo != w;
            agreed_at[k] = 0;
            continue;
        }
        agreements++;
        agreed_at[k] = 1;
        missed[k] = 0;
        int reusable = w == NATIVE || (w == SCAT && !native_only);
        skewshim_reuse_note(&r, w == NATIVE ? -1 : 0, w, 0, reusable, limit);
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
    /* calls 0, 1 agree; then runs 1, 2, 4, ..., 64: agreements at
     * 0 1 3 6 11 20 37 70 135 200 ... */
    TAP_OK(ag[0] && ag[1] && !ag[2] && ag[3] && !ag[4] && !ag[5] && ag[6] && ag[11] && ag[20],
           "a settled native job agrees at calls 0 1 3 6 11 20 (runs 1, 2, 4, 8)");
    TAP_OK(ag[135] && ag[200] && !ag[199] && ag[265], "then every 65th call (limit 64)");
    TAP_OK(a >= 20 && a <= 22 && !sum(miss, N), "1000 native calls: 21 agreements, no miss");

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

    /* A job that alternates a native-sized and a tuna-sized exchange: no
     * two agreed calls in a row end alike, so nothing is reused and no
     * call runs other than its choice. */
    const int alt[] = {NATIVE, TUNA};
    a = play(alt, 2, N, 64, 0, ag, miss);
    TAP_OK(a == N && !sum(miss, N), "alternating native / tuna_hier: every call agrees, none missed");

    const int alt2[] = {NATIVE, SCAT};
    a = play(alt2, 2, N, 64, 0, ag, miss);
    TAP_OK(a == N && !sum(miss, N),
           "alternating native / scattered (both reusable): every call agrees, none missed");

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
    int late = 0;
    for (int k = first_tuna_agreed + 1; k < N; k++)
        late += miss[k];
    TAP_OK(late == 0, "and from then on no call misses its choice");

    /* The cost bound: misses only happen inside runs granted before a change. */
    for (int k = 0; k < N; k++)
        want[k] = k < 500 ? NATIVE : TUNA;
    a = play(want, N, N, 64, 0, ag, miss);
    TAP_OK(sum(miss, N) <= 64, "a switch to a new regime costs at most one run of native calls");

    /* A different reason or rule is a different outcome. */
    skewshim_reuse r;
    memset(&r, 0, sizeof r);
    skewshim_reuse_note(&r, 2, NATIVE, 0, 1, 64);
    skewshim_reuse_note(&r, 2, NATIVE, 0, 1, 64);
    int rule, algo, reason;
    TAP_OK(skewshim_reuse_take(&r, 0, &rule, &algo, &reason) && rule == 2 && algo == NATIVE,
           "two alike: the next call reuses rule 2's outcome");
    skewshim_reuse_note(&r, 2, NATIVE, SKEWSHIM_REASON_NOT_PAID_BACK, 1, 64);
    TAP_OK(!skewshim_reuse_take(&r, 0, &rule, &algo, &reason),
           "the same rule falling back for a reason starts over");
    skewshim_reuse_note(&r, 2, NATIVE, SKEWSHIM_REASON_NOT_PAID_BACK, 1, 64);
    TAP_OK(skewshim_reuse_take(&r, 0, &rule, &algo, &reason) &&
               reason == SKEWSHIM_REASON_NOT_PAID_BACK,
           "and the reason is reused with it");
    skewshim_reuse_note(&r, 2, SCAT, 0, 0, 64);
    TAP_OK(!skewshim_reuse_take(&r, 0, &rule, &algo, &reason),
           "an outcome that may not be reused clears the state");
    return TAP_DONE();
}
