#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
/* The YAML policy: the built-in default, a file using every key, rule
 * matching, per-rule overrides, the fixed choice, and bad inputs that must each
 * name the right line, column and key and leave the policy at its defaults. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen, unlink */
#endif
#include "policy.h"
#include "policy/params.h"
#include "../tap.h"   /* relative: the build adds no -Itests */

/* A communicator's facts for the rank-invariant checks (no NIC per rank). */
#define CF(P, n, dev, un)                                                                  \
    (&(skewshim_comm_facts){.comm_size = (P), .nodes = (n), .device_possible = (dev),     \
                            .unrunnable = (un)})

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int load(const char *yaml, skewshim_policy *p, skewshim_error *e)
{
    /* Garbage first: the loader must write every field, success or not. */
    memset(p, 0xAB, sizeof *p);
    return skewshim_policy_load_string(yaml, strlen(yaml), "t.yaml", p, e);
}

static int params_equal(const skewshim_params *a, const skewshim_params *b)
{
    return a->scattered_block_count == b->scattered_block_count &&
           a->tuna_radix == b->tuna_radix && a->tuna_hier_radix == b->tuna_hier_radix &&
           a->tuna_hier_block_count == b->tuna_hier_block_count &&
           a->tuna_hier_variant == b->tuna_hier_variant &&
           a->tuna_hier_pay_check == b->tuna_hier_pay_check &&
           a->sabre_alpha == b->sabre_alpha &&
           a->sabre_mtm_threshold == b->sabre_mtm_threshold &&
           a->fast_pipeline == b->fast_pipeline && a->max_temp_bytes == b->max_temp_bytes &&
           a->model_intra_bw == b->model_intra_bw && a->model_inter_bw == b->model_inter_bw &&
           a->model_latency == b->model_latency && a->model_overhead == b->model_overhead &&
           a->model_plan_entry == b->model_plan_entry;
}

/* Same scalar settings as skewshim_policy_init_default (rules aside). */
static int settings_are_default(const skewshim_policy *p)
{
    skewshim_policy d;
    skewshim_policy_init_default(&d);
    return p->version == d.version && p->strict == d.strict &&
           strcmp(p->log_path, d.log_path) == 0 && p->log_level == d.log_level &&
           p->log_sample == d.log_sample && p->log_stderr == d.log_stderr &&
           p->ranks_per_node == d.ranks_per_node && p->nics_per_node == d.nics_per_node &&
           p->reuse_agreement == d.reuse_agreement && p->fallback == d.fallback && params_equal(&p->params, &d.params);
}

/* What a failed load must leave behind. */
static int is_default_state(const skewshim_policy *p)
{
    return settings_are_default(p) && p->rules == NULL && p->nrules == 0 &&
           strcmp(p->source, "<built-in default>") == 0;
}

static void test_defaults(void)
{
    skewshim_params d;
    skewshim_params_default(&d);
    TAP_OK(d.scattered_block_count == 32 && d.tuna_radix == 0 && d.tuna_hier_radix == 0 &&
               d.tuna_hier_block_count == 8 && d.tuna_hier_variant == SKEWSHIM_TUNA_COALESCED && d.tuna_hier_pay_check == 1 &&
               d.sabre_alpha == 1.05 && d.sabre_mtm_threshold == 2.2 && d.fast_pipeline == 1 &&
               d.max_temp_bytes == 1073741824ull && d.model_intra_bw == 150e9 &&
               d.model_inter_bw == 25e9 && d.model_latency == 5e-6,
           "params_default has the documented values");
    skewshim_policy p;
    skewshim_policy_init_default(&p);
    TAP_OK(p.version == 1 && !p.strict && !strcmp(p.source, "<built-in default>") &&
               !strcmp(p.log_path, "skewshim-%j.jsonl") && p.log_level == SKEWSHIM_LOG_SUMMARY &&
               p.log_sample == 1 && !p.log_stderr && p.ranks_per_node == 0 &&
               p.nics_per_node == 1 && p.reuse_agreement == 64 &&
               p.fallback == SKEWSHIM_ALGO_NATIVE && !p.rules &&
               !p.nrules,
           "policy_init_default has the documented values and no rules");
}

/* A host tuna_hier rule on the comm size (phi < 0: no upper end), the
 * largest block and the bytes per non-empty block. */
static int small_rule(const skewshim_rule *r, int plo, int phi, double mlo, double mhi,
                      double ne_hi)
{
    return r->use == SKEWSHIM_ALGO_TUNA_HIER && r->buffers == SKEWSHIM_BUF_HOST &&
           r->comm_size.lo == plo && (phi < 0 ? r->comm_size.hi < 0 : r->comm_size.hi == phi) &&
           r->max_block_bytes.set && r->max_block_bytes.lo == mlo &&
           r->max_block_bytes.hi == mhi && r->avg_nonempty_bytes.set &&
           r->avg_nonempty_bytes.lo == 0 && r->avg_nonempty_bytes.hi == ne_hi;
}

/* A host tuna_hier rule for a NIC per rank with 32 in flight, from plo
 * ranks, on the largest block alone. */
static int nic_rule(const skewshim_rule *r, int plo, double mlo, double mhi)
{
    return r->use == SKEWSHIM_ALGO_TUNA_HIER && r->buffers == SKEWSHIM_BUF_HOST &&
           r->comm_size.lo == plo && r->comm_size.hi < 0 && r->max_block_bytes.lo == mlo &&
           r->max_block_bytes.hi == mhi && r->nic_per_rank.set && r->nic_per_rank.lo == 1 &&
           r->nic_per_rank.hi == 1 && !r->avg_nonempty_bytes.set && !r->avg_block_bytes.set &&
           !r->nodes.set && r->params.tuna_hier_block_count == 32 && r->overrides == 1u << 3;
}

static void test_builtin(void)
{
    skewshim_policy p;
    skewshim_error e;
    memset(&p, 0xAB, sizeof p);
    int rc = skewshim_policy_load_builtin(&p, &e);
    TAP_OK(rc == 0, "built-in default loads (%s:%d:%d: %s: %s)", e.file, e.line, e.column,
           e.key, e.msg);
    if (rc)
        return;
    TAP_OK(!strcmp(p.source, "<built-in default>"), "built-in source name");
    TAP_OK(settings_are_default(&p),
           "conf/default.yaml states exactly the compiled-in defaults");
    TAP_OK(p.nrules == 15, "built-in has 15 rules (got %d)", p.nrules);
    if (p.nrules == 15) {
        const skewshim_rule *r = p.rules;
        TAP_OK(nic_rule(&r[0], 128, 0, 512) && !r[0].mtm.set,
               "rule 0: host, >= 128 ranks, blocks to 512 B, a NIC per rank -> tuna_hier, "
               "block_count 32");
        TAP_OK(r[1].use == SKEWSHIM_ALGO_TUNA_HIER && r[1].buffers == SKEWSHIM_BUF_HOST &&
                   r[1].comm_size.lo == 128 && r[1].comm_size.hi < 0 &&
                   r[1].max_block_bytes.set && r[1].max_block_bytes.lo == 0 &&
                   r[1].max_block_bytes.hi == 64 && !r[1].mtm.set && !r[1].avg_block_bytes.set,
               "rule 1: host, >= 128 ranks, blocks <= 64 B -> tuna_hier");
        TAP_OK(small_rule(&r[2], 128, 255, 65, 1024, 64) && !r[2].avg_block_bytes.set,
               "rule 2: host, 128-255 ranks, blocks 65 B - 1 KiB, <= 64 B per non-empty block "
               "-> tuna_hier");
        TAP_OK(small_rule(&r[3], 256, 1023, 65, 1024, 84) && !r[3].avg_block_bytes.set,
               "rule 3: host, 256-1023 ranks, blocks 65 B - 1 KiB, <= 84 B per non-empty block "
               "-> tuna_hier");
        TAP_OK(small_rule(&r[4], 1024, -1, 65, 1024, 144) && r[4].avg_block_bytes.set &&
                   r[4].avg_block_bytes.lo == 0 && r[4].avg_block_bytes.hi == 80,
               "rule 4: host, >= 1024 ranks, blocks 65 B - 1 KiB, average <= 80 B, <= 144 B per "
               "non-empty block -> tuna_hier");
        TAP_OK(small_rule(&r[5], 64, 127, 0, 1024, 36) && !r[5].avg_block_bytes.set,
               "rule 5: host, 64-127 ranks, blocks to 1 KiB, <= 36 B per non-empty block "
               "-> tuna_hier");
        TAP_OK(nic_rule(&r[6], 384, 513, 1024) && r[6].mtm.set && r[6].mtm.lo == 0 &&
                   r[6].mtm.hi == 2,
               "rule 6: host, >= 384 ranks, blocks 513 B - 1 KiB, mtm <= 2, a NIC per rank -> "
               "tuna_hier, block_count 32");
        TAP_OK(r[7].use == SKEWSHIM_ALGO_SCATTERED && r[7].buffers == SKEWSHIM_BUF_HOST &&
                   r[7].comm_size.lo == 64 && r[7].comm_size.hi < 0 &&
                   r[7].max_block_bytes.lo == 0 && r[7].max_block_bytes.hi == 1024 &&
                   !r[7].avg_block_bytes.set,
               "rule 7: host, >= 64 ranks, blocks to 1 KiB -> scattered");
        TAP_OK(r[8].use == SKEWSHIM_ALGO_FAST && r[8].buffers == SKEWSHIM_BUF_HOST &&
                   r[8].comm_size.lo == 64 && r[8].comm_size.hi == 256 && !r[8].mtm.set &&
                   r[8].send_mtm.lo == 0 && r[8].send_mtm.hi == 2 &&
                   r[8].recv_mtm.lo == 2.2 && r[8].recv_mtm.hi < 0 &&
                   r[8].avg_block_bytes.lo == 24 << 10 && !r[8].max_block_bytes.set,
               "rule 8: host, 64-256 ranks, send mtm <= 2, recv mtm >= 2.2, avg block >= 24 KiB "
               "-> fast");
        TAP_OK(r[9].use == SKEWSHIM_ALGO_FAST && r[9].buffers == SKEWSHIM_BUF_HOST &&
                   r[9].comm_size.lo == 64 && r[9].comm_size.hi < 0 &&
                   r[9].max_block_bytes.lo == 128 << 10 && r[9].max_block_bytes.hi < 0 &&
                   r[9].send_mtm.hi == 2 && r[9].recv_mtm.lo == 2.2 &&
                   r[9].repeats.lo == 32 && r[9].repeats.hi < 0,
               "rule 9: host, >= 64 ranks, blocks >= 128 KiB, balanced senders, hot "
               "receivers, the matrix 32 calls in a row -> fast");
        TAP_OK(r[10].use == SKEWSHIM_ALGO_FAST && r[10].buffers == SKEWSHIM_BUF_HOST &&
                   r[10].comm_size.lo == 64 && r[10].comm_size.hi == 256 && !r[10].mtm.set &&
                   r[10].send_mtm.lo == 2.2 && r[10].send_mtm.hi < 0 &&
                   r[10].recv_mtm.lo == 2.2 && r[10].recv_mtm.hi < 0 &&
                   r[10].avg_block_bytes.lo == 32 << 10 && r[10].avg_block_bytes.hi < 0 &&
                   !r[10].max_block_bytes.set && !r[10].repeats.set,
               "rule 10: host, 64-256 ranks, send and recv mtm >= 2.2, avg block >= 32 KiB "
               "-> fast");
        TAP_OK(r[11].use == SKEWSHIM_ALGO_FAST && r[11].buffers == SKEWSHIM_BUF_HOST &&
                   r[11].comm_size.lo == 64 && r[11].comm_size.hi == 256 &&
                   r[11].max_block_bytes.lo == 4 << 20 && r[11].max_block_bytes.hi < 0 &&
                   r[11].send_mtm.lo == 2.2 && r[11].recv_mtm.lo == 2.2 &&
                   r[11].repeats.lo == 32 && r[11].repeats.hi < 0 && !r[11].avg_block_bytes.set,
               "rule 11: host, 64-256 ranks, blocks >= 4 MiB, skewed on both sides, the matrix "
               "32 calls in a row -> fast");
        TAP_OK(r[12].use == SKEWSHIM_ALGO_SCATTERED && r[12].buffers == SKEWSHIM_BUF_HOST &&
                   r[12].comm_size.lo == 64 && r[12].comm_size.hi < 0 && !r[12].mtm.set &&
                   r[12].max_block_bytes.lo == 128 << 10 && r[12].max_block_bytes.hi < 0 &&
                   !r[12].repeats.set,
               "rule 12: host, >= 64 ranks, blocks >= 128 KiB -> scattered");
        TAP_OK(r[13].use == SKEWSHIM_ALGO_SABRE && r[13].buffers == SKEWSHIM_BUF_DEVICE &&
                   r[13].comm_size.lo == 2 && r[13].avg_block_bytes.lo == 4 << 20 &&
                   !r[13].mtm.set,
               "rule 13: device, avg block >= 4 MiB -> sabre");
        TAP_OK(r[14].use == SKEWSHIM_ALGO_SABRE && r[14].buffers == SKEWSHIM_BUF_DEVICE &&
                   r[14].mtm.lo == 2.2 && r[14].avg_block_bytes.lo == 1 << 20,
               "rule 14: device, mtm >= 2.2, avg block >= 1 MiB -> sabre");
        /* A reused call need not compare its sizes (core/call.c) where the
         * count cannot change the choice: small blocks, or native by
         * default at 4 KiB; it can on large blocks to hot receivers. */
        skewshim_facts small = {.comm_size = 1024, .nodes = 64, .max_block_bytes = 16,
                                .avg_block_bytes = 2, .avg_nonempty_bytes = 16, .mtm = 9,
                                .send_mtm = 9, .recv_mtm = 9, .buffers = SKEWSHIM_BUF_HOST};
        skewshim_facts mid = {.comm_size = 64, .nodes = 2, .max_block_bytes = 4096,
                              .avg_block_bytes = 2048, .avg_nonempty_bytes = 2048, .mtm = 1.3,
                              .send_mtm = 1.3, .recv_mtm = 1.3, .buffers = SKEWSHIM_BUF_HOST};
        skewshim_facts hot = {.comm_size = 512, .nodes = 64, .max_block_bytes = 1 << 20,
                              .avg_block_bytes = 1 << 10, .avg_nonempty_bytes = 1 << 12,
                              .mtm = 9, .send_mtm = 1.05, .recv_mtm = 9,
                              .buffers = SKEWSHIM_BUF_HOST};
        skewshim_algo_id ia;
        const skewshim_params *ip;
        int rs = skewshim_policy_choose(&p, &small, &ia, &ip);
        int rm = skewshim_policy_choose(&p, &mid, &ia, &ip);
        int rh = skewshim_policy_choose(&p, &hot, &ia, &ip);
        TAP_OK(rs >= 0 && rs <= 7 && rm == -1 && rh == 12 &&
                   !skewshim_policy_repeats_decide(&p, &small, rs, NULL) &&
                   !skewshim_policy_repeats_decide(&p, &mid, rm, NULL) &&
                   skewshim_policy_repeats_decide(&p, &hot, rh, NULL),
               "built-in: the repeat count decides on large blocks to hot receivers (rule %d), "
               "not on small ones (rule %d) nor on native 4 KiB ones (rule %d)", rh, rs, rm);
        skewshim_params nic = p.params;
        nic.tuna_hier_block_count = 32;
        int same = params_equal(&r[0].params, &nic) && params_equal(&r[6].params, &nic) &&
                   r[0].line > 0 && r[6].line > 0;
        for (int i = 1; i < p.nrules; i++)
            if (i != 6)
                same &= params_equal(&r[i].params, &p.params) && r[i].overrides == 0 &&
                        r[i].line > 0;
        TAP_OK(same, "built-in rules carry the global params (rules 0 and 6: but their block_count) and "
                     "their lines");
        int incr = 1;
        for (int i = 1; i < p.nrules; i++)
            incr &= r[i - 1].line < r[i].line;
        TAP_OK(incr, "rule lines increase");
    }
    skewshim_policy_free(&p);
    TAP_OK(p.rules == NULL && p.nrules == 0, "policy_free drops the rules");
    skewshim_policy_free(&p);     /* twice is harmless */
}

