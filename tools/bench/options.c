#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* The command line of skewshim-bench (doc/bench.md) and the shim parameters
 * it sets: parsing with its messages, the check of every parameter name
 * before any timing, and applying/restoring one --algos item around a call. */

#define _POSIX_C_SOURCE 200809L   /* strtok_r */

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "skewshim.h"
#include "workload/workload.h"

/* Errors in the options are the same on every rank (same argv), so every
 * rank stops on its own without talking; only rank 0 says why. */
static int usage_error(const char *fmt, const char *arg)
{
    if (skewshim_bench_rank == 0) {
        fprintf(stderr, "skewshim-bench: ");
        fprintf(stderr, fmt, arg);
        fprintf(stderr, "\n(see doc/bench.md or --help)\n");
    }
    return -1;
}

void skewshim_bench_print_help(void)
{
    printf(
        "usage: mpiexec -n P skewshim-bench [options]\n"
        "  --algos LIST        algorithms, comma separated, each with optional\n"
        "                      :key=value parameters (tuna:radix=4,native,auto)\n"
        "                      default native,auto; the item memcpy times one\n"
        "                      copy of the rank's payload (the bandwidth bound)\n"
        "  --baseline NAME     the item the ratio column divides by (native)\n"
        "  --link-gbps C       per-rank inter-node link, GB/s: adds x_lb =\n"
        "                      median / T_LB (needs --ranks-per-node)\n"
        "  --workload NAME     equal uniform normal power zipf zero hot_send\n"
        "                      hot_recv moe (default uniform)\n"
        "  --param X           workload parameter (see doc/bench.md)\n"
        "  --topk K            moe: experts per token (default 2)\n"
        "  --tokens T          moe: tokens per rank (default 1024)\n"
        "  --sizes LIST|A:B    largest block S in bytes; A:B = powers of 4\n"
        "                      from A to B (default 16:65536); k/m suffixes\n"
        "  --type T            byte, int or double (default byte)\n"
        "  --iters N           timed iterations (default 20)\n"
        "  --warmup W          untimed iterations first (default 3)\n"
        "  --ranks-per-node Q  emulate nodes of Q consecutive ranks\n"
        "  --set NAME=VALUE    any shim parameter for the whole run\n"
        "  --replay FILE[:I]   matrix I (default 0) of a matrix-level log\n"
        "  --csv FILE          also write the rows as CSV\n"
        "  --seed N            workload seed (default 1)\n"
        "  --vary              a new matrix every iteration (seed + 1 + i),\n"
        "                      each call checked after its timing: an\n"
        "                      exchange that changes every call (MoE)\n"
        "  --reference R       what items are held to: mpi (PMPI_Alltoallv,\n"
        "                      itself held to the pattern) or pattern (the\n"
        "                      pattern alone, for thousands of ranks) or\n"
        "                      none (timing only: no result is checked, and\n"
        "                      every status says unchecked)\n"
        "  --alternate S2[,S3,...]  a job of two to eight exchanges in turn:\n"
        "                      before each call at S, the same item makes one\n"
        "                      untimed call on the workload at each of S2, S3,\n"
        "                      ... S8 (same seed; all checked first)\n"
        "  --device            device buffers (CUDA builds)\n");
}

/* ---- option parsing ---- */

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!s || *s < '0' || *s > '9')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    uint64_t mul = 1;
    if (*end == 'k' || *end == 'K')
        mul = 1024, end++;
    else if (*end == 'm' || *end == 'M')
        mul = 1024 * 1024, end++;
    if (*end != '\0' || v > UINT64_MAX / mul)
        return -1;
    *out = (uint64_t)v * mul;
    return 0;
}

static int parse_int(const char *s, int lo, int *out)
{
    uint64_t v;
    if (parse_u64(s, &v) || v < (uint64_t)lo || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

/* A comma-separated list of sizes into out (buf is cut up): how many, or
 * -1 for a bad one or more than max. */
static int size_list(char *buf, uint64_t *out, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == max || parse_u64(tok, &out[n]))
            return -1;
        n++;
    }
    return n;
}

