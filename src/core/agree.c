/* The one agreement collective.  Every rank contributes its local facts;
 * one PMPI_Allreduce with an operator that takes the max of the first
 * fields and the sum of the rest gives every rank the same view, from which
 * the policy chooses identically everywhere. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "core/internal.h"
#include "labcharge.h"

enum {
    F_MAX_BLOCK, F_MAX_SEND, F_MAX_RECV, F_MAX_ISEND, F_MAX_IRECV, F_REASON, F_DEVICE, F_HOST,
    F_CHANGED, F_UNHELD, F_HASH, F_NHASH, F_MAX_MSGS, F_MAX_PHASE2,
    F_NMAX,
    F_SUM_SEND = F_NMAX, F_SUM_RECV, F_SUM_ISEND, F_SUM_IRECV, F_SUM_NONEMPTY,
    F_COUNT
};

static void agree_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const uint64_t *a = in;
    uint64_t *b = inout;
    for (int base = 0; base + F_COUNT <= *len; base += F_COUNT) {
        for (int i = 0; i < F_NMAX; i++)
            if (a[base + i] > b[base + i])
                b[base + i] = a[base + i];
        for (int i = F_NMAX; i < F_COUNT; i++)
            b[base + i] += a[base + i];
    }
}

int skewshim_agree_setup(void)
{
    return PMPI_Op_create(agree_fn, 1, &skewshim_g.agree_op);
}

void skewshim_local_facts(const skewshim_call *c, uint64_t *v, int nv)
{
    skewshim_rank_traffic t;
    skewshim_rank_traffic_of(&c->cs->topo, c->rank, c->sbytes, c->rbytes, &t);
    memset(v, 0, (size_t)nv * sizeof *v);
    v[F_MAX_BLOCK] = t.max_block;
    v[F_MAX_SEND] = v[F_SUM_SEND] = t.send;
    v[F_MAX_RECV] = v[F_SUM_RECV] = t.recv;
    v[F_MAX_ISEND] = v[F_SUM_ISEND] = t.isend;
    v[F_MAX_IRECV] = v[F_SUM_IRECV] = t.irecv;
    v[F_SUM_NONEMPTY] = t.nonempty;
    v[F_MAX_MSGS] = t.msgs;
    /* Only the line with a NIC per rank reads it: elsewhere its O(P) scan
     * (about 2 us a call at 1024 ranks) is not paid, and the max of zeros
     * is agreed all the same. */
    if (skewshim_topo_nic_per_rank(&c->cs->topo, c->cs->topo_nics))
        v[F_MAX_PHASE2] = skewshim_topo_phase2_msgs(&c->cs->topo, c->rank, c->sbytes, c->rbytes, 1);
    v[F_REASON] = (uint64_t)c->local_reason;
    v[F_DEVICE] = c->buffers == SKEWSHIM_BUF_DEVICE;
    v[F_HOST] = c->buffers == SKEWSHIM_BUF_HOST;
}

/* Every rank's view from the reduced vector (max fields, then sums). */
static void fill(skewshim_call *c, const uint64_t *out)
{
    skewshim_agreed *a = &c->ag;
    int P = c->size;
    a->valid = 1;
    a->max_block_bytes = out[F_MAX_BLOCK];
    a->max_send = out[F_MAX_SEND];
    a->sum_send = out[F_SUM_SEND];
    a->max_recv = out[F_MAX_RECV];
    a->sum_recv = out[F_SUM_RECV];
    a->max_isend = out[F_MAX_ISEND];
    a->sum_isend = out[F_SUM_ISEND];
    a->max_irecv = out[F_MAX_IRECV];
    a->sum_irecv = out[F_SUM_IRECV];
    a->sum_nonempty = out[F_SUM_NONEMPTY];
    a->max_msgs = out[F_MAX_MSGS];
    a->max_phase2 = out[F_MAX_PHASE2];
    a->any_unsupported = out[F_REASON];
    a->any_device = out[F_DEVICE];
    a->any_host = out[F_HOST];
    skewshim_skew *k = &a->skew;
    memset(k, 0, sizeof *k);
    k->total_bytes = a->sum_send;
    k->max_block_bytes = a->max_block_bytes;
    k->inter_bytes = a->sum_isend;
    k->send_mtm_all = skewshim_mtm(a->max_send, a->sum_send, P);
    k->recv_mtm_all = skewshim_mtm(a->max_recv, a->sum_recv, P);
    k->mtm_all = k->send_mtm_all > k->recv_mtm_all ? k->send_mtm_all : k->recv_mtm_all;
    k->send_mtm_inter = skewshim_mtm(a->max_isend, a->sum_isend, P);
    k->recv_mtm_inter = skewshim_mtm(a->max_irecv, a->sum_irecv, P);
    k->mtm_inter = k->send_mtm_inter > k->recv_mtm_inter ? k->send_mtm_inter : k->recv_mtm_inter;
}