static const char every_key[] =
    "version: 1\n"
    "strict: true\n"
    "log:\n"
    "  path: \"/tmp/ss-%j-%r-%p.jsonl\"\n"
    "  level: matrix\n"
    "  sample: 10\n"
    "  stderr: yes\n"
    "topology:\n"
    "  ranks_per_node: 4\n"
    "  nics_per_node: 2\n"
    "max_temp_bytes: 512 MiB\n"
    "reuse_agreement: 8\n"
    "default: pairwise\n"
    "model: {intra_bw: 1e11, inter_bw: 12.5e9, latency: 0}\n"
    "scattered:\n"
    "  block_count: 16\n"
    "pairwise: {}\n"
    "bruck2:\n"
    "padded_bruck: {}\n"
    "nccl_fanout: {}\n"
    "rules:\n"
    "  - comm_size: [2, 1024]\n"               /* line 22 */
    "    max_block_bytes: [0, 4K]\n"
    "    avg_block_bytes: 100\n"
    "    mtm: [1.5, .inf]\n"
    "    buffers: any\n"
    "    use: tuna_hier\n"
    "    scattered: {block_count: 2}\n"
    "    tuna: {radix: 3}\n"
    "    tuna_hier: {radix: 5, block_count: 7, variant: coalesced, pay_check: no}\n"
    "    sabre: {alpha: 1.2, mtm_threshold: 4}\n"
    "    fast: {pipeline: off}\n"
    "    max_temp_bytes: 2KB\n"
    "  - use: scattered\n"                     /* line 34 */
    "tuna:\n"
    "  radix: 4\n"
    "tuna_hier:\n"
    "  radix: auto\n"
    "  block_count: 3\n"
    "  variant: staggered\n"
    "  pay_check: true\n"
    "sabre:\n"
    "  alpha: 1\n"
    "  mtm_threshold: 3.5\n"
    "fast:\n"
    "  pipeline: false\n";

static void test_every_key(void)
{
    skewshim_policy p;
    skewshim_error e;
    int rc = load(every_key, &p, &e);
    TAP_OK(rc == 0, "file with every key loads (%d:%d %s: %s)", e.line, e.column, e.key, e.msg);
    if (rc)
        return;
    TAP_OK(!strcmp(p.source, "t.yaml"), "source is the given name");
    TAP_OK(p.version == 1 && p.strict == 1, "version, strict");
    TAP_OK(!strcmp(p.log_path, "/tmp/ss-%j-%r-%p.jsonl") && p.log_level == SKEWSHIM_LOG_MATRIX &&
               p.log_sample == 10 && p.log_stderr == 1,
           "log section");
    TAP_OK(p.ranks_per_node == 4 && p.nics_per_node == 2, "topology section");
    TAP_OK(p.reuse_agreement == 8, "reuse_agreement (got %d)", p.reuse_agreement);
    TAP_OK(p.fallback == SKEWSHIM_ALGO_PAIRWISE, "default algorithm");
    const skewshim_params *g = &p.params;
    TAP_OK(g->max_temp_bytes == 512ull << 20, "max_temp_bytes 512 MiB (got %llu)",
           (unsigned long long)g->max_temp_bytes);
    TAP_OK(g->model_intra_bw == 1e11 && g->model_inter_bw == 12.5e9 && g->model_latency == 0,
           "model section (flow style)");
    TAP_OK(g->scattered_block_count == 16 && g->tuna_radix == 4 && g->tuna_hier_radix == 0 &&
               g->tuna_hier_block_count == 3 && g->tuna_hier_variant == SKEWSHIM_TUNA_STAGGERED &&
               g->tuna_hier_pay_check == 1 && g->sabre_alpha == 1.0 && g->sabre_mtm_threshold == 3.5 && g->fast_pipeline == 0,
           "global algorithm sections, also those after the rules");
    TAP_OK(p.nrules == 2, "two rules");
    if (p.nrules != 2)
        goto out;
    const skewshim_rule *r = &p.rules[0];
    TAP_OK(r->line == 22 && p.rules[1].line == 34, "rule lines 22, 34 (got %d, %d)", r->line,
           p.rules[1].line);
    TAP_OK(r->comm_size.set && r->comm_size.lo == 2 && r->comm_size.hi == 1024 &&
               r->max_block_bytes.lo == 0 && r->max_block_bytes.hi == 4096 &&
               r->avg_block_bytes.set && r->avg_block_bytes.lo == 100 &&
               r->avg_block_bytes.hi == 100 && r->mtm.lo == 1.5 && r->mtm.hi < 0 &&
               r->buffers == SKEWSHIM_BUF_ANY && r->use == SKEWSHIM_ALGO_TUNA_HIER,
           "rule 0 matchers (range, K suffix, scalar exact, .inf)");
    const skewshim_params *q = &r->params;
    TAP_OK(q->scattered_block_count == 2 && q->tuna_radix == 3 && q->tuna_hier_radix == 5 &&
               q->tuna_hier_block_count == 7 && q->tuna_hier_variant == SKEWSHIM_TUNA_COALESCED &&
               q->tuna_hier_pay_check == 0 && q->sabre_alpha == 1.2 && q->sabre_mtm_threshold == 4 && q->fast_pipeline == 0 &&
               q->max_temp_bytes == 2048,
           "rule 0 overrides every parameter section");
    TAP_OK(q->model_intra_bw == 1e11 && q->model_inter_bw == 12.5e9,
           "rule 0 keeps the global model");
    TAP_OK(r->overrides == 0x3ffu, "rule 0 override bits 0..9 (got 0x%x)", r->overrides);
    TAP_OK(params_equal(&p.rules[1].params, g) && p.rules[1].overrides == 0 &&
               !p.rules[1].comm_size.set && p.rules[1].buffers == SKEWSHIM_BUF_ANY,
           "rule 1 has no matchers and the global params");
out:
    skewshim_policy_free(&p);
}

static const char match_yaml[] =
    "default: padded_bruck\n"
    "rules:\n"
    "  - {comm_size: [4, 8], use: pairwise}\n"
    "  - {comm_size: 16, use: bruck2}\n"
    "  - {max_block_bytes: [1KiB, inf], buffers: device, use: fast}\n"
    "  - {mtm: [2, 3], use: sabre}\n"
    "  - {buffers: host, avg_block_bytes: [0, 100], use: tuna}\n"
    "  - {comm_size: [4, 8], use: scattered}\n"
    "  - {comm_size: 40, send_mtm: [0, 2], recv_mtm: [3.5, inf], use: fast}\n"
    "  - {comm_size: 40, send_mtm: [3, inf], use: sabre}\n"
    "  - {comm_size: 41, repeats: [2, inf], use: sabre}\n"
    "  - {comm_size: 41, repeats: 0, use: pairwise}\n";

/* The horizon skewshim_policy_repeats_decide gives. */
static uint32_t horizon(const skewshim_policy *p, const skewshim_facts *f, int rule)
{
    uint32_t h = 12345;
    (void)skewshim_policy_repeats_decide(p, f, rule, &h);
    return h;
}

/* One skew figure for both sides, as mtm is their larger. */
static int choose(const skewshim_policy *p, int n, double maxb, double avgb, double mtm,
                  int buf, skewshim_algo_id *a, const skewshim_params **pp)
{
    skewshim_facts f = {.comm_size = n, .max_block_bytes = maxb, .avg_block_bytes = avgb,
                        .mtm = mtm, .send_mtm = mtm, .recv_mtm = mtm, .buffers = buf};
    return skewshim_policy_choose(p, &f, a, pp);
}

static int choose_sides(const skewshim_policy *p, double send, double recv)
{
    skewshim_algo_id a;
    const skewshim_params *pp;
    skewshim_facts f = {.comm_size = 40, .max_block_bytes = 0, .avg_block_bytes = 1000,
                        .mtm = send > recv ? send : recv, .send_mtm = send, .recv_mtm = recv,
                        .buffers = SKEWSHIM_BUF_HOST};
    return skewshim_policy_choose(p, &f, &a, &pp);
}

