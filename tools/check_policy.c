#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* skewshim-check-policy FILE...: load each policy with the shim's own loader
 * (the code MPI_Init runs), so a file that passes here loads in a job.  No
 * MPI: the loader is pure.  Errors print as the shim prints them,
 * FILE:LINE:COL: KEY: MESSAGE; with -v a loaded file prints its rules. */
#include <stdio.h>
#include <string.h>

#include "policy.h"

static void range_text(const char *name, const skewshim_range *r, char *out, size_t len)
{
    size_t n = strlen(out);
    if (!r->set || n >= len)
        return;
    if (r->hi < 0)
        snprintf(out + n, len - n, " %s=[%.10g, inf]", name, r->lo);
    else
        snprintf(out + n, len - n, " %s=[%.10g, %.10g]", name, r->lo, r->hi);
}

static void print_rules(const skewshim_policy *p)
{
    static const char *const buf[] = { "any", "host", "device" };
    printf("%s: %d rule%s, default %s\n", p->source, p->nrules, p->nrules == 1 ? "" : "s",
           skewshim_algo_name(p->fallback));
    for (int i = 0; i < p->nrules; i++) {
        const skewshim_rule *r = &p->rules[i];
        char m[512] = "";
        range_text("comm_size", &r->comm_size, m, sizeof m);
        range_text("nodes", &r->nodes, m, sizeof m);
        if (r->nic_per_rank.set)
            snprintf(m + strlen(m), sizeof m - strlen(m), " nic_per_rank=%s",
                     r->nic_per_rank.lo > 0 ? "true" : "false");
        range_text("max_block_bytes", &r->max_block_bytes, m, sizeof m);
        range_text("avg_block_bytes", &r->avg_block_bytes, m, sizeof m);
        range_text("avg_nonempty_bytes", &r->avg_nonempty_bytes, m, sizeof m);
        range_text("mtm", &r->mtm, m, sizeof m);
        range_text("send_mtm", &r->send_mtm, m, sizeof m);
        range_text("recv_mtm", &r->recv_mtm, m, sizeof m);
        range_text("repeats", &r->repeats, m, sizeof m);
        printf("  rules[%d] (line %d): buffers=%s%s -> %s\n", i, r->line,
               buf[r->buffers >= 0 && r->buffers <= 2 ? r->buffers : 0], m,
               skewshim_algo_name(r->use));
    }
}

int main(int argc, char **argv)
{
    int verbose = 0, files = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-v")) {
            verbose = 1;
            continue;
        }
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: skewshim-check-policy [-v] FILE...\n"
                   "Loads each policy with the shim's loader; prints FILE:LINE:COL: KEY: MESSAGE\n"
                   "for a file that does not load.  Exit 0 when every file loads, 1 if not.\n");
            return 0;
        }
        skewshim_policy p;
        skewshim_error e;
        files++;
        if (skewshim_policy_load_file(argv[i], &p, &e) != 0) {
            char msg[1200];
            skewshim_error_format(&e, msg, sizeof msg);
            fprintf(stderr, "%s\n", msg);
            bad++;
        } else if (verbose) {
            print_rules(&p);
        }
        skewshim_policy_free(&p);
    }
    if (!files) {
        fprintf(stderr, "usage: skewshim-check-policy [-v] FILE...\n");
        return 2;
    }
    return bad ? 1 : 0;
}
