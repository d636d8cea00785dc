/* The forwarding (store-and-forward) schedules of the Bruck family: two-phase
 * Bruck and padded Bruck (Fan et al., HPDC'22) and TuNA / TuNA_l^g (Fan et
 * al., "Configurable Non-uniform All-to-all Algorithms").  Pure C, no MPI:
 * the executor in src/exec/forward.c and the unit tests share this index
 * arithmetic, so what the tests prove is what runs.
 *
 * Model.  G ranks form one exchange group (G = P for the flat schedules, the
 * ranks of one node for the intra-node phase of TuNA_l^g); a rank has local
 * id g in [0, G).  The data a rank sends is cut into G "units": unit delta
 * goes to local id (g + delta) mod G.  A unit is `width` user blocks (1 for
 * the flat schedules; N, one per node, for TuNA_l^g).
 *
 * Rounds.  delta is written in radix r with w = ceil(log_r G) digits.  Round
 * (x, z), for x in [0, w) and z in [1, r) with z * r^x < G, sends to local id
 * g + z r^x every unit held here whose digit x equals z, and receives the
 * same set of deltas from g - z r^x.  Rounds run in increasing (x, z), so a
 * unit walks its nonzero digits from low to high and arrives after its top
 * digit: K <= w (r - 1) rounds (K = ceil(log2 G) for r = 2, G - 1 for r >=
 * G - 1).  The papers send to g - z r^x and pre-rotate with the index array
 * I[i] = (2p - i) mod P; walking upward gives the same rounds with the
 * rotation folded into "unit delta goes to g + delta", so neither the
 * initial nor the final rotation exists (the zero-rotation Bruck of HPDC'22).
 *
 * Where a unit lives.  At the rank it reaches after digit x, unit delta came
 * from origin g - (delta mod r^(x+1)).  It is final when delta < r^(x+1)
 * (no higher digit): it goes to the receive buffer.  Otherwise it waits in
 * the temp buffer T.  At any time a rank holds at most one in-transit unit
 * per delta, and deltas with a single nonzero digit (z r^x: the "direct"
 * units, one per round) are never in transit, nor is delta 0.  So T needs
 * G - K - 1 unit slots (TuNA section III-C), slot of delta = delta - 1 -
 * dx (r - 1) - dz where dz r^dx is delta's top digit.
 *
 * Each round the executor packs the units it sends into a contiguous send
 * stage (so the T slots they leave can be refilled the same round) and
 * receives into a contiguous receive stage before unpacking.  A round whose
 * only unit is its direct one (width 1) needs neither stage nor metadata:
 * the receiver knows the size, and the block goes straight from the send to
 * the receive buffer.  With r >= G - 1 every round is such a round: TuNA is
 * then the linear exchange and needs no temp at all.
 */
#ifndef SKEWSHIM_FWD_H
#define SKEWSHIM_FWD_H

#include <stdint.h>

/* One forwarding schedule over a group of G ranks. */
typedef struct skewshim_fwd {
    int group;        /* G */
    int radix;        /* r, clamped to [2, max(G, 2)] */
    int width;        /* user blocks per unit */
    int padded;       /* padded Bruck: every block travels as max_block bytes */
    int digits;       /* w = ceil(log_r G); 0 when G = 1 */
    int rounds;       /* K */
    int tslots;       /* G - K - 1 units held in T */
    int stage_units;  /* most units in one round that needs a stage, else 0 */
} skewshim_fwd;

/* One round: peers at +dist / -dist in the group. */
typedef struct skewshim_fwd_round {
    int x, z;
    int dist;         /* z r^x */
    int units;        /* deltas in [1, G) whose digit x is z */
} skewshim_fwd_round;

/* The schedule for G ranks, radix r (clamped), units of `width` blocks.
 * Returns 0, or -1 for G < 1 or width < 1. */
int skewshim_fwd_init(skewshim_fwd *f, int group, int radix, int width, int padded);
/* Round k in [0, K), in execution order.  Returns 0, or -1 when out of range. */
int skewshim_fwd_round_get(const skewshim_fwd *f, int k, skewshim_fwd_round *rd);
/* The deltas sent in round rd, increasing, into out[rd->units]. */
void skewshim_fwd_deltas(const skewshim_fwd *f, const skewshim_fwd_round *rd, int *out);
/* Whether unit delta leaves its origin in round (x, .) (no lower digit). */
int skewshim_fwd_first_hop(const skewshim_fwd *f, int delta, int x);
/* Whether unit delta reaches its destination in round (x, .). */
int skewshim_fwd_final(const skewshim_fwd *f, int delta, int x);
/* T slot of an in-transit delta in [0, tslots), or -1 for delta 0 and the
 * direct deltas (never in T). */
int skewshim_fwd_slot(const skewshim_fwd *f, int delta);
/* Whether round rd goes through the stages and metadata (else it is a
 * direct round: one unit of one block, sent send buffer -> receive buffer). */
int skewshim_fwd_staged(const skewshim_fwd *f, const skewshim_fwd_round *rd);
/* Units among rounds with a given digit value (closed form, for bounds). */
int skewshim_fwd_count_digit(int group, int radix, int x, int z);

