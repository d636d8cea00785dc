#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
/* Padded Bruck (Fan et al., HPDC'22, section 3.1, after Traeff et al.):
 * every block travels as the global maximum block size N (agreed by the
 * call's one allreduce), which makes the exchange uniform: radix-2 Bruck
 * with no metadata, then each receiver extracts its real counts.  Cheaper
 * than two-phase Bruck only when (N - 8)(P + 1) beta < 4 alpha (the paper's
 * inequality 3), i.e. for tiny blocks. */
#include "schedule/forwarding.h"

int skewshim_fwd_plan_padded_bruck(skewshim_fwd *f, int P)
{
    return skewshim_fwd_init(f, P, 2, 1, 1);
}
