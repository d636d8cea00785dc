#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* CUDA IPC for moves between ranks of one node: the sender copies straight
 * into the receiver's buffer (receive blocks or temp), mapped with
 * cudaIpcOpenMemHandle.
 *
 * Finding the allocation to export.  cudaIpcGetMemHandle exports a whole
 * cudaMalloc allocation and the peer's cudaIpcOpenMemHandle maps its base,
 * so the exporter must know where its receive buffer starts inside that
 * allocation (a caching allocator hands out interior pointers).
 * cudaPointerGetAttributes says the pointer is device memory but not where
 * its allocation starts, and the runtime API has no cuMemGetAddressRange;
 * we obtain the driver's cuMemGetAddressRange through
 * cudaGetDriverEntryPointByVersion (no link to libcuda) and publish
 * (handle, pointer - base).  Our own temp is our own cudaMalloc: its base is
 * the pointer.  Memory that cannot be exported (cudaMallocAsync pools,
 * cuMemCreate) or mapped makes that rank say "no", and the node agrees: no
 * IPC on the node for that call, NCCL carries the moves instead.
 *
 * The "node" is the physical node (shared-memory split) intersected with
 * the topology's node, so an emulated topology (topology.ranks_per_node)
 * keeps IPC within an emulated node and NCCL between them.
 *
 * Mapped handles are cached process-wide keyed by (exporter's world rank,
 * handle bytes): an application that frees and reallocates its buffers gets
 * new handles, so a stale mapping is never used; at most IPC_PER_PEER
 * mappings per exporter are kept (least recently used closed first), so
 * stale ones do not pin the exporter's freed memory for long.  The cache is
 * shared by every thread (MPI_THREAD_MULTIPLE: calls on different
 * communicators at once), so it lives under a lock, and a mapping is closed
 * only when no communicator holds it: each holds the mappings of its latest
 * call until its next one or its end, as another thread may still be
 * pushing through them.
 */

#define SKEWSHIM_DEVICE_INTERNAL 1
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "device.h"

#ifdef SKEWSHIM_HAVE_CUDA

#include <cuda.h>   /* driver types only */

#define IPC_PER_PEER 4

/* What every rank of the node publishes per call. */
typedef struct ipc_info {
    int ok;                       /* exported what it has, IPC allowed */
    int world;                    /* cache key */
    int has_recv, has_tmp;
    cudaIpcMemHandle_t recv_h, tmp_h;
    uint64_t recv_off;            /* recvbuf - base of its allocation */
} ipc_info;

struct skewshim_ipc_state {
    int dead;                     /* IPC off for good on this communicator */
    MPI_Comm node;
    int topo_q;                   /* cs->topo_q the node was built for */
    int nq, me;                   /* node size, our index in it */
    int P;
    int *members;                 /* [nq] pcomm ranks */
    int *local_of;                /* [P] index in the node, -1 outside */
    int on;                       /* pushes allowed this call (agreed) */
    ipc_info *info;               /* [nq] */
    uint64_t *roff;               /* [nq * P] receivers' block displacements */
    char **recv_map, **tmp_map;   /* [nq] mapped addresses, NULL when none */
    int nst;                      /* stages of this call, agreed over the node */
    unsigned char *stage_ipc;     /* [nst] 1: some push inside the node */
    int stage_cap;
    struct ipc_entry **held;      /* [2 * nq] mappings of the latest call */
    int nheld;
};

/* ---- process-wide cache of mapped handles -------------------------------- */

typedef struct ipc_entry {
    int world, dev;
    cudaIpcMemHandle_t h;
    void *ptr;
    uint64_t last_use;
    int refs;                     /* communicators holding it */
} ipc_entry;

/* All of it under cache_lock.  Entries are allocated one by one, so the
 * communicators' held[] pointers stay valid while the array moves. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static ipc_entry **cache;
static int ncache, cache_cap;
static uint64_t ipc_epoch;

static void cache_close(int i)
{
    ipc_entry *en = cache[i];
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess)
        cur = -1;
    /* The mapping belongs to the context it was opened in. */
    if (cur != en->dev)
        (void)cudaSetDevice(en->dev);
    if (cudaIpcCloseMemHandle(en->ptr) != cudaSuccess)
        (void)cudaGetLastError();
    if (cur >= 0 && cur != en->dev)
        (void)cudaSetDevice(cur);
    SKEWSHIM_DEVICE_COUNT(ipc_closes, 1);
    cache[i] = cache[--ncache];
    free(en);
}

/* The mapping of (world, h), opened when not cached, with one more holder.
 * Under cache_lock. */