static int choose_repeats(const skewshim_policy *p, double repeats)
{
    skewshim_algo_id a;
    const skewshim_params *pp;
    skewshim_facts f = {.comm_size = 41, .avg_block_bytes = 1000, .mtm = 1, .send_mtm = 1,
                        .recv_mtm = 1, .repeats = repeats, .buffers = SKEWSHIM_BUF_HOST};
    return skewshim_policy_choose(p, &f, &a, &pp);
}

/* A rule on the nodes matches by the communicator's span, both ends
 * inclusive; a fact of 0 nodes (a tool that does not know) never matches. */
static void test_nodes_matcher(void)
{
    skewshim_policy p;
    skewshim_error e;
    if (load("rules:\n  - {nodes: [2, 8], max_block_bytes: [0, 64], use: tuna_hier}\n", &p, &e)) {
        TAP_OK(0, "nodes policy loads: %d:%d %s: %s", e.line, e.column, e.key, e.msg);
        return;
    }
    const int want[] = {-1, -1, 0, 0, -1};
    const int nodes[] = {0, 1, 2, 8, 9};
    for (int i = 0; i < 5; i++) {
        skewshim_algo_id a;
        const skewshim_params *pp;
        skewshim_facts f = {.comm_size = 16, .max_block_bytes = 16, .avg_block_bytes = 16,
                            .mtm = 1, .send_mtm = 1, .recv_mtm = 1,
                            .buffers = SKEWSHIM_BUF_HOST, .nodes = nodes[i]};
        int r = skewshim_policy_choose(&p, &f, &a, &pp);
        TAP_OK(r == want[i] && (r < 0 || a == SKEWSHIM_ALGO_TUNA_HIER),
               "nodes [2, 8] at %d nodes: rule %d", nodes[i], r);
    }
    skewshim_policy_free(&p);
}

/* A NIC per rank: a fact of the communicator, so a rule on it and the
 * size alone is settled without an agreement, a rule for the other case
 * never reaches the communicator, and the built-in policy's rule for it
 * takes the blocks the one-NIC-a-node rules leave to scattered unless the
 * call's line passes it over (unpaid). */
static void test_nic_per_rank_matcher(void)
{
    skewshim_policy p;
    skewshim_error e;
    if (load("rules:\n  - {nic_per_rank: true, comm_size: [4, inf], use: tuna_hier}\n"
             "  - {nic_per_rank: no, use: scattered}\n", &p, &e)) {
        TAP_OK(0, "nic_per_rank policy loads: %d:%d %s: %s", e.line, e.column, e.key, e.msg);
        return;
    }
    TAP_OK(p.nrules == 2 && p.rules[0].nic_per_rank.set && p.rules[0].nic_per_rank.lo == 1 &&
               p.rules[0].nic_per_rank.hi == 1 && p.rules[1].nic_per_rank.set &&
               p.rules[1].nic_per_rank.lo == 0 && p.rules[1].nic_per_rank.hi == 0,
           "nic_per_rank parses true and no");
    skewshim_facts f = {.comm_size = 8, .nodes = 2, .buffers = SKEWSHIM_BUF_HOST};
    skewshim_algo_id a;
    const skewshim_params *pp;
    f.nic_per_rank = 1;
    int r1 = skewshim_policy_choose(&p, &f, &a, &pp);
    f.nic_per_rank = 0;
    int r0 = skewshim_policy_choose(&p, &f, &a, &pp);
    TAP_OK(r1 == 0 && r0 == 1, "a NIC per rank: rule 0; one a node: rule 1 (got %d, %d)", r1,
           r0);
    skewshim_comm_facts cf = {.comm_size = 8, .nodes = 2, .nic_per_rank = 1};
    int rule = -9;
    TAP_OK(skewshim_policy_fixed_choice(&p, &cf, &rule) == 1 && rule == 0,
           "a NIC per rank: fixed to rule 0, no agreement (got %d)", rule);
    cf.nic_per_rank = 0;
    TAP_OK(skewshim_policy_fixed_choice(&p, &cf, &rule) == 1 && rule == 1 &&
               skewshim_policy_candidates(&p, &cf) == 1u << SKEWSHIM_ALGO_SCATTERED,
           "one NIC a node: rule 0 cannot reach the communicator (rule %d)", rule);
    cf.nic_per_rank = 1;
    cf.unrunnable = 1u << SKEWSHIM_ALGO_TUNA_HIER;
    TAP_OK(skewshim_policy_passed_over(&p, &cf) == cf.unrunnable,
           "a NIC per rank where tuna_hier cannot run: its rule counted as passed over");
    cf.nic_per_rank = 0;
    TAP_OK(skewshim_policy_passed_over(&p, &cf) == 0,
           "one NIC a node: the rule for a NIC per rank is not counted");
    skewshim_policy_free(&p);

    /* The built-in policy, a NIC per rank, dense blocks at the lab's points
     * (gpu-h200, P = 256: uniform 256 B, 128.5 B a non-empty block, where
     * tuna_hier takes 0.838x scattered; gpu-perlmutter, the same blocks,
     * 1.025x: the call's line passes it over there). */
    if (skewshim_policy_load_builtin(&p, &e)) {
        TAP_OK(0, "built-in loads: %s", e.msg);
        return;
    }
    skewshim_facts g = {.comm_size = 256, .nodes = 32, .max_block_bytes = 256,
                        .avg_block_bytes = 128.0, .avg_nonempty_bytes = 128.5, .mtm = 1.1,
                        .send_mtm = 1.1, .recv_mtm = 1.1, .buffers = SKEWSHIM_BUF_HOST};
    g.nic_per_rank = 1;
    int r = skewshim_policy_choose(&p, &g, &a, &pp);
    TAP_OK(r == 0 && a == SKEWSHIM_ALGO_TUNA_HIER && pp->tuna_hier_block_count == 32,
           "built-in, a NIC per rank, P=256, 128.5 B a non-empty block: rule 0, tuna_hier with "
           "block_count 32 (got %d)", r);
    g.unpaid = 1u << SKEWSHIM_ALGO_TUNA_HIER;
    r = skewshim_policy_choose(&p, &g, &a, &pp);
    TAP_OK(r == 7 && a == SKEWSHIM_ALGO_SCATTERED,
           "built-in, the same blocks the line passes over: rule 7, scattered (got %d)", r);
    g.unpaid = 0;
    g.nic_per_rank = 0;
    r = skewshim_policy_choose(&p, &g, &a, &pp);
    TAP_OK(r == 7 && a == SKEWSHIM_ALGO_SCATTERED,
           "built-in, one NIC a node, the same blocks: rule 7, scattered (got %d)", r);
    g.nic_per_rank = 1;
    /* Largest blocks of 513 B - 1 KiB (k1-32.csv): past 512 B the line
     * alone runs skewed rows and small jobs behind, so rule 6 asks for
     * balanced rows (MTM <= 2) from 384 ranks as well.  unpaid: 1 the line
     * for 32 passes tuna_hier over, 2 the line for 8 does. */
    static const struct {
        int P;
        double maxb, avgb, ne, mtm;
        unsigned unpaid;
        int rule;
        skewshim_algo_id algo;
        const char *what;
    } k1[] = {
        {1024, 1024, 512.0, 513.1, 1.1, 0, 6, SKEWSHIM_ALGO_TUNA_HIER,
         "P=1024, uniform 1 KiB (tuna_hier 0.962x with 32, 1.086x with 8)"},
        {512, 1024, 0.1, 2.3, 9.3, 2, 7, SKEWSHIM_ALGO_SCATTERED,
         "P=512, Zipf 1 KiB rows the line for 32 passes (MTM 9.3; such rows took tuna_hier "
         "1.11x at 128 ranks, 1.50x at 256 on nodes of 16): scattered"},
        {256, 1024, 80.0, 137.4, 1.45, 0, 7, SKEWSHIM_ALGO_SCATTERED,
         "P=256, power-law 1 KiB (tuna_hier 1.168x on nodes of 16): below rule 6's 384 ranks"},
        {384, 1024, 80.0, 137.4, 1.45, 0, 6, SKEWSHIM_ALGO_TUNA_HIER,
         "P=384, power-law 1 KiB (tuna_hier 0.866x on nodes of 8)"},
        {384, 1024, 80.0, 137.4, 1.45, 1, 7, SKEWSHIM_ALGO_SCATTERED,
         "P=384, the same blocks on nodes of 4, where the line passes it over (0.920x, given "
         "up): scattered"},
        {384, 512, 40.0, 75.2, 15.1, 0, 0, SKEWSHIM_ALGO_TUNA_HIER,
         "P=384, 512 B and skewed (a hot rank, MTM 15; 0.79-0.83x): rule 0 asks nothing of "
         "the MTM"},
    };
    for (size_t i = 0; i < sizeof k1 / sizeof k1[0]; i++) {
        skewshim_facts k = g;
        k.comm_size = k1[i].P;
        k.max_block_bytes = k1[i].maxb;
        k.avg_block_bytes = k1[i].avgb;
        k.avg_nonempty_bytes = k1[i].ne;
        k.mtm = k.send_mtm = k.recv_mtm = k1[i].mtm;
        k.unpaid = k1[i].unpaid & 1 ? 1u << SKEWSHIM_ALGO_TUNA_HIER : 0;
        k.unpaid_few = k1[i].unpaid & 2 ? 1u << SKEWSHIM_ALGO_TUNA_HIER : 0;
        r = skewshim_policy_choose(&p, &k, &a, &pp);
        TAP_OK(r == k1[i].rule && a == k1[i].algo &&
                   (a != SKEWSHIM_ALGO_TUNA_HIER || pp->tuna_hier_block_count == 32),
               "built-in, a NIC per rank, %s: rule %d (got %d)", k1[i].what, k1[i].rule, r);
    }
    skewshim_comm_facts bc = {.comm_size = 256, .nodes = 32, .nic_per_rank = 1};
    TAP_OK(skewshim_policy_fixed_choice(&p, &bc, &rule) == 0,
           "built-in, a NIC per rank at 256 ranks: the choice needs the agreement");
    /* The heavier line (fewer than 32 in flight) binds rules with fewer
     * only: the built-in NIC-per-rank rule runs 32. */
    g.comm_size = 256;
    g.max_block_bytes = 256;
    g.avg_nonempty_bytes = 128.5;
    g.unpaid_few = 1u << SKEWSHIM_ALGO_TUNA_HIER;
    r = skewshim_policy_choose(&p, &g, &a, &pp);
    TAP_OK(r == 0 && a == SKEWSHIM_ALGO_TUNA_HIER,
           "built-in, unpaid with 8 in flight only: rule 0 (32 in flight) still runs (got %d)", r);
    g.unpaid_few = 0;
    skewshim_policy_free(&p);

    /* A user's rule with the default 8 in flight is held to both lines; one
     * with 32 to the line for 32 alone; one without the pay checks to
     * neither. */
    if (load("rules:\n  - {max_block_bytes: [0, 512], use: tuna_hier}\n"
             "  - {max_block_bytes: [0, 1KiB], use: tuna_hier, tuna_hier: {block_count: 32}}\n"
             "  - {max_block_bytes: [0, 2KiB], use: tuna_hier,\n"
             "     tuna_hier: {block_count: 16, pay_check: false}}\n"
             "  - {use: scattered}\n", &p, &e)) {
        TAP_OK(0, "in-flight policy loads: %d:%d %s: %s", e.line, e.column, e.key, e.msg);
        return;
    }
    skewshim_facts h = {.comm_size = 256, .nodes = 64, .nic_per_rank = 1, .max_block_bytes = 256,
                        .avg_block_bytes = 128, .avg_nonempty_bytes = 128.5, .mtm = 1,
                        .send_mtm = 1, .recv_mtm = 1, .buffers = SKEWSHIM_BUF_HOST};
    int got[4];
    for (int k = 0; k < 4; k++) {
        h.unpaid = k & 1 ? 1u << SKEWSHIM_ALGO_TUNA_HIER : 0;
        h.unpaid_few = k & 2 ? 1u << SKEWSHIM_ALGO_TUNA_HIER : 0;
        got[k] = skewshim_policy_choose(&p, &h, &a, &pp);
    }
    TAP_OK(got[0] == 0 && got[2] == 1 && got[1] == 2 && got[3] == 2,
           "paid: the rule with 8; unpaid with 8 only: the rule with 32; unpaid: the rule "
           "without checks (got %d %d %d %d)", got[0], got[2], got[1], got[3]);
    h.unpaid = h.unpaid_few = 0;
    h.unrunnable_few = 1u << SKEWSHIM_ALGO_TUNA_HIER;
    r = skewshim_policy_choose(&p, &h, &a, &pp);
    TAP_OK(r == 1, "no call pays with 8 in flight on these nodes: the rule with 32 (got %d)", r);
    skewshim_comm_facts hc = {.comm_size = 256, .nodes = 64, .nic_per_rank = 1,
                              .unrunnable_few = 1u << SKEWSHIM_ALGO_TUNA_HIER};
    TAP_OK(skewshim_policy_passed_over(&p, &hc) == 1u << SKEWSHIM_ALGO_TUNA_HIER,
           "and the communicator counts tuna_hier's rule as passed over");
    hc.unrunnable = hc.unrunnable_few;
    TAP_OK(skewshim_policy_fixed_choice(&p, &hc, &rule) == 0,
           "no call pays with 32 either: the rule without checks still reads the blocks");
    skewshim_policy_free(&p);
}

