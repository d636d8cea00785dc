#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>

#include "topology/topo.h"
#include "vocab.h"

void skewshim_topo_free(skewshim_topo *t)
{
    free(t->node_of);
    free(t->local_of);
    free(t->node_size);
    free(t->node_first);
    free(t->node_ranks);
    memset(t, 0, sizeof *t);
}

int skewshim_topo_from_keys(skewshim_topo *t, int nranks, const int *key)
{
    memset(t, 0, sizeof *t);
    size_t n = (size_t)(nranks > 0 ? nranks : 1);
    t->nranks = nranks;
    t->node_of = malloc(n * sizeof(int));
    t->local_of = malloc(n * sizeof(int));
    t->node_size = calloc(n, sizeof(int));
    t->node_first = calloc(n, sizeof(int));
    t->node_ranks = malloc(n * sizeof(int));
    int *node_key = malloc(n * sizeof(int));
    if (!t->node_of || !t->local_of || !t->node_size || !t->node_first || !t->node_ranks ||
        !node_key) {
        free(node_key);
        skewshim_topo_free(t);
        return -1;
    }
    /* Nodes numbered by their lowest rank; keys are few, so a linear scan of
     * the known nodes per rank is cheap next to anything MPI does. */
    for (int r = 0; r < nranks; r++) {
        int nd = 0;
        while (nd < t->nnodes && node_key[nd] != key[r])
            nd++;
        if (nd == t->nnodes)
            node_key[t->nnodes++] = key[r];
        t->node_of[r] = nd;
        t->local_of[r] = t->node_size[nd]++;
    }
    free(node_key);
    int off = 0;
    for (int nd = 0; nd < t->nnodes; nd++) {
        t->node_first[nd] = off;
        off += t->node_size[nd];
        if (t->node_size[nd] > t->max_per_node)
            t->max_per_node = t->node_size[nd];
        if (nd == 0 || t->node_size[nd] < t->min_per_node)
            t->min_per_node = t->node_size[nd];
    }
    for (int r = 0; r < nranks; r++)
        t->node_ranks[t->node_first[t->node_of[r]] + t->local_of[r]] = r;
    return 0;
}

int skewshim_topo_blocks(skewshim_topo *t, int nranks, int q)
{
    if (q < 1)
        q = 1;
    int *key = malloc((size_t)(nranks > 0 ? nranks : 1) * sizeof(int));
    if (!key)
        return -1;
    for (int r = 0; r < nranks; r++)
        key[r] = r / q;
    int rc = skewshim_topo_from_keys(t, nranks, key);
    free(key);
    return rc;
}

int skewshim_topo_rank(const skewshim_topo *t, int node, int local)
{
    if (node < 0 || node >= t->nnodes || local < 0 || local >= t->node_size[node])
        return -1;
    return t->node_ranks[t->node_first[node] + local];
}

int skewshim_topo_nic_per_rank(const skewshim_topo *t, int nics)
{
    return nics >= t->max_per_node;
}

int64_t skewshim_topo_hier_phase2(const skewshim_topo *t)
{
    int qmin = t->min_per_node;
    if (qmin < 1 || t->nnodes < 1)
        return -1;
    return (int64_t)(t->nnodes - 1) * ((t->max_per_node + qmin - 1) / qmin);
}