static ipc_entry *cache_open(int world, const cudaIpcMemHandle_t *h, int dev, int rank)
{
    int mine = 0;
    for (int i = 0; i < ncache; i++) {
        if (cache[i]->world != world)
            continue;
        if (memcmp(&cache[i]->h, h, sizeof *h) == 0) {
            cache[i]->last_use = ipc_epoch;
            cache[i]->refs++;
            SKEWSHIM_DEVICE_COUNT(ipc_cache_hits, 1);
            return cache[i];
        }
        mine++;
    }
    /* Make room: close this exporter's least recently used mappings, never
     * one a communicator holds (this call's, or another thread's). */
    while (mine >= IPC_PER_PEER) {
        int lru = -1;
        for (int i = 0; i < ncache; i++)
            if (cache[i]->world == world && cache[i]->refs == 0
                && (lru < 0 || cache[i]->last_use < cache[lru]->last_use))
                lru = i;
        if (lru < 0)
            break;
        cache_close(lru);
        mine--;
    }
    if (ncache == cache_cap) {
        int ncap = cache_cap ? 2 * cache_cap : 16;
        ipc_entry **n = realloc(cache, (size_t)ncap * sizeof *n);
        if (!n)
            return NULL;
        cache = n;
        cache_cap = ncap;
    }
    ipc_entry *en = malloc(sizeof *en);
    if (!en)
        return NULL;
    void *p = NULL;
    double t0 = skewshim_device_now();
    cudaError_t e = cudaIpcOpenMemHandle(&p, *h, cudaIpcMemLazyEnablePeerAccess);
    SKEWSHIM_DEVICE_COUNT(ipc_open_seconds, skewshim_device_now() - t0);
    if (e != cudaSuccess) {
        free(en);
        SKEWSHIM_DEVICE_COUNT(ipc_open_failures, 1);
        (void)skewshim_cuda_check(e, "cudaIpcOpenMemHandle", rank);
        return NULL;
    }
    SKEWSHIM_DEVICE_COUNT(ipc_opens, 1);
    en->world = world;
    en->dev = dev;
    en->h = *h;
    en->ptr = p;
    en->last_use = ipc_epoch;
    en->refs = 1;
    cache[ncache++] = en;
    return en;
}

/* Let go of the mappings s held (they may be closed from now on).  Under
 * cache_lock. */
static void cache_release(struct skewshim_ipc_state *s)
{
    for (int i = 0; i < s->nheld; i++)
        s->held[i]->refs--;
    s->nheld = 0;
}

/* ---- allocation base ------------------------------------------------------ */

typedef CUresult (*addr_range_fn)(CUdeviceptr *base, size_t *size, CUdeviceptr p);
static addr_range_fn addr_range;
static int addr_range_tried;

static int alloc_base(const void *p, char **base)
{
    if (!addr_range_tried) {
        void *fn = NULL;
        enum cudaDriverEntryPointQueryResult q;
        addr_range_tried = 1;
        /* 12000: the _v2 signature, which addr_range_fn follows. */
        if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fn, 12000,
                                             cudaEnableDefault, &q) == cudaSuccess
            && q == cudaDriverEntryPointSuccess)
            addr_range = (addr_range_fn)fn;
        else
            (void)cudaGetLastError();
    }
    if (!addr_range)
        return -1;
    CUdeviceptr b = 0;
    size_t sz = 0;
    if (addr_range(&b, &sz, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS)
        return -1;
    *base = (char *)(uintptr_t)b;
    return 0;
}

/* ---- node communicator ---------------------------------------------------- */

static struct skewshim_ipc_state ipc_dead = { .dead = 1 };

static void node_free(struct skewshim_ipc_state *s)
{
    if (s->held) {
        pthread_mutex_lock(&cache_lock);
        cache_release(s);
        pthread_mutex_unlock(&cache_lock);
        free(s->held);
    }
    if (s->node != MPI_COMM_NULL)
        PMPI_Comm_free(&s->node);
    free(s->members);
    free(s->local_of);
    free(s->info);
    free(s->roff);
    free(s->recv_map);
    free(s->tmp_map);
    free(s->stage_ipc);
}

void skewshim_ipc_free(skewshim_device_state *st)
{
    if (!st->ipc || st->ipc == &ipc_dead) {
        st->ipc = NULL;
        return;
    }
    node_free(st->ipc);
    free(st->ipc);
    st->ipc = NULL;
}

/* Build the node communicator: collective over st->shm.  Failures are
 * agreed over the node, so all its ranks turn IPC off together. */
