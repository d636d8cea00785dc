/* The only file that defines MPI_ symbols.  Everything here is a thin door
 * into src/core: setup after PMPI_Init*, teardown before PMPI_Finalize, and
 * MPI_Alltoallv into the pipeline.
 *
 * Fortran: MPICH's Fortran bindings call the C MPI_Alltoallv, so they land
 * here on their own.  Open MPI's mpif.h / use mpi bindings call
 * PMPI_Alltoallv directly, so under Open MPI the Fortran entry points are
 * defined here too and translate their arguments themselves; likewise its
 * MPI_INIT and MPI_INIT_THREAD, which call PMPI_Init*.  Its MPI_FINALIZE
 * reaches the shim through an attribute on MPI_COMM_SELF (src/core/init.c).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <dlfcn.h>
#include <mpi.h>

#include "call.h"
#include "core/internal.h"

/* The library is built with hidden visibility: the entry points below are
 * what it exists to export. */
#pragma GCC visibility push(default)

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        skewshim_init_after_mpi(MPI_THREAD_SINGLE);
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        skewshim_init_after_mpi(*provided);
    return rc;
}

int MPI_Finalize(void)
{
    skewshim_finalize_before_mpi();
    return PMPI_Finalize();
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return skewshim_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                              rdispls, recvtype, comm);
}

#ifdef HAVE_MPI_ALLTOALLV_C
/* Large counts: passed through unchanged, counted for the summary. */
int MPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                    const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    skewshim_count_fallback(SKEWSHIM_REASON_LARGE_COUNT, comm);
    return PMPI_Alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                            rdispls, recvtype, comm);
}
#endif

#ifdef OPEN_MPI
/* Open MPI's Fortran sentinels for MPI_IN_PLACE and MPI_BOTTOM are the
 * addresses of common blocks in its Fortran library; the C side must see the
 * C sentinels instead. */
static void *fortran_buffer(void *p)
{
    static void *in_place, *bottom;
    static int looked;
    if (!looked) {
        in_place = dlsym(RTLD_DEFAULT, "mpi_fortran_in_place_");
        bottom = dlsym(RTLD_DEFAULT, "mpi_fortran_bottom_");
        looked = 1;
    }
    if (p && p == in_place)
        return MPI_IN_PLACE;
    if (p && p == bottom)
        return MPI_BOTTOM;
    return p;
}

static void fortran_alltoallv(char *sendbuf, MPI_Fint *sendcounts, MPI_Fint *sdispls,
                              MPI_Fint *sendtype, char *recvbuf, MPI_Fint *recvcounts,
                              MPI_Fint *rdispls, MPI_Fint *recvtype, MPI_Fint *comm,
                              MPI_Fint *ierr)
{
    MPI_Comm c = PMPI_Comm_f2c(*comm);
    MPI_Datatype st = PMPI_Type_f2c(*sendtype), rt = PMPI_Type_f2c(*recvtype);
    /* MPI_Fint and int have the same size on every platform Open MPI
     * supports with this binding; the compile-time check keeps it honest. */
    _Static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint must be int");
    int rc = skewshim_alltoallv(fortran_buffer(sendbuf), (const int *)sendcounts,
                                (const int *)sdispls, st, fortran_buffer(recvbuf),
                                (const int *)recvcounts, (const int *)rdispls, rt, c);
    if (ierr)
        *ierr = (MPI_Fint)rc;
}

#define SKEWSHIM_FORTRAN_ARGS                                                                 \
    char *sendbuf, MPI_Fint *sendcounts, MPI_Fint *sdispls, MPI_Fint *sendtype, char *recvbuf, \
        MPI_Fint *recvcounts, MPI_Fint *rdispls, MPI_Fint *recvtype, MPI_Fint *comm,          \
        MPI_Fint *ierr
#define SKEWSHIM_FORTRAN_CALL                                                                 \
    fortran_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,   \
                      recvtype, comm, ierr)

/* Open MPI's Fortran MPI_INIT and MPI_INIT_THREAD call PMPI_Init* directly,
 * so without these the shim would set up lazily on a first MPI_Alltoallv:
 * without the settings check and the agreed job id, and only on the ranks
 * that make one.  They do what Open MPI's own do: PMPI_Init* with no
 * arguments. */
static void fortran_init(MPI_Fint *ierr)
{
    int argc = 0;
    char **argv = NULL;
    int rc = PMPI_Init(&argc, &argv);
    if (rc == MPI_SUCCESS)
        skewshim_init_after_mpi(MPI_THREAD_SINGLE);
    if (ierr)
        *ierr = (MPI_Fint)rc;
}

static void fortran_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
    int argc = 0, prov = MPI_THREAD_SINGLE;
    char **argv = NULL;
    int rc = PMPI_Init_thread(&argc, &argv, (int)*required, &prov);
    if (rc == MPI_SUCCESS)
        skewshim_init_after_mpi(prov);
    if (provided)
        *provided = (MPI_Fint)prov;
    if (ierr)
        *ierr = (MPI_Fint)rc;
}

void mpi_init_(MPI_Fint *ierr);
void mpi_init__(MPI_Fint *ierr);
void mpi_init(MPI_Fint *ierr);
void MPI_INIT(MPI_Fint *ierr);
void ompi_init_f(MPI_Fint *ierr);
void mpi_init_(MPI_Fint *ierr) { fortran_init(ierr); }
void mpi_init__(MPI_Fint *ierr) { fortran_init(ierr); }
void mpi_init(MPI_Fint *ierr) { fortran_init(ierr); }
void MPI_INIT(MPI_Fint *ierr) { fortran_init(ierr); }
void ompi_init_f(MPI_Fint *ierr) { fortran_init(ierr); }

#define SKEWSHIM_FORTRAN_INIT_THREAD(name)                                                   \
    void name(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);                       \
    void name(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)                        \
    {                                                                                         \
        fortran_init_thread(required, provided, ierr);                                       \
    }
SKEWSHIM_FORTRAN_INIT_THREAD(mpi_init_thread_)
SKEWSHIM_FORTRAN_INIT_THREAD(mpi_init_thread__)
SKEWSHIM_FORTRAN_INIT_THREAD(mpi_init_thread)
SKEWSHIM_FORTRAN_INIT_THREAD(MPI_INIT_THREAD)
SKEWSHIM_FORTRAN_INIT_THREAD(ompi_init_thread_f)

void mpi_alltoallv_(SKEWSHIM_FORTRAN_ARGS);
void mpi_alltoallv__(SKEWSHIM_FORTRAN_ARGS);
void mpi_alltoallv(SKEWSHIM_FORTRAN_ARGS);
void MPI_ALLTOALLV(SKEWSHIM_FORTRAN_ARGS);
void ompi_alltoallv_f(SKEWSHIM_FORTRAN_ARGS);
void mpi_alltoallv_(SKEWSHIM_FORTRAN_ARGS) { SKEWSHIM_FORTRAN_CALL; }
void mpi_alltoallv__(SKEWSHIM_FORTRAN_ARGS) { SKEWSHIM_FORTRAN_CALL; }
void mpi_alltoallv(SKEWSHIM_FORTRAN_ARGS) { SKEWSHIM_FORTRAN_CALL; }
void MPI_ALLTOALLV(SKEWSHIM_FORTRAN_ARGS) { SKEWSHIM_FORTRAN_CALL; }
/* The use mpi_f08 and use mpi bindings funnel into this one. */
void ompi_alltoallv_f(SKEWSHIM_FORTRAN_ARGS) { SKEWSHIM_FORTRAN_CALL; }
#endif

#pragma GCC visibility pop
