/* The size-matrix digests behind the consistency check and the plan cache
 * of sabre and fast: the row-order column pass must give exactly the
 * digests of the columns, and a changed or moved entry must show. */
#include <stdlib.h>
#include <string.h>

#include "schedule/digest.h"
#include "tap.h"
#include "xorshift.h"

/* Block sizes as the shim sees them: many zeros, small and huge values. */
static uint64_t draw(uint64_t *st)
{
    uint64_t r = xorshift64(st);
    switch (r % 4) {
    case 0: return 0;
    case 1: return r >> 60;
    case 2: return (r >> 32) & 0xffff;
    default: return r >> 8;
    }
}

int main(void)
{
    uint64_t st = 0x5eed5eedull;
    static const int sizes[] = { 1, 2, 3, 7, 16, 64, 257 };
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        int n = sizes[s];
        size_t stride = (size_t)n + 3;
        uint64_t *rows = malloc((size_t)n * stride * sizeof *rows);
        uint64_t *col = malloc((size_t)n * sizeof *col), *v = malloc((size_t)n * sizeof *v);
        for (size_t i = 0; i < (size_t)n * stride; i++)
            rows[i] = draw(&st);
        skewshim_digest_columns(rows, n, stride, col);
        int same = 1;
        for (int j = 0; j < n; j++) {
            for (int i = 0; i < n; i++)
                v[i] = rows[(size_t)i * stride + j];
            same &= col[j] == skewshim_digest_vec(v, n);
        }
        TAP_OK(same, "n = %d: the row pass gives each column's digest (stride n + 3)", n);

        /* One entry changed: its column's digest moves, no other does. */
        int only = 1;
        uint64_t *col2 = malloc((size_t)n * sizeof *col2);
        for (int t = 0; t < 200; t++) {
            int i = (int)(xorshift64(&st) % (uint64_t)n), j = (int)(xorshift64(&st) % (uint64_t)n);
            uint64_t *e = &rows[(size_t)i * stride + j], old = *e;
            *e = old + 1 + draw(&st) % 1000;
            skewshim_digest_columns(rows, n, stride, col2);
            for (int k = 0; k < n; k++)
                only &= (col2[k] != col[k]) == (k == j);
            *e = old;
        }
        TAP_OK(only, "n = %d: a changed entry changes its column's digest and no other", n);

        /* Two different entries of a column swapped: the digest moves. */
        int moved = 1, tried = 0;
        for (int t = 0; t < 200 && n > 1; t++) {
            int a = (int)(xorshift64(&st) % (uint64_t)n), b = (int)(xorshift64(&st) % (uint64_t)n);
            int j = (int)(xorshift64(&st) % (uint64_t)n);
            uint64_t *x = &rows[(size_t)a * stride + j], *y = &rows[(size_t)b * stride + j];
            if (*x == *y)
                continue;
            uint64_t tmp = *x;
            *x = *y;
            *y = tmp;
            skewshim_digest_columns(rows, n, stride, col2);
            moved &= col2[j] != col[j];
            tried++;
            *y = *x;
            *x = tmp;
        }
        if (n > 1)
            TAP_OK(moved && tried > 50, "n = %d: swapping two sizes of a column changes its digest (%d swaps)",
                   n, tried);
        free(col2);
        free(rows);
        free(col);
        free(v);
    }

    /* Zeros are sizes too: a zero row of another length digests differently. */
    uint64_t z[4] = { 0, 0, 0, 0 };
    TAP_OK(skewshim_digest_vec(z, 3) != skewshim_digest_vec(z, 4) && skewshim_digest_vec(z, 1) != 0,
           "all-zero counts of different lengths digest differently");
    return TAP_DONE();
}
