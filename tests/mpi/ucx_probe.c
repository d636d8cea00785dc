/* LD_PRELOAD probe for MPICH ch4:ucx: counts the UCX tag sends and receives
 * a rank posts between two calls of ucp_worker_progress while the program
 * has it switched on.  A scattered alltoallv posts one batch (block_count
 * receives and sends), then waits, and the wait is where the progress calls
 * are: so the longest run of posts is the number of exchanges the
 * MPI_Alltoallv had in flight.  Prototypes are spelled with void * so the
 * probe needs no UCX headers; it wraps the functions MPICH 4 calls. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

typedef void *(*send_fn)(void *, const void *, size_t, uint64_t, const void *);
typedef void *(*recv_fn)(void *, void *, size_t, uint64_t, uint64_t, const void *);
typedef unsigned (*progress_fn)(void *);

static int on, run, longest, posts, bursts;

void ucx_probe_begin(void) { on = 1; run = longest = posts = bursts = 0; }

/* out: posts, longest run of posts between progress calls, runs. */
void ucx_probe_end(int out[3])
{
    if (run) bursts++;
    on = 0;
    out[0] = posts;
    out[1] = longest;
    out[2] = bursts;
}

static void posted(void)
{
    if (!on)
        return;
    posts++;
    if (++run > longest)
        longest = run;
}

void *ucp_tag_send_nbx(void *ep, const void *buf, size_t n, uint64_t tag, const void *param)
{
    static send_fn next;
    if (!next)
        next = (send_fn)dlsym(RTLD_NEXT, "ucp_tag_send_nbx");
    posted();
    return next(ep, buf, n, tag, param);
}

void *ucp_tag_recv_nbx(void *worker, void *buf, size_t n, uint64_t tag, uint64_t mask,
                       const void *param)
{
    static recv_fn next;
    if (!next)
        next = (recv_fn)dlsym(RTLD_NEXT, "ucp_tag_recv_nbx");
    posted();
    return next(worker, buf, n, tag, mask, param);
}

unsigned ucp_worker_progress(void *worker)
{
    static progress_fn next;
    if (!next)
        next = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
    if (on && run) {
        bursts++;
        run = 0;
    }
    return next(worker);
}
