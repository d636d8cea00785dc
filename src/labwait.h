/* How the executors complete a stage's requests (doc/lab.md, "What a long
 * MPI_Waitall costs the simulation").
 *
 * SimGrid 3.32's SMPI runs MPI_Waitall over n requests as n waitany calls
 * over all n, each registering with every pending request: O(n^2) of the
 * simulation's CPU for one wait, which kept schedules with thousands of
 * messages a stage (FAST, SABRE, tuna at radix P) out of the lab from
 * P = 1024.  In an SMPI build the executors therefore wait request by
 * request, O(n).  The simulated time is the same: every request of the
 * stage is posted before the wait, a rank leaves either way when the last
 * one completes, and with the lab's sends never detached
 * (smpi/send-is-detached-thresh:0) completing a request costs no simulated
 * time (SMPI's receive overhead applies to detached sends only).  Real MPI
 * libraries progress a Waitall's requests together; other builds keep it. */
#ifndef SKEWSHIM_LABWAIT_H
#define SKEWSHIM_LABWAIT_H

#include <mpi.h>

static inline int skewshim_lab_waitall(int n, MPI_Request *r, MPI_Status *st)
{
#ifdef SKEWSHIM_SMPI
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        int e = PMPI_Wait(&r[i], st == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &st[i]);
        if (e != MPI_SUCCESS && rc == MPI_SUCCESS)
            rc = e;
    }
    return rc;
#else
    return PMPI_Waitall(n, r, st);
#endif
}

#endif
