/* The correctness harness: every schedule byte for byte against
 * PMPI_Alltoallv.  For each (communicator, datatype, workload, seed) it
 * fills a receive buffer whose blocks sit at permuted displacements with
 * gaps between them, poisons the whole buffer, runs MPI_Alltoallv (through
 * the shim, linked in) and PMPI_Alltoallv on identical copies and compares
 * the WHOLE buffers: any byte written outside a receive block, or any block
 * wrong, differs.  Options select the algorithm (skewshim_force_algorithm),
 * parameters, workloads, types and communicators; --expect checks that the
 * algorithm really ran (or fell back for the expected reason), so a silent
 * fallback can never pass for a result.  --in-place runs every case with
 * MPI_IN_PLACE (the count matrix made symmetric, as MPI then requires; the
 * receive buffer starts with random data, gaps included, and must end as
 * PMPI_Alltoallv leaves an identical copy); --cap-between sets the memory
 * cap per case between the smallest and the largest receive total of the
 * ranks, where only an agreed verdict keeps the ranks together.  --batch
 * FILE runs one such set of options per line in one job. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skewshim.h"
#include "workload/workload.h"

#ifdef SKEWSHIM_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

typedef struct opts {
    const char *algo;
    const char *expect;          /* algorithm name, or "fallback:REASON" */
    int expect_given;            /* --expect on the command line: never overridden */
    char workloads[512];
    char types[128];
    char comms[128];
    uint64_t S;                  /* max elements per block */
    int seeds;
    uint64_t seed_base;          /* seeds run seed_base+1 .. seed_base+seeds */
    int verbose;
    int device;                  /* buffers in GPU memory; reference on host copies */
    int agreement;               /* -1 any, 0 must not run, 1 must run */
    int in_place;                /* MPI_IN_PLACE on every call */
    int cap_between;             /* max_temp_bytes between the ranks' receive totals */
    const char *again;           /* the same call once more, expecting this */
    int repeats;                 /* ... that many times */
    int perturb;                 /* then once with one block an element shorter */
} opts;

static int rank_w, size_w;
static long cases, failures, agreed_calls;