/* Bytes per non-empty block: two exchanges of one average block, one
 * dense and one with most blocks empty, go to different rules; 0 (no
 * block carries a byte) sits at the low end of any range from 0. */
static void test_nonempty_matcher(void)
{
    skewshim_policy p;
    skewshim_error e;
    if (load("rules:\n  - {avg_nonempty_bytes: [0, 80], use: tuna_hier}\n"
             "  - {avg_block_bytes: [0, 80], use: scattered}\n", &p, &e)) {
        TAP_OK(0, "avg_nonempty_bytes policy loads: %d:%d %s: %s", e.line, e.column, e.key,
               e.msg);
        return;
    }
    TAP_OK(p.nrules == 2 && p.rules[0].avg_nonempty_bytes.set &&
               p.rules[0].avg_nonempty_bytes.lo == 0 && p.rules[0].avg_nonempty_bytes.hi == 80 &&
               !p.rules[0].avg_block_bytes.set && !p.rules[1].avg_nonempty_bytes.set,
           "avg_nonempty_bytes parses into its own range");
    const double avg[] = {60, 60, 0, 80, 100};
    const double ne[] = {60, 120, 0, 80.5, 100};
    const int want[] = {0, 1, 0, 1, -1};
    for (int i = 0; i < 5; i++) {
        skewshim_algo_id a;
        const skewshim_params *pp;
        skewshim_facts f = {.comm_size = 256, .max_block_bytes = 512, .avg_block_bytes = avg[i],
                            .avg_nonempty_bytes = ne[i], .mtm = 1, .send_mtm = 1, .recv_mtm = 1,
                            .buffers = SKEWSHIM_BUF_HOST, .nodes = 8};
        int r = skewshim_policy_choose(&p, &f, &a, &pp);
        TAP_OK(r == want[i], "average block %g B, %g B a non-empty block: rule %d (want %d)",
               avg[i], ne[i], r, want[i]);
    }
    skewshim_policy_free(&p);
}

static void test_matching(void)
{
    skewshim_policy p;
    skewshim_error e;
    skewshim_algo_id a;
    const skewshim_params *pp;
    const int H = SKEWSHIM_BUF_HOST, D = SKEWSHIM_BUF_DEVICE;
    if (load(match_yaml, &p, &e)) {
        TAP_OK(0, "matching policy loads: %d:%d %s: %s", e.line, e.column, e.key, e.msg);
        return;
    }
    TAP_OK(choose(&p, 4, 0, 1000, 1, H, &a, &pp) == 0 && a == SKEWSHIM_ALGO_PAIRWISE &&
               pp == &p.rules[0].params,
           "range lower end inclusive; rule params returned");
    TAP_OK(choose(&p, 8, 0, 1000, 1, H, &a, &pp) == 0, "range upper end inclusive");
    TAP_OK(choose(&p, 6, 0, 1000, 1, D, &a, &pp) == 0, "first match wins over a later rule");
    TAP_OK(choose(&p, 9, 0, 1000, 1, H, &a, &pp) == -1 && a == SKEWSHIM_ALGO_PADDED_BRUCK &&
               pp == &p.params,
           "no match: -1, the default algorithm and the global params");
    TAP_OK(choose(&p, 16, 0, 1000, 1, H, &a, &pp) == 1 && a == SKEWSHIM_ALGO_BRUCK2,
           "scalar matcher: exact value");
    TAP_OK(choose(&p, 15, 0, 1000, 1, H, &a, &pp) == -1 &&
               choose(&p, 17, 0, 1000, 1, H, &a, &pp) == -1,
           "scalar matcher: neighbours do not match");
    TAP_OK(choose(&p, 32, 1024, 1000, 1, D, &a, &pp) == 2 && a == SKEWSHIM_ALGO_FAST,
           "size suffix in range, device");
    TAP_OK(choose(&p, 32, 1e15, 1000, 1, D, &a, &pp) == 2, "inf upper bound");
    TAP_OK(choose(&p, 32, 1023, 1000, 1, D, &a, &pp) == -1, "below the range: no match");
    TAP_OK(choose(&p, 32, 1e15, 1000, 1, H, &a, &pp) == -1, "buffers device refuses host");
    TAP_OK(choose(&p, 32, 0, 1000, 2, H, &a, &pp) == 3 &&
               choose(&p, 32, 0, 1000, 3, D, &a, &pp) == 3 && a == SKEWSHIM_ALGO_SABRE,
           "buffers unset (any) matches host and device");
    TAP_OK(choose(&p, 32, 0, 1000, 3.01, H, &a, &pp) == -1, "just above an mtm range");
    TAP_OK(choose(&p, 32, 0, 1000, NAN, H, &a, &pp) == -1, "NaN fact never matches a range");
    TAP_OK(choose(&p, 32, 0, 100, 1, H, &a, &pp) == 4 && a == SKEWSHIM_ALGO_TUNA,
           "buffers host matches host");
    TAP_OK(choose(&p, 32, 0, 100, 1, D, &a, &pp) == -1, "buffers host refuses device");
    /* MoE routing (lab, P = 128: send 1.04, receive 13.8) against Zipf
     * (8.5, 9.1): one mtm, two sides. */
    TAP_OK(choose_sides(&p, 1.04, 13.8) == 6, "hot receivers, balanced senders: send/recv rule");
    TAP_OK(choose_sides(&p, 2, 3.5) == 6, "send_mtm and recv_mtm ends inclusive");
    TAP_OK(choose_sides(&p, 8.5, 9.1) == 7, "skew on both sides: not the receivers' rule");
    TAP_OK(choose_sides(&p, 2.01, 13.8) == -1, "just above a send_mtm range");
    TAP_OK(choose_sides(&p, 1.0, 3.49) == -1, "just below a recv_mtm range");
    TAP_OK(choose_sides(&p, 1.0, NAN) == -1 && choose_sides(&p, NAN, 9) == -1,
           "NaN side never matches");
    TAP_OK(choose_repeats(&p, 2) == 8 && choose_repeats(&p, 1000) == 8,
           "repeats: a repeated matrix matches from the range's lower end");
    TAP_OK(choose_repeats(&p, 1) == -1, "repeats: one repeat short of [2, inf] does not match");
    TAP_OK(choose_repeats(&p, 0) == 9, "repeats: 0, a new matrix, matches exactly");
    {
        /* Whether the count can change a choice: only through a rule on
         * repeats, up to the chosen one, that the other facts reach. */
        skewshim_facts f41 = {.comm_size = 41, .avg_block_bytes = 1000, .mtm = 1,
                              .send_mtm = 1, .recv_mtm = 1, .buffers = SKEWSHIM_BUF_HOST};
        skewshim_facts f40 = f41;
        f40.comm_size = 40;
        TAP_OK(skewshim_policy_repeats_decide(&p, &f41, 9, NULL) &&
                   skewshim_policy_repeats_decide(&p, &f41, 8, NULL) &&
                   skewshim_policy_repeats_decide(&p, &f41, -1, NULL),
               "41 ranks: rules 8 and 9 read repeats, and a default choice could go to them");
        TAP_OK(!skewshim_policy_repeats_decide(&p, &f41, 7, NULL) &&
                   !skewshim_policy_repeats_decide(&p, &f40, -1, NULL),
               "a rule before them, or facts they cannot match (40 ranks): the count cannot "
               "change the choice");
        /* How far the count is from a bound where a choice could change:
         * rule 9 (0) stops matching at 1, rule 8 starts at 2. */
        skewshim_facts at[4] = {f41, f41, f41, f41};
        uint32_t hz[4];
        for (int i = 0; i < 4; i++) {
            at[i].repeats = i == 3 ? 500 : i;
            hz[i] = horizon(&p, &at[i], -1);
        }
        TAP_OK(hz[0] == 1 && hz[1] == 1 && hz[2] == 0 && hz[3] == 0,
               "41 ranks: the next bound is 1 call on at counts 0 and 1, none from 2 (%u %u %u %u)",
               hz[0], hz[1], hz[2], hz[3]);
        skewshim_facts f40_0 = f40;
        f40_0.repeats = 0;
        TAP_OK(horizon(&p, &at[0], 7) == 0 &&
                   horizon(&p, &f40_0, -1) == 0,
               "none where the count cannot change the choice (rule 7 chosen; 40 ranks)");
    }
    skewshim_policy_free(&p);

    skewshim_policy none;
    skewshim_policy_init_default(&none);
    TAP_OK(choose(&none, 64, 0, 0, 1, H, &a, &pp) == -1 && a == SKEWSHIM_ALGO_NATIVE &&
               pp == &none.params,
           "no rules: native with the global params");
}

static void test_overrides(void)
{
    static const char y[] =
        "tuna: {radix: 4}\n"
        "rules:\n"
        "  - comm_size: 2\n"
        "    use: tuna\n"
        "    tuna: {radix: 8}\n"
        "    max_temp_bytes: 1MiB\n"
        "  - use: sabre\n"
        "    sabre: {alpha: 1.5}\n"
        "sabre: {mtm_threshold: 3}\n";
    skewshim_policy p;
    skewshim_error e;
    if (load(y, &p, &e) || p.nrules != 2) {
        TAP_OK(0, "override policy loads: %d:%d %s: %s", e.line, e.column, e.key, e.msg);
        return;
    }
    const skewshim_params *r0 = &p.rules[0].params, *r1 = &p.rules[1].params;
    TAP_OK(r0->tuna_radix == 8 && r0->max_temp_bytes == 1u << 20,
           "rule 0 gets its own radix and temp cap");
    TAP_OK(r0->sabre_mtm_threshold == 3 && r0->sabre_alpha == 1.05,
           "rule 0 sees a global section written after it");
    TAP_OK(p.rules[0].overrides == ((1u << 1) | (1u << 9)), "rule 0 override bits (0x%x)",
           p.rules[0].overrides);
    TAP_OK(r1->tuna_radix == 4 && r1->sabre_alpha == 1.5 && r1->sabre_mtm_threshold == 3 &&
               r1->max_temp_bytes == 1u << 30,
           "rule 1: its alpha, global radix and cap");
    TAP_OK(p.params.tuna_radix == 4 && p.params.sabre_alpha == 1.05 &&
               p.params.max_temp_bytes == 1u << 30,
           "global params untouched by rule overrides");
    skewshim_policy_free(&p);
}

/* Whether the choice can be made without agreeing on a call's facts, and
 * which rule makes it (-1: the default). */
