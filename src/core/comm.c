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
    skewshim_device_comm_free(cs);
    skewshim_plan_cache_free(cs->plan_cache);
    /* At finalize the private communicators go with PMPI_Finalize: freeing
     * them here, in an order that differs across ranks, is not worth the
     * risk of a collective mismatch. */
    if (!finalizing && cs->pcomm != MPI_COMM_NULL)
        PMPI_Comm_free(&cs->pcomm);
    skewshim_topo_free(&cs->topo);
    free(cs->shm_keys);
    free(cs->scratch);
    free(cs->tmp);
    free(cs->pack);
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

/* Node of every rank from the shared-memory split: the key of a rank is the
 * rank (in comm) of its node's first member. */
static int shared_keys(skewshim_comm *cs)
{
    MPI_Comm shm;
    int leader = cs->rank;
    if (PMPI_Comm_split_type(cs->pcomm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm))
        return -1;
    PMPI_Bcast(&leader, 1, MPI_INT, 0, shm);
    PMPI_Comm_free(&shm);
    return PMPI_Allgather(&leader, 1, MPI_INT, cs->shm_keys, 1, MPI_INT, cs->pcomm);
}

int skewshim_comm_topo_update(skewshim_comm *cs)
{
    int q = skewshim_ranks_per_node();
    if (cs->topo.nranks == cs->size && cs->topo_q == q)
        return 0;
    skewshim_topo_free(&cs->topo);
    cs->topo_q = q;
    if (q > 0)
        return skewshim_topo_blocks(&cs->topo, cs->size, q);
    return skewshim_topo_from_keys(&cs->topo, cs->size, cs->shm_keys);
}

static skewshim_comm *create(MPI_Comm comm)
{
    skewshim_comm *cs = calloc(1, sizeof *cs);
    if (!cs)
        return NULL;
    cs->user = comm;
    cs->pcomm = MPI_COMM_NULL;
    PMPI_Comm_rank(comm, &cs->rank);
    PMPI_Comm_size(comm, &cs->size);
    cs->world_rank = skewshim_g.world_rank;
    cs->topo_q = -1;
    if (PMPI_Comm_dup(comm, &cs->pcomm) != MPI_SUCCESS) {
        free(cs);
        return NULL;
    }
    /* A job-wide id, the same on every member: the world rank of the
     * communicator's rank 0 and a sequence number agreed by its members.
     * Disjoint communicators created at once (one MPI_Comm_split) differ by
     * their leader. */
    pthread_mutex_lock(&skewshim_g.lock);
    int v[2] = {skewshim_g.next_comm_id, cs->rank == 0 ? skewshim_g.world_rank : 0};
    pthread_mutex_unlock(&skewshim_g.lock);
    int agreed[2];
    PMPI_Allreduce(v, agreed, 2, MPI_INT, MPI_MAX, cs->pcomm);
    cs->id = (int)(((unsigned)agreed[1] << 16 | ((unsigned)agreed[0] & 0xffffu)) & 0x7fffffffu);
    pthread_mutex_lock(&skewshim_g.lock);
    if (skewshim_g.next_comm_id <= agreed[0])
        skewshim_g.next_comm_id = agreed[0] + 1;
    pthread_mutex_unlock(&skewshim_g.lock);

    cs->scratch = malloc(4 * (size_t)cs->size * sizeof(uint64_t));
    cs->shm_keys = malloc((size_t)cs->size * sizeof(int));
    if (!cs->scratch || !cs->shm_keys || shared_keys(cs) || skewshim_comm_topo_update(cs)) {
        PMPI_Comm_free(&cs->pcomm);
        free(cs->scratch);
        free(cs->shm_keys);
        skewshim_topo_free(&cs->topo);
        free(cs);
        return NULL;
    }
    pthread_mutex_lock(&skewshim_g.lock);
    cs->next = live_head;
    if (live_head)
        live_head->prev = cs;
    live_head = cs;
    live_count++;
    pthread_mutex_unlock(&skewshim_g.lock);
    return cs;
}

skewshim_comm *skewshim_comm_get(MPI_Comm comm)
{
    void *attr;
    int flag = 0;
    if (keyval == MPI_KEYVAL_INVALID)
        return NULL;
    if (PMPI_Comm_get_attr(comm, keyval, &attr, &flag) == MPI_SUCCESS && flag)
        return attr;
    skewshim_comm *cs = create(comm);
    if (cs && PMPI_Comm_set_attr(comm, keyval, cs) != MPI_SUCCESS) {
        destroy(cs);
        return NULL;
    }
    return cs;
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
    MPI_Request *req = malloc(2 * (size_t)n * sizeof *req);
    MPI_Status *st = malloc(2 * (size_t)n * sizeof *st);
    if (!req || !st) {
        free(req);
        free(st);
        return;
    }
    int k = 0;
    for (skewshim_comm *cs = live_head; cs && k < n; cs = cs->next, k++)
        skewshim_ring_flush_start(&cs->ring, cs->pcomm, cs->rank, &req[2 * k]);
    PMPI_Waitall(2 * k, req, st);
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