static int parse_sizes(opts *o, const char *arg)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", arg);
    char *colon = strchr(buf, ':');
    o->nsizes = 0;
    if (colon) {
        uint64_t a, b;
        *colon = '\0';
        if (parse_u64(buf, &a) || parse_u64(colon + 1, &b) || a == 0 || b < a)
            return usage_error("bad --sizes range '%s' (want A:B, 0 < A <= B)", arg);
        for (uint64_t s = a; s <= b && o->nsizes < MAX_SIZES; s *= 4)
            o->sizes[o->nsizes++] = s;
        return 0;
    }
    int n = size_list(buf, o->sizes, MAX_SIZES);
    if (n < 0)
        return usage_error("bad --sizes list '%s'", arg);
    o->nsizes = n;
    return n ? 0 : usage_error("empty --sizes '%s'", arg);
}

static int parse_alternate(opts *o, const char *arg)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", arg);
    int n = size_list(buf, o->alternate, MAX_ALTERNATE), zero = 0;
    for (int k = 0; k < n; k++)
        zero |= !o->alternate[k];
    if (n <= 0 || zero)
        return usage_error("bad --alternate '%s' (1 to 7 sizes in bytes, > 0)", arg);
    o->nalternate = n;
    return 0;
}

/* "tuna:radix=4" -> algo tuna, tuna.radix = 4.  A key with a dot, or one of
 * the global names, is passed as it is ("auto:sabre.alpha=1.2"). */
static int parse_item(item *it, const char *spec)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    memset(it, 0, sizeof *it);
    char *save = NULL;
    char *tok = strtok_r(buf, ":", &save);
    if (!tok || strlen(tok) >= sizeof it->algo)
        return usage_error("bad algorithm '%s'", spec);
    char algo[sizeof it->algo];
    strcpy(algo, tok);
    strcpy(it->algo, algo);
    size_t ll = (size_t)snprintf(it->label, sizeof it->label, "%s", tok);
    while ((tok = strtok_r(NULL, ":", &save))) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || it->npar == MAX_PARAMS)
            return usage_error("bad parameter in '%s' (want algo:key=value)", spec);
        *eq = '\0';
        kv *p = &it->par[it->npar++];
        if (strchr(tok, '.') || strcmp(tok, "max_temp_bytes") == 0)
            snprintf(p->name, sizeof p->name, "%s", tok);
        else
            snprintf(p->name, sizeof p->name, "%s.%s", algo, tok);
        snprintf(p->value, sizeof p->value, "%s", eq + 1);
        if (ll < sizeof it->label)
            ll += (size_t)snprintf(it->label + ll, sizeof it->label - ll, "%s%s=%s",
                                   it->npar == 1 ? "(" : ",", tok, eq + 1);
    }
    if (it->npar && ll < sizeof it->label)
        snprintf(it->label + ll, sizeof it->label - ll, ")");
    return 0;
}

static int parse_algos(opts *o, const char *arg)
{
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", arg);
    o->nitems = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (o->nitems == MAX_ITEMS)
            return usage_error("too many --algos items in '%s'", arg);
        if (parse_item(&o->items[o->nitems++], tok))
            return -1;
    }
    return o->nitems ? 0 : usage_error("empty --algos '%s'", arg);
}

int skewshim_bench_add_set(opts *o, const char *name, const char *value)
{
    for (int k = 0; k < o->nset; k++)
        if (strcmp(o->set[k].name, name) == 0) {
            snprintf(o->set[k].value, sizeof o->set[k].value, "%s", value);
            return 0;
        }
    if (o->nset == MAX_SETS)
        return usage_error("too many --set (max %s)", "16");
    snprintf(o->set[o->nset].name, sizeof o->set[0].name, "%s", name);
    snprintf(o->set[o->nset].value, sizeof o->set[0].value, "%s", value);
    o->nset++;
    return 0;
}

static int set_type(opts *o, const char *name)
{
    if (strcmp(name, "byte") == 0)
        o->type = MPI_BYTE, o->tsize = 1;
    else if (strcmp(name, "int") == 0)
        o->type = MPI_INT, o->tsize = (int)sizeof(int);
    else if (strcmp(name, "double") == 0)
        o->type = MPI_DOUBLE, o->tsize = (int)sizeof(double);
    else
        return usage_error("unknown --type '%s' (byte, int, double)", name);
    o->type_name = name;
    return 0;
}

