/* scattered and pairwise: the union of every rank's slice (each rank's own
 * sends and copies) is a complete exchange; both sides of every pair agree
 * on the stage; round counts are MPICH's and Open MPI's. */
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "tap.h"

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

typedef int (*planner)(const skewshim_local *l, int param, skewshim_sched *out);
static int scattered(const skewshim_local *l, int bc, skewshim_sched *o)
{
    return skewshim_plan_scattered(l, bc, o);
}
static int pairwise(const skewshim_local *l, int bc, skewshim_sched *o)
{
    (void)bc;
    return skewshim_plan_pairwise(l, o);
}

/* Returns 0 when the union verifies and every message appears with the
 * same stage in the sender's and the receiver's slice. */
static int check(planner pl, int P, int param, const uint64_t *m, uint64_t *rounds0, char *err)
{
    skewshim_sched g, *sl = calloc((size_t)P, sizeof *sl);
    uint64_t *rb = malloc((size_t)P * sizeof *rb);
    skewshim_sched_init(&g, P, -1);
    int rc = 0;
    for (int r = 0; r < P; r++) {
        for (int i = 0; i < P; i++)
            rb[i] = m[(size_t)i * P + r];
        skewshim_local l = {r, P, m + (size_t)r * P, rb};
        skewshim_sched_init(&sl[r], P, r);
        pl(&l, param, &sl[r]);
        for (size_t k = 0; k < sl[r].nmoves; k++)
            if (sl[r].moves[k].src == r)
                skewshim_sched_add(&g, &sl[r].moves[k]);
    }
    *rounds0 = sl[0].stats.rounds;
    skewshim_sched_finish(&g);
    rc = skewshim_sched_verify(&g, m, err, 200);
    for (int r = 0; r < P && !rc; r++)
        for (size_t k = 0; k < sl[r].nmoves && !rc; k++) {
            const skewshim_move *a = &sl[r].moves[k];
            if (a->dst != r || a->src == r)
                continue;
            int found = 0;
            for (size_t q = 0; q < sl[a->src].nmoves; q++) {
                const skewshim_move *b = &sl[a->src].moves[q];
                if (b->dst == r && b->stage == a->stage && b->bytes == a->bytes)
                    found = 1;
            }
            if (!found) {
                strcpy(err, "receiver's stage differs from sender's");
                rc = -1;
            }
        }
    for (int r = 0; r < P; r++)
        skewshim_sched_free(&sl[r]);
    skewshim_sched_free(&g);
    free(sl);
    free(rb);
    return rc;
}

int main(void)
{
    char err[256];
    uint64_t seed = 88172645463325252ull, rounds;
    for (int P = 1; P <= 17; P += (P < 9 ? 1 : 4)) {
        uint64_t *m = malloc((size_t)P * P * sizeof *m);
        for (int t = 0; t < 3; t++) {
            for (int i = 0; i < P * P; i++)
                m[i] = t == 0 ? 0 : rnd(&seed) % (t == 1 ? 40 : 3);
            for (int bc = 1; bc <= P + 1; bc += (bc < 4 ? 1 : 5)) {
                int rc = check(scattered, P, bc, m, &rounds, err);
                TAP_OK(rc == 0, "scattered P=%d block_count=%d matrix %d: %s", P, bc, t,
                       rc ? err : "verifies");
                if (t == 1 && P > 1 && bc <= P) {
                    /* batches of bc partners over k = 0..P-1; k=0 is the self copy */
                    uint64_t want = (uint64_t)((P + bc - 1) / bc);
                    if (bc == 1)
                        want = (uint64_t)P - 1;
                    TAP_OK(rounds <= want, "scattered P=%d bc=%d rounds %llu <= %llu", P, bc,
                           (unsigned long long)rounds, (unsigned long long)want);
                }
            }
            int rc = check(pairwise, P, 0, m, &rounds, err);
            TAP_OK(rc == 0, "pairwise P=%d matrix %d: %s", P, t, rc ? err : "verifies");
            if (t == 0)
                TAP_OK(rounds == 0, "pairwise with nothing to send has no rounds");
        }
        /* every block non-empty: pairwise takes exactly P-1 rounds */
        for (int i = 0; i < P * P; i++)
            m[i] = 1 + i % 5;
        check(pairwise, P, 0, m, &rounds, err);
        TAP_OK(rounds == (uint64_t)(P - 1), "pairwise P=%d: %llu rounds = P-1", P,
               (unsigned long long)rounds);
        check(scattered, P, 4, m, &rounds, err);
        TAP_OK(rounds == (uint64_t)(P > 1 ? (P + 3) / 4 : 0), "scattered P=%d bc=4: %llu rounds", P,
               (unsigned long long)rounds);
        free(m);
    }
    return TAP_DONE();
}
