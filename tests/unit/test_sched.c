/* The schedule container and its replay checker.  The checker is what every
 * planner's property test trusts, so it is tested here against schedules
 * that are wrong in each way a planner could be wrong. */
#include <stdlib.h>
#include <string.h>

#include "schedule/sched.h"
#include "tap.h"

#define P 3

static const uint64_t M[P * P] = {
    2, 5, 0,
    1, 0, 3,
    4, 4, 1,
};

/* Direct exchange: every block from send to receive in one stage. */
static void direct(skewshim_sched *s)
{
    skewshim_sched_init(s, P, -1);
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++)
            skewshim_sched_move(s, i == j ? 0 : 1, i, SKEWSHIM_LOC_SEND, j, 0, j,
                                SKEWSHIM_LOC_RECV, i, 0, M[i * P + j], 0);
    skewshim_sched_finish(s);
}

/* Every block but rank 0's for rank 1 straight to its receiver in stage 0
 * (finish not called: the caller adds rank 0's block its own way). */
static void all_but_0_to_1(skewshim_sched *s)
{
    skewshim_sched_init(s, P, -1);
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++)
            if (!(i == 0 && j == 1))
                skewshim_sched_move(s, 0, i, SKEWSHIM_LOC_SEND, j, 0, j, SKEWSHIM_LOC_RECV, i, 0,
                                    M[i * P + j], 0);
}

/* Moves of rank 0's block for rank 1 in each hop through rank 2. */
static void count_hops(const skewshim_sched *s, size_t *hop1, size_t *hop2)
{
    *hop1 = *hop2 = 0;
    for (size_t i = 0; i < s->nmoves; i++) {
        const skewshim_move *m = &s->moves[i];
        *hop1 += m->src == 0 && m->dst == 2 && m->dst_loc == SKEWSHIM_LOC_TMP;
        *hop2 += m->src == 2 && m->dst == 1 && m->src_loc == SKEWSHIM_LOC_TMP;
    }
}

/* Rank 0's block for rank 1 goes through rank 2's temp, in two pieces,
 * the second half first (so that finish has nothing to fold). */
static void forwarded(skewshim_sched *s, int same_stage)
{
    all_but_0_to_1(s);
    skewshim_sched_move(s, 0, 0, SKEWSHIM_LOC_SEND, 1, 0, 2, SKEWSHIM_LOC_TMP, -1, 0, 5, 0);
    skewshim_sched_move(s, same_stage ? 0 : 1, 2, SKEWSHIM_LOC_TMP, -1, 2, 1, SKEWSHIM_LOC_RECV,
                        0, 2, 3, 0);
    skewshim_sched_move(s, same_stage ? 0 : 1, 2, SKEWSHIM_LOC_TMP, -1, 0, 1, SKEWSHIM_LOC_RECV,
                        0, 0, 2, 0);
    skewshim_sched_finish(s);
}

/* Rank 0's block for rank 1 in three pieces through rank 2 (each pair's
 * pieces continue each other), with other pairs' moves between them; with
 * break_at > 0, that piece of the second hop starts one byte later in the
 * temp (and so continues its predecessor on one side only). */
static void pieces(skewshim_sched *s, int break_at)
{
    all_but_0_to_1(s);
    static const uint64_t at[] = {0, 1, 3}, len[] = {1, 2, 2};
    for (int k = 0; k < 3; k++) {
        skewshim_sched_move(s, 0, 0, SKEWSHIM_LOC_SEND, 1, at[k], 2, SKEWSHIM_LOC_TMP, -1, at[k],
                            len[k], 0);
        uint64_t from = at[k] + (break_at && k == break_at ? 1 : 0);
        skewshim_sched_move(s, 1, 2, SKEWSHIM_LOC_TMP, -1, from, 1, SKEWSHIM_LOC_RECV, 0, at[k],
                            len[k], 0);
        skewshim_sched_move(s, 1, 1, SKEWSHIM_LOC_SEND, 1, 0, 1, SKEWSHIM_LOC_RECV, 1, 0, 0, 0);
    }
    skewshim_sched_finish(s);
}