/* Returns 0, 1 for --help, -1 on error. */
/* --set NAME=VALUE: a policy knob for the shim. */
static int parse_set(opts *o, const char *v)
{
    char buf[160];
    snprintf(buf, sizeof buf, "%s", v);
    char *eq = strchr(buf, '=');
    if (!eq || eq == buf)
        return usage_error("bad --set '%s' (want NAME=VALUE)", v);
    *eq = '\0';
    return skewshim_bench_add_set(o, buf, eq + 1);
}

/* --replay FILE[:INDEX]: only a colon followed by digits alone is an
 * index, so paths with colons still work. */
static int parse_replay(opts *o, const char *v)
{
    static char path[4096];
    int rc = 0;
    snprintf(path, sizeof path, "%s", v);
    char *colon = strrchr(path, ':');
    if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
        *colon = '\0';
        rc = parse_int(colon + 1, 0, &o->replay_index);
    }
    o->replay = path;
    return rc;
}

/* One --NAME VALUE option.  0, or nonzero after saying what is wrong. */
static int parse_option(opts *o, const char *a, const char *v, int *type_given)
{
    int rc = 0;
    if (strcmp(a, "--algos") == 0)
        rc = parse_algos(o, v);
    else if (strcmp(a, "--sizes") == 0)
        rc = parse_sizes(o, v);
    else if (strcmp(a, "--workload") == 0) {
        o->wl_kind = skewshim_wl_from_name(v);
        if (o->wl_kind < 0)
            rc = usage_error("unknown --workload '%s'", v);
    } else if (strcmp(a, "--param") == 0) {
        char *end;
        o->param = strtod(v, &end);
        if (*end || end == v)
            rc = usage_error("bad --param '%s'", v);
    } else if (strcmp(a, "--topk") == 0)
        rc = parse_int(v, 1, &o->topk) ? usage_error("bad --topk '%s'", v) : 0;
    else if (strcmp(a, "--tokens") == 0)
        rc = parse_int(v, 1, &o->tokens) ? usage_error("bad --tokens '%s'", v) : 0;
    else if (strcmp(a, "--type") == 0) {
        rc = set_type(o, v);
        *type_given = 1;
    } else if (strcmp(a, "--iters") == 0)
        rc = parse_int(v, 1, &o->iters) ? usage_error("bad --iters '%s'", v) : 0;
    else if (strcmp(a, "--warmup") == 0)
        rc = parse_int(v, 0, &o->warmup) ? usage_error("bad --warmup '%s'", v) : 0;
    else if (strcmp(a, "--ranks-per-node") == 0) {
        rc = parse_int(v, 1, &o->ranks_per_node)
                 ? usage_error("bad --ranks-per-node '%s'", v)
                 : skewshim_bench_add_set(o, "topology.ranks_per_node", v);
    } else if (strcmp(a, "--set") == 0)
        rc = parse_set(o, v);
    else if (strcmp(a, "--replay") == 0)
        rc = parse_replay(o, v);
    else if (strcmp(a, "--csv") == 0)
        o->csv = v;
    else if (strcmp(a, "--baseline") == 0)
        snprintf(o->baseline, sizeof o->baseline, "%s", v);
    else if (strcmp(a, "--link-gbps") == 0) {
        char *end;
        o->link_gbps = strtod(v, &end);
        if (*end || end == v || !(o->link_gbps > 0))
            rc = usage_error("bad --link-gbps '%s' (GB/s, > 0)", v);
    }
    else if (strcmp(a, "--reference") == 0) {
        if (strcmp(v, "mpi") == 0)
            o->reference = REF_MPI;
        else if (strcmp(v, "pattern") == 0)
            o->reference = REF_PATTERN;
        else if (strcmp(v, "none") == 0)
            o->reference = REF_NONE;
        else
            rc = usage_error("bad --reference '%s' (mpi, pattern or none)", v);
    } else if (strcmp(a, "--seed") == 0)
        rc = parse_u64(v, &o->seed) ? usage_error("bad --seed '%s'", v) : 0;
    else if (strcmp(a, "--alternate") == 0)
        rc = parse_alternate(o, v);
    else
        rc = usage_error("unknown option '%s'", a);
    return rc;
}

