#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
/* TuNA_l^g (Fan et al., "Configurable Non-uniform All-to-all Algorithms",
 * section IV, Algorithms 2 and 3).  Phase 1: TuNA inside every node with
 * radix r <= Q, where the unit a rank sends to local id l is the bundle of
 * the N blocks for local id l of every node (the paper's "implicit" groups:
 * all N groups exchanged at once, no sub-communicator).  Afterwards local id
 * l of node n holds, for each node m, the Q blocks node n sends to (m, l).
 * Phase 2: the scattered exchange between ranks of equal local id, N - 1
 * node steps of one coalesced message (Q blocks) each, or (N - 1) Q
 * staggered messages of one block, in batches of block_count.
 *
 * Nodes of unequal size (the paper's are equal).  On a node of q ranks, the
 * largest of Q, local id g stands for the local ids l = g + i q (i < c =
 * ceil(Q / q)) of every node: its phase-1 unit carries c N blocks, and in
 * phase 2 it sends to each (m, l) that exists.  The receiver (m, l) still
 * gets one message per other node n, from local id l mod q_n.  With equal
 * nodes c = 1 and this is the paper's schedule. */
#include "schedule/forwarding.h"
#include "policy.h"

int skewshim_fwd_hier_init(skewshim_fwd_hier *h, int nodes, int per_node, int max_per_node,
                           int radix, int block_count, int variant, uint64_t max_block_bytes)
{
    if (nodes < 1 || per_node < 1 || max_per_node < per_node)
        return -1;
    int copies = (max_per_node + per_node - 1) / per_node;
    if ((int64_t)copies * nodes > INT32_MAX)
        return -1;
    if (radix <= 0)
        /* One unit carries c N blocks, so its size decides latency- vs bandwidth-bound. */
        radix = skewshim_tuna_auto_radix(per_node,
                                         skewshim_fwd_mul((uint64_t)copies * (uint64_t)nodes,
                                                          max_block_bytes));
    if (block_count < 1)
        block_count = 1;
    h->nodes = nodes;
    h->per_node = per_node;
    h->max_per_node = max_per_node;
    h->copies = copies;
    h->variant = variant == SKEWSHIM_TUNA_STAGGERED ? SKEWSHIM_TUNA_STAGGERED
                                                    : SKEWSHIM_TUNA_COALESCED;
    h->block_count = block_count;
    if (skewshim_fwd_init(&h->intra, per_node, radix, copies * nodes, 0) != 0)
        return -1;
    /* Staggered messages are numbered (step - 1) Q + origin local id on
     * both sides, so equal batches of that numbering match up. */
    int steps = h->variant == SKEWSHIM_TUNA_STAGGERED ? (nodes - 1) * max_per_node : nodes - 1;
    h->inter_rounds = steps;
    h->inter_batch = steps < block_count ? steps : block_count;
    return 0;
}

void skewshim_fwd_layout_hier(const skewshim_fwd_hier *h, uint64_t max_block_bytes,
                              skewshim_fwd_layout *L)
{
    const skewshim_fwd *f = &h->intra;
    uint64_t unit = skewshim_fwd_mul((uint64_t)f->width, max_block_bytes);
    uint64_t metan = (uint64_t)f->stage_units * (uint64_t)f->width;
    uint64_t xblocks = (uint64_t)(h->nodes - 1) * (uint64_t)h->copies * (uint64_t)h->per_node;
    /* a message from any node: at most Q blocks */
    uint64_t xrecv = h->variant == SKEWSHIM_TUNA_COALESCED
                   ? (uint64_t)h->inter_batch * (uint64_t)h->max_per_node : 0;
    uint64_t o = 0;
    L->block = max_block_bytes;
    L->meta_out = o; o += 8 * metan;
    L->meta_in = o;  o += 8 * metan;
    L->tsize = o;    o += 8 * (uint64_t)f->tslots * (uint64_t)f->width;
    L->xsize = o;    o += 8 * xblocks;
    L->t = o;          o = skewshim_fwd_add(o, skewshim_fwd_mul((uint64_t)f->tslots, unit));
    L->send_stage = o; o = skewshim_fwd_add(o, skewshim_fwd_mul((uint64_t)f->stage_units, unit));
    L->recv_stage = o; o = skewshim_fwd_add(o, skewshim_fwd_mul((uint64_t)f->stage_units, unit));
    L->xbuf = o;       o = skewshim_fwd_add(o, skewshim_fwd_mul(xblocks, max_block_bytes));
    L->xrecv = o;      o = skewshim_fwd_add(o, skewshim_fwd_mul(xrecv, max_block_bytes));
    L->total = o;
}

uint64_t skewshim_fwd_hier_bound(int nodes, const int *node_size, int radix, int block_count,
                                 int variant, uint64_t max_block_bytes)
{
    int Q = 0;
    for (int n = 0; n < nodes; n++)
        Q = node_size[n] > Q ? node_size[n] : Q;
    uint64_t most = 0;
    for (int n = 0; n < nodes; n++) {
        if (n > 0 && node_size[n] == node_size[n - 1])
            continue;       /* nodes of one size come in runs: plan each run once */
        skewshim_fwd_hier h;
        skewshim_fwd_layout L;
        if (skewshim_fwd_hier_init(&h, nodes, node_size[n], Q, radix, block_count, variant,
                                   max_block_bytes) != 0)
            return UINT64_MAX;
        skewshim_fwd_layout_hier(&h, max_block_bytes, &L);
        most = L.total > most ? L.total : most;
    }
    return most;
}
