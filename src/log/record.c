#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* The JSON of the log's records (doc/log-format.md): a call record, the
 * traffic matrix of a call (level matrix), and the names they print.  Built
 * in an sbuf so each reaches the file as whole lines. */

#include <stdint.h>
#include <stdio.h>

#include "log_internal.h"
#include "vocab.h"

/* ---- names ------------------------------------------------------------ */

const char *skewshim_log_algo_name(int id, char *tmp, size_t len)
{
    const char *n = NULL;
    if (id >= 0 && id < SKEWSHIM_ALGO_COUNT) n = skewshim_algo_name((skewshim_algo_id)id);
    if (n && *n) return n;
    snprintf(tmp, len, "algo_%d", id);
    return tmp;
}

const char *skewshim_log_reason_name(int r, char *tmp, size_t len)
{
    const char *n = NULL;
    if (r >= 0 && r < SKEWSHIM_REASON_COUNT) n = skewshim_reason_name((skewshim_reason)r);
    if (n && *n) return n;
    snprintf(tmp, len, "reason_%d", r);
    return tmp;
}

/* An MTM is >= 1 by definition; 0 is what a call that never reached the
 * agreement (an early fallback) carries, and reads better as "unknown". */
static void sb_mtm(sbuf *b, double v)
{
    if (v > 0)
        skewshim_sb_num(b, v);
    else
        skewshim_sb_cat(b, "null");
}

/* ---- per-call records --------------------------------------------------- */

/* A key and its value: every field after the first carries a comma. */
static void kv_int(sbuf *b, const char *key, int v)
{
    skewshim_sb_key(b, key, 0);
    skewshim_sb_printf(b, "%d", v);
}

static void kv_u64(sbuf *b, const char *key, uint64_t v)
{
    skewshim_sb_key(b, key, 0);
    skewshim_sb_u64(b, v);
}

static void kv_num(sbuf *b, const char *key, double v)
{
    skewshim_sb_key(b, key, 0);
    skewshim_sb_num(b, v);
}

static void kv_str(sbuf *b, const char *key, const char *v)
{
    skewshim_sb_key(b, key, 0);
    skewshim_sb_str(b, v);
}

static void kv_mtm(sbuf *b, const char *key, double v)
{
    skewshim_sb_key(b, key, 0);
    sb_mtm(b, v);
}

/* Planner and cost extras: printed only when the call reported them, so a
 * plain fallback's record stays short. */
static void record_extras(sbuf *b, const skewshim_record *r)
{
    if (r->regime >= 0)
        kv_str(b, "regime", r->regime ? "high" : "low");
    if (r->nics > 0)
        kv_int(b, "nics", r->nics);
    if (r->stages > 0)
        kv_int(b, "stages", r->stages);
    if (r->cache_hit >= 0) {
        skewshim_sb_key(b, "cache_hit", 0);
        skewshim_sb_cat(b, r->cache_hit ? "true" : "false");
    }
    if (r->repeats >= 0)
        kv_u64(b, "repeats", (uint64_t)r->repeats);
    if (r->t_pred > 0)
        kv_num(b, "t_pred_us", r->t_pred * 1e6);
    if (r->t_lb > 0)
        kv_num(b, "t_lb_us", r->t_lb * 1e6);
    if (r->meta_bytes > 0 || r->meta_time > 0) {
        kv_u64(b, "meta_bytes", r->meta_bytes);
        kv_num(b, "meta_time_us", r->meta_time * 1e6);
    }
}