/* In phase 2 the busiest rank sends skewshim_topo_hier_phase2() messages
 * where the linear exchange sends msgs, P - 1 on dense blocks.  The lab
 * (doc/performance.md, "Nodes of unequal size") has tuna_hier behind
 * scattered wherever that is more than half of P - 1 (a rank alone on its
 * node beside nodes of 32: 1.03-1.73x scattered's time) and mostly ahead
 * from half down (2 ranks beside nodes of 32: 0.68-1.07x at P = 162,
 * 0.94-1.05x at P = 66, 16-64 B).
 * Where every rank has a NIC of its own (nics >= Q), what tuna_hier
 * saves is the linear exchange's time, less its phase 2, against the
 * agreement and its intra-node rounds, and its copies and intra-node
 * traffic, which grow with the bytes.  The built-in rule that leans on
 * this line runs tuna_hier with 32 requests in flight in phase 2, as many
 * as the linear exchange keeps; so weighed, a phase-2 message costs about
 * one of the linear exchange's on dense rows (with 8 in flight it cost
 * 2.25, and nodes of 2 never paid).  The line was drawn on the lab's
 * two-tier clusters with 32 in flight ("The line with 32 requests in
 * flight" in doc/performance.md: gpu-h200 nodes of 8, gpu-perlmutter
 * nodes of 4, gpu-h200-pairs nodes of 2, 128-512 ranks, uniform and
 * power-law blocks of 16-512 B): the net saving must reach 90 + 0.5 times
 * the mean non-empty block's bytes, and those bytes.  It is not one of
 * messages a byte alone: at 1024 ranks on nodes of 8, 1 KiB blocks take
 * tuna_hier 1.09x where 512 B blocks at 512 ranks take it 0.84x, so the
 * built-in rule stops at 512 B.
 * The linear exchange posts its peers in stages of 32 (MPICH's throttle,
 * scattered's block_count) and waits for each, so on sparse rows its time
 * follows the stages its busiest rank's messages fall in as well as the
 * messages: about 0.23 us a message and 3.0 us a stage at 1 us a hop
 * (scattered takes 123-147 us at 1024 ranks on power-law rows of 94-187
 * messages, its 32 stages, whatever the bytes).  linear_cost() weighs a
 * message 0.8 and a stage 6.4, the (P - 1) / 32 stages of full ones
 * counted as such: 1.0 a message on dense rows, whose count, and the
 * communicator's check, stay as they were.  Over the 200 points at 1 us
 * with tuna_hier at 32 and scattered measured (doc/perf/lab/nic-per-rank/,
 * "The linear exchange's stages, counted" in doc/performance.md), the time
 * the line's choice takes falls from 0.920 of scattered's (messages
 * alone) to 0.879 (the better of the two at each point: 0.861).  It
 * moves 30 points to tuna_hier, all power-law rows: 23 gain, from 176
 * ranks on nodes of 8 and 16 (0.59-0.96x scattered's time; 0.59-0.63x at
 * 1024 ranks), and 7 lose, at 128-192 ranks on nodes of 8 (1.002-1.087x).
 * Only the stages that can hold one
 * of the busiest rank's messages count: on Zipf rows of 8-28 messages over
 * 8-16 stages each message costs scattered a stage, but tuna_hier's time
 * there does not follow the mean block (1.10-1.53x at 384-512 ranks on
 * 512 B blocks), and so counted they stay on scattered.  The level
 * follows the latency between the ranks of a node: drawn for 1 us, the
 * scale-up hop the GPU-like platforms assume; with 0.3 us (gpu-*-shm,
 * which the device machine's host matches) the line keeps scattered at
 * 44 of 122 points where tuna_hier takes 0.77-0.99x, and runs it at 31,
 * at 0.57-0.84x.  On nodes of 4 it still gives up 0.83-0.95x on
 * power-law rows from 384 ranks, where phase 2 is twice as long.
 * With fewer requests in flight (the policy's default block_count of 8)
 * a phase-2 message costs about 2.25 of the linear exchange's; the line
 * the lab drew so, msgs - 2.25 phase 2 >= max(86 + 0.3 B, B), holds such
 * a rule too, besides the line above, which it cannot beat when 32 in
 * flight do not.  It counts messages only, as drawn: over the 136 points
 * of the 1 us platforms with tuna_hier at 8 and scattered measured
 * (doc/perf/lab/nic-per-rank/), the line for 32 alone ran it at 56, at
 * 0.41-1.33x scattered's time; both run it at 37, at 0.41-1.09x, and give
 * up 3 gains of 0.70-0.93x (doc/performance.md, "A rule with fewer
 * requests in flight").  Between 8 and 32 nothing was measured, and the
 * heavier line stands.  msgs is P - 1 and bytes 0 for the communicator's
 * check (whether any call could pay: linear_cost() grows with msgs), the
 * agreed busiest rank's count and the agreed mean for a call's.  Phase 2
 * sends no empty bundle, so a call's line subtracts the agreed busiest
 * rank's non-empty ones on balanced rows (phase2_msgs, at most the dense
 * count; skewshim_topo_phase2_counted): on sparse rows most bundles are
 * empty at scale (power-law rows at 1024 ranks on nodes of 4: 84 of 255),
 * and so counted the line runs tuna_hier on power-law rows on nodes of 4
 * from 512 ranks at 0.65-0.83x scattered's time, where every bundle
 * counted gave them up (doc/performance.md, "Empty bundles").  The line
 * for fewer in flight keeps the dense count it was drawn with.  The NICs
 * are the key because the user states them; the lab's times follow the
 * latency between a node's ranks, not the NICs ("Fewer NICs than ranks,
 * and what the line really follows"). */
