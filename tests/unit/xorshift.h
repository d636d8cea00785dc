/* The pseudo-random stream of the randomised unit tests: xorshift64 with
 * shifts 13, 7, 17 (Marsaglia).  Each test keeps its own state and seed, so a
 * failing random case comes back the same on every run and every machine. */
#ifndef SKEWSHIM_XORSHIFT_H
#define SKEWSHIM_XORSHIFT_H

#include <stdint.h>

static inline uint64_t xorshift64(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

#endif
