#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* Buffer location and the per-communicator device state shared by the
 * device executors (NCCL, IPC, staging). */

#define SKEWSHIM_DEVICE_INTERNAL 1
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include "device.h"
#include "policy.h"

#ifndef SKEWSHIM_HAVE_CUDA

int skewshim_device_locate(const void *p)
{
    (void)p;
    return SKEWSHIM_BUF_HOST;
}

int skewshim_device_in_use(void)
{
    return 0;
}

void skewshim_device_comm_free(void **device, int rank)
{
    (void)device;
    (void)rank;
}

void skewshim_device_get_counters(skewshim_device_counters *out)
{
    memset(out, 0, sizeof *out);
}

#else /* SKEWSHIM_HAVE_CUDA */

#include <cuda.h>   /* driver types only: entry points come through cudart */

skewshim_device_counters skewshim_device_ctr;
pthread_mutex_t skewshim_device_ctr_lock = PTHREAD_MUTEX_INITIALIZER;
char skewshim_device_nomem_untried, skewshim_device_nomem_failed;

void skewshim_device_get_counters(skewshim_device_counters *out)
{
    pthread_mutex_lock(&skewshim_device_ctr_lock);
    *out = skewshim_device_ctr;
    pthread_mutex_unlock(&skewshim_device_ctr_lock);
}

double skewshim_device_now(void)
{
    return PMPI_Wtime();
}

void skewshim_device_report(int rank, const char *what, const char *msg)
{
    SKEWSHIM_DEVICE_COUNT(errors, 1);
    fprintf(stderr, "skewshim[%d]: %s: %s\n", rank, what, msg);
    fflush(stderr);
}

int skewshim_cuda_check(cudaError_t e, const char *what, int rank)
{
    if (e == cudaSuccess)
        return MPI_SUCCESS;
    /* Clear the runtime's last error so the application does not trip over
     * an error that was ours. */
    (void)cudaGetLastError();
    skewshim_device_report(rank, what, cudaGetErrorString(e));
    return MPI_ERR_OTHER;
}

/* ---- buffer location ---------------------------------------------------- */

typedef CUresult (*ctx_get_current_fn)(CUcontext *ctx);
typedef CUresult (*primary_state_fn)(CUdevice dev, unsigned int *flags, int *active);

/* 0: not known yet, 1: never device memory here, 2: the process uses CUDA.
 * Read without a lock once settled; probed (and the fields below filled)
 * under probe_lock, as threads may ask at once. */
static int cuda_use;
static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static int cuda_ndev;
static ctx_get_current_fn get_current;
static primary_state_fn primary_state;

static void *driver_entry(const char *name)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q;
    /* 12000: the ABI of these symbols as of CUDA 12.0, which our typedefs
     * follow. */
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess
        || q != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return fn;
}

/* Whether some CUDA context exists in this process.  Asking
 * cudaPointerGetAttributes in a process that never touched CUDA would
 * create a primary context (hundreds of MB of device memory per rank) in a
 * host-only application that merely runs on a GPU node; device memory
 * cannot exist without a context, so until one exists the answer is HOST.
 * Once one exists it stays (contexts are not torn down under a live MPI
 * job in practice), so the check stops. */
static void settle(int u)
{
    __atomic_store_n(&cuda_use, u, __ATOMIC_RELEASE);
}

/* Under probe_lock. */
static int probe_cuda(void)
{
    if (cuda_use != 0)
        return cuda_use == 2;
    if (cuda_ndev == 0) {
        const char *env = getenv("SKEWSHIM_DEVICE");
        if (env && (strcmp(env, "0") == 0 || strcmp(env, "off") == 0)) {
            settle(1);
            return 0;
        }
        int n = 0;
        if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) {
            (void)cudaGetLastError();
            settle(1);
            return 0;
        }
        cuda_ndev = n;
        get_current = (ctx_get_current_fn)driver_entry("cuCtxGetCurrent");
        primary_state = (primary_state_fn)driver_entry("cuDevicePrimaryCtxGetState");
    }
    if (!get_current || !primary_state) {
        /* Cannot tell: fall back to asking cudaPointerGetAttributes. */
        settle(2);
        return 1;
    }
    CUcontext ctx = NULL;
    if (get_current(&ctx) == CUDA_SUCCESS && ctx) {
        settle(2);
        return 1;
    }
    for (int d = 0; d < cuda_ndev; d++) {
        unsigned int flags = 0;
        int active = 0;
        if (primary_state((CUdevice)d, &flags, &active) == CUDA_SUCCESS && active) {
            settle(2);
            return 1;
        }
    }
    return 0;
}