#define NET_SAVED_WITH_NIC_PER_RANK 90.0
#define NET_SAVED_ADDED_PER_BYTE 0.5
#define LINEAR_MESSAGE_WEIGHT 0.8
#define LINEAR_STAGE_WEIGHT 6.4
#define FEW_PHASE2_WEIGHT 2.25
#define FEW_NET_SAVED 86.0
#define FEW_NET_SAVED_ADDED_PER_BYTE 0.3

/* The linear exchange's time on the busiest rank, in its messages on
 * dense rows. */
static double linear_cost(int size, uint64_t msgs)
{
    double stages = (double)(size > 0 ? size - 1 : 0) / SKEWSHIM_LINEAR_FLIGHT;
    double held = (double)msgs < stages ? (double)msgs : stages;
    double staged = LINEAR_MESSAGE_WEIGHT * (double)msgs + LINEAR_STAGE_WEIGHT * held;
    return staged > (double)msgs ? staged : (double)msgs;
}

int skewshim_topo_hier_pays(const skewshim_topo *t, int size, int nics, uint64_t msgs,
                            uint64_t phase2_msgs, double bytes, int in_flight)
{
    int64_t phase2 = skewshim_topo_hier_phase2(t);
    if (phase2 < 0)
        return 0;
    if (2 * phase2 > (int64_t)size - 1)
        return 0;
    if (skewshim_topo_nic_per_rank(t, nics)) {
        double sent = phase2_msgs < (uint64_t)phase2 ? (double)phase2_msgs : (double)phase2;
        double net = linear_cost(size, msgs) - sent;
        if (net < NET_SAVED_WITH_NIC_PER_RANK + NET_SAVED_ADDED_PER_BYTE * bytes || net < bytes)
            return 0;
        if (in_flight < SKEWSHIM_HIER_LINE_FLIGHT) {
            double few = (double)msgs - FEW_PHASE2_WEIGHT * (double)phase2;
            if (few < FEW_NET_SAVED + FEW_NET_SAVED_ADDED_PER_BYTE * bytes || few < bytes)
                return 0;
        }
    }
    return 1;
}

/* Zipf rows (MTM 21 at 512 B) gain from their empty bundles on nodes of 8
 * and 4 from 512 ranks (0.69-0.94x scattered's time) but lose on nodes of
 * 16 (1.196x at 512 ranks), and their counts do not tell the two apart;
 * every power-law row measured (MTM 1.5-1.6) gains.  So skewed rows keep
 * the dense count, as the rule for 513 B-1 KiB asks MTM <= 2. */
#define PHASE2_SPARSE_MTM 2.0

uint64_t skewshim_topo_phase2_counted(uint64_t phase2, double mtm)
{
    return mtm <= PHASE2_SPARSE_MTM ? phase2 : UINT64_MAX;
}

int skewshim_matrix_alloc(skewshim_matrix *m, int nranks)
{
    m->nranks = nranks;
    m->b = calloc((size_t)nranks * (size_t)nranks + 1, sizeof *m->b);
    return m->b ? 0 : -1;
}

void skewshim_matrix_free(skewshim_matrix *m)
{
    free(m->b);
    m->b = NULL;
    m->nranks = 0;
}

double skewshim_mtm(uint64_t max_v, uint64_t sum_v, int nranks)
{
    if (sum_v == 0)
        return 1.0;
    return (double)nranks * (double)max_v / (double)sum_v;
}

double skewshim_mean_nonempty(uint64_t total, uint64_t nonempty)
{
    return nonempty ? (double)total / (double)nonempty : 0.0;
}

void skewshim_rank_traffic_of(const skewshim_topo *t, int rank, const uint64_t *sbytes,
                              const uint64_t *rbytes, skewshim_rank_traffic *out)
{
    memset(out, 0, sizeof *out);
    int me = t->node_of[rank];
    uint64_t nsend = 0, nrecv = 0;
    for (int j = 0; j < t->nranks; j++) {
        if (sbytes[j] > out->max_block)
            out->max_block = sbytes[j];
        out->send += sbytes[j];
        out->recv += rbytes[j];
        out->nonempty += sbytes[j] != 0;
        if (j != rank) {
            nsend += sbytes[j] != 0;
            nrecv += rbytes[j] != 0;
        }
        if (t->node_of[j] != me) {
            out->isend += sbytes[j];
            out->irecv += rbytes[j];
        }
    }
    out->msgs = nsend > nrecv ? nsend : nrecv;
}

