#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* The workload generators: determinism (all ranks must build the same
 * matrix without talking), bounds, the shapes each kind promises, and the
 * replay reader on a log with good, foreign and malformed lines. */

#define _POSIX_C_SOURCE 200809L   /* mkstemp, fdopen */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tap.h"
#include "workload/workload.h"

enum { P = 16 };
static uint64_t a[P * P], b[P * P];

static skewshim_wl wl(int kind, uint64_t S, double param, uint64_t seed)
{
    skewshim_wl w = { .kind = kind, .S = S, .param = param, .seed = seed };
    return w;
}

static uint64_t max_of(const uint64_t *c, size_t n)
{
    uint64_t m = 0;
    for (size_t k = 0; k < n; k++)
        m = c[k] > m ? c[k] : m;
    return m;
}

static int cmp_desc(const void *x, const void *y)
{
    uint64_t u = *(const uint64_t *)x, v = *(const uint64_t *)y;
    return (u < v) - (u > v);
}

static void test_names(void)
{
    int ok = 1;
    for (int k = 0; k < SKEWSHIM_WL_COUNT; k++)
        ok &= skewshim_wl_from_name(skewshim_wl_name(k)) == k;
    TAP_OK(ok, "every kind's name maps back to the kind");
    TAP_OK(skewshim_wl_from_name("nosuch") == -1 && skewshim_wl_from_name(NULL) == -1,
           "unknown name is -1");
    TAP_OK(skewshim_wl_from_name("moe") == SKEWSHIM_WL_MOE, "\"moe\" is MoE");
}

static void test_determinism_and_bounds(void)
{
    const uint64_t S = 1000;
    for (int k = 0; k < SKEWSHIM_WL_COUNT; k++) {
        skewshim_wl w = wl(k, S, 0, 42);
        int rc = skewshim_wl_matrix(&w, P, a) | skewshim_wl_matrix(&w, P, b);
        TAP_OK(rc == 0 && memcmp(a, b, sizeof a) == 0, "%s: same seed, same matrix",
               skewshim_wl_name(k));
        TAP_OK(max_of(a, P * P) <= S, "%s: every block <= S", skewshim_wl_name(k));
        if (k == SKEWSHIM_WL_UNIFORM || k == SKEWSHIM_WL_NORMAL ||
            k == SKEWSHIM_WL_POWER || k == SKEWSHIM_WL_ZIPF || k == SKEWSHIM_WL_MOE) {
            skewshim_wl w2 = wl(k, S, 0, 43);
            skewshim_wl_matrix(&w2, P, b);
            TAP_OK(memcmp(a, b, sizeof a) != 0, "%s: another seed, another matrix",
                   skewshim_wl_name(k));
        }
        if (k != SKEWSHIM_WL_UNIFORM && k != SKEWSHIM_WL_NORMAL && k != SKEWSHIM_WL_ZERO)
            TAP_OK(max_of(a, P * P) == S, "%s: largest block is exactly S",
                   skewshim_wl_name(k));
    }
    skewshim_wl bad = wl(SKEWSHIM_WL_POWER, S, 1.5, 1);
    TAP_OK(skewshim_wl_matrix(&bad, P, a) == -1, "power with x > 1 is refused");
    skewshim_wl eq = wl(SKEWSHIM_WL_EQUAL, S, 0, 1);
    TAP_OK(skewshim_wl_matrix(&eq, 0, a) == -1, "P = 0 is refused");
    skewshim_wl unk = wl(SKEWSHIM_WL_COUNT, S, 0, 1);
    TAP_OK(skewshim_wl_matrix(&unk, P, a) == -1, "unknown kind is refused");
}

