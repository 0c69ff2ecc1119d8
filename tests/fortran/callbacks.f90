! mpif.h (free form): the procedures a Fortran program gives MPI to call back.
! Keyvals of communicators, datatypes and windows with copy and delete
! procedures of the program (values INTEGER(KIND=MPI_ADDRESS_KIND), the extra
! state given back), the predefined MPI_COMM_DUP_FN / MPI_TYPE_DUP_FN /
! MPI_*_NULL_COPY_FN / MPI_*_NULL_DELETE_FN, MPI-1's MPI_KEYVAL_CREATE with
! INTEGER values (MPI_ATTR_PUT/GET, MPI_DUP_FN), values across the
! languages (with attr_c.c), a generalized request
! (query, free and cancel procedures, given the program's extra state
! variable), an error handler and a reduction
! written in Fortran. Rank 0 prints one line when every check passed; a failed
! check prints FAIL and aborts the job.
module cb_state
  implicit none
  integer :: copies = 0, deletes = 0, frees = 0, handled = 0
  integer(kind=8) :: last_extra = 0
end module cb_state

program callbacks
  use cb_state
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, np, kv, kv2, kv1, dup, dup2, t, t2, win, req, eh, op, n, i, v1
  integer :: status(MPI_STATUS_SIZE), buf(4)
  integer(kind=MPI_ADDRESS_KIND) :: val, extra, wsize
  logical :: flag
  external :: copy_fn, delete_fn, copy1_fn, delete1_fn, query_fn, free_fn, cancel_fn
  external :: on_error, mysum, cgetattr, csetattr

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)

  ! a communicator keyval with the program's procedures: the copy adds 1
  extra = 1000 + rank
  call MPI_Comm_create_keyval(copy_fn, delete_fn, kv, extra, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_COMM_CREATE_KEYVAL')
  val = 40
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kv, val, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call check(copies == 1 .and. last_extra == extra, 'copy procedure called with the extra state')
  call MPI_Comm_get_attr(dup, kv, val, flag, ierr)
  call check(flag .and. val == 41, 'copied value')
  call MPI_Comm_free(dup, ierr)
  call check(deletes == 1, 'delete procedure called on free')
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, kv, ierr)
  call check(deletes == 2, 'delete procedure called on delete_attr')
  call MPI_Comm_free_keyval(kv, ierr)
  call check(kv == MPI_KEYVAL_INVALID, 'MPI_COMM_FREE_KEYVAL')

  ! the predefined procedures
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kv, extra, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, kv2, extra, ierr)
  val = 77
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kv, val, ierr)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kv2, val, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  val = 0
  call MPI_Comm_get_attr(dup, kv, val, flag, ierr)
  call check(flag .and. val == 77, 'MPI_COMM_DUP_FN')
  call MPI_Comm_get_attr(dup, kv2, val, flag, ierr)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN')
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_free_keyval(kv, ierr)
  call MPI_Comm_free_keyval(kv2, ierr)

  ! across the languages (MPI-3.1 17.2.7): C reads a pointer to the value
  ! Fortran set, Fortran reads the address C set (attr_c.c)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kv, extra, ierr)
  val = 1234
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kv, val, ierr)
  call cgetattr(MPI_COMM_WORLD, kv, val, n)
  call check(n == 1, 'C reads a pointer to the value Fortran set')
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call cgetattr(dup, kv, val, n)
  call check(n == 1, 'the same through MPI_COMM_DUP_FN')
  call MPI_Comm_get_attr(dup, kv, val, flag, ierr)
  call check(flag .and. val == 1234, 'Fortran reads the value back')
  call csetattr(dup, kv, v1, wsize)
  call MPI_Comm_get_attr(dup, kv, val, flag, ierr)
  call check(flag .and. val == wsize, 'Fortran reads the address C set')
  call MPI_Comm_free(dup, ierr)
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, kv, ierr)
  call MPI_Comm_free_keyval(kv, ierr)

  ! a datatype's: MPI_TYPE_DUP_FN, and the program's delete procedure
  deletes = 0
  call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, delete_fn, kv, extra, ierr)
  call MPI_Type_contiguous(2, MPI_INTEGER, t, ierr)
  val = 5
  call MPI_Type_set_attr(t, kv, val, ierr)
  call MPI_Type_dup(t, t2, ierr)
  val = 0
  call MPI_Type_get_attr(t2, kv, val, flag, ierr)
  call check(flag .and. val == 5, 'MPI_TYPE_DUP_FN')
  call MPI_Type_free(t2, ierr)
  call MPI_Type_free(t, ierr)
  call check(deletes == 2, 'datatype delete procedure')
  call MPI_Type_free_keyval(kv, ierr)

  ! a window's
  deletes = 0
  call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, delete_fn, kv, extra, ierr)
  wsize = 16
  call MPI_Win_create(buf, wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  val = 9
  call MPI_Win_set_attr(win, kv, val, ierr)
  call MPI_Win_get_attr(win, kv, val, flag, ierr)
  call check(flag .and. val == 9, 'window attribute')
  call MPI_Win_free(win, ierr)
  call check(deletes == 1, 'window delete procedure')
  call MPI_Win_free_keyval(kv, ierr)

  ! MPI-1: INTEGER values and extra state
  copies = 0
  call MPI_Keyval_create(copy1_fn, delete1_fn, kv1, 7, ierr)
  call MPI_Attr_put(MPI_COMM_WORLD, kv1, 300, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Attr_get(dup, kv1, v1, flag, ierr)
  call check(flag .and. v1 == 307 .and. copies == 1, 'MPI_KEYVAL_CREATE copy procedure')
  deletes = 0
  call MPI_Comm_free(dup, ierr)
  call check(deletes == 1, 'MPI_KEYVAL_CREATE delete procedure')
  call MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, kv, 0, ierr)
  call MPI_Attr_put(MPI_COMM_WORLD, kv, 12, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Attr_get(dup, kv, v1, flag, ierr)
  call check(flag .and. v1 == 12, 'MPI_DUP_FN')
  call MPI_Comm_free(dup, ierr)
  call MPI_Attr_delete(MPI_COMM_WORLD, kv1, ierr)
  call MPI_Keyval_free(kv1, ierr)
  call MPI_Keyval_free(kv, ierr)

  ! a generalized request
  extra = 4242
  call MPI_Grequest_start(query_fn, free_fn, cancel_fn, extra, req, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_GREQUEST_START')
  call MPI_Grequest_complete(req, ierr)
  call MPI_Wait(req, status, ierr)
  call check(status(MPI_TAG) == 4242 .and. status(MPI_SOURCE) == rank, 'query procedure status')
  call MPI_Get_count(status, MPI_INTEGER, n, ierr)
  call check(n == 3, 'query procedure count')
  call check(frees == 1 .and. req == MPI_REQUEST_NULL, 'free procedure')
  ! the procedures had the program's EXTRA_STATE variable (as MPICH's and Open MPI's have)
  call check(extra == 4241, 'extra state by reference')

  ! an error handler and an operation written in Fortran
  call MPI_Comm_create_errhandler(on_error, eh, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup2, ierr)
  call MPI_Comm_set_errhandler(dup2, eh, ierr)
  call MPI_Send(buf, 1, MPI_INTEGER, np + 3, 0, dup2, ierr)
  call check(handled == MPI_ERR_RANK, 'error handler')
  call MPI_Comm_free(dup2, ierr)
  call MPI_Errhandler_free(eh, ierr)
  call MPI_Op_create(mysum, .true., op, ierr)
  buf = [(rank + i, i = 1, 4)]
  call MPI_Allreduce(MPI_IN_PLACE, buf, 4, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
  do i = 1, 4
    call check(buf(i) == np * (np - 1) / 2 + np * i, 'MPI_OP_CREATE')
  end do
  call MPI_Op_free(op, ierr)

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a)', 'fortran callbacks: keyvals, grequest, errhandler, op ok on ', &
    np, ' ranks'
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
end program callbacks

subroutine copy_fn(oldcomm, keyval, extra, valin, valout, flag, ierr)
  use cb_state
  implicit none
  integer :: oldcomm, keyval, ierr
  integer(kind=8) :: extra, valin, valout
  logical :: flag
  copies = copies + 1
  last_extra = extra
  valout = valin + 1
  flag = .true.
  ierr = 0
end subroutine copy_fn

subroutine delete_fn(comm, keyval, val, extra, ierr)
  use cb_state
  implicit none
  integer :: comm, keyval, ierr
  integer(kind=8) :: val, extra
  deletes = deletes + 1
  ierr = 0
end subroutine delete_fn

subroutine copy1_fn(oldcomm, keyval, extra, valin, valout, flag, ierr)
  use cb_state
  implicit none
  integer :: oldcomm, keyval, extra, valin, valout, ierr
  logical :: flag
  copies = copies + 1
  valout = valin + extra
  flag = .true.
  ierr = 0
end subroutine copy1_fn

subroutine delete1_fn(comm, keyval, val, extra, ierr)
  use cb_state
  implicit none
  integer :: comm, keyval, val, extra, ierr
  deletes = deletes + 1
  ierr = 0
end subroutine delete1_fn

subroutine query_fn(extra, status, ierr)
  implicit none
  include 'mpif.h'
  integer(kind=MPI_ADDRESS_KIND) :: extra
  integer :: status(MPI_STATUS_SIZE), ierr, rank
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  status(MPI_SOURCE) = rank
  status(MPI_TAG) = int(extra)
  call MPI_Status_set_elements(status, MPI_INTEGER, 3, ierr)
  call MPI_Status_set_cancelled(status, .false., ierr)
  ierr = MPI_SUCCESS
end subroutine query_fn

subroutine free_fn(extra, ierr)
  use cb_state
  implicit none
  integer(kind=8) :: extra
  integer :: ierr
  if (extra == 4242) frees = frees + 1
  extra = extra - 1
  ierr = 0
end subroutine free_fn

subroutine cancel_fn(extra, complete, ierr)
  implicit none
  integer(kind=8) :: extra
  logical :: complete
  integer :: ierr
  ierr = 0
end subroutine cancel_fn

subroutine on_error(comm, code)
  use cb_state
  implicit none
  integer :: comm, code, cls, ierr
  include 'mpif.h'
  call MPI_Error_class(code, cls, ierr)
  handled = cls
end subroutine on_error

subroutine mysum(invec, inoutvec, len, datatype)
  implicit none
  integer :: len, datatype, i
  integer :: invec(len), inoutvec(len)
  do i = 1, len
    inoutvec(i) = inoutvec(i) + invec(i)
  end do
end subroutine mysum
