/* The lab's charge for the shim's own work (doc/lab.md, "The charge").
 *
 * Under SimGrid's SMPI the simulated clock advances only in MPI calls unless
 * a program says otherwise, so the shim's local copies, packing and planning
 * would cost no simulated time and favour copy-heavy schedules.  In an SMPI
 * build (SKEWSHIM_SMPI) these hooks charge that work deterministically:
 * copies as a per-copy cost plus bytes / a copy bandwidth, planning as a
 * per-move and per-matrix-entry cost, injected with smpi_execute_flops.  In
 * every other build they are empty inline functions: nothing is compiled.
 *
 * The hooks sit below the core and the executors: they call only SMPI.
 * Copies accumulate and are injected by skewshim_lab_flush(), which the
 * executors call before they post or wait (so the time lands where the CPU
 * would spend it: before the messages that carry the copied bytes). */
#ifndef SKEWSHIM_LABCHARGE_H
#define SKEWSHIM_LABCHARGE_H

#include <stdint.h>

#ifdef SKEWSHIM_SMPI
/* ncopies separate copies (memmove / memset) of bytes in all. */
void skewshim_lab_copy(uint64_t ncopies, uint64_t bytes);
/* Inject the accumulated copy time now. */
void skewshim_lab_flush(void);
/* Planning work, injected at once: moves planned moves, entries matrix
 * entries copied and hashed (every call of a global planner), planned
 * matrix entries a global planner decided on (a plan-cache miss). */
void skewshim_lab_plan(uint64_t moves, uint64_t entries, uint64_t planned);
#else
static inline void skewshim_lab_copy(uint64_t ncopies, uint64_t bytes)
{
    (void)ncopies;
    (void)bytes;
}
static inline void skewshim_lab_flush(void) {}
static inline void skewshim_lab_plan(uint64_t moves, uint64_t entries, uint64_t planned)
{
    (void)moves;
    (void)entries;
    (void)planned;
}
#endif

#endif