static void die(const char *msg)
{
    fprintf(stderr, "alltoallv_check: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Types whose elements are 12 ints in every layout that matters: one run
 * (contig12), one run of the right size and extent but in reverse order
 * (rev12: size == true extent == extent, so only a decode tells), two
 * halves swapped (swap12: the same, through a struct), and gaps (vec12).
 * They share one type signature, so ranks may mix them (--types mix:a,b). */
static MPI_Datatype make_type(const char *name, int *expect_noncontig)
{
    MPI_Datatype t;
    *expect_noncontig = 0;
    if (!strcmp(name, "byte"))
        return MPI_BYTE;
    if (!strcmp(name, "int"))
        return MPI_INT;
    if (!strcmp(name, "double"))
        return MPI_DOUBLE;
    if (!strcmp(name, "contig")) {
        MPI_Type_contiguous(3, MPI_INT, &t);
    } else if (!strcmp(name, "vector")) {
        MPI_Type_vector(2, 1, 2, MPI_INT, &t);
        *expect_noncontig = 1;
    } else if (!strcmp(name, "contig12")) {
        MPI_Type_contiguous(12, MPI_INT, &t);
    } else if (!strcmp(name, "rev12")) {
        MPI_Type_vector(12, 1, -1, MPI_INT, &t);
        *expect_noncontig = 1;
    } else if (!strcmp(name, "swap12")) {
        int bl[2] = {6, 6};
        MPI_Aint d[2] = {24, 0};
        MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
        MPI_Type_create_struct(2, bl, d, ty, &t);
        *expect_noncontig = 1;
    } else if (!strcmp(name, "vec12")) {
        MPI_Type_vector(12, 1, 2, MPI_INT, &t);
        *expect_noncontig = 1;
    } else {
        die("unknown type");
        return MPI_DATATYPE_NULL;
    }
    MPI_Type_commit(&t);
    return t;
}

static int check_expect(const opts *o, int noncontig, const char *what)
{
    skewshim_last l;
    skewshim_last_call(&l);
    agreed_calls += l.agreed != 0;
    const char *want = o->expect;
    char buf[64];
    /* Host data of any layout is packed and runs; device data must be one
     * ordered run. */
    if (noncontig && o->device && !o->expect_given)
        want = "fallback:noncontiguous_type";
    /* Staging in place is a host copy: device data goes to MPI. */
    if (o->in_place && o->device && !o->expect_given)
        want = "fallback:in_place";
    if (o->agreement >= 0 && l.agreed != o->agreement) {
        fprintf(stderr, "[%d] %s: agreement collective %s\n", rank_w, what,
                l.agreed ? "ran but should not have" : "did not run");
        return 0;
    }
    /* "any": the calls of a matrix may run different schedules (a rule
     * that waits for the matrix to repeat); the log says which. */
    if (!want || !strcmp(want, "any"))
        return 1;
    if (!strncmp(want, "fallback:", 9)) {
        if (strcmp(l.reason, want + 9)) {
            fprintf(stderr, "[%d] %s: expected fallback '%s', got algorithm %s reason '%s'\n",
                    rank_w, what, want + 9, skewshim_algorithm_name(l.algorithm), l.reason);
            return 0;
        }
        return 1;
    }
    snprintf(buf, sizeof buf, "%s", skewshim_algorithm_name(l.algorithm));
    if (strcmp(buf, want) || l.fallback_reason) {
        fprintf(stderr, "[%d] %s: expected %s to run, got %s (fallback '%s')\n", rank_w, what,
                want, buf, l.reason);
        return 0;
    }
    return 1;
}

/* One case on one communicator. */
/* The matrix of the calls before it but for one block, one element
 * shorter (the first non-empty block off the diagonal): every rank's
 * own row and column match the last plan's but those two ranks'.  A plan
 * reused for it would move that element all the same, into the receiver's
 * poisoned gap.  Held to PMPI_Alltoallv on the same arguments. */
static int perturbed(MPI_Comm comm, const uint64_t *counts, const void *sb,
                     int *sc, const int *sd, MPI_Datatype dt, unsigned char *r0, int *rc,
                     const int *rd, size_t rbytes, size_t shift, const char *what)
{
    int P, me;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    int from = -1, to = -1;
    for (int i = 0; i < P && from < 0; i++)
        for (int j = 0; j < P; j++)
            if (i != j && counts[(size_t)i * P + j]) {
                from = i;
                to = j;
                break;
            }
    if (from < 0)
        return 1;
    if (me == from)
        sc[to]--;
    if (me == to)
        rc[from]--;
    unsigned char *ref = malloc(rbytes);
    if (!ref)
        die("out of memory");
    memset(r0, 0xA5, rbytes);
    memset(ref, 0xA5, rbytes);
    int erc = MPI_Alltoallv(sb, sc, sd, dt, r0 + shift, rc, rd, dt, comm);
    PMPI_Alltoallv(sb, sc, sd, dt, ref + shift, rc, rd, dt, comm);
    int ok = erc == MPI_SUCCESS;
    if (memcmp(r0, ref, rbytes)) {
        fprintf(stderr, "[%d] %s (one block shorter): differs from PMPI_Alltoallv\n", rank_w, what);
        ok = 0;
    }
    if (me == from)
        sc[to]++;
    if (me == to)
        rc[from]++;
    free(ref);
    return ok;
}

/* Where a receive buffer first and last differs from the reference, and
 * how many bytes do, so that a report tells one misplaced block from a
 * shifted buffer. */
static void report_diff(const unsigned char *got, const unsigned char *ref, size_t n,
                        const char *what, const char *tail)
{
    size_t first = n, last = 0, bad = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != ref[i]) {
            first = first < i ? first : i;
            last = i;
            bad++;
        }
    fprintf(stderr, "[%d] %s%s: receive buffer differs from PMPI_Alltoallv: %zu of %zu bytes, "
            "%zu-%zu (first got 0x%02x, want 0x%02x)\n", rank_w, what, tail, bad, n, first, last,
            got[first], ref[first]);
}

static void run_case(const opts *o, MPI_Comm comm, const char *cname, MPI_Datatype dt,
                     const char *tname, int noncontig, const skewshim_wl *w)
{
    int P, me;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(dt, &lb, &ext);
    MPI_Type_get_true_extent(dt, &tlb, &text);
    /* A type whose data starts before its origin (a negative stride) is
     * addressed from a base that far into the allocation. */
    size_t shift = tlb < 0 ? (size_t)-tlb : 0;
    uint64_t *counts = malloc((size_t)P * P * sizeof *counts);
    int *sc = malloc(4 * (size_t)P * sizeof(int));
    int *sd = sc + P, *rc = sc + 2 * P, *rd = sc + 3 * P;
    if (!counts || !sc)
        die("out of memory");
    if (skewshim_wl_matrix(w, P, counts)) {
        char msg[96];
        snprintf(msg, sizeof msg, "workload %s: parameter %g out of its range",
                 skewshim_wl_name(w->kind), w->param);
        die(msg);
    }
    if (o->in_place)            /* what i sends j is what j sends i */
        for (int i = 0; i < P; i++)
            for (int j = 0; j < i; j++)
                counts[(size_t)i * P + j] = counts[(size_t)j * P + i];
    if (o->cap_between) {
        /* Between the ranks' receive totals: a rank deciding from its own
         * total alone would stage and run while another falls back. */
        int tsize;
        MPI_Type_size(dt, &tsize);
        uint64_t lo = UINT64_MAX, hi = 0;
        for (int r = 0; r < P; r++) {
            uint64_t t = 0;
            for (int j = 0; j < P; j++)
                t += counts[(size_t)j * P + r] * (uint64_t)tsize;
            lo = t < lo ? t : lo;
            hi = t > hi ? t : hi;
        }
        if (hi <= lo + 1)
            die("--cap-between needs uneven receive totals (a hot_recv workload)");
        char cap[32];
        snprintf(cap, sizeof cap, "%llu",
                 (unsigned long long)(lo + (hi - lo) / 2 + (uint64_t)P * sizeof(uint64_t)));
        if (skewshim_set_param("max_temp_bytes", cap))
            die("bad max_temp_bytes");
    }
    /* Displacements: blocks in a permuted order with a gap of 0..2
     * elements before each, so misplaced writes land in poisoned gaps. */
    uint64_t seed = mix(w->seed ^ (uint64_t)P);
    long spos = 0, rpos = 0;
    for (int k = 0; k < P; k++) {
        int j = (int)((k * 7 + (int)(seed % (uint64_t)P)) % P);
        if (P % 7 == 0)
            j = (k + (int)(seed % (uint64_t)P)) % P;
        sc[j] = (int)counts[(size_t)me * P + j];
        spos += (long)(mix(seed + (uint64_t)k) % 3);
        sd[j] = (int)spos;
        spos += sc[j];
        rc[j] = (int)counts[(size_t)j * P + me];
        rpos += (long)(mix(seed + 100 + (uint64_t)k) % 3);
        rd[j] = (int)rpos;
        rpos += rc[j];
    }
    size_t sbytes = (size_t)(spos + 2) * (size_t)ext + shift;
    size_t rbytes = (size_t)(rpos + 2) * (size_t)ext + shift;
    unsigned char *sbuf = malloc(sbytes), *r1 = malloc(rbytes), *r2 = malloc(rbytes);
    if (!sbuf || !r1 || !r2)
        die("out of memory");
    for (size_t i = 0; i < sbytes; i++)
        sbuf[i] = (unsigned char)mix(((uint64_t)me << 40) ^ i ^ seed);
    memset(r1, 0xA5, rbytes);
    if (o->in_place)            /* the data to send, around it the gaps */
        for (size_t i = 0; i < rbytes; i++)
            r1[i] = (unsigned char)mix(((uint64_t)me << 40) ^ i ^ seed ^ 0x1234);
    memcpy(r2, r1, rbytes);
    unsigned char *r0 = o->again ? malloc(rbytes) : NULL;
    if (o->again && !r0)
        die("out of memory");
    if (r0)
        memcpy(r0, r1, rbytes);
    /* In place MPI ignores the send arguments: every other seed passes the
     * NULL counts and MPI_DATATYPE_NULL that MPI allows there. */
    const void *sarg = o->in_place ? MPI_IN_PLACE : (const void *)(sbuf + shift);
    const int *scarg = sc, *sdarg = sd;
    MPI_Datatype starg = dt;
    if (o->in_place && w->seed % 2 == 0) {
        scarg = sdarg = NULL;
        starg = MPI_DATATYPE_NULL;
    }
    int erc;
    if (o->device) {
#ifdef SKEWSHIM_HAVE_CUDA
        /* The shim's device path against PMPI_Alltoallv on host copies:
         * the MPI library need not be CUDA-aware. */
        void *ds = NULL, *dr = NULL;
        if (cudaMalloc(&ds, sbytes) != cudaSuccess || cudaMalloc(&dr, rbytes) != cudaSuccess)
            die("cudaMalloc failed");
        cudaMemcpy(ds, sbuf, sbytes, cudaMemcpyHostToDevice);
        cudaMemcpy(dr, r1, rbytes, cudaMemcpyHostToDevice);
        erc = MPI_Alltoallv(o->in_place ? MPI_IN_PLACE : (char *)ds + shift, scarg, sdarg, starg,
                            (char *)dr + shift, rc, rd, dt, comm);
        cudaMemcpy(r1, dr, rbytes, cudaMemcpyDeviceToHost);
        /* freed every call: the shim must cope with reallocated buffers */
        cudaFree(ds);
        cudaFree(dr);
#else
        die("--device needs a CUDA build");
        erc = MPI_ERR_OTHER;
#endif
    } else {
        erc = MPI_Alltoallv(sarg, scarg, sdarg, starg, r1 + shift, rc, rd, dt, comm);
    }
    char what[256], wname[64];
    skewshim_wl_label(w, wname, sizeof wname);
    snprintf(what, sizeof what, "comm=%s P=%d type=%s workload=%s S=%llu seed=%llu%s", cname, P,
             tname, wname, (unsigned long long)w->S,
             (unsigned long long)w->seed, o->in_place ? " in-place" : "");
    int ok = erc == MPI_SUCCESS && check_expect(o, noncontig, what);
    PMPI_Alltoallv(sarg, sc, sd, dt, r2 + shift, rc, rd, dt, comm);
    if (memcmp(r1, r2, rbytes)) {
        report_diff(r1, r2, rbytes, what, "");
        ok = 0;
    }
    if (r0) {
        /* What a job that repeats its exchange meets the second time: the
         * plan cache, the pay-back guard's record of the matrices seen. */
        opts o2 = *o;
        o2.expect = o->again;
        o2.expect_given = 1;
        strncat(what, " (again)", sizeof what - strlen(what) - 1);
        erc = MPI_Alltoallv(sarg, scarg, sdarg, starg, r0 + shift, rc, rd, dt, comm);
        ok = ok && erc == MPI_SUCCESS && check_expect(&o2, noncontig, what);
        if (memcmp(r0, r2, rbytes)) {
            report_diff(r0, r2, rbytes, what, "");
            ok = 0;
        }
        /* More repeats, then one block changed: host buffers, not in place
         * (whose receive buffer would need its first contents again). */
        for (int k = 1; !o->in_place && k < o->repeats; k++) {
            memset(r0, 0xA5, rbytes);
            erc = MPI_Alltoallv(sarg, scarg, sdarg, starg, r0 + shift, rc, rd, dt, comm);
            int good = erc == MPI_SUCCESS && check_expect(&o2, noncontig, what);
            ok = ok && good;
            if (memcmp(r0, r2, rbytes)) {
                char rep[32];
                snprintf(rep, sizeof rep, " (repeat %d)", k);
                report_diff(r0, r2, rbytes, what, rep);
                ok = 0;
            }
        }
        if (o->perturb && !o->in_place)
            ok = perturbed(comm, counts, sbuf + shift, sc, sd, dt, r0, rc, rd, rbytes, shift, what) && ok;
        free(r0);
    }
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    cases++;
    if (!all) {
        failures++;
        if (me == 0)
            fprintf(stderr, "FAIL %s\n", what);
    } else if (o->verbose && me == 0) {
        printf("pass %s\n", what);
    }
    free(sbuf);
    free(r1);
    free(r2);
    free(counts);
    free(sc);
}

/* NAME, NAME:PARAM or moe:PARAM:TOPK, so that a run chooses the skew (the
 * Zipf exponent, the power law's base, the hot fraction, the normal's sd)
 * and MoE's experts per token, not only each kind's default. */
static skewshim_wl parse_workload(const char *spec)
{
    char name[64], msg[160], *end = NULL;
    snprintf(name, sizeof name, "%s", spec);
    skewshim_wl w = {.topk = 2};
    int bad = 0, has_topk = 0;
    char *colon = strchr(name, ':');
    if (colon) {
        *colon = '\0';
        w.param = strtod(colon + 1, &end);
        bad = end == colon + 1 || !(w.param > 0) || (*end && *end != ':');
        if (!bad && *end == ':') {
            long k = strtol(end + 1, &end, 10);
            bad = *end || k < 1 || k > 1024;
            w.topk = (int)k;
            has_topk = 1;
        }
    }
    w.kind = skewshim_wl_from_name(name);
    if (bad || w.kind < 0 || (has_topk && w.kind != SKEWSHIM_WL_MOE)) {
        snprintf(msg, sizeof msg, "bad workload '%s' (NAME, NAME:PARAM with PARAM > 0, "
                 "or moe:PARAM:TOPK with TOPK 1-1024)", spec);
        die(msg);
    }
    return w;
}

static void for_each_case(const opts *o, MPI_Comm comm, const char *cname)
{
    char tl[128], wl[512];
    snprintf(tl, sizeof tl, "%s", o->types);
    char *tsave = NULL;
    for (char *tn = strtok_r(tl, ",", &tsave); tn; tn = strtok_r(NULL, ",", &tsave)) {
        int noncontig;
        /* mix:a+b+c: rank r of the communicator passes the (r mod n)-th type,
         * so peers pass different types of one signature, as MPI allows. */
        char pick[64];
        snprintf(pick, sizeof pick, "%s", tn);
        if (!strncmp(tn, "mix:", 4)) {
            char ml[64], *msave = NULL, *names[16];
            int n = 0, me;
            snprintf(ml, sizeof ml, "%s", tn + 4);
            for (char *m = strtok_r(ml, "+", &msave); m && n < 16; m = strtok_r(NULL, "+", &msave))
                names[n++] = m;
            if (!n)
                die("mix: needs type names");
            MPI_Comm_rank(comm, &me);
            snprintf(pick, sizeof pick, "%s", names[me % n]);
        }
        MPI_Datatype dt = make_type(pick, &noncontig);
        snprintf(wl, sizeof wl, "%s", o->workloads);
        char *save = NULL;
        for (char *wn = strtok_r(wl, ",", &save); wn; wn = strtok_r(NULL, ",", &save)) {
            skewshim_wl spec = parse_workload(wn);
            for (int s = 0; s < o->seeds; s++) {
                skewshim_wl w = spec;
                w.S = o->S;
                w.seed = o->seed_base + (uint64_t)s + 1;
                run_case(o, comm, cname, dt, pick, noncontig, &w);
            }
        }
        if (dt != MPI_BYTE && dt != MPI_INT && dt != MPI_DOUBLE)
            MPI_Type_free(&dt);
    }
}

static const char usage[] =
    "usage: alltoallv_check [--algo NAME] [--expect NAME|fallback:REASON] "
    "[--workloads a,b (NAME[:PARAM[:TOPK]])] [--types byte,int,double,contig,vector,"
    "contig12,rev12,swap12,vec12,mix:a+b] "
    "[--comms world,dup,split,reverse] [--S N] [--seeds N] [--seed-base N] "
    "[--param k=v] [--agreement 0|1] [--device] [--in-place] "
    "[--cap-between] [--again NAME|fallback:REASON|any] [--repeats N] "
    "[--perturb] [-v] | --batch FILE\n";

/* The parameters a run set, so that the next run of a batch starts from
 * the policy again. */
static char set_names[16][128];
static int nset;

static void parse(int argc, char **argv, opts *o)
{
    *o = (opts){.S = 24, .seeds = 2, .agreement = -1};
    snprintf(o->workloads, sizeof o->workloads, "uniform,zero,hot_send,hot_recv");
    snprintf(o->types, sizeof o->types, "byte,int");
    snprintf(o->comms, sizeof o->comms, "world");
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--algo") && v) { o->algo = v; i++; }
        else if (!strcmp(a, "--expect") && v) { o->expect = v; o->expect_given = 1; i++; }
        else if (!strcmp(a, "--workloads") && v) { snprintf(o->workloads, sizeof o->workloads, "%s", v); i++; }
        else if (!strcmp(a, "--types") && v) { snprintf(o->types, sizeof o->types, "%s", v); i++; }
        else if (!strcmp(a, "--comms") && v) { snprintf(o->comms, sizeof o->comms, "%s", v); i++; }
        else if (!strcmp(a, "--S") && v) { o->S = strtoull(v, NULL, 10); i++; }
        else if (!strcmp(a, "--seeds") && v) { o->seeds = atoi(v); i++; }
        else if (!strcmp(a, "--seed-base") && v) { o->seed_base = strtoull(v, NULL, 10); i++; }
        else if (!strcmp(a, "--param") && v) {
            char k[128];
            snprintf(k, sizeof k, "%s", v);
            char *eq = strchr(k, '=');
            if (!eq) die("--param wants name=value");
            *eq = 0;
            if (skewshim_set_param(k, eq + 1)) die("bad --param");
            if (nset == (int)(sizeof set_names / sizeof set_names[0])) die("too many --param");
            snprintf(set_names[nset++], sizeof set_names[0], "%s", k);
            i++;
        }
        else if (!strcmp(a, "-v")) o->verbose = 1;
        else if (!strcmp(a, "--device")) o->device = 1;
        else if (!strcmp(a, "--in-place")) o->in_place = 1;
        else if (!strcmp(a, "--cap-between")) o->cap_between = 1;
        else if (!strcmp(a, "--again") && v) { o->again = v; i++; }
        else if (!strcmp(a, "--repeats") && v) { o->repeats = atoi(v); i++; }
        else if (!strcmp(a, "--perturb")) o->perturb = 1;
        else if (!strcmp(a, "--agreement") && v) { o->agreement = atoi(v); i++; }
        else {
            if (rank_w == 0)
                fputs(usage, stderr);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (o->algo && skewshim_force_algorithm(o->algo))
        die("unknown algorithm");
    if (o->again && o->device)
        die("--again runs host buffers only");
    if (o->algo && !o->expect && strcmp(o->algo, "auto"))
        o->expect = o->algo;
}

/* One run: every case of o, then its summary line (tag: "" alone, "[N]"
 * in a batch).  Returns 1 when a case failed on any rank. */
static int run(const opts *o, const char *tag)
{
    cases = failures = agreed_calls = 0;
    char cl[128];
    snprintf(cl, sizeof cl, "%s", o->comms);
    char *save = NULL;
    for (char *cn = strtok_r(cl, ",", &save); cn; cn = strtok_r(NULL, ",", &save)) {
        MPI_Comm c = MPI_COMM_NULL;
        if (!strcmp(cn, "world"))
            c = MPI_COMM_WORLD;
        else if (!strcmp(cn, "dup"))
            MPI_Comm_dup(MPI_COMM_WORLD, &c);
        else if (!strcmp(cn, "split"))       /* two halves run side by side */
            MPI_Comm_split(MPI_COMM_WORLD, rank_w % 2, rank_w, &c);
        else if (!strcmp(cn, "reverse"))     /* ranks renumbered backwards */
            MPI_Comm_split(MPI_COMM_WORLD, 0, size_w - rank_w, &c);
        else
            die("unknown communicator");
        for_each_case(o, c, cn);
        if (c != MPI_COMM_WORLD)
            MPI_Comm_free(&c);
    }
    long tot[3] = {cases, failures, agreed_calls}, all[3];
    MPI_Reduce(tot, all, 3, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank_w == 0) {
        printf("alltoallv_check%s: algo=%s %ld cases (rank-sum), %ld failed, %ld agreed\n", tag,
               o->algo ? o->algo : "policy", all[0], all[1], all[2]);
        fflush(stdout);
    }
    int bad = failures > 0, anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return anybad;
}

/* --batch FILE: one run per line (the options above, split at blanks), in
 * one job, each from the policy's settings again.  A job's start costs
 * seconds under AddressSanitizer on an oversubscribed machine; a sweep of
 * algorithms and emulated nodes at one P pays it once. */
static int run_batch(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die("--batch: cannot open the file");
    char line[1024];
    int n = 0, anybad = 0;
    while (fgets(line, sizeof line, f)) {
        char *argv[64], *save = NULL;
        int argc = 0;
        for (char *t = strtok_r(line, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
            if (argc == (int)(sizeof argv / sizeof argv[0]))
                die("--batch: too many options on a line");
            argv[argc++] = t;
        }
        if (!argc)
            continue;
        opts o;
        parse(argc, argv, &o);
        char tag[16];
        snprintf(tag, sizeof tag, "[%d]", ++n);
        anybad |= run(&o, tag);
        skewshim_force_algorithm(NULL);
        if (o.cap_between)          /* set per case by the harness itself */
            skewshim_set_param("max_temp_bytes", NULL);
        while (nset > 0)
            skewshim_set_param(set_names[--nset], NULL);
    }
    fclose(f);
    return anybad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_w);
    MPI_Comm_size(MPI_COMM_WORLD, &size_w);
    int anybad;
    if (argc == 3 && !strcmp(argv[1], "--batch")) {
        anybad = run_batch(argv[2]);
    } else {
        opts o;
        parse(argc - 1, argv + 1, &o);
        anybad = run(&o, "");
    }
    MPI_Finalize();
    return anybad ? 1 : 0;
}