static void node_build(skewshim_device_state *st, skewshim_xargs *c)
{
    const skewshim_topo *t = c->topo;
    int P = c->size;
    skewshim_ipc_free(st);
    struct skewshim_ipc_state *s = calloc(1, sizeof *s);
    int color = t && t->node_of ? t->node_of[c->rank] : 0;
    MPI_Comm node = MPI_COMM_NULL;
    if (PMPI_Comm_split(st->shm, color, c->rank, &node) != MPI_SUCCESS)
        node = MPI_COMM_NULL;
    int nq = 1, ok = s && node != MPI_COMM_NULL;
    if (node != MPI_COMM_NULL)
        PMPI_Comm_size(node, &nq);
    if (ok) {
        s->node = node;
        s->topo_q = c->topo_q;
        s->nq = nq;
        s->P = P;
        PMPI_Comm_rank(node, &s->me);
        s->members = calloc((size_t)nq, sizeof *s->members);
        s->local_of = malloc((size_t)P * sizeof *s->local_of);
        s->info = calloc((size_t)nq, sizeof *s->info);
        s->roff = calloc((size_t)nq * (size_t)P, sizeof *s->roff);
        s->recv_map = calloc((size_t)nq, sizeof *s->recv_map);
        s->tmp_map = calloc((size_t)nq, sizeof *s->tmp_map);
        s->held = calloc(2 * (size_t)nq, sizeof *s->held);
        ok = s->members && s->local_of && s->info && s->roff && s->recv_map && s->tmp_map &&
             s->held;
    }
    if (node != MPI_COMM_NULL)
        PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, node);
    if (ok)
        PMPI_Allgather(&c->rank, 1, MPI_INT, s->members, 1, MPI_INT, node);
    if (!ok) {
        if (s) {
            s->node = node;
            node_free(s);
            free(s);
        } else if (node != MPI_COMM_NULL) {
            PMPI_Comm_free(&node);
        }
        st->ipc = &ipc_dead;
        return;
    }
    for (int r = 0; r < P; r++)
        s->local_of[r] = -1;
    for (int i = 0; i < nq; i++)
        if (s->members[i] >= 0 && s->members[i] < P)
            s->local_of[s->members[i]] = i;
    st->ipc = s;
}

MPI_Comm skewshim_ipc_node_comm(const skewshim_device_state *st)
{
    return st->ipc && !st->ipc->dead ? st->ipc->node : MPI_COMM_NULL;
}

/* Our part of the exchange: what we can export. */
static void publish(skewshim_device_state *st, skewshim_xargs *c, ipc_info *mine)
{
    memset(mine, 0, sizeof *mine);
    mine->world = c->world_rank;
    const char *env = getenv("SKEWSHIM_IPC");
    mine->ok = !(env && (strcmp(env, "0") == 0 || strcmp(env, "off") == 0));
    if (!mine->ok)
        return;
    if (c->recvbuf && skewshim_device_of(c->recvbuf) == st->cuda_dev) {
        char *base = NULL;
        if (alloc_base(c->recvbuf, &base) != 0
            || cudaIpcGetMemHandle(&mine->recv_h, base) != cudaSuccess) {
            (void)cudaGetLastError();
            mine->ok = 0;
            return;
        }
        mine->recv_off = (uint64_t)((char *)c->recvbuf - base);
        mine->has_recv = 1;
    }
    if (st->dtmp) {
        if (cudaIpcGetMemHandle(&mine->tmp_h, st->dtmp) != cudaSuccess) {
            (void)cudaGetLastError();
            mine->ok = 0;
            return;
        }
        mine->has_tmp = 1;
    }
}

static int stage_room(struct skewshim_ipc_state *s, int nst)
{
    if (nst <= s->stage_cap)
        return 0;
    unsigned char *n = realloc(s->stage_ipc, (size_t)nst);
    if (!n)
        return -1;
    s->stage_ipc = n;
    s->stage_cap = nst;
    return 0;
}

/* Works on a global schedule (every rank's moves: the node's decisions are
 * computed locally, identically everywhere) and on one rank's slice (then
 * they are agreed with small reductions over the node). */
/* Every peer's receive buffer and temp mapped from the handles it
 * published (through the cache, under its lock); the mappings held before
 * are released first.  Whether all of them could be mapped (ok: whether
 * this rank may try at all). */
static int map_peers(skewshim_device_state *st, const skewshim_xargs *c,
                     struct skewshim_ipc_state *s, int ok)
{
    pthread_mutex_lock(&cache_lock);
    ipc_epoch++;
    cache_release(s);
    for (int i = 0; i < s->nq; i++) {
        s->recv_map[i] = s->tmp_map[i] = NULL;
        if (i == s->me || !ok)
            continue;
        const ipc_info *in = &s->info[i];
        if (!in->ok) {
            ok = 0;
            break;
        }
        if (in->has_recv) {
            ipc_entry *en = cache_open(in->world, &in->recv_h, st->cuda_dev, c->rank);
            if (!en)
                ok = 0;
            else
                s->recv_map[i] = (char *)(s->held[s->nheld++] = en)->ptr + in->recv_off;
        }
        if (ok && in->has_tmp) {
            ipc_entry *en = cache_open(in->world, &in->tmp_h, st->cuda_dev, c->rank);
            if (!en)
                ok = 0;
            else
                s->tmp_map[i] = (s->held[s->nheld++] = en)->ptr;
        }
    }
    pthread_mutex_unlock(&cache_lock);
    return ok;
}

