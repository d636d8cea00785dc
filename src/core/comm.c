/* Per-communicator state on an MPI attribute.  Created on the first
 * MPI_Alltoallv of a communicator (collective: every member reaches that
 * call), freed by the attribute's delete callback when the application frees
 * the communicator, and by skewshim_comm_free_all at finalize. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "core/internal.h"
#include "device.h"
#include "labfold.h"
#include "schedule/plan_cache.h"

static int keyval = MPI_KEYVAL_INVALID;
static skewshim_comm *live_head;
static int live_count;
static int finalizing;

static void unlink_state(skewshim_comm *cs)
{
    pthread_mutex_lock(&skewshim_g.lock);
    if (cs->prev)
        cs->prev->next = cs->next;
    else
        live_head = cs->next;
    if (cs->next)
        cs->next->prev = cs->prev;
    live_count--;
    pthread_mutex_unlock(&skewshim_g.lock);
}

static void destroy(skewshim_comm *cs)
{
    if (!finalizing)
        skewshim_ring_flush(&cs->ring, cs->pcomm, cs->rank);
    skewshim_ring_free(&cs->ring);
    skewshim_device_comm_free(&cs->device, cs->rank);
    skewshim_plan_cache_free(cs->plan_cache);
    /* At finalize the private communicators go with PMPI_Finalize: freeing
     * them here, in an order that differs across ranks, is not worth the
     * risk of a collective mismatch. */
    if (!finalizing && cs->pcomm != MPI_COMM_NULL)
        PMPI_Comm_free(&cs->pcomm);
    skewshim_topo_free(&cs->topo);
    free(cs->shm_keys);
    free(cs->world_of);
    free(cs->scratch);
    free(cs->prev_sr);
    skewshim_lab_tmp_free(cs->tmp);
    free(cs->pack);
    free(cs->stage);
    unlink_state(cs);
    free(cs);
}

static int delete_fn(MPI_Comm comm, int kv, void *attr, void *extra)
{
    (void)comm;
    (void)kv;
    (void)extra;
    destroy(attr);
    return MPI_SUCCESS;
}

int skewshim_comm_setup(void)
{
    return PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &keyval, NULL);
}

int skewshim_comm_live(void)
{
    pthread_mutex_lock(&skewshim_g.lock);
    int n = live_count;
    pthread_mutex_unlock(&skewshim_g.lock);
    return n;
}

/* Node of every rank from the shared-memory split (the key of a rank is
 * the rank, in comm, of its node's first member) and every rank's world
 * rank, for emulated nodes: one allgather of both into all[2P]. */
static int shared_keys(skewshim_comm *cs, int *all)
{
    MPI_Comm shm;
    int mine[2] = {cs->rank, skewshim_g.world_rank};
    if (PMPI_Comm_split_type(cs->pcomm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm))
        return -1;
    PMPI_Bcast(&mine[0], 1, MPI_INT, 0, shm);
    PMPI_Comm_free(&shm);
    int rc = PMPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, cs->pcomm);
    for (int i = 0; i < cs->size; i++) {
        cs->shm_keys[i] = all[2 * i];
        cs->world_of[i] = all[2 * i + 1];
    }
    return rc;
}

/* Without an agreement no rank knows where the others' buffers live.  Only
 * the MPI library itself runs any mix of host and device buffers, so a
 * choice fixed in advance may skip the agreement only when it is native,
 * or when this build has no device path at all. */
static int fixed_is_safe(int rule)
{
    const skewshim_policy *p = &skewshim_g.policy;
    skewshim_algo_id a = rule >= 0 ? p->rules[rule].use : p->fallback;
#ifdef SKEWSHIM_HAVE_CUDA
    return a == SKEWSHIM_ALGO_NATIVE;
#else
    (void)a;
    return 1;
#endif
}

/* Decided once per communicator from rank-invariant facts only (the
 * policy, the size, the nodes it spans, and device_possible, agreed):
 * every member takes the same path without talking (doc/decisions.md).
 * Again whenever the nodes change (topology.ranks_per_node set at run
 * time), since a rule can match on them, or the NICs a node (whether
 * tuna_hier pays off). */