static void test_fixed_choice(void)
{
    static const struct {
        const char *yaml;
        int P, device, fixed, rule, nodes;
    } cases[] = {
        {"", 4, 1, 1, -1, 1},
        {"rules:\n  - {comm_size: [2, 8], use: tuna}\n", 4, 1, 1, 0, 1},
        {"rules:\n  - {comm_size: [2, 8], use: tuna}\n", 16, 1, 1, -1, 1},
        {"rules:\n  - {buffers: any, use: tuna}\n", 16, 1, 1, 0, 1},
        /* A host-only rule decides only where no device buffer can come. */
        {"rules:\n  - {buffers: host, use: tuna}\n", 16, 0, 1, 0, 1},
        {"rules:\n  - {buffers: host, use: tuna}\n", 16, 1, 0, 0, 1},
        {"rules:\n  - {buffers: device, use: sabre}\n", 16, 0, 1, -1, 1},
        {"rules:\n  - {comm_size: 4, use: pairwise}\n  - {buffers: host, use: tuna}\n",
         4, 1, 1, 0, 1},
        {"rules:\n  - {comm_size: 4, use: pairwise}\n  - {buffers: host, use: tuna}\n",
         5, 1, 0, 0, 1},
        {"rules:\n  - {mtm: [2, inf], use: sabre}\n", 16, 0, 0, 0, 1},
        {"rules:\n  - {send_mtm: [0, 2], use: sabre}\n", 16, 0, 0, 0, 1},
        {"rules:\n  - {recv_mtm: [2, inf], use: sabre}\n", 16, 0, 0, 0, 1},
        {"rules:\n  - {max_block_bytes: [0, 1K], use: tuna}\n", 16, 0, 0, 0, 1},
        {"rules:\n  - {avg_block_bytes: 8, use: tuna}\n", 16, 0, 0, 0, 1},
        {"rules:\n  - {avg_nonempty_bytes: [0, 80], use: tuna}\n", 16, 0, 0, 0, 1},
        /* Whether the matrix repeats is agreed per call. */
        {"rules:\n  - {repeats: [1, inf], use: sabre}\n", 16, 0, 0, 0, 1},
        /* A skew rule that ends where the default would: nothing to agree. */
        {"default: tuna\nrules:\n  - {mtm: [2, inf], use: tuna}\n", 16, 0, 1, 0, 1},
        /* Same algorithm, other parameters: the facts decide. */
        {"default: tuna\nrules:\n  - {mtm: [2, inf], use: tuna, tuna: {radix: 4}}\n",
         16, 0, 0, 0, 1},
        {"rules:\n  - {comm_size: [64, inf], mtm: [2, inf], use: sabre}\n", 63, 0, 1, -1, 1},
        /* The nodes a communicator spans are known to all: a rule for jobs
         * across nodes costs a one-node job no agreement, and one that
         * matches every call across nodes needs none either. */
        {"rules:\n  - {nodes: [2, inf], max_block_bytes: [0, 64], use: tuna_hier}\n", 16, 0, 1,
         -1, 1},
        {"rules:\n  - {nodes: [2, inf], max_block_bytes: [0, 64], use: tuna_hier}\n", 16, 0, 0,
         0, 2},
        {"rules:\n  - {nodes: [2, inf], use: tuna_hier}\n", 16, 0, 1, 0, 4},
        {"rules:\n  - {nodes: 1, use: scattered}\n  - {use: pairwise}\n", 16, 0, 1, 1, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        skewshim_policy p;
        skewshim_error e;
        int rule = -9, rc = load(cases[i].yaml, &p, &e);
        int nodes = cases[i].nodes;
        int fixed = rc == 0 ? skewshim_policy_fixed_choice(
                                  &p, CF(cases[i].P, nodes, cases[i].device, 0), &rule)
                            : -1;
        TAP_OK(fixed == cases[i].fixed && (!fixed || rule == cases[i].rule),
               "case %zu (P=%d, %d nodes, device %d): fixed %d rule %d", i, cases[i].P, nodes,
               cases[i].device, fixed, rule);
        skewshim_policy_free(&p);
    }
    /* The built-in policy: nothing to agree below 64 ranks on host buffers;
     * its device rules and its 64+ rank rules need the facts. */
    skewshim_policy p;
    skewshim_error e;
    int rule = -9;
    TAP_OK(skewshim_policy_load_builtin(&p, &e) == 0 &&
               skewshim_policy_fixed_choice(&p, CF(2, 1, 0, 0), &rule) == 1 && rule == -1 &&
               skewshim_policy_fixed_choice(&p, CF(63, 4, 0, 0), &rule) == 1 && rule == -1 &&
               p.fallback == SKEWSHIM_ALGO_NATIVE,
           "built-in: native without agreement up to 63 ranks, no device");
    TAP_OK(skewshim_policy_fixed_choice(&p, CF(64, 2, 0, 0), &rule) == 0 &&
               skewshim_policy_fixed_choice(&p, CF(2, 1, 1, 0), &rule) == 0,
           "built-in: agreement at 64 ranks, and where device buffers can come");
    skewshim_policy_free(&p);
}

/* The built-in policy at the lab's measured points (facts as the lab's
 * --mtm columns give them; doc/perf/lab/large-charge-zipf09-big and the
 * MoE runs), plus one point just outside rule 7's range: each must get
 * the item that won there, so that a rule edit which moves a point is
 * caught here and not in a 40-minute simulation. */
/* A closed range of counts has two bounds: where its rule starts
 * matching and the first count past it. */
static void test_repeats_horizon(void)
{
    skewshim_policy p;
    skewshim_error e;
    int rc = load("rules:\n  - {repeats: [3, 10], use: sabre}\n  - {repeats: [20, inf], use: fast}\n",
                  &p, &e);
    TAP_OK(rc == 0, "a policy with two ranges of repeats loads");
    if (rc)
        return;
    static const struct {
        double repeats;
        int rule;
        uint32_t want;
    } cases[] = {
        {0, -1, 3}, {2, -1, 1}, {3, 0, 8}, {10, 0, 1}, {11, -1, 9}, {19, -1, 1}, {20, 1, 0},
        {1e6, 1, 0},
        /* rule 1 is not reached while rule 0 matches, but 0's end is a bound */
        {4, 0, 7},
    };
    int ok = 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        skewshim_facts f = {.comm_size = 16, .avg_block_bytes = 100, .mtm = 1, .send_mtm = 1,
                            .recv_mtm = 1, .buffers = SKEWSHIM_BUF_HOST,
                            .repeats = cases[i].repeats};
        skewshim_algo_id a;
        const skewshim_params *pp;
        int rule = skewshim_policy_choose(&p, &f, &a, &pp);
        uint32_t got = horizon(&p, &f, rule);
        if (rule != cases[i].rule || got != cases[i].want) {
            ok = 0;
            TAP_DIAG("repeats %g: rule %d (want %d), horizon %u (want %u)", cases[i].repeats, rule,
                     cases[i].rule, got, cases[i].want);
        }
    }
    TAP_OK(ok, "repeats [3, 10] then [20, inf]: the next bound from counts 0 to 10^6");
    skewshim_policy_free(&p);
}

