#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
/* Two-phase non-uniform Bruck (Fan et al., HPDC'22, Algorithm 1): ceil(log2 P)
 * rounds, each a metadata exchange of the block sizes it carries followed by
 * the data.  It is the radix-2 instance of the forwarding schedule of fwd.h;
 * the paper's monolithic working buffer W of P blocks shrinks to the P -
 * ceil(log2 P) - 1 in-transit slots TuNA derives (direct blocks and the own
 * block never wait), plus one round's send and receive stages. */
#include "schedule/forwarding.h"

int skewshim_fwd_plan_bruck2(skewshim_fwd *f, int P)
{
    return skewshim_fwd_init(f, P, 2, 1, 0);
}
