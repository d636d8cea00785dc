/* The lab's timing-only runs (doc/lab.md, "Timing only").
 *
 * A lab point can need more memory than the one simulation process has: at
 * P = 1024 with 64 KiB blocks the staging schedules' temporary memory alone
 * is tens of GB.  In an SMPI build, with SKEWSHIM_LAB_FOLD=1 in the
 * environment (the lab sets it with --reference none, where nothing is
 * checked), the data part of the shim's temporary memory is folded onto one
 * physical copy shared by every rank (src/labfold.c says how), while its
 * head, the metadata that steers a forwarding round, stays private.
 * SimGrid's simulated time does not depend on the bytes, so the time is the
 * same; the result is garbage, which is why only unchecked runs fold.  In
 * every other build these are plain malloc and free. */
#ifndef SKEWSHIM_LABFOLD_H
#define SKEWSHIM_LABFOLD_H

#include <stdint.h>
#include <stdlib.h>

#ifdef SKEWSHIM_SMPI
/* Whether this run folds (SKEWSHIM_LAB_FOLD=1). */
int skewshim_lab_folding(void);
/* bytes of temporary memory whose bytes from data_from on are data only
 * (data_from >= bytes: all of it may steer the call, nothing folds).
 * NULL: out of memory. */
void *skewshim_lab_tmp_alloc(uint64_t bytes, uint64_t data_from);
/* Frees what skewshim_lab_tmp_alloc or malloc returned. */
void skewshim_lab_tmp_free(void *p);
#else
static inline int skewshim_lab_folding(void) { return 0; }
static inline void *skewshim_lab_tmp_alloc(uint64_t bytes, uint64_t data_from)
{
    (void)data_from;
    return bytes <= SIZE_MAX ? malloc((size_t)bytes) : NULL;
}
static inline void skewshim_lab_tmp_free(void *p) { free(p); }
#endif

#endif
