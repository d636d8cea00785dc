! MPI_Alltoallv from Fortran: twice through "use mpi", twice through
! "include 'mpif.h'".  Each rank sends (j+1) integers to rank j; the values
! name sender, receiver and index, so any misplaced element is caught.
! Only the MPI_Alltoallv call differs between the two paths, so the layout
! and the check are shared and cannot drift apart.
subroutine fill(p, me, sc, sd, rc, rd, sb, rb)
  implicit none
  integer, intent(in) :: p, me
  integer, intent(out) :: sc(p), sd(p), rc(p), rd(p), sb(p*p), rb(p*p)
  integer :: j, k, pos
  pos = 0
  do j = 1, p
    sc(j) = j
    sd(j) = pos
    do k = 1, j
      sb(pos + k) = me * 10000 + (j - 1) * 100 + k
    end do
    pos = pos + j
  end do
  do j = 1, p
    rc(j) = me + 1
    rd(j) = (j - 1) * (me + 1)
  end do
  rb = -1
end subroutine

subroutine check(p, me, rd, rb, nerr)
  implicit none
  integer, intent(in) :: p, me, rd(p), rb(p*p)
  integer, intent(inout) :: nerr
  integer :: j, k
  do j = 1, p
    do k = 1, me + 1
      if (rb(rd(j) + k) /= (j - 1) * 10000 + me * 100 + k) nerr = nerr + 1
    end do
  end do
end subroutine

subroutine exchange_mpif(nerr)
  implicit none
  include 'mpif.h'
  integer, intent(inout) :: nerr
  integer :: p, me, ierr
  integer, allocatable :: sc(:), sd(:), rc(:), rd(:), sb(:), rb(:)
  call MPI_Comm_size(MPI_COMM_WORLD, p, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  allocate(sc(p), sd(p), rc(p), rd(p), sb(p*p), rb(p*p))
  call fill(p, me, sc, sd, rc, rd, sb, rb)
  call MPI_Alltoallv(sb, sc, sd, MPI_INTEGER, rb, rc, rd, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(p, me, rd, rb, nerr)
end subroutine

program fortran_check
  use mpi
  implicit none
  integer :: p, me, ierr, nerr, tot, it
  integer, allocatable :: sc(:), sd(:), rc(:), rd(:), sb(:), rb(:)
  call MPI_Init(ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, p, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  allocate(sc(p), sd(p), rc(p), rd(p), sb(p*p), rb(p*p))
  nerr = 0
  do it = 1, 2
    call fill(p, me, sc, sd, rc, rd, sb, rb)
    call MPI_Alltoallv(sb, sc, sd, MPI_INTEGER, rb, rc, rd, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call check(p, me, rd, rb, nerr)
    call exchange_mpif(nerr)
  end do
  call MPI_Allreduce(nerr, tot, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (me == 0) print '(a,i0)', 'fortran_check: wrong elements: ', tot
  call MPI_Finalize(ierr)
  if (tot /= 0) stop 1
end program