void skewshim_record_to(sbuf *b, const skewshim_record *r)
{
    char tmp[32];
    skewshim_sb_cat(b, "{");
    skewshim_sb_key(b, "call", 1);
    skewshim_sb_u64(b, r->index);
    kv_int(b, "comm", r->comm_id);
    kv_int(b, "size", r->comm_size);
    kv_int(b, "nodes", r->nnodes);
    kv_str(b, "algo", skewshim_log_algo_name(r->algo, tmp, sizeof tmp));
    kv_str(b, "why", skewshim_why_name(r->why));
    if (r->decided > 0)
        kv_str(b, "decided", skewshim_decided_name(r->decided));
    if (r->rule >= 0)
        kv_int(b, "rule", r->rule);
    if (r->reason > 0)
        kv_str(b, "reason", skewshim_log_reason_name(r->reason, tmp, sizeof tmp));
    kv_str(b, "buffers", skewshim_buffers_name(r->buffers));
    kv_u64(b, "total_bytes", r->total_bytes);
    kv_u64(b, "max_block_bytes", r->max_block_bytes);
    kv_num(b, "mean_block_bytes", r->mean_block_bytes);
    kv_num(b, "mean_nonempty_bytes", r->mean_nonempty_bytes);
    kv_u64(b, "max_msgs", r->max_msgs);
    kv_u64(b, "max_phase2", r->max_phase2);
    kv_mtm(b, "send_mtm_inter", r->send_mtm_inter);
    kv_mtm(b, "recv_mtm_inter", r->recv_mtm_inter);
    kv_mtm(b, "send_mtm_all", r->send_mtm_all);
    kv_mtm(b, "recv_mtm_all", r->recv_mtm_all);
    kv_num(b, "time_us", r->time * 1e6);
    kv_u64(b, "rounds", r->rounds);
    kv_u64(b, "messages", r->messages);
    kv_u64(b, "bytes_sent", r->bytes_sent);
    kv_u64(b, "bytes_forwarded", r->bytes_forwarded);
    record_extras(b, r);
    kv_u64(b, "tmp_bytes", r->tmp_bytes);
    skewshim_sb_cat(b, "}\n");
}

void skewshim_record_json(const skewshim_record *r, FILE *f)
{
    char stack[1024];
    sbuf b;
    skewshim_sb_init(&b, stack, sizeof stack);
    skewshim_record_to(&b, r);
    if (!b.err) fwrite(b.p, 1, b.n, f);
    skewshim_sb_free(&b);
}

/* ---- matrix ---------------------------------------------------------------- */

int skewshim_log_matrix(int comm_id, uint64_t index, const skewshim_matrix *m,
                        const skewshim_topo *t)
{
    if (skewshim_log_level() < SKEWSHIM_LOG_MATRIX || !m || !m->b || m->nranks <= 0) return 0;
    int P = m->nranks;
    int q = (t && t->nranks == P && t->max_per_node > 0) ? t->max_per_node : P;
    sbuf b;
    skewshim_sb_init(&b, NULL, 0);
    skewshim_sb_cat(&b, "{\"matrix\": {");
    skewshim_sb_key(&b, "call", 1);
    skewshim_sb_u64(&b, index);
    skewshim_sb_key(&b, "comm", 0);
    skewshim_sb_printf(&b, "%d", comm_id);
    skewshim_sb_key(&b, "P", 0);
    skewshim_sb_printf(&b, "%d", P);
    skewshim_sb_key(&b, "ranks_per_node", 0);
    skewshim_sb_printf(&b, "%d", q);
    /* The real node of every rank, for uneven or non-consecutive nodes
     * that ranks_per_node alone cannot describe. */
    if (t && t->nranks == P && t->node_of) {
        skewshim_sb_key(&b, "nodes", 0);
        skewshim_sb_printf(&b, "%d", t->nnodes);
        skewshim_sb_key(&b, "node_of", 0);
        skewshim_sb_cat(&b, "[");
        for (int i = 0; i < P; i++) skewshim_sb_printf(&b, i ? ", %d" : "%d", t->node_of[i]);
        skewshim_sb_cat(&b, "]");
    }
    skewshim_sb_key(&b, "type_size", 0);
    skewshim_sb_cat(&b, "1");
    skewshim_sb_key(&b, "bytes", 0);
    skewshim_sb_cat(&b, "[");
    for (int i = 0; i < P; i++) {
        skewshim_sb_cat(&b, i ? ", [" : "[");
        const uint64_t *row = m->b + (size_t)i * P;
        for (int j = 0; j < P; j++) {
            if (j) skewshim_sb_cat(&b, ", ");
            skewshim_sb_u64(&b, row[j]);
        }
        skewshim_sb_cat(&b, "]");
    }
    skewshim_sb_cat(&b, "]}}\n");
    int rc = b.err ? -1 : 0;
    skewshim_log_write_lines(&b);
    skewshim_sb_free(&b);
    return rc;
}
