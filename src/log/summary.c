#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* The job summary at finalize (src/log.h): counters summed, times maxed
 * over the ranks of the world, written by rank 0 to the log and, when
 * asked, as a table to stderr. */

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "log_internal.h"
#include "policy.h"

enum { NT = SKEWSHIM_COUNTER_SLOTS };
/* The uint64 counters of skewshim_totals, packed for one SUM reduction. */
enum {
    U_CALLS = 0, U_BYTES = NT, U_FALLBACKS = 2 * NT, U_PASSED = 3 * NT, U_PASSED_CALLS = 4 * NT,
    U_LARGE = 5 * NT,
    U_HITS, U_LOOKUPS, U_DECIDED, U_N = U_DECIDED + SKEWSHIM_DECIDED_COUNT
};

static void human_bytes(double v, char *out, size_t len)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int k = 0;
    while (v >= 1024.0 && k < 5) {
        v /= 1024.0;
        k++;
    }
    snprintf(out, len, k ? "%.1f %s" : "%.0f %s", v, unit[k]);
}

static void summary_stderr(const uint64_t *u, const double *tm)
{
    char stack[2048], tmp[32], hb[32];
    sbuf b;
    skewshim_sb_init(&b, stack, sizeof stack);
    uint64_t ncalls = 0;
    for (int a = 0; a < NT; a++) ncalls += u[U_CALLS + a];
    skewshim_sb_printf(&b, "skewshim: %" PRIu64 " MPI_Alltoallv calls\n", ncalls);
    if (ncalls) {
        skewshim_sb_printf(&b, "skewshim: %-14s %10s %12s %12s\n", "algorithm", "calls",
                           "time_s", "bytes");
        for (int a = 0; a < NT; a++) {
            if (!u[U_CALLS + a]) continue;
            human_bytes((double)u[U_BYTES + a], hb, sizeof hb);
            skewshim_sb_printf(&b, "skewshim: %-14s %10" PRIu64 " %12.6f %12s\n",
                               skewshim_log_algo_name(a, tmp, sizeof tmp), u[U_CALLS + a],
                               tm[a], hb);
        }
    }
    uint64_t decided = 0;
    for (int d = 1; d < SKEWSHIM_DECIDED_COUNT; d++) decided += u[U_DECIDED + d];
    if (decided) {
        /* What the choice cost: only the agreed calls paid a collective. */
        skewshim_sb_printf(&b, "skewshim: calls decided:");
        const char *sep = " ";
        for (int d = 1; d < SKEWSHIM_DECIDED_COUNT; d++) {
            if (!u[U_DECIDED + d]) continue;
            skewshim_sb_printf(&b, "%s%s %" PRIu64, sep, skewshim_decided_name(d),
                               u[U_DECIDED + d]);
            sep = ", ";
        }
        skewshim_sb_printf(&b, " (only agreed ones paid a collective to choose)\n");
    }
    for (int r = 1; r < NT; r++)
        if (u[U_FALLBACKS + r])
            skewshim_sb_printf(&b, "skewshim: fallback %-20s %10" PRIu64 "\n",
                               skewshim_log_reason_name(r, tmp, sizeof tmp),
                               u[U_FALLBACKS + r]);
    for (int a = 0; a < NT; a++)
        if (u[U_PASSED + a])
            skewshim_sb_printf(&b, "skewshim: rules for %s passed over on %" PRIu64
                               " communicator(s): it cannot run, or does not pay off,"
                               " on their nodes\n",
                               skewshim_log_algo_name(a, tmp, sizeof tmp), u[U_PASSED + a]);
    for (int a = 0; a < NT; a++)
        if (u[U_PASSED_CALLS + a])
            skewshim_sb_printf(&b, "skewshim: rules for %s passed over on %" PRIu64
                               " agreed call(s): their blocks leave it too few"
                               " messages to save\n",
                               skewshim_log_algo_name(a, tmp, sizeof tmp),
                               u[U_PASSED_CALLS + a]);
    if (u[U_LARGE])
        skewshim_sb_printf(&b, "skewshim: large-count calls passed through: %" PRIu64 "\n",
                           u[U_LARGE]);
    if (u[U_LOOKUPS])
        skewshim_sb_printf(&b, "skewshim: plan cache %" PRIu64 "/%" PRIu64 " hits (%.1f%%)\n",
                           u[U_HITS], u[U_LOOKUPS],
                           100.0 * (double)u[U_HITS] / (double)u[U_LOOKUPS]);
    if (!b.err) (void)skewshim_log_write_all(STDERR_FILENO, b.p, b.n);
    skewshim_sb_free(&b);
}

