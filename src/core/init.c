/* Setup after PMPI_Init* and teardown before PMPI_Finalize.  A policy that
 * does not load leaves the job running in pass-through (or aborts it when
 * strict): a typo in a YAML file must never change an application's
 * results, and must never go unnoticed either. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"
#include "core/internal.h"

skewshim_state skewshim_g = {
    .env_forced = -1,
    .tool_forced = -1,
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

static int env_true(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") && strcmp(v, "false") && strcmp(v, "no");
}

static void complain(const char *msg)
{
    if (skewshim_g.world_rank == 0)
        fprintf(stderr, "skewshim: %s\n", msg);
}

/* Load the policy: SKEWSHIM_CONFIG, else ./skewshim.yaml, else built in.
 * Returns 0, or -1 after printing one message (rank 0). */
static int load_policy(void)
{
    skewshim_error err;
    const char *path = getenv("SKEWSHIM_CONFIG");
    int rc;
    if (path && *path)
        rc = skewshim_policy_load_file(path, &skewshim_g.policy, &err);
    else if (access("skewshim.yaml", F_OK) == 0)
        rc = skewshim_policy_load_file("skewshim.yaml", &skewshim_g.policy, &err);
    else
        rc = skewshim_policy_load_builtin(&skewshim_g.policy, &err);
    if (rc) {
        char buf[1400], msg[1500];
        skewshim_error_format(&err, buf, sizeof buf);
        snprintf(msg, sizeof msg, "policy error: %s", buf);
        complain(msg);
        return -1;
    }
    return 0;
}

static void job_id(int collective)
{
    static const char *const vars[] = {"SKEWSHIM_JOBID", "SLURM_JOB_ID", "PBS_JOBID",
                                       "LSB_JOBID", "FLUX_JOB_ID", "JOB_ID", "COBALT_JOBID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) {
            snprintf(skewshim_g.jobid, sizeof skewshim_g.jobid, "%s", v);
            return;
        }
    }
    /* No batch system: one value chosen by rank 0 and agreed by all. */
    long long v[2] = {(long long)time(NULL), (long long)getpid()};
    if (collective)
        PMPI_Bcast(v, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    snprintf(skewshim_g.jobid, sizeof skewshim_g.jobid, "%lld-%lld", v[0], v[1]);
}

/* Logging is what users change most often between runs, so it can be
 * changed without editing the policy file. */
static void env_log_overrides(skewshim_policy *p)
{
    static const char *const levels[] = {"off", "summary", "calls", "matrix"};
    const char *v = getenv("SKEWSHIM_LOG_LEVEL");
    if (v && *v) {
        int found = 0;
        for (int i = 0; i < 4; i++)
            if (!strcmp(v, levels[i])) {
                p->log_level = i;
                found = 1;
            }
        if (!found)
            complain("SKEWSHIM_LOG_LEVEL: expected off, summary, calls or matrix; ignored");
    }
    v = getenv("SKEWSHIM_LOG_PATH");
    if (v && *v)
        snprintf(p->log_path, sizeof p->log_path, "%s", v);
    if (env_true("SKEWSHIM_LOG_STDERR"))
        p->log_stderr = 1;
}

