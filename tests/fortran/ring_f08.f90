! `use mpi_f08`: a token around a ring with TYPE(MPI_Status) checked, an
! all-reduce with MPI_IN_PLACE (ierror left out), a vector datatype sent to
! a contiguous buffer, a sub-communicator compared with ==, MPI_Waitall with
! statuses, a 2-D array as a buffer, an operation and an error handler of
! its own, names (MPI_LB's and MPI_UB's too) and MPI_TAG_UB, non-contiguous
! sections through a blocking call, and one refused by a nonblocking
! all-reduce with MPI_ERR_BUFFER through its communicator's handler
! (MPI_ERRORS_RETURN, MPI_COMM_WORLD's ending the job). Rank 0 prints one
! line when every check passed; a failed check prints FAIL and aborts the job.
program ring
  use mpi_f08
  implicit none
  integer :: ierr, rank, np, next, prev, token, i, n, got(2), a(10), b(5), cls, s2(10), r2(10)
  type(MPI_Request) :: rq
  type(MPI_Status) :: status, stats(2)
  type(MPI_Request) :: reqs(2)
  type(MPI_Datatype) :: vec
  type(MPI_Comm) :: half, dup
  double precision :: x(4), m(3, 2)
  character(len=MPI_MAX_ERROR_STRING) :: name
  integer(MPI_ADDRESS_KIND) :: tagub
  logical :: flag
  logical(1) :: l1 = .true.
  logical(8) :: l8(3) = .false.
  type(MPI_Op) :: op
  type(MPI_Errhandler) :: errh
  integer :: handled = -1

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  call check(ierr == MPI_SUCCESS, 'ierror')
  next = mod(rank + 1, np)
  prev = mod(rank + np - 1, np)
  ! the ring
  if (rank == 0) then
    token = 0
    call MPI_Send(token, 1, MPI_INTEGER, next, 7, MPI_COMM_WORLD)
  end if
  call MPI_Recv(token, 1, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, status)
  call check(status%MPI_SOURCE == prev .and. status%MPI_TAG == 7, 'ring status')
  call MPI_Get_count(status, MPI_INTEGER, n)
  call check(n == 1, 'MPI_Get_count')
  if (rank /= 0) then
    token = token + rank
    call MPI_Send(token, 1, MPI_INTEGER, next, 7, MPI_COMM_WORLD)
  else
    call check(token == np * (np - 1) / 2, 'token')
  end if
  ! all-reduce in place
  x = [(dble(rank + i), i = 1, 4)]
  call MPI_Allreduce(MPI_IN_PLACE, x, 4, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  do i = 1, 4
    call check(abs(x(i) - (np * (np - 1) / 2 + np * i)) < 1d-9, 'allreduce')
  end do
  ! a 2-D array reduced whole
  m = rank
  call MPI_Allreduce(MPI_IN_PLACE, m, 6, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD)
  call check(all(abs(m - (np - 1)) < 1d-9), '2-D allreduce')
  ! a vector type
  call MPI_Type_vector(5, 1, 2, MPI_INTEGER, vec)
  call MPI_Type_commit(vec)
  if (rank == 0) then
    a = [(100 + i, i = 1, 10)]
    call MPI_Send(a, 1, vec, 1, 3, MPI_COMM_WORLD)
  else if (rank == 1) then
    call MPI_Recv(b, 5, MPI_INTEGER, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call check(all(b == [(100 + 2 * i - 1, i = 1, 5)]), 'vector type')
  end if
  call MPI_Type_free(vec)
  call check(vec == MPI_DATATYPE_NULL, 'MPI_Type_free')
  ! a communicator of its own
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half)
  call check(half /= MPI_COMM_NULL, 'split')
  call MPI_Comm_size(half, n)
  call check(n == (np + 1 - mod(rank, 2)) / 2, 'split size')
  call MPI_Comm_free(half)
  call check(half == MPI_COMM_NULL, 'MPI_Comm_free')
  ! two receives completed together
  call MPI_Irecv(got(1), 1, MPI_INTEGER, prev, 21, MPI_COMM_WORLD, reqs(1))
  call MPI_Irecv(got(2), 1, MPI_INTEGER, prev, 22, MPI_COMM_WORLD, reqs(2))
  call MPI_Send(rank * 2, 1, MPI_INTEGER, next, 22, MPI_COMM_WORLD)
  call MPI_Send(rank * 3, 1, MPI_INTEGER, next, 21, MPI_COMM_WORLD)
  call MPI_Waitall(2, reqs, stats)
  call check(all(reqs == MPI_REQUEST_NULL), 'waitall')
  call check(got(1) == prev * 3 .and. got(2) == prev * 2, 'waitall data')
  call check(stats(1)%MPI_TAG == 21 .and. stats(2)%MPI_TAG == 22, 'waitall statuses')
  ! an operation of its own, and an error handler of its own
  call MPI_Op_create(myprod, .true., op)
  call MPI_Allreduce(rank + 2, n, 1, MPI_INTEGER, op, MPI_COMM_WORLD)
  call check(n == product([(i + 2, i = 0, np - 1)]), 'MPI_Op_create')
  call MPI_Op_free(op)
  call MPI_Comm_dup(MPI_COMM_WORLD, half)
  call MPI_Comm_create_errhandler(myhandler, errh)
  call MPI_Comm_set_errhandler(half, errh)
  call MPI_Send(rank, 1, MPI_INTEGER, np + 5, 0, half, ierr)
  call check(handled == MPI_ERR_RANK, 'MPI_Comm_create_errhandler')
  call MPI_Errhandler_free(errh)
  call MPI_Comm_free(half)
  ! MPI_Sizeof
  call MPI_Sizeof(x, n)
  call check(n == 8, 'MPI_Sizeof(double precision array)')
  call MPI_Sizeof(rank, n)
  call check(n == 4, 'MPI_Sizeof(integer)')
  call MPI_Sizeof(l1, n)
  call check(n == 1, 'MPI_Sizeof(logical(1))')
  call MPI_Sizeof(l8, n)
  call check(n == 8, 'MPI_Sizeof(logical(8) array)')
  ! strings and attributes
  call MPI_Comm_get_name(MPI_COMM_WORLD, name, n)
  call check(name == 'MPI_COMM_WORLD' .and. n == 14, 'MPI_Comm_get_name')
  call MPI_Type_get_name(MPI_LB, name, n)
  call check(name == 'MPI_LB' .and. n == 6, 'MPI_Type_get_name(MPI_LB)')
  call MPI_Type_get_name(MPI_UB, name, n)
  call check(name == 'MPI_UB' .and. n == 6, 'MPI_Type_get_name(MPI_UB)')
  call MPI_Error_string(MPI_ERR_RANK, name, n)
  call check(n > 0 .and. len_trim(name) == n, 'MPI_Error_string')
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, tagub, flag)
  call check(flag .and. tagub >= 32767, 'MPI_TAG_UB')
  ! non-contiguous sections: a blocking call takes them (through a copy),
  ! a nonblocking all-reduce refuses a section and a contiguous array (one
  ! datatype cannot describe both) rather than send them wrong
  s2 = [(100 * rank + i, i = 1, 10)]
  r2 = -1
  call MPI_Sendrecv(s2(1:10:2), 5, MPI_INTEGER, next, 8, r2(2:10:2), 5, MPI_INTEGER, prev, 8, &
      MPI_COMM_WORLD, status)
  call check(all(r2(2:10:2) == [(100 * prev + i, i = 1, 10, 2)]) .and. all(r2(1:9:2) == -1), &
      'sections through MPI_Sendrecv')
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN)
  call MPI_Iallreduce(a(1:10:2), b, 5, MPI_INTEGER, MPI_SUM, dup, rq, ierr)
  call MPI_Error_class(ierr, cls)
  call check(cls == MPI_ERR_BUFFER, 'non-contiguous section to MPI_Iallreduce')
  call MPI_Comm_free(dup)
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a)', 'fortran use mpi_f08: ring, allreduce, vector type ok on ', np, ' ranks'
  call MPI_Finalize()
contains
  subroutine myprod(invec, inoutvec, len, datatype)
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    if (datatype == MPI_INTEGER) b = b * a
  end subroutine myprod
  subroutine myhandler(comm, code)
    type(MPI_Comm) :: comm
    integer :: code, cls
    call MPI_Error_class(code, cls)
    if (comm /= MPI_COMM_NULL) handled = cls
  end subroutine myhandler
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
      print *, 'FAIL: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine check
end program ring
