/* copycheck: does this machine ever lose part of a memcpy?
 *
 * The lab's only failed checks (doc/lab.md, "A check that failed at
 * P = 1024") were the first 64 bytes of a 4 KiB block left zero.  glibc
 * 2.36 on an AVX-512 CPU with fast rep movsb copies 4 KiB by loading the
 * first 64 bytes into zmm16, moving the rest with rep movsb and storing
 * zmm16 last, so a vector register cleared while the copy was interrupted
 * gives exactly that damage.  This program looks for it directly, outside
 * SimGrid and the shim.  Run several at once, more than the machine has
 * cores, so that the kernel preempts them inside their copies:
 *
 *   cc -O2 -mavx512f -o copycheck lab/copycheck.c
 *   for m in warm warm fresh zmm16; do ./copycheck $m 600 & done; wait
 *
 * Modes:
 *   warm   memcpy of BYTES (default 4096) into touched memory, destination
 *          offset moving by 8 bytes, every copy compared byte for byte;
 *   fresh  memcpy of BYTES into pages never touched, starting 2 KiB into a
 *          page, so the copy takes a page fault part way through;
 *   zmm16  a pattern loaded into zmm16, a rep movsb of BYTES (default
 *          1 MiB, long enough to be interrupted), zmm16 stored and compared
 *          (needs x86-64 with AVX-512; built without -mavx512f it says so).
 * Exit status 1 if any copy came out wrong, 0 otherwise;
 * COPYCHECK_INJECT=1 damages the first copy on purpose (exit status 1).
 */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static unsigned long long bad;
/* COPYCHECK_INJECT=1 zeroes the first 64 bytes of the first copy, the
   damage seen in the lab, to show that the check catches it. */
static int inject;

static void damage(unsigned char *got, unsigned long long n_copy)
{
    if (inject && n_copy == 1)
        memset(got, 0, 64);
}

static void report(const char *mode, unsigned long long n_copy, const unsigned char *got,
                   const unsigned char *want, size_t len)
{
    size_t first = 0, last = 0, count = 0;
    for (size_t i = 0; i < len; i++)
        if (got[i] != want[i]) {
            if (count == 0)
                first = i;
            last = i;
            count++;
        }
    bad++;
    printf("copycheck %s pid %d: copy %llu at %p wrong in %zu of %zu bytes (%zu-%zu), "
           "first wrong 0x%02x want 0x%02x\n",
           mode, (int)getpid(), n_copy, (const void *)got, count, len, first, last, got[first],
           want[first]);
    fflush(stdout);
}

static unsigned long long run_warm(size_t len, time_t until)
{
    const size_t nbuf = 256;
    unsigned char *src = malloc(len * nbuf + 128), *dst = malloc(len * nbuf + 128);
    if (!src || !dst)
        return 0;
    for (size_t i = 0; i < len * nbuf + 128; i++)
        src[i] = (unsigned char)(i * 131 + 7) | 1;
    unsigned long long copies = 0;
    unsigned off = 0;
    while (time(NULL) < until)
        for (size_t b = 0; b < nbuf; b++) {
            off = (off + 8) & 63;
            unsigned char *d = dst + b * len + off;
            const unsigned char *s = src + b * len + ((off * 3) & 63);
            memset(d, 0xA5, len);
            memcpy(d, s, len);
            copies++;
            damage(d, copies);
            if (memcmp(d, s, len) != 0)
                report("warm", copies, d, s, len);
        }
    free(src);
    free(dst);
    return copies;
}

static unsigned long long run_fresh(size_t len, time_t until)
{
    const size_t region = (size_t)64 << 20, page = 4096;
    const size_t stride = 2 * page + (len / page) * page;
    unsigned char *src = malloc(len);
    unsigned char *r = mmap(NULL, region, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!src || r == MAP_FAILED)
        return 0;
    /* Huge pages would make most copies land on memory already faulted in. */
    madvise(r, region, MADV_NOHUGEPAGE);
    for (size_t i = 0; i < len; i++)
        src[i] = (unsigned char)(i * 29 + 3) | 0x40;
    unsigned long long copies = 0, rounds = 0;
    while (time(NULL) < until) {
        for (size_t off = page / 2 + (rounds & 63); off + len < region; off += stride) {
            memcpy(r + off, src, len);
            copies++;
            damage(r + off, copies);
            if (memcmp(r + off, src, len) != 0)
                report("fresh", copies, r + off, src, len);
        }
        madvise(r, region, MADV_DONTNEED);
        rounds++;
    }
    munmap(r, region);
    free(src);
    return copies;
}

#if defined(__x86_64__) && defined(__AVX512F__)
static void hold_zmm16(const void *pattern, void *out, void *dst, const void *src, size_t len)
{
    __asm__ volatile("vmovdqu64 (%[p]), %%zmm16\n\t"
                     "rep movsb\n\t"
                     "vmovdqu64 %%zmm16, (%[o])\n\t"
                     : "+D"(dst), "+S"(src), "+c"(len)
                     : [p] "r"(pattern), [o] "r"(out)
                     : "memory", "xmm16");
}

static unsigned long long run_zmm16(size_t len, time_t until)
{
    unsigned char *src = malloc(len), *dst = malloc(len);
    if (!src || !dst)
        return 0;
    memset(src, 0x5a, len);
    _Alignas(64) unsigned char pattern[64];
    _Alignas(64) unsigned char out[64];
    unsigned long long copies = 0;
    while (time(NULL) < until)
        for (int k = 0; k < 64; k++) {
            for (int i = 0; i < 64; i++)
                pattern[i] = (unsigned char)(copies * 7 + (unsigned)i + 1) | 0x80;
            memset(out, 0x11, sizeof out);
            hold_zmm16(pattern, out, dst, src, len);
            copies++;
            damage(out, copies);
            if (memcmp(pattern, out, sizeof out) != 0)
                report("zmm16", copies, out, pattern, sizeof out);
        }
    free(src);
    free(dst);
    return copies;
}
#endif

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s warm|fresh|zmm16 SECONDS [BYTES]\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    inject = getenv("COPYCHECK_INJECT") != NULL && strcmp(getenv("COPYCHECK_INJECT"), "1") == 0;
    time_t until = time(NULL) + (time_t)strtol(argv[2], NULL, 10);
    size_t len = argc > 3 ? strtoul(argv[3], NULL, 0) : 0;
    unsigned long long copies;
    if (strcmp(mode, "warm") == 0)
        copies = run_warm(len ? len : 4096, until);
    else if (strcmp(mode, "fresh") == 0)
        copies = run_fresh(len ? len : 4096, until);
    else if (strcmp(mode, "zmm16") == 0) {
#if defined(__x86_64__) && defined(__AVX512F__)
        copies = run_zmm16(len ? len : (size_t)1 << 20, until);
#else
        fprintf(stderr, "copycheck: zmm16 needs x86-64 and a build with -mavx512f\n");
        return 2;
#endif
    } else {
        fprintf(stderr, "copycheck: unknown mode '%s' (warm, fresh or zmm16)\n", mode);
        return 2;
    }
    if (copies == 0) {
        fprintf(stderr, "copycheck: no copy made (out of memory, or SECONDS not above 0)\n");
        return 2;
    }
    printf("copycheck %s pid %d: %llu copies, %llu wrong\n", mode, (int)getpid(), copies, bad);
    return bad != 0;
}