int main(void)
{
    char err[256];
    skewshim_sched s;

    direct(&s);
    TAP_OK(skewshim_sched_verify(&s, M, err, sizeof err) == 0, "direct exchange verifies (%s)", err);
    TAP_OK(s.nstages == 2, "two stages");
    TAP_OK(s.stats.messages == 5 && s.stats.bytes_sent == 17 && s.stats.bytes_copied == 3,
           "global stats: 5 messages, 17 bytes sent, 3 copied (%llu %llu %llu)",
           (unsigned long long)s.stats.messages, (unsigned long long)s.stats.bytes_sent,
           (unsigned long long)s.stats.bytes_copied);
    skewshim_sched_stats st;
    skewshim_sched_rank_stats(&s, 2, &st);
    TAP_OK(st.messages == 2 && st.bytes_sent == 8 && st.rounds == 1, "rank 2 stats");
    skewshim_sched sl;
    skewshim_sched_slice(&s, 1, &sl);
    TAP_OK(sl.nmoves == 4 && sl.stats.messages == 2 && sl.stats.bytes_sent == 4,
           "slice of rank 1 keeps its sends and receives");
    skewshim_sched_free(&sl);

    /* each corruption must be caught */
    s.moves[2].bytes -= 1;
    TAP_OK(skewshim_sched_verify(&s, M, err, sizeof err) != 0, "missing byte caught: %s", err);
    s.moves[2].bytes += 1;
    s.moves[2].dst_off += 1;
    TAP_OK(skewshim_sched_verify(&s, M, err, sizeof err) != 0, "write past block caught: %s", err);
    s.moves[2].dst_off -= 1;
    s.moves[2].dst_blk = (s.moves[2].dst_blk + 1) % P;
    TAP_OK(skewshim_sched_verify(&s, M, err, sizeof err) != 0, "wrong block caught: %s", err);
    s.moves[2].dst_blk = (s.moves[2].dst_blk + P - 1) % P;
    TAP_OK(skewshim_sched_verify(&s, M, err, sizeof err) == 0, "restored verifies");
    skewshim_move dup = s.moves[3];
    skewshim_sched_add(&s, &dup);
    skewshim_sched_finish(&s);
    TAP_OK(skewshim_sched_verify(&s, M, err, sizeof err) != 0, "double delivery caught: %s", err);
    s.moves[s.nmoves - 1].dst_loc = SKEWSHIM_LOC_SEND;
    TAP_OK(skewshim_sched_verify(&s, M, err, sizeof err) != 0, "write to send buffer caught: %s",
           err);
    skewshim_sched_free(&s);

    forwarded(&s, 0);
    TAP_OK(skewshim_sched_verify(&s, M, err, sizeof err) == 0, "forwarding via temp verifies (%s)",
           err);
    TAP_OK(s.tmp_bytes[2] == 5 && s.tmp_bytes[0] == 0, "temp declared from the moves");
    TAP_OK(s.stats.bytes_forwarded == 5, "forwarded bytes counted");
    s.tmp_bytes[2] = 4;
    TAP_OK(skewshim_sched_verify(&s, M, err, sizeof err) != 0, "temp overrun caught: %s", err);
    skewshim_sched_free(&s);
    forwarded(&s, 1);
    TAP_OK(skewshim_sched_verify(&s, M, err, sizeof err) != 0,
           "temp read and written in one stage caught: %s", err);
    skewshim_sched_free(&s);

    /* zero-byte moves are dropped; P = 1 */
    skewshim_sched_init(&s, 1, -1);
    skewshim_sched_move(&s, 0, 0, SKEWSHIM_LOC_SEND, 0, 0, 0, SKEWSHIM_LOC_RECV, 0, 0, 0, 0);
    skewshim_sched_finish(&s);
    uint64_t z = 0;
    TAP_OK(s.nmoves == 0 && skewshim_sched_verify(&s, &z, err, sizeof err) == 0,
           "zero-byte moves dropped, empty P=1 exchange verifies");
    skewshim_sched_free(&s);

    /* finish sorts by stage, stably */
    skewshim_sched_init(&s, 2, -1);
    skewshim_sched_move(&s, 1, 0, SKEWSHIM_LOC_SEND, 1, 0, 1, SKEWSHIM_LOC_RECV, 0, 0, 1, 0);
    skewshim_sched_move(&s, 0, 0, SKEWSHIM_LOC_SEND, 1, 1, 1, SKEWSHIM_LOC_RECV, 0, 1, 1, 0);
    skewshim_sched_move(&s, 1, 0, SKEWSHIM_LOC_SEND, 1, 2, 1, SKEWSHIM_LOC_RECV, 0, 2, 1, 0);
    skewshim_sched_finish(&s);
    TAP_OK(s.moves[0].stage == 0 && s.moves[1].src_off == 0 && s.moves[2].src_off == 2,
           "stable sort by stage");
    TAP_OK(s.stats.rounds == 2, "two rounds");
    skewshim_sched_free(&s);
    /* Coalescing count: in one stage rank 2 sends rank 1 its own block and
     * both forwarded pieces (3 messages, 1 pair); split over two stages
     * the pieces are one pair of their own. */
    forwarded(&s, 0);
    int64_t two = skewshim_sched_pair_messages(&s);
    uint64_t msgs = s.stats.messages;
    skewshim_sched_free(&s);
    forwarded(&s, 1);
    int64_t one = skewshim_sched_pair_messages(&s);
    TAP_OK(s.stats.messages == msgs && one == (int64_t)msgs - 2 && two == (int64_t)msgs - 1,
           "pair messages: %lld in one stage, %lld in two, of %llu messages", (long long)one,
           (long long)two, (unsigned long long)msgs);
    skewshim_sched_free(&s);
    skewshim_sched_init(&s, P, -1);
    TAP_OK(skewshim_sched_pair_messages(&s) == 0, "pair messages: none in an empty schedule");
    skewshim_sched_free(&s);

    /* finish folds a pair's pieces that continue each other on both sides
     * in one stage; a slice folds them alike. */
    pieces(&s, 0);
    size_t n_hop1, n_hop2;
    count_hops(&s, &n_hop1, &n_hop2);
    TAP_OK(n_hop1 == 1 && n_hop2 == 1 && skewshim_sched_verify(&s, M, err, sizeof err) == 0,
           "three continuing pieces a hop fold into one move (%zu, %zu) and verify (%s)", n_hop1,
           n_hop2, err);
    skewshim_sched_slice(&s, 2, &sl);
    size_t in_slice = 0, same = 0;
    for (size_t i = 0; i < s.nmoves; i++)
        if (s.moves[i].src == 2 || s.moves[i].dst == 2) {
            same += in_slice < sl.nmoves &&
                    memcmp(&s.moves[i], &sl.moves[in_slice], sizeof s.moves[i]) == 0;
            in_slice++;
        }
    TAP_OK(sl.nmoves == in_slice && same == in_slice,
           "the slice of the forwarding rank has the folded moves in order (%zu of %zu)", same,
           sl.nmoves);
    skewshim_sched_free(&sl);
    skewshim_sched_free(&s);
    pieces(&s, 2);
    count_hops(&s, &n_hop1, &n_hop2);
    TAP_OK(n_hop1 == 1 && n_hop2 == 2,
           "a piece that continues on the receive side only starts a move of its own (%zu, %zu)",
           n_hop1, n_hop2);
    skewshim_sched_free(&s);
    return TAP_DONE();
}
