/* Topology and the traffic matrix: pure C, no MPI.
 *
 * Nodes may be uneven (P not a multiple of the ranks per node).  Ranks of a
 * node are listed in increasing rank order; a rank's local id is its index in
 * that list.
 */
#ifndef SKEWSHIM_TOPO_H
#define SKEWSHIM_TOPO_H

#include <stdint.h>
#include <stddef.h>

typedef struct skewshim_topo {
    int nranks;          /* P */
    int nnodes;          /* N */
    int max_per_node;    /* Q = largest node */
    int min_per_node;    /* q = smallest node */
    int *node_of;        /* [P] node index of each rank, 0..N-1 */
    int *local_of;       /* [P] local id of each rank within its node */
    int *node_size;      /* [N] ranks in each node */
    int *node_first;     /* [N] offset into node_ranks */
    int *node_ranks;     /* [P] ranks grouped by node */
} skewshim_topo;

/* Build from a per-rank node key (e.g. the color of a shared-memory split, or
 * rank / ranks_per_node).  Nodes are numbered in order of their lowest rank.
 * Returns 0, or -1 on allocation failure. */
int skewshim_topo_from_keys(skewshim_topo *t, int nranks, const int *key);
/* Emulated nodes of q consecutive ranks (the last one may be smaller). */
int skewshim_topo_blocks(skewshim_topo *t, int nranks, int q);
void skewshim_topo_free(skewshim_topo *t);
/* Rank of local id l on node n, or -1 when that node is smaller. */
int skewshim_topo_rank(const skewshim_topo *t, int node, int local);
/* Whether nics NICs a node give every rank of the largest node its own. */
int skewshim_topo_nic_per_rank(const skewshim_topo *t, int nics);
/* Messages the busiest rank sends in TuNA_l^g's inter-node phase: a rank of
 * a node of q ranks stands for ceil(Q / q) local ids of every other node,
 * (N - 1) ceil(Q / qmin) in all.  -1 for a topology without ranks. */
int64_t skewshim_topo_hier_phase2(const skewshim_topo *t);
/* Whether tuna_hier, keeping in_flight requests in flight in its
 * inter-node phase, pays off on these nodes with nics NICs a node, where
 * the linear exchange costs the busiest rank msgs messages of bytes bytes
 * a non-empty block on average and tuna_hier's inter-node phase at most
 * phase2 (P - 1, UINT64_MAX and 0: whether any call could): the lab's
 * lines (topo.c).  Pure, so every measured point is a unit test. */
int skewshim_topo_hier_pays(const skewshim_topo *t, int size, int nics, uint64_t msgs,
                            uint64_t phase2, double bytes, int in_flight);

/* The phase-2 count a call's line subtracts (skewshim_topo_hier_pays):
 * the agreed busiest rank's non-empty bundles on balanced rows (inter-node
 * MTM at most 2), every bundle (UINT64_MAX) on skewed ones, where a hot
 * rank, not the messages, sets tuna_hier's time. */
uint64_t skewshim_topo_phase2_counted(uint64_t phase2, double mtm);

/* Dense traffic matrix in bytes: m[i*P + j] = bytes rank i sends rank j. */
typedef struct skewshim_matrix {
    int nranks;
    uint64_t *b;
} skewshim_matrix;

int skewshim_matrix_alloc(skewshim_matrix *m, int nranks);
void skewshim_matrix_free(skewshim_matrix *m);

/* Skew figures of SABRE section 4: for each rank, s_i / r_i are its send /
 * receive volumes (inter-node only, or all traffic); Send-MTM = P max s / sum s,
 * likewise Recv-MTM; MTM = max of the two.  A matrix with nothing to send has
 * MTM 1 by convention (perfectly balanced, nothing to fix). */
typedef struct skewshim_skew {
    uint64_t total_bytes;        /* sum of all blocks */
    uint64_t max_block_bytes;
    uint64_t inter_bytes;        /* sum of inter-node blocks */
    double send_mtm_inter, recv_mtm_inter, mtm_inter;
    double send_mtm_all, recv_mtm_all, mtm_all;
} skewshim_skew;

/* MTM from the reduced quantities (what the agreement collective yields). */
double skewshim_mtm(uint64_t max_v, uint64_t sum_v, int nranks);
/* Bytes per block that carries any, from the reduced total and count of
 * such blocks; 0 when none does. */
double skewshim_mean_nonempty(uint64_t total, uint64_t nonempty);
/* One rank's share of an exchange: its row and column of the matrix, as the
 * max and sum over ranks of these give the skew figures without the matrix
 * (the agreement collective, the merge of the per-call log). */
typedef struct skewshim_rank_traffic {
    uint64_t max_block;          /* largest block this rank sends */
    uint64_t send, recv;         /* bytes sent / received, all traffic */
    uint64_t isend, irecv;       /* bytes sent to / received from other nodes */
    uint64_t nonempty;           /* blocks this rank sends of one byte or more */
    /* Messages a linear exchange costs this rank, which sends nothing for an
     * empty block: the larger of its non-empty blocks to and from the others. */
    uint64_t msgs;
} skewshim_rank_traffic;

void skewshim_rank_traffic_of(const skewshim_topo *t, int rank, const uint64_t *sbytes,
                              const uint64_t *rbytes, skewshim_rank_traffic *out);
/* Messages of TuNA_l^g's inter-node phase this rank is known to cost,
 * which sends nothing for an empty bundle: those it receives (one from
 * each other node that sends it anything) and, of those its node's agents
 * send, the most for one local id that its own blocks alone make
 * non-empty.  The max over ranks is the busiest rank's count on all but
 * contrived matrices.  From a rank's send sizes (stride 1) and its receive
 * sizes, rstride words apart (1, or a gathered matrix's row length for its
 * column).  O(P); only the line with a NIC per rank and the log read it. */
uint64_t skewshim_topo_phase2_msgs(const skewshim_topo *t, int rank, const uint64_t *sbytes,
                                   const uint64_t *rbytes, size_t rstride);
/* All figures from a full matrix (tests, simulator, replay). */
void skewshim_skew_of_matrix(const skewshim_matrix *m, const skewshim_topo *t,
                             skewshim_skew *out);

/* Lower bound of SABRE 5.2 / FLASH theorem 1: max over nodes of the inter-node
 * bytes it sends or receives, divided by (nics_per_node * link bandwidth).
 * Returns seconds for bw in bytes/s. */
double skewshim_lower_bound(const skewshim_matrix *m, const skewshim_topo *t,
                            int nics_per_node, double bw);

#endif