/* A job that repeats its exchange is told so by the exchange that agrees
 * (this allreduce, the matrix gather or the repeat check): each rank says
 * whether its own row of send sizes or column of receive sizes differs
 * from the ones it had at the communicator's last call that agreed or
 * reused, and no rank saying so is the whole matrix unchanged.  O(P) a
 * rank, no extra message.  Keeps this call's row and column for the next.
 * A rank that cannot keep them reports a change, which only keeps a rule
 * from counting on a repeat. */
static uint64_t row_col_changed(const skewshim_call *c)
{
    skewshim_comm *cs = c->cs;
    size_t P = (size_t)c->size, bytes = P * sizeof(uint64_t);
    skewshim_lab_plan(0, 2 * (uint64_t)P, 0);
    if (!cs->prev_stale && cs->prev_p == c->size && !memcmp(cs->prev_sr, c->sbytes, bytes) &&
        !memcmp(cs->prev_sr + P, c->rbytes, bytes))
        return 0;
    cs->prev_stale = 0;
    if (cs->prev_p != c->size) {
        free(cs->prev_sr);
        cs->prev_sr = malloc(2 * bytes);
        cs->prev_p = cs->prev_sr ? c->size : 0;
        if (!cs->prev_sr)
            return 1;
    }
    memcpy(cs->prev_sr, c->sbytes, bytes);
    memcpy(cs->prev_sr + P, c->rbytes, bytes);
    return 1;
}

/* An agreed call pays the compare too, 2.5 us at 1024 ranks in the lab
 * (on a 35 us tuna_hier exchange of 16 B blocks, 7 %), so it compares only
 * while the count could matter: while one of the communicator's last
 * REPEAT_WINDOW agreed outcomes could read it (a rule on repeats that its
 * facts reach, a schedule that gathers the matrix), as every call of a job
 * in such a region does, or where a per-call log reports it.  The agreed
 * call's own outcome is not known before its agreement; with the matrix
 * unchanged it is the last one's, and a changed matrix counts 0 whether
 * compared or not.  What this costs: a job that enters such a region
 * counts from its second call there (the first was not compared, and the
 * row kept is then stale), so a rule on repeats: [n, inf] matches one call
 * later.  The window keeps jobs of a few exchanges in turn, one of which
 * reads the count, comparing on every call. */
enum { REPEAT_WINDOW = 16 };

/* A call's word, agreed or reused: compared where the count could be read
 * or a per-call log reports it, else a change without the compare (the
 * row kept is then not the last call's). */
static uint64_t row_col_word(const skewshim_call *c, int could_read)
{
    if (could_read || skewshim_log_level() >= SKEWSHIM_LOG_CALLS)
        return row_col_changed(c);
    c->cs->prev_stale = 1;
    return 1;
}

uint64_t skewshim_repeat_local(const skewshim_call *c, int gathers)
{
    int could_read = gathers || c->cs->repeat_unread < REPEAT_WINDOW;
    return row_col_word(c, could_read) | c->cs->repeat_pending_changed;
}

void skewshim_repeat_note_outcome(skewshim_call *c, int could_read)
{
    skewshim_comm *cs = c->cs;
    cs->repeat_unread = could_read ? 0 : cs->repeat_unread + (cs->repeat_unread < REPEAT_WINDOW);
}

/* A reused call agrees on nothing, yet it is a call of the run: each rank
 * notes whether its own row or column changed, and the next agreement
 * carries that word.  Which calls are reused is agreed (policy/reuse.h),
 * so every rank counts the same calls.  Without this a job would reach a
 * rule on repeats only after its reuse runs, up to 61 calls apart, and a
 * build with CUDA (which reuses only native) and one without would count
 * the same job differently.  Where the count cannot change what runs (the
 * caller says so: no rule the reused outcome's facts reach reads it) and
 * no log reports it, the O(P) compare, 2P words (charged 2.5 us at 1024
 * ranks in the lab), is not paid: the call counts as a change, and the run starts again at the next
 * agreement. */
void skewshim_repeat_reused(const skewshim_call *c, int could_read)
{
    skewshim_comm *cs = c->cs;
    cs->repeat_pending_changed |= row_col_word(c, could_read);
    cs->repeat_pending_calls++;
}

void skewshim_repeat_agreed(skewshim_call *c, uint64_t any_changed)
{
    skewshim_comm *cs = c->cs;
    cs->repeat_run = any_changed ? 0 : cs->repeat_run + 1 + cs->repeat_pending_calls;
    cs->repeat_pending_changed = 0;
    cs->repeat_pending_calls = 0;
    c->ag.repeats = cs->repeat_run;
}

