"""MPI_Alltoallv from Python through mpi4py, plain and in place: correct
result under the shim."""
import array
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
P, me = comm.Get_size(), comm.Get_rank()
bad = 0
for it in range(3):
    sc = [(me + j + it) % 4 for j in range(P)]
    rc = [(j + me + it) % 4 for j in range(P)]
    sd = [sum(sc[:j]) for j in range(P)]
    rd = [sum(rc[:j]) for j in range(P)]
    sb = array.array("i", [0] * max(1, sum(sc)))
    for j in range(P):
        for k in range(sc[j]):
            sb[sd[j] + k] = me * 10000 + j * 100 + k
    rb = array.array("i", [-1] * max(1, sum(rc)))
    comm.Alltoallv([sb, (sc, sd), MPI.INT], [rb, (rc, rd), MPI.INT])
    for j in range(P):
        for k in range(rc[j]):
            if rb[rd[j] + k] != j * 10000 + me * 100 + k:
                bad += 1
    # In place (the counts are symmetric, as MPI then requires): what this
    # rank sends to j starts in receive block j.
    ib = array.array("i", [-1] * max(1, sum(rc)))
    for j in range(P):
        for k in range(rc[j]):
            ib[rd[j] + k] = me * 10000 + j * 100 + k
    comm.Alltoallv(MPI.IN_PLACE, [ib, (rc, rd), MPI.INT])
    for j in range(P):
        for k in range(rc[j]):
            if ib[rd[j] + k] != j * 10000 + me * 100 + k:
                bad += 1
tot = comm.allreduce(bad)
if me == 0:
    print("mpi4py_check: wrong elements:", tot)
sys.exit(1 if tot else 0)
