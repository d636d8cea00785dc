/* libFuzzer target: the policy loader on arbitrary bytes.  Whatever the
 * input, the loader must return 0 or -1 without a crash, a leak or an
 * out-of-bounds access, fill the error with a message when it fails, and
 * leave a policy that can be matched against and freed.  Built and run by
 * scripts/fuzz (clang, -fsanitize=fuzzer,address,undefined). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    skewshim_policy p;
    skewshim_error e;
    memset(&e, 0, sizeof e);
    int rc = skewshim_policy_load_string((const char *)data, size, "fuzz.yaml", &p, &e);
    if (rc != 0 && rc != -1)
        __builtin_trap();
    if (rc == -1 && e.msg[0] == '\0')
        __builtin_trap();    /* every refusal says why */
    /* A loaded policy is usable: choose for a few fact sets. */
    static const skewshim_facts facts[] = {
        {.comm_size = 2, .max_block_bytes = 16, .avg_block_bytes = 8, .avg_nonempty_bytes = 12,
         .mtm = 1.0,
         .send_mtm = 1.0, .recv_mtm = 1.0, .buffers = SKEWSHIM_BUF_HOST, .nodes = 1},
        {.comm_size = 64, .max_block_bytes = 1 << 20, .avg_block_bytes = 1 << 18, .mtm = 3.0,
         .send_mtm = 1.0, .recv_mtm = 3.0, .buffers = SKEWSHIM_BUF_HOST, .nodes = 8,
         .nic_per_rank = 1,
         .unrunnable = 1u << SKEWSHIM_ALGO_TUNA_HIER, .unpaid = 1u << SKEWSHIM_ALGO_TUNA_HIER},
        {.comm_size = 6, .max_block_bytes = 16, .avg_block_bytes = 8, .mtm = 1.0,
         .send_mtm = 1.0, .recv_mtm = 1.0, .buffers = SKEWSHIM_BUF_HOST, .nodes = 2,
         .unrunnable = 1u << SKEWSHIM_ALGO_TUNA_HIER, .cannot_run = 1u << SKEWSHIM_ALGO_TUNA_HIER},
        {.comm_size = 8, .max_block_bytes = 64 << 20, .avg_block_bytes = 8 << 20, .mtm = 2.5,
         .send_mtm = 2.5, .recv_mtm = 1.0, .buffers = SKEWSHIM_BUF_DEVICE, .nodes = 2},
    };
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++) {
        skewshim_algo_id a;
        const skewshim_params *pp;
        int r = skewshim_policy_choose(&p, &facts[i], &a, &pp);
        if (r < -1 || r >= p.nrules || a < 0 || a >= SKEWSHIM_ALGO_AUTO || !pp)
            __builtin_trap();
        int rule;
        skewshim_comm_facts cf = {facts[i].comm_size, facts[i].nodes, facts[i].nic_per_rank, 1,
                                  facts[i].unrunnable, facts[i].cannot_run};
        (void)skewshim_policy_fixed_choice(&p, &cf, &rule);
    }
    char buf[1024];
    skewshim_error_format(&e, buf, sizeof buf);
    skewshim_policy_free(&p);
    return 0;
}