static void test_shapes(void)
{
    const uint64_t S = 4096;
    skewshim_wl w = wl(SKEWSHIM_WL_ZERO, S, 0, 7);
    skewshim_wl_matrix(&w, P, a);
    TAP_OK(max_of(a, P * P) == 0, "zero: every block 0");

    w = wl(SKEWSHIM_WL_EQUAL, S, 0, 7);
    skewshim_wl_matrix(&w, P, a);
    int ok = 1;
    for (int k = 0; k < P * P; k++)
        ok &= a[k] == S;
    TAP_OK(ok, "equal: every block S");

    /* A uniform [0,S] sample of 256 blocks: mean near S/2, both ends reached. */
    w = wl(SKEWSHIM_WL_UNIFORM, S, 0, 7);
    skewshim_wl_matrix(&w, P, a);
    double sum = 0;
    uint64_t mn = S;
    for (int k = 0; k < P * P; k++) {
        sum += (double)a[k];
        mn = a[k] < mn ? a[k] : mn;
    }
    TAP_OK(fabs(sum / (P * P) - S / 2.0) < 0.1 * S, "uniform: mean %.0f near S/2",
           sum / (P * P));
    TAP_OK(mn < S / 10 && max_of(a, P * P) > S - S / 10, "uniform: spans [0,S]");

    w = wl(SKEWSHIM_WL_NORMAL, S, 0.1, 7);
    skewshim_wl_matrix(&w, P, a);
    sum = 0;
    double sq = 0;
    for (int k = 0; k < P * P; k++) {
        sum += (double)a[k];
        sq += (double)a[k] * (double)a[k];
    }
    double mean = sum / (P * P), sd = sqrt(sq / (P * P) - mean * mean);
    TAP_OK(fabs(mean - S / 2.0) < 0.05 * S && fabs(sd - 0.1 * S) < 0.03 * S,
           "normal(0.1): mean %.0f sd %.0f", mean, sd);

    /* Power law: each row, sorted, is S * x^j. */
    w = wl(SKEWSHIM_WL_POWER, S, 0.5, 7);
    skewshim_wl_matrix(&w, P, a);
    ok = 1;
    int shuffled = 0;
    for (int i = 0; i < P; i++) {
        memcpy(b, a + i * P, P * sizeof *b);
        shuffled |= b[0] != S;   /* unshuffled rows would all start with S */
        qsort(b, P, sizeof *b, cmp_desc);
        for (int j = 0; j < P; j++)
            ok &= b[j] == (uint64_t)floor(S * pow(0.5, j) + 0.5);
    }
    TAP_OK(ok, "power(0.5): every row holds S * 0.5^j");
    TAP_OK(shuffled, "power: rows are shuffled");
}

static void test_hot(void)
{
    const uint64_t S = 1600;
    skewshim_wl w = wl(SKEWSHIM_WL_HOT_SEND, S, 0, 21);   /* hot rank 21 % 16 = 5 */
    skewshim_wl_matrix(&w, P, a);
    int ok = 1;
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++)
            ok &= a[i * P + j] == (i == 5 ? S : S / 16);
    TAP_OK(ok, "hot_send: row 5 all S, the rest S/16");

    w = wl(SKEWSHIM_WL_HOT_RECV, S, 0.25, 21);
    skewshim_wl_matrix(&w, P, a);
    ok = 1;
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++)
            ok &= a[i * P + j] == (j == 5 ? S : S / 4);
    TAP_OK(ok, "hot_recv(0.25): column 5 all S, the rest S/4");
}

static void test_zipf(void)
{
    const uint64_t S = 100000;
    skewshim_wl w = wl(SKEWSHIM_WL_ZIPF, S, 0.9, 3);
    skewshim_wl_matrix(&w, P, a);
    memcpy(b, a, sizeof a);
    qsort(b, P * P, sizeof *b, cmp_desc);
    int ok = 1;
    for (int k = 1; k <= P * P; k++)
        ok &= b[k - 1] == (uint64_t)floor(S / pow(k, 0.9) + 0.5);
    TAP_OK(ok, "zipf(0.9): the k-th largest block is S / k^0.9");

    /* A larger exponent concentrates more of the traffic in the top block. */
    double share[2];
    double s[2] = { 0.4, 0.9 };
    for (int t = 0; t < 2; t++) {
        w = wl(SKEWSHIM_WL_ZIPF, S, s[t], 3);
        skewshim_wl_matrix(&w, P, a);
        double tot = 0;
        for (int k = 0; k < P * P; k++)
            tot += (double)a[k];
        share[t] = (double)max_of(a, P * P) / tot;
    }
    TAP_OK(share[1] > 2 * share[0], "zipf: s=0.9 top share %.3f > 2 x s=0.4 share %.3f",
           share[1], share[0]);
}

static void test_moe(void)
{
    skewshim_wl w = { .kind = SKEWSHIM_WL_MOE, .S = 10000, .param = 0.9, .seed = 11,
                      .topk = 3, .tokens = 500 };
    skewshim_wl_moe_tokens(&w, P, a);
    int ok = 1, distinct = 1;
    for (int i = 0; i < P; i++) {
        uint64_t row = 0;
        for (int j = 0; j < P; j++) {
            row += a[i * P + j];
            distinct &= a[i * P + j] <= 500;
        }
        ok &= row == 500 * 3;
    }
    TAP_OK(ok, "moe: every row routes tokens * topk = 1500");
    TAP_OK(distinct, "moe: no expert gets a token twice (block <= tokens)");

    uint64_t colmax = 0, colmin = UINT64_MAX;
    for (int j = 0; j < P; j++) {
        uint64_t col = 0;
        for (int i = 0; i < P; i++)
            col += a[i * P + j];
        colmax = col > colmax ? col : colmax;
        colmin = col < colmin ? col : colmin;
    }
    TAP_OK(colmax > 3 * colmin, "moe(0.9): popular expert %llu tokens, least %llu",
           (unsigned long long)colmax, (unsigned long long)colmin);

    skewshim_wl_matrix(&w, P, b);
    TAP_OK(max_of(b, P * P) == 10000, "moe: scaled so the largest block is S");
    ok = 1;
    uint64_t tmax = max_of(a, P * P);
    for (int k = 0; k < P * P; k++)
        ok &= llabs((long long)b[k] - (long long)(a[k] * 10000 / tmax)) <= 1;
    TAP_OK(ok, "moe: blocks proportional to the routed tokens");

    w.topk = P + 5;   /* clamped to P: every expert gets every token */
    skewshim_wl_moe_tokens(&w, P, a);
    ok = 1;
    for (int k = 0; k < P * P; k++)
        ok &= a[k] == 500;
    TAP_OK(ok, "moe: topk >= P routes every token everywhere");
}