int skewshim_ipc_prepare(skewshim_device_state *st, skewshim_xargs *c,
                         const skewshim_sched *g, int *rc)
{
    if (!st->ipc || (st->ipc != &ipc_dead && st->ipc->topo_q != c->topo_q))
        node_build(st, c);
    struct skewshim_ipc_state *s = st->ipc;
    if (s->dead || s->nq <= 1)
        return 0;
    s->on = 0;
    s->nst = 0;
    int global = g->rank < 0;
    int cand = 0, nst = 0;
    for (size_t k = 0; k < g->nmoves; k++) {
        const skewshim_move *m = &g->moves[k];
        if (m->stage + 1 > nst)
            nst = m->stage + 1;
        if (!cand && m->src != m->dst && m->bytes && m->src >= 0 && m->src < s->P
            && m->dst >= 0 && m->dst < s->P && s->local_of[m->src] >= 0
            && s->local_of[m->dst] >= 0)
            cand = 1;
    }
    if (!global) {
        int v[2] = {cand, nst};
        PMPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, s->node);
        cand = v[0];
        nst = v[1];
    }
    /* The same on every rank of the node (same schedule and membership, or
     * agreed above): all skip the exchange together. */
    if (!cand)
        return 0;

    ipc_info mine;
    publish(st, c, &mine);
    PMPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, s->info, (int)sizeof mine, MPI_BYTE, s->node);
    PMPI_Allgather(c->roff, c->size, MPI_UINT64_T, s->roff, c->size, MPI_UINT64_T, s->node);

    int ok = map_peers(st, c, s, mine.ok && stage_room(s, nst) == 0);
    PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, s->node);
    if (!ok)
        return 0;
    s->on = 1;
    s->nst = nst;
    /* Stages with a push inside the node take barriers; both ends of a push
     * see it, so on a slice the node-wide union is the right set. */
    memset(s->stage_ipc, 0, (size_t)nst);
    for (size_t k = 0; k < g->nmoves; k++)
        if (skewshim_ipc_move(st, &g->moves[k]))
            s->stage_ipc[g->moves[k].stage] = 1;
    if (!global && nst > 0)
        PMPI_Allreduce(MPI_IN_PLACE, s->stage_ipc, nst, MPI_UNSIGNED_CHAR, MPI_MAX, s->node);
    (void)rc;   /* failures here mean "no IPC", never a failed call */
    return 1;
}

int skewshim_ipc_stages(const skewshim_device_state *st, const unsigned char **stage_ipc)
{
    const struct skewshim_ipc_state *s = st->ipc;
    if (!s || s->dead || !s->on) {
        *stage_ipc = NULL;
        return 0;
    }
    *stage_ipc = s->stage_ipc;
    return s->nst;
}

int skewshim_ipc_move(const skewshim_device_state *st, const skewshim_move *m)
{
    const struct skewshim_ipc_state *s = st->ipc;
    if (!s || s->dead || !s->on || m->src == m->dst || m->bytes == 0)
        return 0;
    if (m->src < 0 || m->src >= s->P || m->dst < 0 || m->dst >= s->P)
        return 0;
    int ls = s->local_of[m->src], ld = s->local_of[m->dst];
    if (ls < 0 || ld < 0)
        return 0;
    /* From the published facts only, so both ends decide alike. */
    if (m->dst_loc == SKEWSHIM_LOC_RECV)
        return s->info[ld].has_recv;
    if (m->dst_loc == SKEWSHIM_LOC_TMP)
        return s->info[ld].has_tmp;
    return 0;
}

void *skewshim_ipc_target(const skewshim_device_state *st, const skewshim_move *m)
{
    const struct skewshim_ipc_state *s = st->ipc;
    int ld = s->local_of[m->dst];
    if (m->dst_loc == SKEWSHIM_LOC_RECV) {
        if (!s->recv_map[ld] || m->dst_blk < 0 || m->dst_blk >= s->P)
            return NULL;
        return s->recv_map[ld] + s->roff[(size_t)ld * (size_t)s->P + (size_t)m->dst_blk] + m->dst_off;
    }
    if (!s->tmp_map[ld])
        return NULL;
    return s->tmp_map[ld] + m->dst_off;
}

#endif /* SKEWSHIM_HAVE_CUDA */
