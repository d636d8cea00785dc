/* Topology from node keys, emulated nodes, MTM arithmetic, lower bound. */
#include <math.h>
#include <stdlib.h>

#include "tap.h"
#include "topology/topo.h"

int main(void)
{
    skewshim_topo t;
    int keys[7] = {5, 9, 5, 9, 1, 5, 1};
    skewshim_topo_from_keys(&t, 7, keys);
    TAP_OK(t.nnodes == 3 && t.max_per_node == 3, "three nodes, largest 3");
    TAP_OK(t.node_of[0] == 0 && t.node_of[1] == 1 && t.node_of[4] == 2, "nodes numbered by lowest rank");
    TAP_OK(t.local_of[5] == 2 && t.local_of[3] == 1 && t.local_of[6] == 1, "local ids in rank order");
    TAP_OK(skewshim_topo_rank(&t, 0, 2) == 5 && skewshim_topo_rank(&t, 2, 2) == -1, "rank of (node, local)");
    skewshim_topo_free(&t);

    skewshim_topo_blocks(&t, 10, 4);
    TAP_OK(t.nnodes == 3 && t.node_size[2] == 2 && t.node_of[9] == 2 && t.local_of[9] == 1,
           "10 ranks in blocks of 4: uneven last node");
    skewshim_topo_free(&t);

    /* TuNA_l^g's phase 2 on the busiest rank: (N - 1) ceil(Q / qmin). */
    skewshim_topo_blocks(&t, 256, 8);
    TAP_OK(skewshim_topo_hier_phase2(&t) == 31, "256 ranks in nodes of 8: 31 messages in phase 2");
    skewshim_topo_free(&t);
    skewshim_topo_blocks(&t, 10, 4);
    TAP_OK(skewshim_topo_hier_phase2(&t) == 4, "nodes of 4, 4, 2: 2 x ceil(4 / 2) = 4");
    skewshim_topo_free(&t);
    skewshim_topo_blocks(&t, 66, 32);
    TAP_OK(skewshim_topo_hier_phase2(&t) == 32, "nodes of 32, 32, 2: 2 x 16 = 32");
    skewshim_topo_free(&t);

    TAP_OK(skewshim_mtm(0, 0, 8) == 1.0, "empty exchange has MTM 1");
    TAP_OK(fabs(skewshim_mtm(40, 80, 8) - 4.0) < 1e-12, "MTM = P max / sum");

    /* 4 ranks, 2 nodes of 2: rank 0 sends 30 to rank 2 and 10 to rank 3 */
    skewshim_matrix m;
    skewshim_matrix_alloc(&m, 4);
    m.b[0 * 4 + 2] = 30;
    m.b[0 * 4 + 3] = 10;
    m.b[0 * 4 + 1] = 100; /* intra-node: not in the inter-node MTM */
    m.b[3 * 4 + 1] = 20;
    skewshim_topo_blocks(&t, 4, 2);
    skewshim_skew sk;
    skewshim_skew_of_matrix(&m, &t, &sk);
    TAP_OK(sk.total_bytes == 160 && sk.max_block_bytes == 100 && sk.inter_bytes == 60, "totals");
    /* A rank's share, as the log's merge sums it: rank 0 sends 3 non-empty
     * blocks, rank 3 one, rank 1 none: 4 of the 16. */
    uint64_t col[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            col[i][j] = m.b[j * 4 + i];
    skewshim_rank_traffic rt[4];
    uint64_t ne = 0;
    for (int i = 0; i < 4; i++) {
        skewshim_rank_traffic_of(&t, i, &m.b[i * 4], col[i], &rt[i]);
        ne += rt[i].nonempty;
    }
    TAP_OK(rt[0].nonempty == 3 && rt[1].nonempty == 0 && rt[3].nonempty == 1 && ne == 4,
           "per-rank non-empty blocks: 3, 0, 1, and 4 in all");
    /* Messages of the linear exchange, to or from others: rank 0 sends 3;
     * rank 1 receives from 0 and 3; rank 2 receives 1; rank 3 sends 1,
     * receives 1.  A block to itself is no message. */
    TAP_OK(rt[0].msgs == 3 && rt[1].msgs == 2 && rt[2].msgs == 1 && rt[3].msgs == 1,
           "per-rank messages: 3, 2, 1, 1 (got %llu %llu %llu %llu)",
           (unsigned long long)rt[0].msgs, (unsigned long long)rt[1].msgs,
           (unsigned long long)rt[2].msgs, (unsigned long long)rt[3].msgs);
    m.b[2 * 4 + 2] = 7;
    skewshim_rank_traffic self;
    uint64_t col2[4] = {m.b[2], m.b[6], m.b[10], m.b[14]};
    skewshim_rank_traffic_of(&t, 2, &m.b[2 * 4], col2, &self);
    TAP_OK(self.nonempty == 1 && self.msgs == 1, "a block to itself counts as non-empty, not as a message");
    m.b[2 * 4 + 2] = 0;
    /* send inter: s = {40, 0, 0, 20}, sum 60: 4*40/60 */
    TAP_OK(fabs(sk.send_mtm_inter - 4.0 * 40 / 60) < 1e-12, "send MTM over inter-node volumes");
    /* recv inter: r = {0, 20, 30, 10}: 4*30/60 = 2 */
    TAP_OK(fabs(sk.recv_mtm_inter - 2.0) < 1e-12, "recv MTM over inter-node volumes");
    TAP_OK(sk.mtm_inter == sk.send_mtm_inter, "MTM is the max of the two");
    TAP_OK(fabs(sk.send_mtm_all - 4.0 * 140 / 160) < 1e-12, "send MTM over all traffic");
    /* node 0 sends 40 inter, receives 20; node 1 sends 20, receives 40 */
    TAP_OK(fabs(skewshim_lower_bound(&m, &t, 2, 10.0) - 2.0) < 1e-12, "T_LB = 40 / (2 * 10)");
    skewshim_topo_free(&t);
    skewshim_matrix_free(&m);
    return TAP_DONE();
}