typedef const char *(*slot_name)(int, char *, size_t);

static const char *decided_name(int d, char *tmp, size_t len)
{
    (void)tmp;
    (void)len;
    return skewshim_decided_name(d);
}

/* One map of the summary record, "key": {name: value, ...}, over the
 * slots from..n-1 whose shown count is not zero (reasons and ways of
 * deciding start at 1: their slot 0 is none); the values are uv's, or
 * dv's when uv is NULL. */
static void put_map(sbuf *b, const char *key, int first_key, const uint64_t *shown,
                    const uint64_t *uv, const double *dv, slot_name name, int from, int n)
{
    char tmp[32];
    skewshim_sb_key(b, key, first_key);
    skewshim_sb_cat(b, "{");
    int first = 1;
    for (int i = from; i < n; i++) {
        if (!shown[i]) continue;
        skewshim_sb_key(b, name(i, tmp, sizeof tmp), first);
        if (uv)
            skewshim_sb_u64(b, uv[i]);
        else
            skewshim_sb_num(b, dv[i]);
        first = 0;
    }
    skewshim_sb_cat(b, "}");
}

int skewshim_log_summary(const skewshim_totals *t, MPI_Comm world, int to_stderr)
{
    /* Rank-invariant test: either every rank reduces or none does. */
    if (skewshim_log_level() < SKEWSHIM_LOG_SUMMARY && !to_stderr) return 0;
    if (!t) return -1;
    int rank = 0;
    PMPI_Comm_rank(world, &rank);

    uint64_t u[U_N], ur[U_N];
    double tm[NT];
    memcpy(u + U_CALLS, t->calls, sizeof t->calls);
    memcpy(u + U_BYTES, t->bytes, sizeof t->bytes);
    memcpy(u + U_FALLBACKS, t->fallbacks, sizeof t->fallbacks);
    memcpy(u + U_PASSED, t->passed_over, sizeof t->passed_over);
    memcpy(u + U_PASSED_CALLS, t->passed_over_calls, sizeof t->passed_over_calls);
    u[U_LARGE] = t->large_count_calls;
    u[U_HITS] = t->plan_cache_hits;
    u[U_LOOKUPS] = t->plan_cache_lookups;
    memcpy(u + U_DECIDED, t->decided, sizeof t->decided);
    int rc = PMPI_Reduce(u, ur, U_N, MPI_UINT64_T, MPI_SUM, 0, world);
    if (rc == MPI_SUCCESS) rc = PMPI_Reduce(t->time, tm, NT, MPI_DOUBLE, MPI_MAX, 0, world);
    if (rc != MPI_SUCCESS || rank != 0) return rc;

    if (skewshim_log_level() >= SKEWSHIM_LOG_SUMMARY) {
        char stack[2048];
        sbuf b;
        skewshim_sb_init(&b, stack, sizeof stack);
        skewshim_sb_cat(&b, "{\"summary\": {");
        const slot_name algo = skewshim_log_algo_name, why = skewshim_log_reason_name;
        put_map(&b, "calls", 1, ur + U_CALLS, ur + U_CALLS, NULL, algo, 0, NT);
        put_map(&b, "time_s", 0, ur + U_CALLS, NULL, tm, algo, 0, NT);
        put_map(&b, "bytes", 0, ur + U_CALLS, ur + U_BYTES, NULL, algo, 0, NT);
        put_map(&b, "decided", 0, ur + U_DECIDED, ur + U_DECIDED, NULL, decided_name, 1,
                SKEWSHIM_DECIDED_COUNT);
        put_map(&b, "fallbacks", 0, ur + U_FALLBACKS, ur + U_FALLBACKS, NULL, why, 1, NT);
        put_map(&b, "passed_over", 0, ur + U_PASSED, ur + U_PASSED, NULL, algo, 0, NT);
        put_map(&b, "passed_over_calls", 0, ur + U_PASSED_CALLS, ur + U_PASSED_CALLS, NULL, algo,
                0, NT);
        skewshim_sb_cat(&b, ", ");
        skewshim_sb_key(&b, "large_count_calls", 1);
        skewshim_sb_u64(&b, ur[U_LARGE]);
        skewshim_sb_cat(&b, ", \"plan_cache\": {\"hits\": ");
        skewshim_sb_u64(&b, ur[U_HITS]);
        skewshim_sb_cat(&b, ", \"lookups\": ");
        skewshim_sb_u64(&b, ur[U_LOOKUPS]);
        skewshim_sb_cat(&b, "}}}\n");
        skewshim_log_write_lines(&b);
        skewshim_sb_free(&b);
    }
    if (to_stderr) summary_stderr(ur, tm);
    return 0;
}
