// MPI_Alltoallv from C++: the C binding, caught like any C caller.
#include <mpi.h>

#include <cstdio>
#include <vector>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int P, me;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    std::vector<int> sc(P), sd(P), rc(P), rd(P);
    int stot = 0, rtot = 0;
    for (int j = 0; j < P; j++) {
        sc[j] = (me + 2 * j) % 5;
        rc[j] = (j + 2 * me) % 5;
        sd[j] = stot;
        rd[j] = rtot;
        stot += sc[j];
        rtot += rc[j];
    }
    std::vector<double> sb(stot + 1), rb(rtot + 1, -1.0);
    for (int j = 0; j < P; j++)
        for (int k = 0; k < sc[j]; k++)
            sb[sd[j] + k] = me * 1000.0 + j + k / 10.0;
    MPI_Alltoallv(sb.data(), sc.data(), sd.data(), MPI_DOUBLE, rb.data(), rc.data(), rd.data(),
                  MPI_DOUBLE, MPI_COMM_WORLD);
    int bad = 0, all = 0;
    for (int j = 0; j < P; j++)
        for (int k = 0; k < rc[j]; k++)
            bad += rb[rd[j] + k] != j * 1000.0 + me + k / 10.0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        std::printf("cxx_check: wrong elements: %d\n", all);
    MPI_Finalize();
    return all ? 1 : 0;
}
