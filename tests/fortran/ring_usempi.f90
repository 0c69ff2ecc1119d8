! `use mpi` (free form): a token around a ring with its statuses checked, an
! all-reduce with MPI_IN_PLACE, a vector datatype sent to a contiguous
! buffer, MPI_SENDRECV, MPI_WAITALL with statuses and an operation of its own. Rank 0 prints one line
! when every check passed; a failed check prints FAIL and aborts the job.
program ring
  use mpi
  implicit none
  integer :: ierr, rank, np, next, prev, token, i, n, vec
  integer :: status(MPI_STATUS_SIZE), stats(MPI_STATUS_SIZE, 2), reqs(2)
  integer :: a(10), b(5), got(2), op
  external :: myprod
  double precision :: x(4)
  logical(2) :: l2 = .true.

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  next = mod(rank + 1, np)
  prev = mod(rank + np - 1, np)
  ! the ring
  if (rank == 0) then
    token = 0
    call MPI_Send(token, 1, MPI_INTEGER, next, 7, MPI_COMM_WORLD, ierr)
  end if
  call MPI_Recv(token, 1, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, status, ierr)
  call check(status(MPI_SOURCE) == prev .and. status(MPI_TAG) == 7, 'ring status')
  if (rank /= 0) then
    token = token + rank
    call MPI_Send(token, 1, MPI_INTEGER, next, 7, MPI_COMM_WORLD, ierr)
  else
    call check(token == np * (np - 1) / 2, 'token')
  end if
  ! all-reduce in place
  x = [(dble(rank + i), i = 1, 4)]
  call MPI_Allreduce(MPI_IN_PLACE, x, 4, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  do i = 1, 4
    call check(abs(x(i) - (np * (np - 1) / 2 + np * i)) < 1d-9, 'allreduce')
  end do
  ! a vector type
  call MPI_Type_vector(5, 1, 2, MPI_INTEGER, vec, ierr)
  call MPI_Type_commit(vec, ierr)
  if (rank == 0) then
    a = [(100 + i, i = 1, 10)]
    call MPI_Send(a, 1, vec, 1, 3, MPI_COMM_WORLD, ierr)
  else if (rank == 1) then
    call MPI_Recv(b, 5, MPI_INTEGER, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call check(all(b == [(100 + 2 * i - 1, i = 1, 5)]), 'vector type')
  end if
  call MPI_Type_free(vec, ierr)
  ! sendrecv around the ring, then two receives completed together
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, next, 5, n, 1, MPI_INTEGER, prev, 5, &
                    MPI_COMM_WORLD, status, ierr)
  call check(n == prev .and. status(MPI_SOURCE) == prev, 'sendrecv')
  call MPI_Irecv(got(1), 1, MPI_INTEGER, prev, 21, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Irecv(got(2), 1, MPI_INTEGER, prev, 22, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Send(rank * 2, 1, MPI_INTEGER, next, 22, MPI_COMM_WORLD, ierr)
  call MPI_Send(rank * 3, 1, MPI_INTEGER, next, 21, MPI_COMM_WORLD, ierr)
  call MPI_Waitall(2, reqs, stats, ierr)
  call check(ierr == MPI_SUCCESS .and. all(reqs == MPI_REQUEST_NULL), 'waitall')
  call check(got(1) == prev * 3 .and. got(2) == prev * 2, 'waitall data')
  call check(stats(MPI_TAG, 1) == 21 .and. stats(MPI_TAG, 2) == 22, 'waitall statuses')
  call MPI_Sizeof(x, n, ierr)
  call check(n == 8 .and. ierr == MPI_SUCCESS, 'MPI_Sizeof')
  call MPI_Sizeof(l2, n, ierr)
  call check(n == 2 .and. ierr == MPI_SUCCESS, 'MPI_Sizeof(logical(2))')
  ! a reduction operation written in Fortran
  call MPI_Op_create(myprod, .true., op, ierr)
  n = 0
  call MPI_Allreduce(rank + 2, n, 1, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
  call check(n == product([(i + 2, i = 0, np - 1)]), 'MPI_Op_create')
  call MPI_Op_free(op, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a)', 'fortran use mpi: ring, allreduce, vector type ok on ', np, ' ranks'
  call MPI_Finalize(ierr)
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      print *, 'FAIL: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check
end program ring

! MPI_Op_create's function: every argument by reference, as MPI calls it.
subroutine myprod(invec, inoutvec, len, datatype)
  integer :: len, datatype, i
  integer :: invec(len), inoutvec(len)
  do i = 1, len
    inoutvec(i) = inoutvec(i) * invec(i)
  end do
end subroutine myprod
