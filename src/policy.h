/* The per-job policy: YAML -> validated struct -> (algorithm, parameters).
 * Pure C (libyaml only), no MPI: loading, validation and rule matching are
 * unit-tested without mpiexec.
 */
#ifndef SKEWSHIM_POLICY_H
#define SKEWSHIM_POLICY_H

#include <stddef.h>
#include <stdint.h>
#include "vocab.h"

/* Parameters of every algorithm.  A rule carries a full copy: the global
 * values with that rule's overrides applied. */
typedef struct skewshim_params {
    int scattered_block_count;    /* >= 1 */
    int tuna_radix;               /* >= 2, or 0 = auto */
    int tuna_hier_radix;          /* >= 2, or 0 = auto */
    int tuna_hier_block_count;    /* >= 1 */
    int tuna_hier_variant;        /* SKEWSHIM_TUNA_* */
    /* 0: a rule choosing tuna_hier is passed over only where it cannot
     * run, never on the checks of whether it pays off (the line measured
     * on the lab's nodes: the rule's author measured their own) */
    int tuna_hier_pay_check;
    double sabre_alpha;           /* >= 1 */
    double sabre_mtm_threshold;   /* >= 1 */
    int fast_pipeline;            /* 0 / 1 */
    uint64_t max_temp_bytes;      /* temp memory cap per rank per call */
    /* two-tier model used for predicted time / T_LB in the log */
    double model_intra_bw;        /* bytes/s, B1 */
    double model_inter_bw;        /* bytes/s per NIC, B2 */
    double model_latency;         /* seconds per message (one hop) */
    double model_overhead;        /* seconds of a rank's time per message it posts */
    double model_plan_entry;      /* seconds of planning per matrix entry, uncached */
} skewshim_params;

/* Inclusive range; hi < 0 means unbounded above.  An unset range matches. */
typedef struct skewshim_range {
    int set;
    double lo, hi;
} skewshim_range;

typedef struct skewshim_rule {
    /* mtm is the larger of send_mtm and recv_mtm: either skew.  The two
     * apart tell hot receivers under balanced senders (MoE routing, where
     * FAST wins) from skew on both sides (Zipf, where it loses). */
    skewshim_range comm_size, max_block_bytes, avg_block_bytes, mtm, send_mtm, recv_mtm;
    /* Bytes per block that carries any: with avg_block_bytes it tells a
     * dense exchange of small blocks from a sparse one of larger blocks,
     * whose empty blocks cost the MPI library no message. */
    skewshim_range avg_nonempty_bytes;
    /* Agreed calls in a row before this one that had its size matrix: a
     * schedule that gathers the matrix pays that once per matrix, and only
     * a job that repeats it gets the rest of the gain. */
    skewshim_range repeats;
    /* Nodes the communicator spans: a fact of the communicator, known to
     * every rank alike, so a rule can hold for jobs across nodes only
     * without an agreement per call. */
    skewshim_range nodes;
    /* Whether every rank has a NIC of its own (topology.nics_per_node at
     * least the largest node's ranks), [1, 1] or [0, 0] from a boolean: a
     * fact of the communicator like nodes.  Where no NIC queues a node's
     * messages, what tuna_hier saves is the cost of the messages it does
     * not send, so its line on block sizes is not the one-NIC-a-node
     * line (doc/policy.md). */
    skewshim_range nic_per_rank;
    int buffers;                  /* SKEWSHIM_BUF_* */
    skewshim_algo_id use;         /* never AUTO */
    skewshim_params params;
    unsigned overrides;           /* bit i: params field i set by the rule */
    int line;                     /* where it stands in the file, for the log */
} skewshim_rule;

typedef struct skewshim_policy {
    int version;
    int strict;
    char source[512];             /* file name, or "<built-in default>" */
    /* log */
    char log_path[512];           /* pattern: %j job id, %r rank, %p pid */
    int log_level;                /* SKEWSHIM_LOG_* */
    int log_sample;               /* every Nth call, >= 1 */
    int log_stderr;               /* summary to stderr at finalize */
    /* topology */
    int ranks_per_node;           /* 0 = auto (shared-memory split) */
    int nics_per_node;            /* >= 1 */
    /* longest run of calls that reuse an agreed outcome (policy/reuse.h);
     * 0: every call that needs the agreement runs it */
    int reuse_agreement;
    /* algorithm used when no rule matches */
    skewshim_algo_id fallback;
    skewshim_params params;
    skewshim_rule *rules;
    int nrules;
} skewshim_policy;

