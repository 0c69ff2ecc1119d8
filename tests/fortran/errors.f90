! Errors in Fortran are the C calls' errors. With `errors_return` as the
! argument, MPI_COMM_WORLD gets MPI_ERRORS_RETURN and a send to a rank that
! does not exist must return MPI_ERR_RANK in ierror, with the C call's
! message from MPI_Error_string; without it, the same send ends the job
! with the C call's one-line report (MPI_ERRORS_ARE_FATAL). MPI_Error_string
! of a code that is no error code fails with MPI_ERR_ARG and still says why in
! the string, as the C call does (miniGhost prints it for its own code -1).
program errors
  use mpi
  implicit none
  integer :: ierr, rank, np, cls, n
  character(len=MPI_MAX_ERROR_STRING) :: msg
  character(len=32) :: arg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  call get_command_argument(1, arg)
  if (arg == 'errors_return') then
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  end if
  if (rank == 0) then
    call MPI_Send(rank, 1, MPI_INTEGER, np + 3, 0, MPI_COMM_WORLD, ierr)
    call MPI_Error_class(ierr, cls, n)
    call MPI_Error_string(ierr, msg, n, n)
    if (cls == MPI_ERR_RANK) then
      print '(a)', 'fortran errors: MPI_Send to a bad rank returned MPI_ERR_RANK: ' // msg(1:n)
      msg = 'untouched'
      call MPI_Error_string(-1, msg, n, ierr)
      if (ierr /= MPI_ERR_ARG .or. n < 1 .or. n > MPI_MAX_ERROR_STRING) then
        print '(a,i0,a,i0)', 'FAIL: MPI_Error_string(-1) returned ', ierr, ' length ', n
        call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
      end if
      print '(a)', 'fortran errors: MPI_Error_string(-1): ' // msg(1:n)
    else
      print '(a,i0)', 'FAIL: MPI_Send to a bad rank returned class ', cls
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end if
  call MPI_Finalize(ierr)
end program errors
