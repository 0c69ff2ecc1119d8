! `use mpi` with explicit interfaces, as MPICH's profile1f90 uses them: the
! program renames MPI_SEND and MPI_RECV out of the module and defines its
! own, which count the calls and the items and go on to PMPI_SEND and
! PMPI_RECV; the main program's calls reach them. A buffer of another type
! (a REAL array, a scalar) still goes to the module's routines unchecked.
! Rank 0 prints one line when every check passed; a failed check prints FAIL
! and aborts the job.
program profile
  use mpi
  implicit none
  integer :: ierr, rank, np, s(3), r(3), calls, amount, rcalls
  integer :: st(MPI_STATUS_SIZE)
  real :: x(2)
  common /counts/ calls, amount, rcalls

  calls = 0
  amount = 0
  rcalls = 0
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  if (rank == 0) then
    s = [3, 4, 5]
    call MPI_SEND(s, 3, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, ierr)
    call MPI_SEND(s(1), 1, MPI_INTEGER, 1, 1, MPI_COMM_WORLD, ierr)
    call MPI_RECV(x, 2, MPI_REAL, 1, 2, MPI_COMM_WORLD, st, ierr)
    call check(calls == 2 .and. amount == 4 .and. rcalls == 1 .and. all(x == [1.5, 2.5]), &
               'rank 0: calls reached the program''s MPI_SEND and MPI_RECV')
  else if (rank == 1) then
    call MPI_RECV(r, 3, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, st, ierr)
    call check(all(r == [3, 4, 5]) .and. st(MPI_SOURCE) == 0, 'rank 1: first message')
    call MPI_RECV(r(2), 1, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(r(2) == 3, 'rank 1: second message')
    x = [1.5, 2.5]
    call MPI_SEND(x, 2, MPI_REAL, 0, 2, MPI_COMM_WORLD, ierr)
    call check(calls == 1 .and. amount == 2 .and. rcalls == 2, &
               'rank 1: calls reached the program''s MPI_SEND and MPI_RECV')
  end if
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a, i0, a)', 'fortran use mpi profiling: MPI_SEND and MPI_RECV replaced on ', &
    np, ' ranks'
  call MPI_FINALIZE(ierr)

contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      print *, 'FAIL: ', what
      call MPI_ABORT(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check
end program profile

subroutine MPI_SEND(buf, count, datatype, dest, tag, comm, ierr)
  use mpi, skip_mpi_send => mpi_send
  implicit none
  integer :: buf(*)
  integer :: count, datatype, dest, tag, comm, ierr
  integer :: calls, amount, rcalls
  common /counts/ calls, amount, rcalls
  calls = calls + 1
  amount = amount + count
  call PMPI_SEND(buf, count, datatype, dest, tag, comm, ierr)
end subroutine MPI_SEND

subroutine MPI_RECV(buf, count, datatype, source, tag, comm, status, ierr)
  use mpi, skip_mpi_recv => mpi_recv
  implicit none
  integer :: buf(*)
  integer :: count, datatype, source, tag, comm, status(MPI_STATUS_SIZE), ierr
  integer :: calls, amount, rcalls
  common /counts/ calls, amount, rcalls
  rcalls = rcalls + 1
  call PMPI_RECV(buf, count, datatype, source, tag, comm, status, ierr)
end subroutine MPI_RECV