static void test_builtin_lab_points(void)
{
    static const struct {
        const char *what;
        int P, nodes;
        double maxb, avgb, ne, send, recv;   /* ne: bytes per non-empty block */
        int rule;
        skewshim_algo_id algo;
    } pts[] = {
        /* 64-127 ranks (doc/perf/lab/rule-edges-p64-96): the edge at 36 B a
         * non-empty block, whatever the largest block. */
        {"equal 36 B, P = 64 (tuna_hier 0.982x)", 64, 2, 36, 36.0, 36.0, 1.0, 1.0, 5,
         SKEWSHIM_ALGO_TUNA_HIER},
        {"equal 48 B, P = 64 (tuna_hier 1.036x; the rule on the largest block ran it)", 64, 2,
         48, 48.0, 48.0, 1.0, 1.0, 7, SKEWSHIM_ALGO_SCATTERED},
        {"equal 64 B, P = 64 (tuna_hier 1.122x)", 64, 2, 64, 64.0, 64.0, 1.0, 1.0, 7,
         SKEWSHIM_ALGO_SCATTERED},
        {"power 96 B, P = 64, largest block above 64 B, 28.9 B a non-empty block (tuna_hier "
         "0.956x)", 64, 2, 1024, 28.91, 28.91, 1.0, 1.0, 5, SKEWSHIM_ALGO_TUNA_HIER},
        {"power 128 B, P = 64, 38.5 B a non-empty block (tuna_hier 1.001x)", 64, 2, 1024, 38.47,
         38.47, 1.0, 1.0, 7, SKEWSHIM_ALGO_SCATTERED},
        {"uniform 64 B, P = 96, 32.2 B a non-empty block (tuna_hier 0.870x)", 96, 3, 64, 31.68,
         32.20, 1.0, 1.0, 5, SKEWSHIM_ALGO_TUNA_HIER},
        {"uniform 96 B, P = 96, 48.5 B a non-empty block (tuna_hier 0.983x, left to "
         "scattered)", 96, 3, 96, 47.95, 48.47, 1.0, 1.0, 7, SKEWSHIM_ALGO_SCATTERED},
        /* The small-block edges (doc/perf/lab/rule-edges-p64-256,
         * rule-edges-p128-192, rule-edges-sparse; ratios to scattered,
         * MPICH's default). */
        {"uniform 128 B, P = 256, avg 64.08 B (tuna_hier 0.832x)", 256, 8, 128, 64.08, 64.55,
         1.10, 1.10, 3, SKEWSHIM_ALGO_TUNA_HIER},
        {"equal 80 B, P = 256 (tuna_hier 0.918x)", 256, 8, 80, 80.0, 80.0, 1.0, 1.0, 3,
         SKEWSHIM_ALGO_TUNA_HIER},
        {"uniform 160 B, P = 256, 80.2 B a non-empty block (tuna_hier 0.941x)", 256, 8, 160,
         79.69, 80.22, 1.09, 1.12, 3, SKEWSHIM_ALGO_TUNA_HIER},
        {"equal 96 B, P = 256 (tuna_hier 1.026x)", 256, 8, 96, 96.0, 96.0, 1.0, 1.0, 7,
         SKEWSHIM_ALGO_SCATTERED},
        {"uniform 192 B, P = 256, avg 96.07 B (tuna_hier 1.058x)", 256, 8, 192, 96.07, 96.56,
         1.11, 1.11, 7, SKEWSHIM_ALGO_SCATTERED},
        {"power 512 B, P = 256, avg 40 B, 75.2 B a non-empty block (tuna_hier 0.934x)", 256,
         8, 512, 39.97, 75.24, 1.11, 1.50, 3, SKEWSHIM_ALGO_TUNA_HIER},
        {"power 768 B, P = 256, avg 60 B, 106.6 B a non-empty block (tuna_hier 1.132x)", 256,
         8, 768, 59.97, 106.6, 1.11, 1.50, 7, SKEWSHIM_ALGO_SCATTERED},
        {"power 1024 B, P = 256, avg 80 B, 137.4 B a non-empty block (tuna_hier 1.323x)", 256,
         8, 1024, 79.97, 137.4, 1.11, 1.50, 7, SKEWSHIM_ALGO_SCATTERED},
        {"power x = 0.99, 224 B, P = 256, avg 80.8 B, none empty (tuna_hier 0.947x)", 256, 8,
         224, 80.84, 80.84, 1.04, 1.16, 3, SKEWSHIM_ALGO_TUNA_HIER},
        {"uniform 112 B, P = 128, 56.6 B a non-empty block (tuna_hier 0.911x)", 128, 4, 112,
         56.10, 56.56, 1.16, 1.14, 2, SKEWSHIM_ALGO_TUNA_HIER},
        {"equal 80 B, P = 128 (tuna_hier 1.055x)", 128, 4, 80, 80.0, 80.0, 1.0, 1.0, 7,
         SKEWSHIM_ALGO_SCATTERED},
        {"power 512 B, P = 128, 79.9 B a non-empty block (tuna_hier 1.136x)", 128, 4, 512,
         79.88, 79.88, 1.19, 1.32, 7, SKEWSHIM_ALGO_SCATTERED},
        {"power 384 B, P = 192, avg 40 B, 59.0 B a non-empty block (tuna_hier 0.953x)", 192,
         6, 384, 39.98, 59.05, 1.14, 1.50, 2, SKEWSHIM_ALGO_TUNA_HIER},
        {"power 512 B, P = 192, 75.2 B a non-empty block (tuna_hier 1.044x)", 192, 6, 512,
         53.29, 75.24, 1.14, 1.50, 7, SKEWSHIM_ALGO_SCATTERED},
        {"uniform 112 B at 255 ranks (not measured): the 128-255 rule", 255, 8, 112, 56.10,
         56.56, 1.16, 1.14, 2, SKEWSHIM_ALGO_TUNA_HIER},
        {"uniform 112 B at 127 ranks (not measured): below the 128-255 rule", 127, 4, 112,
         56.10, 56.56, 1.16, 1.14, 7, SKEWSHIM_ALGO_SCATTERED},
        {"power 768 B, P = 512, avg 30 B, 106.6 B a non-empty block (tuna_hier 1.236x)", 512,
         16, 768, 29.98, 106.6, 1.06, 1.50, 7, SKEWSHIM_ALGO_SCATTERED},
        {"equal 80 B, P = 512 (tuna_hier 0.842x)", 512, 16, 80, 80.0, 80.0, 1.0, 1.0, 3,
         SKEWSHIM_ALGO_TUNA_HIER},
        {"power 768 B, P = 768, 106.6 B a non-empty block (tuna_hier 0.933x, left to scattered)",
         768, 24, 768, 19.99, 106.6, 1.04, 1.58, 7, SKEWSHIM_ALGO_SCATTERED},
        {"power 512 B, P = 768, 75.2 B a non-empty block (tuna_hier 0.832x)", 768, 24, 512,
         13.32, 75.24, 1.04, 1.58, 3, SKEWSHIM_ALGO_TUNA_HIER},
        {"power 768 B, P = 2048, avg 7.5 B, 106.6 B a non-empty block (tuna_hier 0.549x)",
         2048, 64, 768, 7.50, 106.6, 1.02, 1.72, 4, SKEWSHIM_ALGO_TUNA_HIER},
        {"power 768 B, P = 1024, avg 15 B, 106.6 B a non-empty block (tuna_hier 0.811x)",
         1024, 32, 768, 14.99, 106.6, 1.11, 1.50, 4, SKEWSHIM_ALGO_TUNA_HIER},
        {"power 1024 B, P = 1024, avg 20 B, 137.4 B a non-empty block (tuna_hier 0.893x)",
         1024, 32, 1024, 19.99, 137.4, 1.11, 1.50, 4, SKEWSHIM_ALGO_TUNA_HIER},
        {"equal 80 B, P = 1024 (crossbar; tuna_hier 0.74x)", 1024, 32, 80, 80.0, 80.0, 1.0, 1.0,
         4, SKEWSHIM_ALGO_TUNA_HIER},
        {"equal 96 B, P = 1024 (crossbar; tuna_hier 0.85x): beyond the kept 80 B", 1024, 32, 96,
         96.0, 96.0, 1.0, 1.0, 7, SKEWSHIM_ALGO_SCATTERED},
        {"average 20 B, 300 B a non-empty block at P = 1024 (not measured): beyond 144 B",
         1024, 32, 1024, 20.0, 300.0, 1.2, 1.2, 7, SKEWSHIM_ALGO_SCATTERED},
        {"power 768 B at 1023 ranks (not measured): the 256-1023 rule's 84 B edge", 1023, 32,
         768, 15.0, 106.6, 1.11, 1.50, 7, SKEWSHIM_ALGO_SCATTERED},
        {"Zipf 0.9, P = 256, 128 MiB, avg 41.8 KiB (FAST 0.317x, scattered 0.548x)", 256, 32,
         134217728, 42770.9, 42770.9, 13.42, 13.24, 10, SKEWSHIM_ALGO_FAST},
        {"Zipf 0.9, P = 256, 64 MiB, avg 20.9 KiB: below the floor", 256, 32, 67108864,
         21385.5, 21385.5, 13.42, 13.24, 12, SKEWSHIM_ALGO_SCATTERED},
        {"Zipf 0.9, P = 128, 32 MiB, avg 33.9 KiB (FAST 0.385x, scattered 0.526x)", 128, 16,
         33554432, 34734.3, 34734.3, 8.51, 9.14, 10, SKEWSHIM_ALGO_FAST},
        {"Zipf 0.9, P = 128, 16 MiB, avg 17.0 KiB (scattered 0.510x, FAST 0.566x)", 128, 16,
         16777216, 17367.2, 17367.2, 8.51, 9.14, 12, SKEWSHIM_ALGO_SCATTERED},
        {"Zipf 0.9, P = 64, 8 MiB, avg 27.1 KiB (scattered 0.575x, FAST 0.590x)", 64, 8,
         8388608, 27738.4, 27738.4, 6.07, 6.39, 12, SKEWSHIM_ALGO_SCATTERED},
        {"the P = 256, 128 MiB facts at 512 ranks (not measured): beyond the rule's 256",
         512, 64, 134217728, 42770.9, 42770.9, 13.42, 13.24, 12, SKEWSHIM_ALGO_SCATTERED},
        {"MoE top-2, P = 256, 1 MiB, avg 37.6 KiB: hot receivers from balanced senders",
         256, 32, 1048576, 38479.9, 38479.9, 1.02, 22.85, 8, SKEWSHIM_ALGO_FAST},
    };
    skewshim_policy p;
    skewshim_error e;
    if (skewshim_policy_load_builtin(&p, &e)) {
        TAP_OK(0, "built-in loads for the lab points: %s", e.msg);
        return;
    }
    for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++) {
        skewshim_facts f = {.comm_size = pts[i].P, .max_block_bytes = pts[i].maxb,
                            .avg_block_bytes = pts[i].avgb, .avg_nonempty_bytes = pts[i].ne,
                            .mtm = pts[i].send > pts[i].recv ? pts[i].send : pts[i].recv,
                            .send_mtm = pts[i].send, .recv_mtm = pts[i].recv,
                            .repeats = 0, .buffers = SKEWSHIM_BUF_HOST, .nodes = pts[i].nodes};
        skewshim_algo_id a = SKEWSHIM_ALGO_NATIVE;
        const skewshim_params *pp;
        int r = skewshim_policy_choose(&p, &f, &a, &pp);
        TAP_OK(r == pts[i].rule && a == pts[i].algo, "built-in at %s: rule %d (want %d)",
               pts[i].what, r, pts[i].rule);
    }
    skewshim_policy_free(&p);
}

struct bad {
    const char *what, *yaml;
    int line, column;     /* column 0: not checked */
    const char *key, *msg;  /* msg: a substring of the message */
};

/* Rows for a bad value written "key: value": the error stands where the value
 * starts (sizeof counts the NUL, which makes the column 1-based) and names
 * the key with its path.  At the top level: */
#define BAD_TOP(what, k, value, msg) \
    {what, k ": " value "\n", 1, (int)sizeof(k ": "), k, msg}
/* in a section: */
#define BAD_IN(what, sec, k, value, msg) \
    {what, sec ":\n  " k ": " value "\n", 2, (int)sizeof("  " k ": "), sec "." k, msg}
/* in the first of the rules, followed by that rule's other lines: */
#define BAD_RULE(what, k, value, rest, msg) \
    {what, "rules:\n  - " k ": " value "\n" rest, 2, (int)sizeof("  - " k ": "), \
     "rules[0]." k, msg}

static const struct bad bad_inputs[] = {
    {"malformed YAML", "a: b: c\n", 1, 5, "", "malformed YAML"},
    {"unclosed flow sequence", "log: {level: calls\n", 2, 1, "", "malformed YAML"},
    {"tab indentation", "log:\n\tlevel: calls\n", 2, 1, "", "tabs"},
    {"unknown top-level key", "version: 1\nfrobnicate: 3\n", 2, 1, "frobnicate",
     "unknown key 'frobnicate'; accepted keys: version, strict, log"},
    {"unknown nested key", "log:\n  level: calls\n  colour: red\n", 3, 3, "log.colour",
     "accepted keys: path, level, sample, stderr"},
    BAD_IN("map for a scalar", "tuna", "radix", "{a: 1}", "got a mapping"),
    BAD_TOP("sequence for a map", "log", "[1, 2]", "expected a mapping, got a sequence"),
    BAD_TOP("negative reuse_agreement", "reuse_agreement", "-1", "expected an integer >= 0"),
    BAD_TOP("scalar for a map", "sabre", "5", "expected a mapping, got a scalar"),
    BAD_IN("radix 1", "tuna", "radix", "1", "expected an integer >= 2 or 'auto', got '1'"),
    BAD_IN("radix 'x'", "tuna", "radix", "x", "expected an integer >= 2 or 'auto', got 'x'"),
    BAD_IN("tuna_hier radix 1.5", "tuna_hier", "radix", "1.5", "got '1.5'"),
    BAD_IN("alpha 0.9", "sabre", "alpha", "0.9", "expected a number >= 1"),
    {"mtm_threshold 0.5", "sabre: {mtm_threshold: 0.5}\n", 1, 24, "sabre.mtm_threshold",
     ">= 1"},
    BAD_IN("block_count 0", "scattered", "block_count", "0", "expected an integer >= 1, got '0'"),
    BAD_IN("block_count overflow", "tuna_hier", "block_count", "99999999999", "integer >= 1"),
    BAD_IN("sample 0", "log", "sample", "0", "integer >= 1"),
    BAD_IN("level 'verbose'", "log", "level", "verbose",
           "expected one of off, summary, calls, matrix, got 'verbose'"),
    {"empty log path", "log:\n  path:\n", 2, 8, "log.path", "got nothing"},
    BAD_IN("variant 'other'", "tuna_hier", "variant", "other", "coalesced, staggered"),
    BAD_TOP("strict 'maybe'", "strict", "maybe", "boolean"),
    BAD_RULE("inverted range", "comm_size", "[64, 8]", "    use: tuna\n", "inverted range"),
    BAD_RULE("range with 3 elements", "mtm", "[1, 2, 3]", "    use: sabre\n", "2 elements"),
    BAD_RULE("inverted send_mtm", "send_mtm", "[2, 1]", "    use: fast\n", "inverted range"),
    BAD_RULE("fractional repeats", "repeats", "1.5", "    use: sabre\n", "integer >= 0"),
    BAD_RULE("negative repeats", "repeats", "-1", "    use: sabre\n", "integer >= 0"),
    BAD_RULE("nic_per_rank not a boolean", "nic_per_rank", "4", "    use: tuna_hier\n",
             "expected a boolean"),
    BAD_RULE("inverted avg_nonempty_bytes", "avg_nonempty_bytes", "[80, 8]",
             "    use: tuna_hier\n", "inverted range"),
    BAD_RULE("avg_nonempty_bytes not a size", "avg_nonempty_bytes", "lots",
             "    use: tuna_hier\n", "size"),
    BAD_RULE("inverted nodes", "nodes", "[4, 2]", "    use: tuna_hier\n", "inverted range"),
    BAD_RULE("fractional nodes", "nodes", "1.5", "    use: tuna_hier\n", "integer >= 0"),
    {"bad recv_mtm element", "rules:\n  - use: fast\n    recv_mtm: [2.2, hot]\n", 3, 21,
     "rules[0].recv_mtm[1]", "got 'hot'"},
    {"bad range element", "rules:\n  - use: tuna\n    max_block_bytes: [1KiB, lots]\n", 3, 29,
     "rules[0].max_block_bytes[1]", "or 'inf', got 'lots'"},
    {"inf as a single value", "rules:\n  - {comm_size: inf, use: tuna}\n", 2, 17,
     "rules[0].comm_size", "integer >= 0"},
    {"map as a range", "rules:\n  - {mtm: {lo: 1}, use: tuna}\n", 2, 11, "rules[0].mtm",
     "got a mapping"},
    BAD_RULE("unknown algorithm in use", "use", "quicksort", "", "got 'quicksort'"),
    BAD_RULE("use: auto in a rule", "use", "auto", "", "'auto' is not allowed"),
    {"rule without use", "rules:\n  - use: tuna\n  - comm_size: 4\n    buffers: host\n", 3, 5,
     "rules[1].use", "missing required key 'use'"},
    {"empty rule", "rules:\n  -\n  - use: tuna\n", 2, 0, "rules[0]", "got nothing"},
    BAD_TOP("rules not a sequence", "rules", "{use: tuna}",
            "expected a sequence of rules, got a mapping"),
    {"unknown key in a rule", "rules:\n  - use: tuna\n    colour: red\n", 3, 5,
     "rules[0].colour", "unknown key 'colour'"},
    {"bad override in a rule", "rules:\n  - use: tuna\n    tuna:\n      radix: 1\n", 4, 14,
     "rules[0].tuna.radix", "integer >= 2"},
    BAD_TOP("default: auto", "default", "auto", "'auto' is not allowed"),
    BAD_TOP("default: unknown", "default", "fastest", "got 'fastest'"),
    BAD_TOP("version 2", "version", "2", "expected 1"),
    BAD_IN("nics_per_node 0", "topology", "nics_per_node", "0", "integer >= 1, got '0'"),
    BAD_IN("ranks_per_node 0", "topology", "ranks_per_node", "0",
           "expected an integer >= 1 or 'auto', got '0'"),
    BAD_IN("negative bandwidth", "model", "inter_bw", "-5e9", "expected a number > 0, got '-5e9'"),
    BAD_IN("zero bandwidth", "model", "intra_bw", "0", "number > 0"),
    BAD_IN("negative latency", "model", "latency", "-1e-6", "number >= 0"),
    BAD_TOP("bad size suffix", "max_temp_bytes", "12XB", "got '12XB'"),
    BAD_TOP("negative size", "max_temp_bytes", "-1", "size in bytes"),
    {"duplicate key", "log:\n  level: calls\n  level: off\n", 3, 3, "log.level",
     "duplicate key 'level' (first at line 2)"},
    {"duplicate top-level section", "tuna: {radix: 2}\nsabre: {}\ntuna: {radix: 4}\n", 3, 1,
     "tuna", "duplicate key"},
    BAD_RULE("buffers 'gpu'", "buffers", "gpu", "    use: fast\n",
             "expected one of any, host, device, got 'gpu'"),
    {"keys for a parameterless algorithm", "pairwise:\n  radix: 2\n", 2, 3, "pairwise.radix",
     "accepts no keys"},
    {"top level is a sequence", "- a\n- b\n", 1, 1, "", "expected a mapping of policy keys"},
    {"second document", "strict: true\n---\nstrict: false\n", 2, 1, "",
     "found a second one"},
    {"error in a later rule", "rules:\n  - use: tuna\n  - use: sabre\n  - use: nope\n", 4, 10,
     "rules[2].use", "algorithm name"},
};

