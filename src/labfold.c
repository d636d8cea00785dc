#ifdef HAVE_CONFIG_H
#include "config.h"     /* _GNU_SOURCE: memfd_create */
#endif
/* The lab's folded temporary memory (src/labfold.h); SMPI builds only.
 *
 * The data part of a temp is mapped from one memory file that every rank
 * of the simulation maps at offset 0, so all ranks share its pages.  SMPI's
 * own partial shared malloc is not used: SimGrid 3.32 maps a buffer smaller
 * than its shared-malloc block as shared from offset 0, metadata included,
 * and its copy of a message into a partially shared buffer at an offset
 * past the private head computes the private range with an unsigned
 * underflow and copies nothing; either way bruck2 got garbage sizes and
 * deadlocked.  Here SMPI sees ordinary memory and copies every message; the
 * ranks share physical pages behind its back. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <mpi.h>
#include "labfold.h"

/* The file's descriptor lives in the environment: SMPI gives every rank its
 * own copy of this library's globals, but one process environment. */
#define FOLD_FD_ENV "SKEWSHIM_LAB_FOLD_FD"

typedef struct folded {
    unsigned char *p;
    size_t len;
    struct folded *next;
} folded;

static folded *g_folded;    /* this rank's folded temps */

int skewshim_lab_folding(void)
{
    static int folding = -1;
    if (folding < 0) {
        const char *v = getenv("SKEWSHIM_LAB_FOLD");
        folding = v && strcmp(v, "1") == 0;
    }
    return folding;
}

/* The shared file, at least n bytes long; -1 on failure. */
static int fold_file(size_t n)
{
    const char *v = getenv(FOLD_FD_ENV);
    int fd = v ? atoi(v) : -1;
    if (fd < 0) {
        /* A file in memory: one on disk was written back while 1024 ranks
         * wrote to it, which held a P = 1024 run in the kernel most of its
         * time. */
        fd = memfd_create("skewshim-fold", MFD_CLOEXEC);
        if (fd < 0)
            return -1;
        char num[16];
        snprintf(num, sizeof num, "%d", fd);
        setenv(FOLD_FD_ENV, num, 1);
    }
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -1;
    if ((size_t)st.st_size < n && ftruncate(fd, (off_t)n) != 0)
        return -1;
    return fd;
}

void *skewshim_lab_tmp_alloc(uint64_t bytes, uint64_t data_from)
{
    if (bytes > SIZE_MAX)
        return NULL;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), len = (size_t)bytes;
    if (!skewshim_lab_folding() || data_from >= bytes)
        return malloc(len);
    size_t head = ((size_t)data_from + page - 1) / page * page;
    if (head >= len)
        return malloc(len);
    folded *f = malloc(sizeof *f);
    unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int fd = fold_file(len - head);
    if (!f || p == MAP_FAILED || fd < 0 ||
        mmap(p + head, len - head, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0)
            == MAP_FAILED) {
        if (p != MAP_FAILED)
            munmap(p, len);
        free(f);
        return NULL;
    }
    f->p = p;
    f->len = len;
    f->next = g_folded;
    g_folded = f;
    return p;
}

void skewshim_lab_tmp_free(void *p)
{
    for (folded **q = &g_folded; *q; q = &(*q)->next)
        if ((*q)->p == p) {
            folded *f = *q;
            *q = f->next;
            munmap(f->p, f->len);
            free(f);
            return;
        }
    free(p);
}
