/* Minimal TAP producer for the test programs: every check is one "ok" or
 * "not ok" line that automake's TAP driver counts. */
#ifndef SKEWSHIM_TAP_H
#define SKEWSHIM_TAP_H

#include <stdio.h>

static int tap_count, tap_failed;

#define TAP_OK(cond, ...)                                                      \
    do {                                                                       \
        int tap_c_ = !!(cond);                                                 \
        tap_count++;                                                           \
        if (!tap_c_) tap_failed++;                                             \
        printf("%s %d - ", tap_c_ ? "ok" : "not ok", tap_count);               \
        printf(__VA_ARGS__);                                                   \
        printf("\n");                                                          \
        fflush(stdout);                                                        \
    } while (0)

#define TAP_SKIP(...)                                                          \
    do {                                                                       \
        tap_count++;                                                           \
        printf("ok %d - # SKIP ", tap_count);                                  \
        printf(__VA_ARGS__);                                                   \
        printf("\n");                                                          \
    } while (0)

#define TAP_DIAG(...) do { printf("# "); printf(__VA_ARGS__); printf("\n"); } while (0)

/* Plan last: TAP allows "1..N" at the end. */
#define TAP_DONE() (printf("1..%d\n", tap_count), tap_failed ? 1 : 0)

#endif
