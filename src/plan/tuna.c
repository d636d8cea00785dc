#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
/* TuNA (Fan et al., "Configurable Non-uniform All-to-all Algorithms",
 * Algorithm 1): the radix-r forwarding schedule that the Bruck variants
 * (r = 2) and the intra-node phase of TuNA_l^g share.  See src/schedule/forwarding.h for the
 * model; this file is its index arithmetic. */
#include <stddef.h>
#include "schedule/forwarding.h"

/* r^x for the x of a real round: r^x < G, so it fits in an int. */
static int64_t ipow(int r, int x)
{
    int64_t v = 1;
    while (x-- > 0)
        v *= r;
    return v;
}

uint64_t skewshim_fwd_mul(uint64_t a, uint64_t b)
{
    if (a == 0 || b == 0)
        return 0;
    if (a > UINT64_MAX / b)
        return UINT64_MAX;
    return a * b;
}

uint64_t skewshim_fwd_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int skewshim_fwd_count_digit(int group, int radix, int x, int z)
{
    int64_t lo = ipow(radix, x), span = lo * radix;
    int64_t full = group / span, rem = group % span - (int64_t)z * lo;
    if (rem < 0)
        rem = 0;
    if (rem > lo)
        rem = lo;
    return (int)(full * lo + rem);
}

/* Rounds of the top digit: z r^(w-1) < G, at most r - 1 of them. */
static int top_rounds(int group, int radix, int digits)
{
    int64_t n = (group - 1) / ipow(radix, digits - 1);
    return (int)(n < radix - 1 ? n : radix - 1);
}

int skewshim_fwd_round_get(const skewshim_fwd *f, int k, skewshim_fwd_round *rd)
{
    if (k < 0 || k >= f->rounds)
        return -1;
    /* Every digit below the top one has all r - 1 rounds: (r-1) r^x < r^(w-1) < G. */
    rd->x = k / (f->radix - 1);
    rd->z = k % (f->radix - 1) + 1;
    rd->dist = (int)(rd->z * ipow(f->radix, rd->x));
    rd->units = skewshim_fwd_count_digit(f->group, f->radix, rd->x, rd->z);
    return 0;
}

void skewshim_fwd_deltas(const skewshim_fwd *f, const skewshim_fwd_round *rd, int *out)
{
    int64_t lo = ipow(f->radix, rd->x), span = lo * f->radix;
    int n = 0;
    for (int64_t hi = 0; hi < f->group; hi += span)
        for (int64_t d = hi + rd->z * lo; d < hi + (rd->z + 1) * lo && d < f->group; d++)
            out[n++] = (int)d;
}

int skewshim_fwd_first_hop(const skewshim_fwd *f, int delta, int x)
{
    return delta % ipow(f->radix, x) == 0;
}

int skewshim_fwd_final(const skewshim_fwd *f, int delta, int x)
{
    return delta < ipow(f->radix, x + 1);
}

int skewshim_fwd_slot(const skewshim_fwd *f, int delta)
{
    if (delta <= 0)
        return -1;
    int dx = 0;
    int64_t p = 1;
    while (p * f->radix <= delta) {
        p *= f->radix;
        dx++;
    }
    int dz = (int)(delta / p);
    if (delta == dz * p)
        return -1;      /* direct: one nonzero digit */
    /* Skip delta 0 and the direct deltas below this one (TuNA III-C). */
    return delta - 1 - dx * (f->radix - 1) - dz;
}

int skewshim_fwd_staged(const skewshim_fwd *f, const skewshim_fwd_round *rd)
{
    return rd->units > 1 || f->width > 1;
}

int skewshim_fwd_init(skewshim_fwd *f, int group, int radix, int width, int padded)
{
    if (group < 1 || width < 1)
        return -1;
    if (radix < 2)
        radix = 2;
    if (radix > group)
        radix = group < 2 ? 2 : group;
    f->group = group;
    f->radix = radix;
    f->width = width;
    f->padded = padded;
    f->digits = 0;
    for (int64_t p = 1; p < group; p *= radix)
        f->digits++;
    f->rounds = f->digits == 0 ? 0
              : (f->digits - 1) * (radix - 1) + top_rounds(group, radix, f->digits);
    f->tslots = group - f->rounds - 1;
    f->stage_units = 0;
    for (int k = 0; k < f->rounds; k++) {
        skewshim_fwd_round rd;
        skewshim_fwd_round_get(f, k, &rd);
        if (skewshim_fwd_staged(f, &rd) && rd.units > f->stage_units)
            f->stage_units = rd.units;
    }
    return 0;
}

void skewshim_fwd_layout_flat(const skewshim_fwd *f, uint64_t max_block_bytes,
                              skewshim_fwd_layout *L)
{
    uint64_t unit = skewshim_fwd_mul((uint64_t)f->width, max_block_bytes);
    uint64_t metan = f->padded ? 0 : (uint64_t)f->stage_units * (uint64_t)f->width;
    uint64_t tmeta = f->padded ? 0 : (uint64_t)f->tslots * (uint64_t)f->width;
    uint64_t o = 0;
    L->block = max_block_bytes;
    L->meta_out = o; o += 8 * metan;
    L->meta_in = o;  o += 8 * metan;
    L->tsize = o;    o += 8 * tmeta;
    L->xsize = o;
    L->t = o;          o = skewshim_fwd_add(o, skewshim_fwd_mul((uint64_t)f->tslots, unit));
    L->send_stage = o; o = skewshim_fwd_add(o, skewshim_fwd_mul((uint64_t)f->stage_units, unit));
    L->recv_stage = o; o = skewshim_fwd_add(o, skewshim_fwd_mul((uint64_t)f->stage_units, unit));
    L->xbuf = o;
    L->xrecv = o;
    /* No staged round means no forwarding at all (the linear exchange). */
    L->total = f->stage_units == 0 ? 0 : o;
}

/* Integer square root, rounded to nearest. */
static int isqrt_round(int n)
{
    int s = 0;
    while ((int64_t)(s + 1) * (s + 1) <= n)
        s++;
    /* nearer of s and s + 1: compare n with (s + 1/2)^2 = s^2 + s + 1/4 */
    return (int64_t)n > (int64_t)s * s + s ? s + 1 : s;
}

int skewshim_tuna_auto_radix(int P, uint64_t max_block_bytes)
{
    int r;
    if (P <= 2)
        return 2;
    if (max_block_bytes <= SKEWSHIM_TUNA_SMALL_BLOCK)
        r = 2;
    else if (max_block_bytes <= SKEWSHIM_TUNA_LARGE_BLOCK)
        r = isqrt_round(P);
    else
        r = P;
    if (r < 2)
        r = 2;
    return r > P ? P : r;
}

int skewshim_fwd_plan_tuna(skewshim_fwd *f, int P, int radix, uint64_t max_block_bytes)
{
    if (radix <= 0)
        radix = skewshim_tuna_auto_radix(P, max_block_bytes);
    return skewshim_fwd_init(f, P, radix, 1, 0);
}