static const char log_text[] =
    "{\"call\": {\"index\": 0, \"algo\": \"tuna\"}}\n"
    "{\"matrix\": {\"call\": 0, \"comm\": 0, \"P\": 2, \"ranks_per_node\": 1, "
    "\"type_size\": 1, \"bytes\": [[0, 5], [7, 18446744073709551615]]}}\n"
    "\n"
    "{\"summary\": {\"matrix\": 3}}\n"
    "  {\"matrix\":{\"bytes\":[[1,2,3],[4,5,6],[7,8,9]],\"note\":{\"a\":[1,\"x\"]},"
    "\"P\":3,\"type_size\":8,\"ranks_per_node\":2}}\n"
    "{\"matrix\": {\"call\": 2, \"P\": 2, \"bytes\": [[1, 2], [3]]}}\n";

static void test_replay(void)
{
    char path[] = "/tmp/test_workload_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        TAP_OK(0, "temporary log file");
        return;
    }
    fputs(log_text, f);
    fclose(f);

    skewshim_matrix m = { 0, NULL };
    int q = -1, ts = -1;
    char err[256];
    int rc = skewshim_wl_replay_load(path, 0, &m, &q, &ts, err, sizeof err);
    TAP_OK(rc == 0 && m.nranks == 2 && q == 1 && ts == 1 && m.b[0] == 0 && m.b[1] == 5 &&
           m.b[2] == 7 && m.b[3] == UINT64_MAX, "replay: matrix 0 read (%s)", err);
    skewshim_matrix_free(&m);

    rc = skewshim_wl_replay_load(path, 1, &m, &q, &ts, err, sizeof err);
    int ok = rc == 0 && m.nranks == 3 && q == 2 && ts == 8;
    for (int k = 0; ok && k < 9; k++)
        ok &= m.b[k] == (uint64_t)k + 1;
    TAP_OK(ok, "replay: matrix 1 read with keys reordered and an unknown key (%s)", err);
    skewshim_matrix_free(&m);

    rc = skewshim_wl_replay_load(path, 2, &m, &q, &ts, err, sizeof err);
    char where[300];
    snprintf(where, sizeof where, "%s:6:", path);
    TAP_OK(rc == -1 && strncmp(err, where, strlen(where)) == 0,
           "replay: malformed matrix names file and line: %s", err);

    rc = skewshim_wl_replay_load(path, 3, &m, &q, &ts, err, sizeof err);
    TAP_OK(rc == -1 && strstr(err, path) && strstr(err, "has 3"),
           "replay: index past the end: %s", err);
    unlink(path);

    rc = skewshim_wl_replay_load(path, 0, &m, &q, &ts, err, sizeof err);
    TAP_OK(rc == -1 && strstr(err, path), "replay: missing file: %s", err);
}

/* The label the harness's failure reports and the bench's CSV carry: MoE's
 * defaults written out, so that two runs of one matrix shape say the same. */
static void test_labels(void)
{
    static const struct { skewshim_wl w; const char *want; } cases[] = {
        { { .kind = SKEWSHIM_WL_UNIFORM }, "uniform" },
        { { .kind = SKEWSHIM_WL_ZIPF, .param = 0.4 }, "zipf(0.4)" },
        { { .kind = SKEWSHIM_WL_MOE }, "moe(s=0.8,k=2)" },
        { { .kind = SKEWSHIM_WL_MOE, .param = 1.2, .topk = 4 }, "moe(s=1.2,k=4)" },
        { { .kind = SKEWSHIM_WL_COUNT }, "unknown" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char got[64];
        skewshim_wl_label(&cases[i].w, got, sizeof got);
        TAP_OK(strcmp(got, cases[i].want) == 0, "label: %s (want %s)", got, cases[i].want);
    }
    char small[6];
    skewshim_wl_label(&cases[3].w, small, sizeof small);
    TAP_OK(strcmp(small, "moe(s") == 0, "label: cut to the buffer and terminated (%s)", small);
}

int main(void)
{
    test_names();
    test_determinism_and_bounds();
    test_shapes();
    test_hot();
    test_zipf();
    test_moe();
    test_replay();
    test_labels();
    return TAP_DONE();
}