static void fail_or_pass_through(void)
{
    if (skewshim_g.policy.strict || env_true("SKEWSHIM_STRICT")) {
        complain("strict mode: aborting the job");
        /* Rank 0 aborts first so its message is printed before the
         * launcher tears the job down; the others follow only in case it
         * can't, late enough that a loaded machine (2 s was not) never lets
         * them kill rank 0 before it has spoken. */
        if (skewshim_g.world_rank != 0)
            sleep(20);
        else
            /* The message sits in the pipe to the launcher's proxy; an
             * abort at once can tear the proxy down before it forwards it
             * (seen with MPICH's hydra on a loaded machine, 1 run in 5). */
            sleep(1);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    complain("running in pass-through: every MPI_Alltoallv goes to the MPI library");
    skewshim_g.disabled = 1;
    skewshim_g.disabled_reason = SKEWSHIM_REASON_DISABLED;
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes before anything else,
 * while MPI still works, whatever language called it.  This is how the shim
 * finalizes when no C MPI_Finalize reaches it: Open MPI's Fortran bindings
 * call PMPI_Finalize directly.  After the C path it finds nothing to do. */
static int self_delete(MPI_Comm comm, int kv, void *attr, void *extra)
{
    (void)comm;
    (void)kv;
    (void)attr;
    (void)extra;
    skewshim_finalize_before_mpi();
    return MPI_SUCCESS;
}

static void hook_finalize(void)
{
    int kv;
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &kv, NULL) == MPI_SUCCESS)
        PMPI_Comm_set_attr(MPI_COMM_SELF, kv, NULL);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static uint64_t hash_params(uint64_t h, const skewshim_params *p)
{
    h = fnv(h, &p->scattered_block_count, sizeof p->scattered_block_count);
    h = fnv(h, &p->tuna_radix, sizeof p->tuna_radix);
    h = fnv(h, &p->tuna_hier_radix, sizeof p->tuna_hier_radix);
    h = fnv(h, &p->tuna_hier_block_count, sizeof p->tuna_hier_block_count);
    h = fnv(h, &p->tuna_hier_variant, sizeof p->tuna_hier_variant);
    h = fnv(h, &p->tuna_hier_pay_check, sizeof p->tuna_hier_pay_check);
    h = fnv(h, &p->sabre_alpha, sizeof p->sabre_alpha);
    h = fnv(h, &p->sabre_mtm_threshold, sizeof p->sabre_mtm_threshold);
    h = fnv(h, &p->fast_pipeline, sizeof p->fast_pipeline);
    return fnv(h, &p->max_temp_bytes, sizeof p->max_temp_bytes);
}

static uint64_t hash_range(uint64_t h, const skewshim_range *r)
{
    h = fnv(h, &r->set, sizeof r->set);
    h = fnv(h, &r->lo, sizeof r->lo);
    return fnv(h, &r->hi, sizeof r->hi);
}

/* Everything of this process's settings that picks a path for a call: the
 * on/off switch, the forced algorithm, the log level and sampling (they
 * decide whether the agreement runs), the topology and the policy's rules
 * and parameters.  Field by field: struct padding is not data. */
static uint64_t settings_hash(void)
{
    const skewshim_state *g = &skewshim_g;
    const skewshim_policy *p = &g->policy;
    uint64_t h = 1469598103934665603ull;
    h = fnv(h, &g->disabled, sizeof g->disabled);
    h = fnv(h, &g->env_forced, sizeof g->env_forced);
    h = fnv(h, &p->log_level, sizeof p->log_level);
    h = fnv(h, &p->log_sample, sizeof p->log_sample);
    /* the summary at finalize is a reduction when either asks for it */
    int summary = p->log_stderr || env_true("SKEWSHIM_SUMMARY");
    h = fnv(h, &summary, sizeof summary);
    h = fnv(h, &p->ranks_per_node, sizeof p->ranks_per_node);
    h = fnv(h, &p->nics_per_node, sizeof p->nics_per_node);
    h = fnv(h, &p->fallback, sizeof p->fallback);
    h = hash_params(h, &p->params);
    h = fnv(h, &p->nrules, sizeof p->nrules);
    for (int i = 0; i < p->nrules; i++) {
        const skewshim_rule *r = &p->rules[i];
        h = hash_range(h, &r->comm_size);
        h = hash_range(h, &r->max_block_bytes);
        h = hash_range(h, &r->avg_block_bytes);
        h = hash_range(h, &r->avg_nonempty_bytes);
        h = hash_range(h, &r->mtm);
        h = hash_range(h, &r->send_mtm);
        h = hash_range(h, &r->recv_mtm);
        h = hash_range(h, &r->repeats);
        h = hash_range(h, &r->nodes);
        h = hash_range(h, &r->nic_per_rank);
        h = fnv(h, &r->buffers, sizeof r->buffers);
        h = fnv(h, &r->use, sizeof r->use);
        h = hash_params(h, &r->params);
    }
    return h;
}

/* Ranks whose settings differ (an environment variable or a policy file
 * that differs between hosts, a policy that failed to load on one rank)
 * would choose different paths for one call and hang.  Checked once, at
 * MPI_Init, where a collective over MPI_COMM_WORLD is allowed: if any rank
 * differs, every rank runs in pass-through. */
static void check_uniform(void)
{
    uint64_t h = settings_hash(), v[2] = {h, ~h}, m[2];
    if (PMPI_Allreduce(v, m, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return;
    if (m[0] == h && m[1] == ~h)
        return;
    complain("settings differ between ranks (SKEWSHIM_* environment or policy file); "
             "running in pass-through: every MPI_Alltoallv goes to the MPI library");
    /* Whether to reduce a summary at finalize may be what differs. */
    skewshim_g.no_summary = 1;
    if (!skewshim_g.disabled) {
        skewshim_g.disabled = 1;
        skewshim_g.disabled_reason = SKEWSHIM_REASON_DISABLED;
        skewshim_log_close();
    }
}

static int setup(int thread_level, int collective)
{
    skewshim_state *g = &skewshim_g;
    PMPI_Comm_rank(MPI_COMM_WORLD, &g->world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &g->world_size);
    g->thread_level = thread_level;
    g->lazy = !collective;
    skewshim_policy_init_default(&g->policy);
    job_id(collective);
    hook_finalize();
    if (env_true("SKEWSHIM_DISABLE")) {
        g->disabled = 1;
        g->disabled_reason = SKEWSHIM_REASON_DISABLED;
        if (collective)
            check_uniform();
        g->initialized = 1;
        return 0;
    }
    int bad = load_policy();
    const char *forced = getenv("SKEWSHIM_ALGORITHM");
    if (!bad && forced && *forced) {
        int id = skewshim_algo_from_name(forced);
        if (id < 0) {
            char msg[300];
            snprintf(msg, sizeof msg,
                     "SKEWSHIM_ALGORITHM: unknown algorithm '%.100s' (expected one of native, "
                     "scattered, pairwise, bruck2, padded_bruck, tuna, tuna_hier, sabre, fast, "
                     "nccl_fanout, auto)", forced);
            complain(msg);
            bad = 1;
        } else {
            g->env_forced = id == SKEWSHIM_ALGO_AUTO ? -1 : id;
        }
    }
    if (bad) {
        /* A file that loaded keeps its say on strictness. */
        int strict = g->policy.strict;
        skewshim_policy_free(&g->policy);
        skewshim_policy_init_default(&g->policy);
        g->policy.strict = strict;
        fail_or_pass_through();
    }
    if (skewshim_comm_setup() != MPI_SUCCESS || skewshim_agree_setup() != MPI_SUCCESS) {
        complain("could not create MPI attribute or operator; pass-through");
        g->disabled = 1;
        g->disabled_reason = SKEWSHIM_REASON_INTERNAL;
    }
    env_log_overrides(&g->policy);
    if (!g->disabled)
        skewshim_log_open(&g->policy, g->world_rank, g->jobid);
    if (collective)
        check_uniform();
    g->initialized = 1;
    return 0;
}

int skewshim_init_after_mpi(int thread_level)
{
    if (skewshim_g.initialized)
        return 0;
    return setup(thread_level, 1);
}

/* MPI was initialised without passing through this library (e.g. it was
 * loaded after MPI_Init): set up with no collective, since the first call
 * may be on any communicator. */
void skewshim_init_lazy(void)
{
    static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&once);
    if (!skewshim_g.initialized) {
        int provided = MPI_THREAD_SINGLE;
        PMPI_Query_thread(&provided);
        setup(provided, 0);
    }
    pthread_mutex_unlock(&once);
}

void skewshim_finalize_before_mpi(void)
{
    skewshim_state *g = &skewshim_g;
    if (!g->initialized || g->finalized)
        return;
    /* Set up lazily, a rank cannot know whether every other rank ever set
     * up (some may never have called MPI_Alltoallv), so a reduction over
     * MPI_COMM_WORLD could wait forever: the summary is then rank 0's own.
     * Ring flushes stay collective: every member of a communicator with
     * state has state. */
    MPI_Comm world = g->lazy ? MPI_COMM_SELF : MPI_COMM_WORLD;
    int summarize = (!g->lazy || g->world_rank == 0) && !g->no_summary;
    if (!g->disabled) {
        skewshim_comm_flush_all();
        if (summarize)
            skewshim_log_summary(&g->totals, world, g->policy.log_stderr);
        skewshim_comm_free_all();
        skewshim_log_close();
        if (g->agree_op != MPI_OP_NULL && g->agree_op != 0)
            PMPI_Op_free(&g->agree_op);
    } else if (summarize && (g->policy.log_stderr || env_true("SKEWSHIM_SUMMARY"))) {
        skewshim_log_summary(&g->totals, world, 1);
    }
    skewshim_policy_free(&g->policy);
    g->finalized = 1;
}