static int process_uses_cuda(void)
{
    int u = __atomic_load_n(&cuda_use, __ATOMIC_ACQUIRE);
    if (u != 0)
        return u == 2;
    pthread_mutex_lock(&probe_lock);
    int r = probe_cuda();
    pthread_mutex_unlock(&probe_lock);
    return r;
}

int skewshim_device_in_use(void)
{
    return process_uses_cuda();
}

int skewshim_device_of(const void *p)
{
    if (!p || !process_uses_cuda())
        return -1;
    struct cudaPointerAttributes a;
    memset(&a, 0, sizeof a);
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        /* Older runtimes report unregistered host memory as an error. */
        (void)cudaGetLastError();
        return -1;
    }
    /* Managed memory is reachable from the host: the host path is correct
     * for it, so it is not "device" here. */
    return a.type == cudaMemoryTypeDevice ? a.device : -1;
}

int skewshim_device_locate(const void *p)
{
    return skewshim_device_of(p) >= 0 ? SKEWSHIM_BUF_DEVICE : SKEWSHIM_BUF_HOST;
}

/* ---- per-communicator state --------------------------------------------- */

skewshim_device_state *skewshim_device_state_get(void **slot, int size)
{
    if (!slot)
        return NULL;
    if (*slot == &skewshim_device_nomem_untried || *slot == &skewshim_device_nomem_failed)
        return NULL;
    if (*slot)
        return *slot;
    skewshim_device_state *st = calloc(1, sizeof *st);
    uint64_t *hw = calloc((size_t)(size > 0 ? size : 1), sizeof *hw);
    if (!st || !hw) {
        free(st);
        free(hw);
        *slot = &skewshim_device_nomem_untried;
        return NULL;
    }
    st->cuda_dev = -1;
    st->shm = MPI_COMM_NULL;
    st->tmp_hw = hw;
    *slot = st;
    return st;
}

int skewshim_device_enter(skewshim_device_state *st, const skewshim_xargs *c,
                          int pref, int *saved)
{
    int rank = c ? c->rank : -1;
    *saved = -1;
    if (cudaGetDevice(saved) != cudaSuccess) {
        (void)cudaGetLastError();
        *saved = -1;
    }
    if (st->cuda_dev >= 0) {
        if (*saved == st->cuda_dev)
            return MPI_SUCCESS;
        return skewshim_cuda_check(cudaSetDevice(st->cuda_dev), "cudaSetDevice", rank);
    }
    /* The buffers' device first: the application chose it, and NCCL and
     * the copies must run where the data is. */
    int dev = pref;
    if (dev < 0 && c)
        dev = skewshim_device_of(c->recvbuf);
    if (dev < 0 && c)
        dev = skewshim_device_of(c->sendbuf);
    if (dev < 0)
        dev = *saved >= 0 ? *saved : 0;
    int rc = skewshim_cuda_check(cudaSetDevice(dev), "cudaSetDevice", rank);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Blocking streams (not cudaStreamNonBlocking): they wait for work the
     * application queued on the legacy default stream before the call, as
     * a CUDA-aware MPI does. */
    cudaStream_t s1 = NULL, s2 = NULL;
    cudaEvent_t e1 = NULL, e2 = NULL;
    rc = skewshim_cuda_check(cudaStreamCreate(&s1), "cudaStreamCreate", rank);
    if (rc == MPI_SUCCESS)
        rc = skewshim_cuda_check(cudaStreamCreate(&s2), "cudaStreamCreate", rank);
    if (rc == MPI_SUCCESS)
        rc = skewshim_cuda_check(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming),
                                 "cudaEventCreate", rank);
    if (rc == MPI_SUCCESS)
        rc = skewshim_cuda_check(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming),
                                 "cudaEventCreate", rank);
    if (rc != MPI_SUCCESS) {
        if (e1) cudaEventDestroy(e1);
        if (e2) cudaEventDestroy(e2);
        if (s1) cudaStreamDestroy(s1);
        if (s2) cudaStreamDestroy(s2);
        return rc;
    }
    st->stream = s1;
    st->copy_stream = s2;
    st->ev_main = e1;
    st->ev_copy = e2;
    st->cuda_dev = dev;
    return MPI_SUCCESS;
}