static void test_bad_inputs(void)
{
    size_t n = sizeof bad_inputs / sizeof bad_inputs[0];
    TAP_OK(n >= 25, "at least 25 bad inputs (%zu)", n);
    for (size_t i = 0; i < n; i++) {
        const struct bad *b = &bad_inputs[i];
        skewshim_policy p;
        skewshim_error e;
        int rc = load(b->yaml, &p, &e);
        int ok = rc == -1 && e.line == b->line && (b->column == 0 || e.column == b->column) &&
                 strcmp(e.key, b->key) == 0 && strstr(e.msg, b->msg) != NULL &&
                 strcmp(e.file, "t.yaml") == 0;
        TAP_OK(ok, "bad input: %s", b->what);
        if (!ok)
            TAP_DIAG("rc %d got %s:%d:%d key '%s' msg '%s'; want %d:%d '%s' '%s'", rc, e.file,
                     e.line, e.column, e.key, e.msg, b->line, b->column, b->key, b->msg);
        TAP_OK(is_default_state(&p), "  ... leaves the built-in default state");
        skewshim_policy_free(&p);
    }
}

static void test_empty_and_comments(void)
{
    skewshim_policy p;
    skewshim_error e;
    TAP_OK(load("", &p, &e) == 0 && settings_are_default(&p) && p.nrules == 0 &&
               !strcmp(p.source, "t.yaml"),
           "empty file: all defaults, no rules");
    skewshim_policy_free(&p);
    TAP_OK(load("# nothing but a comment\n\n", &p, &e) == 0 && settings_are_default(&p) &&
               p.nrules == 0,
           "comments only: all defaults");
    skewshim_policy_free(&p);
    TAP_OK(load("log:\nrules:\ntuna: ~\n", &p, &e) == 0 && settings_are_default(&p),
           "null sections count as empty");
    skewshim_policy_free(&p);
    TAP_OK(load("max_temp_bytes: 3G\n", &p, &e) == 0 && p.params.max_temp_bytes == 3ull << 30,
           "G suffix is 1024^3");
    skewshim_policy_free(&p);
    TAP_OK(load("max_temp_bytes: 7 KB\n", &p, &e) == 0 && p.params.max_temp_bytes == 7168,
           "KB is 1024 and a space before the unit is allowed");
    skewshim_policy_free(&p);
}

static void test_files(void)
{
    skewshim_policy p;
    skewshim_error e;
    const char *missing = "/nonexistent/skewshim-policy.yaml";
    memset(&p, 0xAB, sizeof p);
    int rc = skewshim_policy_load_file(missing, &p, &e);
    TAP_OK(rc == -1 && e.line == 0 && e.column == 0 && !strcmp(e.file, missing) &&
               !e.key[0] && strstr(e.msg, strerror(ENOENT)),
           "missing file: line 0, strerror message (%s)", e.msg);
    TAP_OK(is_default_state(&p), "missing file leaves the default state");

    char path[] = "/tmp/test_policy_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        TAP_SKIP("mkstemp failed: %s", strerror(errno));
        return;
    }
    FILE *f = fdopen(fd, "w");
    fputs("log:\n  level: calls\nrules:\n  - use: tuna\n    tuna: {radix: 6}\n", f);
    fclose(f);
    rc = skewshim_policy_load_file(path, &p, &e);
    TAP_OK(rc == 0 && !strcmp(p.source, path) && p.log_level == SKEWSHIM_LOG_CALLS &&
               p.nrules == 1 && p.rules[0].params.tuna_radix == 6,
           "load_file reads a real file");
    skewshim_policy_free(&p);

    f = fopen(path, "w");
    fputs("log:\n  level: calls\n  sample: -3\n", f);
    fclose(f);
    rc = skewshim_policy_load_file(path, &p, &e);
    char buf[1024], want[1024];
    skewshim_error_format(&e, buf, sizeof buf);
    snprintf(want, sizeof want, "%s:3:11: log.sample: expected an integer >= 1, got '-3'", path);
    TAP_OK(rc == -1 && !strcmp(buf, want), "file error formats as file:line:col: key: msg (%s)",
           buf);
    TAP_OK(is_default_state(&p), "bad file leaves the default state");
    unlink(path);

    rc = skewshim_policy_load_file("/tmp", &p, &e);
    TAP_OK(rc == -1 && e.line == 0 && strstr(e.msg, strerror(EISDIR)),
           "a directory is unreadable (%s)", e.msg);
}

static void test_names(void)
{
    int ok = 1;
    for (int i = 0; i < SKEWSHIM_ALGO_COUNT; i++)
        ok &= skewshim_algo_from_name(skewshim_algo_name((skewshim_algo_id)i)) == i;
    TAP_OK(ok, "every algorithm name round-trips");
    TAP_OK(!strcmp(skewshim_algo_name(SKEWSHIM_ALGO_TUNA_HIER), "tuna_hier") &&
               !strcmp(skewshim_algo_name(SKEWSHIM_ALGO_NCCL_FANOUT), "nccl_fanout") &&
               !strcmp(skewshim_algo_name(SKEWSHIM_ALGO_AUTO), "auto"),
           "policy spellings");
    TAP_OK(skewshim_algo_from_name("TUNA") == -1 && skewshim_algo_from_name("") == -1 &&
               skewshim_algo_from_name(NULL) == -1,
           "unknown names give -1");
    TAP_OK(!strcmp(skewshim_algo_name(SKEWSHIM_ALGO_COUNT), "unknown") &&
               !strcmp(skewshim_algo_name((skewshim_algo_id)-1), "unknown"),
           "out-of-range ids have a name");

    skewshim_error e = {.file = "p.yaml", .line = 4, .column = 7, .key = "rules[2].use",
                        .msg = "expected x"};
    char buf[256];
    skewshim_error_format(&e, buf, sizeof buf);
    TAP_OK(!strcmp(buf, "p.yaml:4:7: rules[2].use: expected x"), "error format: %s", buf);
    skewshim_error z = {.file = "q.yaml", .msg = "cannot open: gone"};
    skewshim_error_format(&z, buf, sizeof buf);
    TAP_OK(!strcmp(buf, "q.yaml: cannot open: gone"), "error format without place: %s", buf);
    skewshim_error_format(&e, buf, 8);
    TAP_OK(strlen(buf) == 7, "error format truncates to the buffer");
}

/* The parameter table: one reader for files and skewshim_set_param, every
 * key in the reference, every spelling of a boolean the same. */
static void test_param_table(void)
{
    int named = 1;
    for (int i = 0; i < SKEWSHIM_NPARAMS; i++)
        named &= skewshim_param_index(skewshim_param_table[i].name) == i;
    TAP_OK(named, "every table entry found by its dotted name");
    TAP_OK(skewshim_param_index("fast.pipelines") == -1 && skewshim_param_index(NULL) == -1,
           "unknown names are refused");

    static const struct { const char *text; int want; } bools[] = {
        {"true", 1}, {"false", 0}, {"yes", 1}, {"no", 0}, {"on", 1}, {"off", 0},
        {"True", 1}, {"OFF", 0}, {"1", 1}, {"0", 0},
    };
    int i_pipe = skewshim_param_index("fast.pipeline");
    for (size_t k = 0; k < sizeof bools / sizeof bools[0]; k++) {
        char yaml[64];
        snprintf(yaml, sizeof yaml, "fast: {pipeline: %s}\n", bools[k].text);
        skewshim_policy p;
        skewshim_error e;
        skewshim_params q;
        skewshim_params_default(&q);
        q.fast_pipeline = -1;
        int rc = load(yaml, &p, &e);
        int rt = skewshim_param_parse(&skewshim_param_table[i_pipe], bools[k].text, &q);
        TAP_OK(rc == 0 && rt == 0 && p.params.fast_pipeline == bools[k].want &&
                   q.fast_pipeline == bools[k].want,
               "pipeline '%s': file and text both read %d", bools[k].text, bools[k].want);
        skewshim_policy_free(&p);
    }
    skewshim_params q;
    skewshim_params_default(&q);
    TAP_OK(skewshim_param_parse(&skewshim_param_table[i_pipe], "maybe", &q) != 0 &&
               skewshim_param_parse(&skewshim_param_table[skewshim_param_index("tuna.radix")],
                                    "1", &q) != 0 &&
               skewshim_param_parse(&skewshim_param_table[skewshim_param_index("tuna.radix")],
                                    "auto", &q) == 0 && q.tuna_radix == 0 &&
               skewshim_param_parse(&skewshim_param_table[skewshim_param_index("max_temp_bytes")],
                                    "2MiB", &q) == 0 && q.max_temp_bytes == 2u << 20 &&
               skewshim_param_parse(
                   &skewshim_param_table[skewshim_param_index("tuna_hier.variant")],
                   "staggered", &q) == 0 &&
               q.tuna_hier_variant == SKEWSHIM_TUNA_STAGGERED,
           "text values: refused out of range, auto, sizes with units, enums");

    /* doc/policy.md is the key reference: every table entry stands there. */
    const char *top = getenv("top_srcdir");
    char path[1024];
    snprintf(path, sizeof path, "%s/doc/policy.md", top ? top : ".");
    FILE *f = fopen(path, "r");
    static char doc[1 << 16];
    size_t n = f ? fread(doc, 1, sizeof doc - 1, f) : 0;
    if (f)
        fclose(f);
    doc[n] = '\0';
    for (int i = 0; i < SKEWSHIM_NPARAMS; i++) {
        const skewshim_param_desc *d = &skewshim_param_table[i];
        char want[96];
        /* model keys stand in the model section's own table */
        snprintf(want, sizeof want, "`%s`",
                 d->section && strcmp(d->section, "model") == 0 ? d->key : d->name);
        TAP_OK(n > 0 && strstr(doc, want) != NULL, "doc/policy.md lists %s", d->name);
    }
}

