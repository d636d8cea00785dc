#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* What rank 0 prints: the header (reproduce line, run, MPI library, column
 * heads), then per point the median/min/max over iterations, the ratio to
 * native and the status, as a table and optionally as CSV.  The CSV adds
 * the mean, which is what a job pays: the median hides the calls that
 * agree once in a while and those that ran an outcome reused from before
 * the exchange changed. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "bench.h"
#include "skewshim.h"

static int g_label_width = 30;   /* widest algo label, for aligned columns */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct stats { double median, min, max, mean; } stats;

static stats stats_of(double *v, int n)
{
    stats s;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    s.min = v[0];
    s.max = v[n - 1];
    s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    s.mean = 0;
    for (int i = 0; i < n; i++)
        s.mean += v[i];
    s.mean /= n;
    return s;
}

static void csv_field(FILE *f, const char *s, int last)
{
    if (strpbrk(s, ",\"")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
    fputc(last ? '\n' : ',', f);
}

/* A fallback must never read as a result of the algorithm asked for. */
static void status_of(const opts *o, const item *x, char *out, size_t len)
{
    if (strcmp(x->algo, BENCH_MEMCPY) == 0)
        snprintf(out, len, "copy");
    else if (x->fallbacks == o->iters)
        snprintf(out, len, "FALLBACK(%s)", x->reason);
    else if (x->fallbacks)
        snprintf(out, len, "FALLBACK(%s)x%d/%d", x->reason, x->fallbacks, o->iters);
    else if (strcmp(x->algo, "auto") == 0 || strcmp(x->algo, x->ran) != 0)
        snprintf(out, len, "ran=%s%s", x->ran, o->reference == REF_NONE ? " unchecked" : "");
    else
        snprintf(out, len, "%s", o->reference == REF_NONE ? "unchecked" : "ok");
}

/* "scattered:6;tuna_hier:144" when the timed calls ran more than one
 * thing, else empty. */
static void ran_mix(const item *x, char *out, size_t len)
{
    out[0] = '\0';
    if (x->nseen < 2)
        return;
    size_t at = 0;
    for (int k = 0; k < x->nseen && at < len; k++) {
        int w = snprintf(out + at, len - at, "%s%s:%d", k ? ";" : "", x->seen[k], x->seen_n[k]);
        if (w < 0)
            break;
        at += (size_t)w;
    }
}

/* The item the ratio column divides by: --baseline (a label or an
 * algorithm), else native; -1 when the run has none. */
static int baseline_item(const opts *o)
{
    const char *b = o->baseline[0] ? o->baseline : "native";
    for (int i = 0; i < o->nitems; i++)
        if (strcmp(o->items[i].label, b) == 0)
            return i;
    for (int i = 0; i < o->nitems; i++)
        if (strcmp(o->items[i].algo, b) == 0)
            return i;
    return -1;
}

void skewshim_bench_report(const opts *o, const double *tmax, const char *wl, uint64_t S,
                           int q, double t_lb, FILE *csv)
{
    int n = o->nitems;
    double *col = malloc((size_t)o->iters * sizeof *col);
    stats *st = malloc((size_t)n * sizeof *st);
    if (!col || !st) {
        free(col);
        free(st);
        return;
    }
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < o->iters; k++)
            col[k] = tmax[(size_t)k * n + i] * 1e6;
        st[i] = stats_of(col, o->iters);
    }
    int b = baseline_item(o);
    double base = b >= 0 ? st[b].median : -1, lb_us = t_lb * 1e6;
    for (int i = 0; i < n; i++) {
        const item *x = &o->items[i];
        char ratio[32], xlb[32], status[128];
        if (base > 0)
            snprintf(ratio, sizeof ratio, "%.3f", st[i].median / base);
        else
            snprintf(ratio, sizeof ratio, "-");
        if (lb_us > 0)
            snprintf(xlb, sizeof xlb, "%.2f", st[i].median / lb_us);
        else
            snprintf(xlb, sizeof xlb, "-");
        status_of(o, x, status, sizeof status);
        char planned[32] = "", agreed[32] = "", mix[160] = "";
        if (x->planned > 0)
            snprintf(planned, sizeof planned, " planned %d/%d", x->planned, o->iters);
        if (x->agreed > 0)
            snprintf(agreed, sizeof agreed, " agreed %d/%d", x->agreed, o->iters);
        ran_mix(x, mix, sizeof mix);
        printf("%-18s %9llu  %-*s %11.2f %11.2f %11.2f %7s %6s  %s%s%s%s%s\n", wl,
               (unsigned long long)S, g_label_width, x->label, st[i].median, st[i].min,
               st[i].max, ratio, xlb, status, planned, agreed, *mix ? " mix " : "", mix);
        if (csv) {
            char num[64];
            csv_field(csv, wl, 0);
            fprintf(csv, "%d,%d,%s,%llu,", skewshim_bench_size, q, o->type_name,
                    (unsigned long long)S);
            csv_field(csv, x->label, 0);
            for (int k = 0; k < 3; k++) {
                double v = k == 0 ? st[i].median : k == 1 ? st[i].min : st[i].max;
                snprintf(num, sizeof num, "%.3f", v);
                csv_field(csv, num, 0);
            }
            csv_field(csv, ratio, 0);
            csv_field(csv, status, 0);
            snprintf(num, sizeof num, "%.3f", lb_us);
            csv_field(csv, lb_us > 0 ? num : "", 0);
            csv_field(csv, lb_us > 0 ? xlb : "", 0);
            snprintf(num, sizeof num, "%d", x->planned);
            csv_field(csv, x->planned >= 0 ? num : "", 0);
            snprintf(num, sizeof num, "%.3f", st[i].mean);
            csv_field(csv, num, 0);
            snprintf(num, sizeof num, "%d", x->agreed);
            csv_field(csv, num, 0);
            csv_field(csv, mix, 1);
        }
    }
    fflush(stdout);
    if (csv)
        fflush(csv);
    free(col);
    free(st);
}