int skewshim_agree(skewshim_call *c)
{
    uint64_t in[F_COUNT], out[F_COUNT];
    skewshim_local_facts(c, in, F_COUNT);
    in[F_CHANGED] = skewshim_repeat_local(c, 0);
    in[F_UNHELD] = 1;
    if (c->cs->matrix_possible)
        skewshim_global_held(c, &in[F_UNHELD], &in[F_HASH]);
    in[F_NHASH] = ~in[F_HASH];
    int rc = PMPI_Allreduce(in, out, F_COUNT, MPI_UINT64_T, skewshim_g.agree_op, c->cs->pcomm);
    if (rc != MPI_SUCCESS)
        return rc;
    fill(c, out);
    skewshim_repeat_agreed(c, out[F_CHANGED]);
    /* The repeat check folded into the agreement (core/global.c): every
     * row equal to the rows of one and the same plan's matrix. */
    c->ag.held = !out[F_UNHELD] && out[F_HASH] == ~out[F_NHASH];
    return MPI_SUCCESS;
}

void skewshim_agree_local_tail(const skewshim_call *c, uint64_t changed, uint64_t *tail)
{
    tail[0] = (uint64_t)c->local_reason;
    tail[1] = (uint64_t)c->buffers;
    tail[2] = changed;
}

/* The same figures from the gathered size matrix: row i is rank i's send
 * sizes, followed by what skewshim_agree_local_tail gave (rows of rowlen
 * words, the tail at P + 1; its change word is read by the caller, which
 * knows whether this gather was the call's agreement).  A receive total is a column sum: where a
 * receiver's counts disagree with what is sent to it the caller has seen
 * the mismatch (mismatch != 0), and the call goes to MPI with
 * invalid_args, as the allreduce path's plan would have sent it. */
void skewshim_agree_matrix(skewshim_call *c, const uint64_t *rows, size_t rowlen, int mismatch)
{
    const skewshim_topo *t = &c->cs->topo;
    int P = c->size, nic_per_rank = skewshim_topo_nic_per_rank(t, c->cs->topo_nics);
    uint64_t out[F_COUNT];
    memset(out, 0, sizeof out);
    for (int i = 0; i < P; i++) {
        const uint64_t *r = rows + (size_t)i * rowlen;
        uint64_t s = 0, is = 0, rr = 0, ir = 0, ns = 0, nr = 0;
        for (int j = 0; j < P; j++) {
            uint64_t v = r[j], w = rows[(size_t)j * rowlen + (size_t)i];
            if (v > out[F_MAX_BLOCK])
                out[F_MAX_BLOCK] = v;
            s += v;
            rr += w;
            out[F_SUM_NONEMPTY] += v != 0;
            ns += j != i && v != 0;
            nr += j != i && w != 0;
            if (t->node_of[j] != t->node_of[i]) {
                is += v;
                ir += w;
            }
        }
        out[F_SUM_SEND] += s;
        out[F_SUM_RECV] += rr;
        out[F_SUM_ISEND] += is;
        out[F_SUM_IRECV] += ir;
        out[F_MAX_SEND] = s > out[F_MAX_SEND] ? s : out[F_MAX_SEND];
        out[F_MAX_RECV] = rr > out[F_MAX_RECV] ? rr : out[F_MAX_RECV];
        out[F_MAX_ISEND] = is > out[F_MAX_ISEND] ? is : out[F_MAX_ISEND];
        out[F_MAX_IRECV] = ir > out[F_MAX_IRECV] ? ir : out[F_MAX_IRECV];
        uint64_t nm = ns > nr ? ns : nr;
        out[F_MAX_MSGS] = nm > out[F_MAX_MSGS] ? nm : out[F_MAX_MSGS];
        if (nic_per_rank) {
            uint64_t n2 = skewshim_topo_phase2_msgs(t, i, r, rows + i, rowlen);
            out[F_MAX_PHASE2] = n2 > out[F_MAX_PHASE2] ? n2 : out[F_MAX_PHASE2];
        }
        uint64_t reason = r[P + 1], buf = r[P + 2];
        if (reason > out[F_REASON])
            out[F_REASON] = reason;
        out[F_DEVICE] |= buf == SKEWSHIM_BUF_DEVICE;
        out[F_HOST] |= buf == SKEWSHIM_BUF_HOST;
    }
    if (mismatch && out[F_REASON] == SKEWSHIM_REASON_NONE)
        out[F_REASON] = SKEWSHIM_REASON_INVALID_ARGS;
    fill(c, out);
}