/* The sender side is a lower bound: an agent's bundle for (node, l) holds
 * the blocks of every rank of its node, and this rank sees only its own.
 * The receiver side is exact.  O(P), no allocation. */
uint64_t skewshim_topo_phase2_msgs(const skewshim_topo *t, int rank, const uint64_t *sbytes,
                                   const uint64_t *rbytes, size_t rstride)
{
    int me = t->node_of[rank];
    uint64_t from = 0, most = 0;
    for (int n = 0; n < t->nnodes; n++) {
        if (n == me)
            continue;
        const int *r = t->node_ranks + t->node_first[n];
        for (int i = 0; i < t->node_size[n]; i++)
            if (rbytes[(size_t)r[i] * rstride]) {
                from++;
                break;
            }
    }
    for (int l = 0; l < t->max_per_node; l++) {
        uint64_t to = 0;
        for (int n = 0; n < t->nnodes; n++) {
            int j = n == me ? -1 : skewshim_topo_rank(t, n, l);
            to += j >= 0 && sbytes[j] != 0;
        }
        most = to > most ? to : most;
    }
    return from > most ? from : most;
}

void skewshim_skew_of_matrix(const skewshim_matrix *m, const skewshim_topo *t,
                             skewshim_skew *out)
{
    int P = m->nranks;
    memset(out, 0, sizeof *out);
    uint64_t *s_all = calloc((size_t)P + 1, sizeof(uint64_t));
    uint64_t *r_all = calloc((size_t)P + 1, sizeof(uint64_t));
    uint64_t *s_int = calloc((size_t)P + 1, sizeof(uint64_t));
    uint64_t *r_int = calloc((size_t)P + 1, sizeof(uint64_t));
    if (s_all && r_all && s_int && r_int) {
        for (int i = 0; i < P; i++)
            for (int j = 0; j < P; j++) {
                uint64_t b = m->b[(size_t)i * P + j];
                out->total_bytes += b;
                if (b > out->max_block_bytes)
                    out->max_block_bytes = b;
                s_all[i] += b;
                r_all[j] += b;
                if (t && t->node_of[i] != t->node_of[j]) {
                    out->inter_bytes += b;
                    s_int[i] += b;
                    r_int[j] += b;
                }
            }
        uint64_t ms = 0, mr = 0, mis = 0, mir = 0, ss = 0, si = 0;
        for (int i = 0; i < P; i++) {
            if (s_all[i] > ms) ms = s_all[i];
            if (r_all[i] > mr) mr = r_all[i];
            if (s_int[i] > mis) mis = s_int[i];
            if (r_int[i] > mir) mir = r_int[i];
            ss += s_all[i];
            si += s_int[i];
        }
        out->send_mtm_all = skewshim_mtm(ms, ss, P);
        out->recv_mtm_all = skewshim_mtm(mr, ss, P);
        out->mtm_all = out->send_mtm_all > out->recv_mtm_all ? out->send_mtm_all : out->recv_mtm_all;
        out->send_mtm_inter = skewshim_mtm(mis, si, P);
        out->recv_mtm_inter = skewshim_mtm(mir, si, P);
        out->mtm_inter = out->send_mtm_inter > out->recv_mtm_inter ? out->send_mtm_inter
                                                                   : out->recv_mtm_inter;
    }
    free(s_all);
    free(r_all);
    free(s_int);
    free(r_int);
}

double skewshim_lower_bound(const skewshim_matrix *m, const skewshim_topo *t,
                            int nics_per_node, double bw)
{
    int P = m->nranks, N = t->nnodes;
    if (nics_per_node < 1)
        nics_per_node = 1;
    uint64_t *out_b = calloc((size_t)N + 1, sizeof(uint64_t));
    uint64_t *in_b = calloc((size_t)N + 1, sizeof(uint64_t));
    uint64_t worst = 0;
    if (out_b && in_b) {
        for (int i = 0; i < P; i++)
            for (int j = 0; j < P; j++) {
                int a = t->node_of[i], b = t->node_of[j];
                if (a != b) {
                    out_b[a] += m->b[(size_t)i * P + j];
                    in_b[b] += m->b[(size_t)i * P + j];
                }
            }
        for (int n = 0; n < N; n++) {
            if (out_b[n] > worst) worst = out_b[n];
            if (in_b[n] > worst) worst = in_b[n];
        }
    }
    free(out_b);
    free(in_b);
    return bw > 0 ? (double)worst / ((double)nics_per_node * bw) : 0.0;
}
