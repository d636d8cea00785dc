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
         * launcher tears the job down; the others follow in case it can't. */
        if (skewshim_g.world_rank != 0)
            sleep(2);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    complain("running in pass-through: every MPI_Alltoallv goes to the MPI library");
    skewshim_g.disabled = 1;
    skewshim_g.disabled_reason = SKEWSHIM_REASON_DISABLED;
}

static int setup(int thread_level, int collective)
{
    skewshim_state *g = &skewshim_g;
    PMPI_Comm_rank(MPI_COMM_WORLD, &g->world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &g->world_size);
    g->thread_level = thread_level;
    skewshim_policy_init_default(&g->policy);
    job_id(collective);
    if (env_true("SKEWSHIM_DISABLE")) {
        g->disabled = 1;
        g->disabled_reason = SKEWSHIM_REASON_DISABLED;
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
    if (!g->disabled) {
        skewshim_comm_flush_all();
        skewshim_log_summary(&g->totals, MPI_COMM_WORLD, g->policy.log_stderr);
        skewshim_comm_free_all();
        skewshim_log_close();
        if (g->agree_op != MPI_OP_NULL && g->agree_op != 0)
            PMPI_Op_free(&g->agree_op);
    } else if (g->policy.log_stderr || env_true("SKEWSHIM_SUMMARY")) {
        skewshim_log_summary(&g->totals, MPI_COMM_WORLD, 1);
    }
    skewshim_policy_free(&g->policy);
    g->finalized = 1;
}