/* What a rule can match on; identical on every rank (agreed values). */
typedef struct skewshim_facts {
    int comm_size;
    double max_block_bytes;
    double avg_block_bytes;       /* total bytes / P^2 */
    double avg_nonempty_bytes;    /* total bytes / blocks of one byte or more (0: none) */
    double mtm;                   /* SABRE's MTM over inter-node volumes */
    double send_mtm, recv_mtm;    /* its two sides; mtm is the larger */
    double repeats;               /* agreed calls in a row before with this matrix */
    int buffers;                  /* SKEWSHIM_BUF_HOST or _DEVICE */
    int nodes;                    /* nodes the communicator spans */
    int nic_per_rank;             /* 1: every rank has a NIC of its own */
    /* Algorithms whose rules are passed over on this communicator's nodes
     * (bit per skewshim_algo_id; the algorithm table's checks of the nodes:
     * it cannot run there, or does not pay off there): a rule that chooses
     * one is passed over, as if it did not match. */
    unsigned unrunnable;
    /* Of those, the ones that cannot run there at all: the only ones for
     * which a rule that skips the pay checks (tuna_hier.pay_check: false)
     * is passed over. */
    unsigned cannot_run;
    /* Algorithms that do not pay off on this call's blocks (agreed: the
     * table's check with the busiest rank's messages): a rule that chooses
     * one and matches on agreed facts is passed over.  A rule on the
     * communicator alone is the user's word for every call, whatever the
     * blocks, and is settled without an agreement where it decides.  A
     * rule that skips the pay checks is not passed over for it either. */
    unsigned unpaid;
    /* unrunnable and unpaid once more for a rule that runs tuna_hier with
     * fewer requests in flight than its line was drawn with
     * (SKEWSHIM_HIER_LINE_FLIGHT): such a rule is passed over for the bits
     * of either mask. */
    unsigned unrunnable_few, unpaid_few;
} skewshim_facts;

/* Error with the place it comes from.  line/column are 1-based, 0 when
 * unknown (an unreadable file). */
typedef struct skewshim_error {
    char file[512];
    int line, column;
    char key[128];                /* dotted path, e.g. "rules[2].use" */
    char msg[384];                /* what was expected */
} skewshim_error;

/* "file:line:col: key: msg" in buf. */
void skewshim_error_format(const skewshim_error *e, char *buf, size_t len);

void skewshim_params_default(skewshim_params *p);
void skewshim_policy_init_default(skewshim_policy *p);  /* no rules */
/* Load and validate.  Return 0, or -1 with *err filled (and *out left in
 * the built-in default state, never half-loaded). */
int skewshim_policy_load_file(const char *path, skewshim_policy *out, skewshim_error *err);
int skewshim_policy_load_string(const char *yaml, size_t len, const char *name,
                                skewshim_policy *out, skewshim_error *err);
/* The built-in default, compiled from conf/default.yaml. */
int skewshim_policy_load_builtin(skewshim_policy *out, skewshim_error *err);
extern const char skewshim_default_yaml[];
void skewshim_policy_free(skewshim_policy *p);

/* First matching rule wins.  Returns the rule index, or -1 when none matched
 * (then *algo = policy->fallback and *params = &policy->params). */
int skewshim_policy_choose(const skewshim_policy *p, const skewshim_facts *f,
                           skewshim_algo_id *algo, const skewshim_params **params);
/* What a communicator alone tells the rules, known to every rank alike
 * before any call: its size, the nodes it spans, whether each rank has a
 * NIC of its own, whether any buffer can live on a device (agreed), and
 * the algorithms the table rules out there (unrunnable: a rule choosing
 * one never matches; cannot_run: the same for a rule that skips the pay
 * checks, tuna_hier.pay_check false). */
typedef struct skewshim_comm_facts {
    int comm_size;
    int nodes;
    int nic_per_rank;
    int device_possible;
    unsigned unrunnable;
    unsigned cannot_run;          /* of those, the ones that cannot run at all */
    unsigned unrunnable_few;      /* as in skewshim_facts */
} skewshim_comm_facts;

/* Whether every rule that can match a call on such a communicator leads
 * to the same algorithm with the same parameters (the default included
 * when a call can get past them all), so that choosing needs nothing
 * agreed.  Rules for device buffers count only when device_possible.
 * Returns 1 with *rule the rule that decides (-1: the default), else 0.
 * Rank-invariant. */
int skewshim_policy_fixed_choice(const skewshim_policy *p, const skewshim_comm_facts *cf,
                                 int *rule);
/* The algorithms a call on such a communicator can get from the rules and
 * the default (bit id set for each).  Rank-invariant: lets the caller
 * see, before any exchange, whether every candidate but native needs the
 * whole size matrix (then the matrix exchange is the agreement). */
unsigned skewshim_policy_candidates(const skewshim_policy *p, const skewshim_comm_facts *cf);
/* The algorithms in cf->unrunnable (cf->cannot_run for a rule that skips
 * the pay checks) that rules a call on such a communicator could reach
 * choose (bit id set for each): the rules passed over there. */
unsigned skewshim_policy_passed_over(const skewshim_policy *p, const skewshim_comm_facts *cf);
/* Whether a rule matches on facts of the call (block sizes, skew) that the
 * ranks must agree on, rather than on the communicator alone. */
int skewshim_rule_uses_facts(const skewshim_rule *r);
/* Whether the repeat count can change the choice made on f (`rule`, -1
 * the default, is what skewshim_policy_choose returned): some rule up to
 * it matches on repeats and would match f at some count.  *horizon (if
 * not NULL): how many calls after the one of f the count, growing by one a
 * call while the matrix repeats, first reaches a bound of such a rule's
 * range (where it starts or stops matching), 0 if it never does.  Calls
 * that reuse the choice without agreeing stop short of it, so that the
 * agreed call there sees the count the rule asks for. */
int skewshim_policy_repeats_decide(const skewshim_policy *p, const skewshim_facts *f, int rule,
                                   uint32_t *horizon);
int skewshim_params_equal(const skewshim_params *a, const skewshim_params *b);

#endif