static void print_reproduce(int argc, char **argv)
{
    printf("# reproduce: mpiexec -n %d", skewshim_bench_size);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (*a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                            "0123456789_./:=,+-@%") == strlen(a)) {
            printf(" %s", a);
            continue;
        }
        /* Single quotes make any argument literal for a POSIX shell. */
        printf(" '");
        for (; *a; a++)
            if (*a == '\'')
                printf("'\\''");
            else
                putchar(*a);
        printf("'");
    }
    printf("\n");
}

/* The lines above the table and the CSV's column heads (rank 0). */
void skewshim_bench_print_header(const opts *o, int q, int argc, char **argv, FILE *csv)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n,")] = '\0';
    print_reproduce(argc, argv);
    char qs[16];
    snprintf(qs, sizeof qs, q ? "%d" : "policy", q);
    printf("# skewshim-bench %s: P=%d ranks_per_node=%s type=%s(%d B) iters=%d "
           "warmup=%d seed=%llu%s buffers=%s\n# mpi: %s\n", SKEWSHIM_VERSION,
           skewshim_bench_size, qs, o->type_name, o->tsize, o->iters, o->warmup,
           (unsigned long long)o->seed, o->vary ? " vary" : "", o->device ? "device" : "host",
           lib);
    if (o->nalternate) {
        printf("# --alternate ");
        for (int k = 0; k < o->nalternate; k++)
            printf("%s%llu", k ? "," : "", (unsigned long long)o->alternate[k]);
        printf(": each timed call follows an untimed call of the same item on the workload "
               "at each of these sizes, in turn\n");
    }
    if (o->reference == REF_NONE)
        printf("# --reference none: timing only, no item's result is checked\n");
    if (skewshim_bench_size == 1)
        printf("# warning: one rank; was the launcher from the MPI this was built with?\n");
    printf("# times in us: max over ranks per iteration, then median/min/max over "
           "iterations; ratio = median / %s median",
           o->baseline[0] ? o->baseline : "native");
    if (o->link_gbps > 0)
        printf("; x_lb = median / T_LB (max node inter-node bytes / (ranks_per_node * "
               "%g GB/s))", o->link_gbps);
    printf("\n");
    for (int i = 0; i < o->nitems; i++)
        if ((int)strlen(o->items[i].label) > g_label_width)
            g_label_width = (int)strlen(o->items[i].label);
    printf("%-18s %9s  %-*s %11s %11s %11s %7s %6s  %s\n", "workload", "S_bytes",
           g_label_width, "algo", "median_us", "min_us", "max_us", "ratio", "x_lb", "status");
    if (csv)
        fprintf(csv, "workload,P,ranks_per_node,type,S_bytes,algo,median_us,min_us,"
                     "max_us,ratio,status,t_lb_us,x_lb,planned,mean_us,agreed,ran_mix\n");
    fflush(stdout);
}
