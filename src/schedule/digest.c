/* A digest is the sum over i of a bijective mix of (v[i], i).  The sum lets
 * the P column digests of a matrix be built in one pass along its rows
 * (the matrix arrives row-major, and a column walk at stride P misses the
 * cache from P = 256 on); mixing the index in keeps it order-sensitive; the
 * mix being a bijection means one changed entry always changes the sum.  It
 * guards against inconsistent counts and keys a cache whose hits are
 * compared in full, so it need not resist an adversary. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "schedule/digest.h"

/* The finaliser of MurmurHash3 (a bijection on 64-bit words). */
static inline uint64_t mix(uint64_t x, uint64_t i)
{
    x += (i + 1) * 0x9e3779b97f4a7c15ull;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

uint64_t skewshim_digest_vec(const uint64_t *v, int n)
{
    uint64_t d = 0;
    for (int i = 0; i < n; i++)
        d += mix(v[i], (uint64_t)i);
    return d;
}

void skewshim_digest_columns(const uint64_t *rows, int n, size_t stride, uint64_t *col)
{
    for (int j = 0; j < n; j++)
        col[j] = 0;
    for (int i = 0; i < n; i++) {
        const uint64_t *r = rows + (size_t)i * stride;
        for (int j = 0; j < n; j++)
            col[j] += mix(r[j], (uint64_t)i);
    }
}
