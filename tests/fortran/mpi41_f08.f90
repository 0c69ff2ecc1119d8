! MPI-4.1 calls through use mpi_f08: the status accessors, the value-index
! pairs, MPI_Request_get_status_any/_some (indices from 1, the requests left
! live) and MPI_ERRORS_ABORT's and the new classes' constants.
program mpi41_f08
  use mpi_f08
  implicit none
  type(MPI_Status) :: st, sts(2)
  type(MPI_Request) :: r(2)
  type(MPI_Datatype) :: pair
  type(MPI_Errhandler) :: h
  integer :: me, src, tag, err, a, b, idx, n, inds(2)
  logical :: flag

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Status_set_source(st, 5)
  call MPI_Status_set_tag(st, 77)
  call MPI_Status_set_error(st, MPI_ERR_TRUNCATE)
  call MPI_Status_get_source(st, src)
  call MPI_Status_get_tag(st, tag)
  call MPI_Status_get_error(st, err)
  if (src /= 5 .or. tag /= 77 .or. err /= MPI_ERR_TRUNCATE .or. st%MPI_TAG /= 77) &
      call fail('status accessors')
  call MPI_Type_get_value_index(MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, pair)
  if (pair /= MPI_2DOUBLE_PRECISION) call fail('value index 2DOUBLE_PRECISION')
  call MPI_Type_get_value_index(MPI_INTEGER, MPI_REAL, pair)
  if (pair /= MPI_DATATYPE_NULL) call fail('value index, no pair')

  call MPI_Irecv(a, 1, MPI_INTEGER, 0, 1, MPI_COMM_SELF, r(1))
  call MPI_Irecv(b, 1, MPI_INTEGER, 0, 2, MPI_COMM_SELF, r(2))
  call MPI_Send(22, 1, MPI_INTEGER, 0, 2, MPI_COMM_SELF)
  flag = .false.
  do while (.not. flag)
    call MPI_Request_get_status_any(2, r, idx, flag, st)
  end do
  if (idx /= 2 .or. st%MPI_TAG /= 2) call fail('get_status_any')
  call MPI_Request_get_status_some(2, r, n, inds, sts)
  if (n /= 1 .or. inds(1) /= 2 .or. sts(1)%MPI_TAG /= 2) call fail('get_status_some')
  if (r(2) == MPI_REQUEST_NULL) call fail('a request was freed')
  call MPI_Send(11, 1, MPI_INTEGER, 0, 1, MPI_COMM_SELF)
  call MPI_Waitall(2, r, sts)
  if (a /= 11 .or. b /= 22) call fail('received')

  call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ABORT)
  call MPI_Comm_get_errhandler(MPI_COMM_SELF, h)
  if (h /= MPI_ERRORS_ABORT) call fail('MPI_ERRORS_ABORT')
  if (MPI_ERR_VALUE_TOO_LARGE == MPI_ERR_ERRHANDLER .or. MPI_MAX_PSET_NAME_LEN < 256 .or. &
      MPI_MAX_STRINGTAG_LEN < 256 .or. MPI_COMBINER_VALUE_INDEX == MPI_COMBINER_NAMED) &
      call fail('constants')
  if (me == 0) print '(a)', 'fortran mpi_f08: MPI-4.1 calls ok'
  call MPI_Finalize()
contains
  subroutine fail(what)
    character(*), intent(in) :: what
    print '(a,i0,2a)', 'FAIL rank ', me, ': ', what
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine fail
end program mpi41_f08