/* Radix for TuNA when the policy says 0 (auto), from the trends TuNA
 * measured (section V-A, Fig. 7, P = 2048 on Polaris and Fugaku, blocks
 * uniform in [0, S]): for S up to about 512 B time rises with r (latency
 * bound: r = 2, fewest rounds); for S from 512 B to 8 KiB it is U-shaped
 * with its minimum near r = sqrt(P) (as for uniform Bruck); above 8 KiB
 * (32 KiB on Fugaku) it falls with r, so r = P (the linear exchange, least
 * data) is best.  max_block_bytes stands for S. */
#define SKEWSHIM_TUNA_SMALL_BLOCK 512u
#define SKEWSHIM_TUNA_LARGE_BLOCK 8192u
int skewshim_tuna_auto_radix(int P, uint64_t max_block_bytes);

/* Saturating arithmetic for bounds: UINT64_MAX means "does not fit", which
 * any memory cap rejects. */
uint64_t skewshim_fwd_mul(uint64_t a, uint64_t b);
uint64_t skewshim_fwd_add(uint64_t a, uint64_t b);

/* The temp buffer of one call, from rank-invariant facts only.  Offsets in
 * bytes from the start of the buffer; metadata arrays first so the uint64
 * arrays stay aligned. */
typedef struct skewshim_fwd_layout {
    uint64_t block;       /* bytes reserved per user block: max_block_bytes */
    uint64_t meta_out;    /* uint64[stage_units * width] sizes sent */
    uint64_t meta_in;     /* uint64[stage_units * width] sizes received */
    uint64_t tsize;       /* uint64[tslots * width] sizes held in T */
    uint64_t xsize;       /* uint64[(N-1) * c * q] sizes held for other nodes (hier) */
    uint64_t t;           /* tslots units of width * block bytes */
    uint64_t send_stage;  /* stage_units * width * block */
    uint64_t recv_stage;  /* stage_units * width * block */
    uint64_t xbuf;        /* hier: (N-1) * c * q blocks for other nodes */
    uint64_t xrecv;       /* hier coalesced: batch * Q blocks received */
    uint64_t total;       /* bytes; 0 when nothing is needed */
} skewshim_fwd_layout;

/* Layout of a flat schedule (TuNA, two-phase / padded Bruck). */
void skewshim_fwd_layout_flat(const skewshim_fwd *f, uint64_t max_block_bytes,
                              skewshim_fwd_layout *L);

/* TuNA_l^g on N nodes, as one rank of a node of q ranks runs it; Q ranks
 * on the largest node.  Local id g of this node stands for the local ids
 * g + i q, i < c = ceil(Q / q), of every node (c = 1 on equal nodes): unit
 * sub-block j is for local id g + (j / N) q of node j % N. */
typedef struct skewshim_fwd_hier {
    int nodes;            /* N */
    int per_node;         /* q: ranks on this rank's node */
    int max_per_node;     /* Q */
    int copies;           /* c */
    int variant;          /* SKEWSHIM_TUNA_COALESCED / _STAGGERED */
    int block_count;      /* inter-node messages per batch, >= 1 */
    skewshim_fwd intra;   /* TuNA over q local ids, units of c N blocks */
    int inter_rounds;     /* N - 1 coalesced, (N - 1) Q staggered */
    int inter_batch;      /* coalesced: node steps per batch; staggered: message numbers */
} skewshim_fwd_hier;

/* radix 0 = auto (from c N max_block_bytes, the bytes of one unit).
 * Returns 0, or -1 unless 1 <= per_node <= max_per_node. */
int skewshim_fwd_hier_init(skewshim_fwd_hier *h, int nodes, int per_node, int max_per_node,
                           int radix, int block_count, int variant, uint64_t max_block_bytes);
void skewshim_fwd_layout_hier(const skewshim_fwd_hier *h, uint64_t max_block_bytes,
                              skewshim_fwd_layout *L);
/* The largest temp any rank's layout needs, from the node sizes alone (the
 * same on every rank: what the memory cap reads).  UINT64_MAX when a node
 * cannot be planned. */
uint64_t skewshim_fwd_hier_bound(int nodes, const int *node_size, int radix, int block_count,
                                 int variant, uint64_t max_block_bytes);

/* A forwarding plan as the executor takes it: a flat schedule or TuNA_l^g,
 * and the temp layout (whose total is the plan's temp bound). */
typedef struct skewshim_fwd_plan {
    int hier;
    skewshim_fwd flat;
    skewshim_fwd_hier h;
    skewshim_fwd_layout L;
} skewshim_fwd_plan;

/* The per-algorithm planners (src/plan/bruck2.c, padded_bruck.c, tuna.c):
 * the flat schedule for P ranks.  tuna: radix 0 = auto from max_block_bytes,
 * radix > P clamped to P. */
int skewshim_fwd_plan_bruck2(skewshim_fwd *f, int P);
int skewshim_fwd_plan_padded_bruck(skewshim_fwd *f, int P);
int skewshim_fwd_plan_tuna(skewshim_fwd *f, int P, int radix, uint64_t max_block_bytes);

#endif
