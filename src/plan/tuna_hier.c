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
 * staggered messages of one block, in batches of block_count. */
#include "schedule/forwarding.h"
#include "policy.h"

int skewshim_fwd_hier_init(skewshim_fwd_hier *h, int nodes, int per_node, int radix,
                           int block_count, int variant, uint64_t max_block_bytes)
{
    if (nodes < 1 || per_node < 1)
        return -1;
    if (radix <= 0)
        /* One unit carries N blocks, so its size decides latency- vs bandwidth-bound. */
        radix = skewshim_tuna_auto_radix(per_node, skewshim_fwd_mul((uint64_t)nodes,
                                                                    max_block_bytes));
    if (block_count < 1)
        block_count = 1;
    h->nodes = nodes;
    h->per_node = per_node;
    h->variant = variant == SKEWSHIM_TUNA_STAGGERED ? SKEWSHIM_TUNA_STAGGERED
                                                    : SKEWSHIM_TUNA_COALESCED;
    h->block_count = block_count;
    if (skewshim_fwd_init(&h->intra, per_node, radix, nodes, 0) != 0)
        return -1;
    int steps = h->variant == SKEWSHIM_TUNA_STAGGERED ? (nodes - 1) * per_node : nodes - 1;
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
    uint64_t xblocks = (uint64_t)(h->nodes - 1) * (uint64_t)h->per_node;
    uint64_t xrecv = h->variant == SKEWSHIM_TUNA_COALESCED
                   ? (uint64_t)h->inter_batch * (uint64_t)h->per_node : 0;
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