static void fix_choice(skewshim_comm *cs)
{
    cs->fixed_rule = -2;
    cs->fixed_native = 0;
    cs->topo_nics = skewshim_nics_per_node();
    cs->unrunnable = skewshim_algos_unrunnable(&cs->topo, cs->size, cs->topo_nics,
                                               SKEWSHIM_HIER_LINE_FLIGHT);
    cs->unrunnable_few = skewshim_algos_unrunnable(&cs->topo, cs->size, cs->topo_nics,
                                                   SKEWSHIM_HIER_FEW_FLIGHT);
    cs->cannot_run = skewshim_algos_cannot_run(&cs->topo, cs->size);
    const skewshim_comm_facts cf = {
        .comm_size = cs->size,
        .nodes = cs->topo.nnodes,
        .nic_per_rank = skewshim_topo_nic_per_rank(&cs->topo, cs->topo_nics),
        .device_possible = cs->device_possible,
        .unrunnable = cs->unrunnable,
        .cannot_run = cs->cannot_run,
        .unrunnable_few = cs->unrunnable_few,
    };
    unsigned passed = skewshim_policy_passed_over(&skewshim_g.policy, &cf);
    if (passed && !cs->passed_counted) {
        /* Once per communicator, by its rank 0: the summary sums ranks. */
        cs->passed_counted = 1;
        pthread_mutex_lock(&skewshim_g.lock);
        for (int a = 0; a < SKEWSHIM_ALGO_COUNT; a++)
            if (passed & 1u << a)
                skewshim_g.totals.passed_over[a] += (uint64_t)(cs->rank == 0);
        pthread_mutex_unlock(&skewshim_g.lock);
    }
    unsigned cand = skewshim_policy_candidates(&skewshim_g.policy, &cf);
    unsigned mat = 1u << SKEWSHIM_ALGO_SABRE | 1u << SKEWSHIM_ALGO_FAST;
    cs->matrix_first = (cand & mat) && !(cand & ~(mat | 1u << SKEWSHIM_ALGO_NATIVE));
    cs->matrix_possible = (cand & mat) != 0;
    int rule;
    if (skewshim_policy_fixed_choice(&skewshim_g.policy, &cf, &rule) &&
        fixed_is_safe(rule)) {
        cs->fixed_rule = rule;
        cs->fixed_native = (rule >= 0 ? skewshim_g.policy.rules[rule].use
                                      : skewshim_g.policy.fallback) == SKEWSHIM_ALGO_NATIVE;
    }
}

int skewshim_comm_topo_update(skewshim_comm *cs)
{
    int q = skewshim_ranks_per_node();
    if (cs->topo.nranks == cs->size && cs->topo_q == q) {
        if (cs->topo_nics != skewshim_nics_per_node())
            fix_choice(cs);     /* a rule's algorithm may pay off now, or not */
        return 0;
    }
    skewshim_topo_free(&cs->topo);
    cs->topo_q = q;
    int rc;
    if (q <= 0) {
        rc = skewshim_topo_from_keys(&cs->topo, cs->size, cs->shm_keys);
    } else {
        /* Emulated nodes are q consecutive ranks of MPI_COMM_WORLD, like
         * real nodes under block placement; a communicator's ranks keep the
         * node of their world rank (an even/odd split of 4 ranks spans 2
         * nodes). */
        int *key = malloc((size_t)(cs->size > 0 ? cs->size : 1) * sizeof *key);
        if (!key) {
            cs->topo_q = -1;
            return -1;
        }
        for (int i = 0; i < cs->size; i++)
            key[i] = cs->world_of[i] / q;
        rc = skewshim_topo_from_keys(&cs->topo, cs->size, key);
        free(key);
    }
    if (rc)
        cs->topo_q = -1;   /* so the next call tries again */
    else
        fix_choice(cs);
    return rc;
}

int skewshim_scratch_grow(void **buf, uint64_t *cap, uint64_t need)
{
    if (need <= *cap)
        return MPI_SUCCESS;
    void *p = need <= SIZE_MAX ? realloc(*buf, (size_t)need) : NULL;
    if (!p)
        return MPI_ERR_NO_MEM;
    *buf = p;
    *cap = need;
    return MPI_SUCCESS;
}

static void link_state(skewshim_comm *cs)
{
    pthread_mutex_lock(&skewshim_g.lock);
    cs->next = live_head;
    if (live_head)
        live_head->prev = cs;
    live_head = cs;
    live_count++;
    pthread_mutex_unlock(&skewshim_g.lock);
}

static void free_unlinked(skewshim_comm *cs)
{
    if (!cs)
        return;
    free(cs->scratch);
    free(cs->shm_keys);
    free(cs->world_of);
    skewshim_topo_free(&cs->topo);
    free(cs);
}

/* Every step is collective over comm, and whether the state exists decides
 * the path of the call: so a rank that cannot allocate says so in the
 * first collective, a rank whose later steps failed says so in the last,
 * and all members give up together (the call then goes to MPI on all).
 * A first call pays these collectives once; lab/setup_cost.c times the same
 * ones in the same order for doc/performance.md, so it follows this. */
