#ifndef SKEWSHIM_DIGEST_H
#define SKEWSHIM_DIGEST_H

#include <stddef.h>
#include <stdint.h>

/* 64-bit digests of size vectors: how the ranks of a global schedule check
 * that every receiver's counts match what is sent to it, and what keys the
 * plan cache.  Every call of sabre and fast digests the whole P x P matrix,
 * so the digest is one mix per entry, computed row by row. */

/* The digest of v[0..n-1]; a change of any one entry always changes it. */
uint64_t skewshim_digest_vec(const uint64_t *v, int n);

/* col[j] = skewshim_digest_vec of column j of the n x n matrix whose row i
 * starts at rows + i * stride (stride >= n), for j < n. */
void skewshim_digest_columns(const uint64_t *rows, int n, size_t stride, uint64_t *col);

#endif