int skewshim_bench_parse_args(opts *o, int argc, char **argv, int *type_given)
{
    memset(o, 0, sizeof *o);
    o->wl_kind = SKEWSHIM_WL_UNIFORM;
    o->seed = 1;
    o->iters = 20;
    o->warmup = 3;
    *type_given = 0;
    set_type(o, "byte");
    if (parse_algos(o, "native,auto") || parse_sizes(o, "16:65536"))
        return -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            return 1;
        if (strcmp(a, "--device") == 0) {
            o->device = 1;
            continue;
        }
        if (strcmp(a, "--vary") == 0) {
            o->vary = 1;
            continue;
        }
        if (strncmp(a, "--", 2) != 0 || i + 1 >= argc)
            return usage_error("unknown option or missing value: '%s'", a);
        const char *v = argv[++i];
        if (parse_option(o, a, v, type_given))
            return -1;
    }
    /* A replayed matrix is one matrix; device buffers are checked only
     * before the timing. */
    if (o->vary && (o->replay || o->device))
        return usage_error("--vary takes generated workloads on host buffers%s", "");
    if (o->nalternate && (o->replay || o->vary))
        return usage_error("--alternate takes a generated workload, without --vary%s", "");
    for (int k = 0; k < o->nalternate; k++)
        if (o->alternate[k] % (uint64_t)o->tsize)
            return usage_error("--alternate is not a multiple of --type %s's size",
                               o->type_name);
    return 0;
}

/* ---- the shim's knobs ---- */

static const char *base_value(const opts *o, const char *name)
{
    for (int k = 0; k < o->nset; k++)
        if (strcmp(o->set[k].name, name) == 0)
            return o->set[k].value;
    return NULL;   /* the policy's value */
}

void skewshim_bench_item_apply(const item *it)
{
    skewshim_force_algorithm(strcmp(it->algo, "auto") == 0 ? NULL : it->algo);
    for (int k = 0; k < it->npar; k++)
        skewshim_set_param(it->par[k].name, it->par[k].value);
}

/* Back to the run's base, not to the policy: --ranks-per-node and --set
 * must survive an item that overrides the same name. */
void skewshim_bench_item_restore(const opts *o, const item *it)
{
    for (int k = 0; k < it->npar; k++)
        skewshim_set_param(it->par[k].name, base_value(o, it->par[k].name));
    skewshim_force_algorithm(NULL);
}

/* Check every name once, up front, so a typo fails before any timing. */
int skewshim_bench_check_knobs(const opts *o)
{
    char msg[200];
    for (int k = 0; k < o->nset; k++)
        if (skewshim_set_param(o->set[k].name, o->set[k].value) != 0) {
            snprintf(msg, sizeof msg, "%s=%s", o->set[k].name, o->set[k].value);
            return usage_error("the shim refuses parameter %s", msg);
        }
    for (int i = 0; i < o->nitems; i++) {
        const item *it = &o->items[i];
        if (strcmp(it->algo, BENCH_MEMCPY) == 0) {
            if (it->npar)
                return usage_error("the memcpy item takes no parameters ('%s')", it->label);
            continue;
        }
        if (strcmp(it->algo, "auto") != 0 && skewshim_force_algorithm(it->algo) != 0)
            return usage_error("unknown algorithm '%s'", it->algo);
        skewshim_force_algorithm(NULL);
        for (int k = 0; k < it->npar; k++) {
            int rc = skewshim_set_param(it->par[k].name, it->par[k].value);
            skewshim_set_param(it->par[k].name, base_value(o, it->par[k].name));
            if (rc != 0) {
                snprintf(msg, sizeof msg, "%s=%s (item %s)", it->par[k].name,
                         it->par[k].value, it->label);
                return usage_error("the shim refuses parameter %s", msg);
            }
        }
    }
    return 0;
}

int skewshim_bench_type_for_size(opts *o, int ts)
{
    return set_type(o, ts == 8 ? "double" : ts == 4 ? "int" : "byte");
}