static skewshim_comm *create(MPI_Comm comm)
{
    int rank, size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    size_t P = (size_t)(size > 0 ? size : 1);
    skewshim_comm *cs = calloc(1, sizeof *cs);
    int *all = malloc(2 * P * sizeof *all);
    if (cs) {
        cs->scratch = malloc(4 * P * sizeof(uint64_t));
        cs->shm_keys = malloc(P * sizeof(int));
        cs->world_of = malloc(P * sizeof(int));
    }
    int failed = !cs || !all || !cs->scratch || !cs->shm_keys || !cs->world_of;
    MPI_Comm pcomm = MPI_COMM_NULL;
    if (PMPI_Comm_dup(comm, &pcomm) != MPI_SUCCESS) {
        free(all);
        free_unlinked(cs);
        return NULL;
    }
    /* The dup would keep the handler the user's communicator has now; the
     * shim reports errors through the user's handler at call time instead
     * (src/core/call.c), so a later MPI_Comm_set_errhandler is honoured. */
    PMPI_Comm_set_errhandler(pcomm, MPI_ERRORS_RETURN);
    /* A job-wide id, the same on every member: the world rank of the
     * communicator's rank 0 and a sequence number agreed by its members.
     * Disjoint communicators created at once (one MPI_Comm_split) differ by
     * their leader. */
    pthread_mutex_lock(&skewshim_g.lock);
    int v[4] = {skewshim_g.next_comm_id, rank == 0 ? skewshim_g.world_rank : 0, failed,
                skewshim_device_in_use()};
    pthread_mutex_unlock(&skewshim_g.lock);
    int agreed[4];
    PMPI_Allreduce(v, agreed, 4, MPI_INT, MPI_MAX, pcomm);
    if (agreed[2]) {
        PMPI_Comm_free(&pcomm);
        free(all);
        free_unlinked(cs);
        return NULL;
    }
    cs->user = comm;
    cs->pcomm = pcomm;
    cs->rank = rank;
    cs->size = size;
    cs->world_rank = skewshim_g.world_rank;
    cs->topo_q = -1;
    cs->id = (int)(((unsigned)agreed[1] << 16 | ((unsigned)agreed[0] & 0xffffu)) & 0x7fffffffu);
    cs->device_possible = agreed[3];
    pthread_mutex_lock(&skewshim_g.lock);
    if (skewshim_g.next_comm_id <= agreed[0])
        skewshim_g.next_comm_id = agreed[0] + 1;
    pthread_mutex_unlock(&skewshim_g.lock);

    int ok = shared_keys(cs, all) == MPI_SUCCESS && skewshim_comm_topo_update(cs) == 0;
    free(all);
    link_state(cs);
    int attached = ok && PMPI_Comm_set_attr(comm, keyval, cs) == MPI_SUCCESS;
    PMPI_Allreduce(MPI_IN_PLACE, &attached, 1, MPI_INT, MPI_MIN, pcomm);
    if (attached)
        return cs;
    /* Deleting the attribute, where it was set, runs delete_fn. */
    int flag = 0;
    void *attr;
    if (PMPI_Comm_get_attr(comm, keyval, &attr, &flag) == MPI_SUCCESS && flag)
        PMPI_Comm_delete_attr(comm, keyval);
    else
        destroy(cs);
    return NULL;
}

skewshim_comm *skewshim_comm_peek(MPI_Comm comm)
{
    void *attr;
    int flag = 0;
    if (keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL ||
        PMPI_Comm_get_attr(comm, keyval, &attr, &flag) != MPI_SUCCESS || !flag)
        return NULL;
    return attr;
}

skewshim_comm *skewshim_comm_get(MPI_Comm comm)
{
    void *attr;
    int flag = 0;
    if (keyval == MPI_KEYVAL_INVALID)
        return NULL;
    if (PMPI_Comm_get_attr(comm, keyval, &attr, &flag) == MPI_SUCCESS && flag)
        return attr;
    return create(comm);
}

/* Ring flushes are started on every live communicator at once and completed
 * together: different ranks belong to different communicators, so a blocking
 * flush per communicator, in list order, could wait on a rank that is
 * flushing another one. */
void skewshim_comm_flush_all(void)
{
    int n = skewshim_comm_live();
    if (n == 0)
        return;
    MPI_Request *req = malloc(SKEWSHIM_RING_NREQ * (size_t)n * sizeof *req);
    MPI_Status *st = malloc(SKEWSHIM_RING_NREQ * (size_t)n * sizeof *st);
    if (!req || !st) {
        free(req);
        free(st);
        return;
    }
    int k = 0;
    for (skewshim_comm *cs = live_head; cs && k < n; cs = cs->next, k++)
        skewshim_ring_flush_start(&cs->ring, cs->pcomm, cs->rank, &req[SKEWSHIM_RING_NREQ * k]);
    PMPI_Waitall(SKEWSHIM_RING_NREQ * k, req, st);
    k = 0;
    for (skewshim_comm *cs = live_head; cs && k < n; cs = cs->next, k++)
        skewshim_ring_flush_finish(&cs->ring, cs->rank);
    free(req);
    free(st);
}

void skewshim_comm_free_all(void)
{
    finalizing = 1;
    while (live_head) {
        skewshim_comm *cs = live_head;
        /* Deleting the attribute runs delete_fn, which destroys the state. */
        if (PMPI_Comm_delete_attr(cs->user, keyval) != MPI_SUCCESS && live_head == cs)
            destroy(cs);
    }
    if (keyval != MPI_KEYVAL_INVALID)
        PMPI_Comm_free_keyval(&keyval);
}