/* An agreed call of 16 B blocks at most on 6 ranks over 2 nodes, no skew. */
static skewshim_facts small_host_call(void)
{
    return (skewshim_facts){.comm_size = 6, .nodes = 2, .max_block_bytes = 16,
                            .avg_block_bytes = 8, .avg_nonempty_bytes = 8, .mtm = 1,
                            .send_mtm = 1, .recv_mtm = 1, .buffers = SKEWSHIM_BUF_HOST};
}

/* A rule whose algorithm cannot run on the communicator's nodes (the
 * caller's unrunnable mask; tuna_hier's bit stands for any) is passed
 * over, as if it did not match, in the per-call choice, the choice fixed
 * per communicator and the candidates; the default is never passed over. */
static void test_passed_over(void)
{
    const unsigned th = 1u << SKEWSHIM_ALGO_TUNA_HIER;
    skewshim_policy p;
    skewshim_error e;
    int rc = load("version: 1\n"
                  "default: tuna_hier\n"
                  "rules:\n"
                  "  - {comm_size: [4, inf], max_block_bytes: [0, 64], use: tuna_hier}\n"
                  "  - {comm_size: [4, inf], use: scattered}\n",
                  &p, &e);
    TAP_OK(rc == 0, "passed-over policy loads: %s", rc ? e.msg : "");
    if (rc)
        return;
    skewshim_facts f = small_host_call();
    skewshim_algo_id a = SKEWSHIM_ALGO_NATIVE;
    const skewshim_params *pp;
    int r = skewshim_policy_choose(&p, &f, &a, &pp);
    TAP_OK(r == 0 && a == SKEWSHIM_ALGO_TUNA_HIER, "even nodes: rule 0, tuna_hier (got %d)", r);
    f.unrunnable = th;
    r = skewshim_policy_choose(&p, &f, &a, &pp);
    TAP_OK(r == 1 && a == SKEWSHIM_ALGO_SCATTERED,
           "uneven nodes: rule 0 passed over, rule 1 scattered (got %d)", r);
    f.comm_size = 2;
    r = skewshim_policy_choose(&p, &f, &a, &pp);
    TAP_OK(r == -1 && a == SKEWSHIM_ALGO_TUNA_HIER,
           "no rule matches: the default, even where it cannot run (got %d)", r);
    int rule = -9;
    TAP_OK(skewshim_policy_fixed_choice(&p, CF(6, 2, 0, 0), &rule) == 0,
           "even nodes: the choice needs the agreement (rule 0 reads the block size)");
    TAP_OK(skewshim_policy_fixed_choice(&p, CF(6, 2, 0, th), &rule) == 1 && rule == 1,
           "uneven nodes: fixed to rule 1 without an agreement (got %d)", rule);
    TAP_OK(skewshim_policy_candidates(&p, CF(6, 2, 0, 0)) ==
               (th | 1u << SKEWSHIM_ALGO_SCATTERED) &&
               skewshim_policy_candidates(&p, CF(6, 2, 0, th)) == 1u << SKEWSHIM_ALGO_SCATTERED,
           "candidates without the rules passed over");
    TAP_OK(skewshim_policy_passed_over(&p, CF(6, 2, 0, th)) == th &&
               skewshim_policy_passed_over(&p, CF(6, 2, 0, 0)) == 0 &&
               skewshim_policy_passed_over(&p, CF(2, 1, 0, th)) == 0,
           "passed over: tuna_hier's rule where it could match and cannot run, nowhere else");
    skewshim_policy_free(&p);
    rc = load("version: 1\n"
              "rules:\n"
              "  - {comm_size: [4, inf], use: scattered}\n"
              "  - {comm_size: [4, inf], max_block_bytes: [0, 64], use: tuna_hier}\n",
              &p, &e);
    TAP_OK(rc == 0 && skewshim_policy_passed_over(&p, CF(6, 2, 0, th)) == 0,
           "a rule no call reaches (after one that takes every call) is not counted");
    if (rc == 0)
        skewshim_policy_free(&p);
    /* Passed over for the call's blocks (unpaid): only a rule that reads
     * agreed facts; one on the communicator alone stands for every call. */
    rc = load("version: 1\n"
              "rules:\n"
              "  - {comm_size: [4, inf], max_block_bytes: [0, 64], use: tuna_hier}\n"
              "  - {comm_size: [4, 5], use: tuna_hier}\n"
              "  - {comm_size: [4, inf], use: scattered}\n",
              &p, &e);
    TAP_OK(rc == 0, "unpaid policy loads: %s", rc ? e.msg : "");
    if (rc == 0) {
        f.comm_size = 6;
        f.unrunnable = 0;
        f.unpaid = th;
        r = skewshim_policy_choose(&p, &f, &a, &pp);
        TAP_OK(r == 2 && a == SKEWSHIM_ALGO_SCATTERED,
               "unpaid on these blocks: the fact rule passed over, scattered (got %d)", r);
        f.comm_size = 4;
        r = skewshim_policy_choose(&p, &f, &a, &pp);
        TAP_OK(r == 1 && a == SKEWSHIM_ALGO_TUNA_HIER,
               "unpaid: a rule on the size alone still runs it (got %d)", r);
        f.unpaid = 0;
        r = skewshim_policy_choose(&p, &f, &a, &pp);
        TAP_OK(r == 0, "paid: the fact rule (got %d)", r);
        f.unpaid = 1u << SKEWSHIM_ALGO_SABRE;
        r = skewshim_policy_choose(&p, &f, &a, &pp);
        TAP_OK(r == 0, "another algorithm's bit passes nothing over (got %d)", r);
        f.unpaid = 0;
        skewshim_policy_free(&p);
    }
    /* The built-in policy at 80 ranks in nodes of 32, 32 and 16: the small
     * blocks go to tuna_hier, which runs on nodes of unequal size. */
    if (skewshim_policy_load_builtin(&p, &e)) {
        TAP_OK(0, "built-in loads: %s", e.msg);
        return;
    }
    skewshim_facts b = {.comm_size = 80, .nodes = 3, .max_block_bytes = 32,
                        .avg_block_bytes = 16, .avg_nonempty_bytes = 16, .mtm = 1,
                        .send_mtm = 1, .recv_mtm = 1, .buffers = SKEWSHIM_BUF_HOST};
    r = skewshim_policy_choose(&p, &b, &a, &pp);
    TAP_OK(a == SKEWSHIM_ALGO_TUNA_HIER, "built-in, 80 ranks on uneven nodes, 16 B: %s (rule %d)",
           skewshim_algo_name(a), r);
    b.comm_size = 176;
    b.nodes = 6;
    r = skewshim_policy_choose(&p, &b, &a, &pp);
    TAP_OK(a == SKEWSHIM_ALGO_TUNA_HIER,
           "built-in, 176 ranks on uneven nodes, 16 B: %s (rule %d)", skewshim_algo_name(a), r);
    skewshim_policy_free(&p);
}

/* tuna_hier.pay_check false: the rule's author measured, so only "cannot
 * run" passes it over, not "does not pay off" (the communicator's or the
 * call's); a rule without it keeps both; the global value reaches every
 * rule; skewshim_set_param refuses the key (only rule matching reads it). */
static void test_pay_check(void)
{
    const unsigned th = 1u << SKEWSHIM_ALGO_TUNA_HIER;
    skewshim_policy p;
    skewshim_error e;
    int rc = load("version: 1\n"
                  "rules:\n"
                  "  - {comm_size: [4, 7], max_block_bytes: [0, 64], use: tuna_hier,\n"
                  "     tuna_hier: {pay_check: false}}\n"
                  "  - {comm_size: [8, inf], max_block_bytes: [0, 64], use: tuna_hier}\n"
                  "  - {comm_size: [4, inf], use: scattered}\n",
                  &p, &e);
    TAP_OK(rc == 0, "pay_check policy loads: %s", rc ? e.msg : "");
    if (rc)
        return;
    TAP_OK(p.rules[0].params.tuna_hier_pay_check == 0 && p.rules[1].params.tuna_hier_pay_check == 1,
           "pay_check: off in rule 0 only");
    skewshim_facts f = small_host_call();
    f.unrunnable = f.unpaid = th;
    skewshim_algo_id a = SKEWSHIM_ALGO_NATIVE;
    const skewshim_params *pp;
    int r = skewshim_policy_choose(&p, &f, &a, &pp);
    TAP_OK(r == 0 && a == SKEWSHIM_ALGO_TUNA_HIER,
           "does not pay off here or on these blocks: the unchecked rule runs (got %d)", r);
    f.comm_size = 8;
    r = skewshim_policy_choose(&p, &f, &a, &pp);
    TAP_OK(r == 2 && a == SKEWSHIM_ALGO_SCATTERED,
           "the checked rule is passed over, scattered (got %d)", r);
    f.comm_size = 6;
    f.cannot_run = th;
    r = skewshim_policy_choose(&p, &f, &a, &pp);
    TAP_OK(r == 2 && a == SKEWSHIM_ALGO_SCATTERED,
           "where tuna_hier cannot run the unchecked rule is passed over too (got %d)", r);
#define CF2(P, un, cr)                                                                     \
    (&(skewshim_comm_facts){.comm_size = (P), .nodes = 2, .unrunnable = (un), .cannot_run = (cr)})
    TAP_OK(skewshim_policy_passed_over(&p, CF2(6, th, 0)) == 0 &&
               skewshim_policy_passed_over(&p, CF2(6, th, th)) == th &&
               skewshim_policy_passed_over(&p, CF2(8, th, 0)) == th,
           "counted as passed over: the unchecked rule only where it cannot run");
    TAP_OK(skewshim_policy_candidates(&p, CF2(6, th, 0)) == (th | 1u << SKEWSHIM_ALGO_SCATTERED) &&
               skewshim_policy_candidates(&p, CF2(8, th, 0)) == 1u << SKEWSHIM_ALGO_SCATTERED,
           "candidates: tuna_hier from the unchecked rule only");
    int rule = -9;
    TAP_OK(skewshim_policy_fixed_choice(&p, CF2(6, th, 0), &rule) == 0 &&
               skewshim_policy_fixed_choice(&p, CF2(8, th, 0), &rule) == 1 && rule == 2,
           "fixed choice: agreed where the unchecked rule can match, rule 2 where not (got %d)",
           rule);
#undef CF2
    skewshim_policy_free(&p);
    rc = load("version: 1\n"
              "tuna_hier: {pay_check: off}\n"
              "rules:\n"
              "  - {max_block_bytes: [0, 64], use: tuna_hier}\n"
              "  - {use: scattered}\n",
              &p, &e);
    f.cannot_run = 0;
    TAP_OK(rc == 0 && skewshim_policy_choose(&p, &f, &a, &pp) == 0 && a == SKEWSHIM_ALGO_TUNA_HIER,
           "the global pay_check: off reaches a rule without its own section");
    if (rc == 0)
        skewshim_policy_free(&p);
    int i = skewshim_param_index("tuna_hier.pay_check");
    int others = 0;
    for (int k = 0; k < SKEWSHIM_NPARAMS; k++)
        others += k != i && skewshim_param_table[k].load_only;
    TAP_OK(i >= 0 && skewshim_param_table[i].load_only && others == 0,
           "tuna_hier.pay_check alone is read at load only (set_param refuses it)");
}

int main(void)
{
    test_defaults();
    test_builtin();
    test_every_key();
    test_matching();
    test_overrides();
    test_fixed_choice();
    test_repeats_horizon();
    test_builtin_lab_points();
    test_nodes_matcher();
    test_nonempty_matcher();
    test_nic_per_rank_matcher();
    test_passed_over();
    test_pay_check();
    test_bad_inputs();
    test_empty_and_comments();
    test_files();
    test_names();
    test_param_table();
    return TAP_DONE();
}