void skewshim_device_leave(int saved)
{
    int cur = -1;
    if (saved < 0)
        return;
    if (cudaGetDevice(&cur) != cudaSuccess || cur != saved) {
        if (cudaSetDevice(saved) != cudaSuccess)
            (void)cudaGetLastError();
    }
}

int skewshim_device_tmp_reserve(skewshim_device_state *st, uint64_t bytes, int rank)
{
    if (bytes <= st->dtmp_cap)
        return MPI_SUCCESS;
    /* The old temp may still be read by queued work. */
    int rc = skewshim_cuda_check(cudaStreamSynchronize(st->stream), "cudaStreamSynchronize", rank);
    if (rc == MPI_SUCCESS)
        rc = skewshim_cuda_check(cudaStreamSynchronize(st->copy_stream),
                                 "cudaStreamSynchronize", rank);
    if (rc != MPI_SUCCESS)
        return rc;
    if (st->dtmp)
        (void)skewshim_cuda_check(cudaFree(st->dtmp), "cudaFree", rank);
    st->dtmp = NULL;
    st->dtmp_cap = 0;
    /* Round up to 2 MiB so that small growth does not reallocate (and
     * re-export an IPC handle) every call. */
    uint64_t want = (bytes + ((uint64_t)2 << 20) - 1) & ~(((uint64_t)2 << 20) - 1);
    void *p = NULL;
    rc = skewshim_cuda_check(cudaMalloc(&p, (size_t)want), "cudaMalloc(temp)", rank);
    if (rc != MPI_SUCCESS)
        return rc;
    st->dtmp = p;
    st->dtmp_cap = want;
    return MPI_SUCCESS;
}

void skewshim_device_comm_free(void **device, int rank)
{
    if (!device || !*device)
        return;
    if (*device == &skewshim_device_nomem_untried || *device == &skewshim_device_nomem_failed) {
        *device = NULL;
        return;
    }
    skewshim_device_state *st = *device;
    int saved = -1;
    if (st->cuda_dev >= 0) {
        if (cudaGetDevice(&saved) != cudaSuccess) {
            (void)cudaGetLastError();
            saved = -1;
        }
        (void)skewshim_cuda_check(cudaSetDevice(st->cuda_dev), "cudaSetDevice", rank);
        (void)skewshim_cuda_check(cudaStreamSynchronize(st->stream), "cudaStreamSynchronize", rank);
        (void)skewshim_cuda_check(cudaStreamSynchronize(st->copy_stream),
                                  "cudaStreamSynchronize", rank);
    }
    skewshim_nccl_free(st);
    skewshim_ipc_free(st);
    if (st->dtmp)
        (void)skewshim_cuda_check(cudaFree(st->dtmp), "cudaFree", rank);
    if (st->hsend)
        (void)skewshim_cuda_check(cudaFreeHost(st->hsend), "cudaFreeHost", rank);
    if (st->hrecv)
        (void)skewshim_cuda_check(cudaFreeHost(st->hrecv), "cudaFreeHost", rank);
    if (st->cuda_dev >= 0) {
        cudaEventDestroy(st->ev_main);
        cudaEventDestroy(st->ev_copy);
        cudaStreamDestroy(st->stream);
        cudaStreamDestroy(st->copy_stream);
        (void)cudaGetLastError();
        skewshim_device_leave(saved);
    }
    if (st->shm != MPI_COMM_NULL)
        PMPI_Comm_free(&st->shm);
    free(st->tmp_hw);
    free(st);
    *device = NULL;
}

#endif /* SKEWSHIM_HAVE_CUDA */
