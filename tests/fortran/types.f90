! mpif.h (free form): gfortran's optional kinds courier has as named types,
! MPI_LOGICAL1, 2, 4, 8 and 16 (an all-reduce with MPI_LAND and MPI_LOR on
! LOGICAL(k) arrays, their sizes and names), the constants mpif.h once
! left out (MPI_WIN_BASE, MPI_WIN_SIZE, MPI_WIN_DISP_UNIT: hexadecimal in
! mpi.h), and MPI-5.0's MPI_ABI_GET_VERSION (-1: not the standard ABI) and
! MPI_ABI_GET_FORTRAN_INFO. Rank 0 prints one line when every check passed; a failed check
! prints FAIL and aborts the job.
program types
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, np, sz, n
  logical(1) :: a1(2)
  logical(2) :: a2(2)
  logical(4) :: a4(2)
  logical(8) :: a8(2)
  logical(16) :: a16(2)
  integer :: major, minor, info, vlen
  logical :: flag
  character(len=MPI_MAX_INFO_VAL) :: val
  character(len=MPI_MAX_OBJECT_NAME) :: name

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  ! (1): true everywhere / true on rank 0 only; (2) the same
  a1(1) = .true.
  a1(2) = rank == 0
  call MPI_Allreduce(MPI_IN_PLACE, a1, 2, MPI_LOGICAL1, MPI_LAND, MPI_COMM_WORLD, ierr)
  call check(logical(a1(1)) .and. .not. logical(a1(2)), 'MPI_LOGICAL1 MPI_LAND')
  a2(1) = .false.
  a2(2) = rank == 0
  call MPI_Allreduce(MPI_IN_PLACE, a2, 2, MPI_LOGICAL2, MPI_LOR, MPI_COMM_WORLD, ierr)
  call check(.not. logical(a2(1)) .and. logical(a2(2)), 'MPI_LOGICAL2 MPI_LOR')
  a4(1) = .true.
  a4(2) = rank == 0
  call MPI_Allreduce(MPI_IN_PLACE, a4, 2, MPI_LOGICAL4, MPI_LAND, MPI_COMM_WORLD, ierr)
  call check(a4(1) .and. .not. a4(2), 'MPI_LOGICAL4 MPI_LAND')
  a8(1) = .true.
  a8(2) = rank == 0
  call MPI_Allreduce(MPI_IN_PLACE, a8, 2, MPI_LOGICAL8, MPI_LAND, MPI_COMM_WORLD, ierr)
  call check(logical(a8(1)) .and. .not. logical(a8(2)), 'MPI_LOGICAL8 MPI_LAND')
  a16(1) = .false.
  a16(2) = rank == 0
  call MPI_Allreduce(MPI_IN_PLACE, a16, 2, MPI_LOGICAL16, MPI_LOR, MPI_COMM_WORLD, ierr)
  call check(.not. logical(a16(1)) .and. logical(a16(2)), 'MPI_LOGICAL16 MPI_LOR')
  call MPI_Type_size(MPI_LOGICAL16, sz, ierr)
  call check(sz == 16, 'MPI_LOGICAL16 size')
  call MPI_Abi_get_version(major, minor, ierr)
  call check(ierr == MPI_SUCCESS .and. major == -1 .and. minor == -1, 'MPI_Abi_get_version')
  call MPI_Abi_get_fortran_info(info, ierr)
  vlen = len(val)
  call MPI_Info_get_string(info, 'mpi_logical_size', vlen, val, flag, ierr)
  call check(flag .and. val(1:vlen) == '4', 'MPI_Abi_get_fortran_info mpi_logical_size')
  call MPI_Info_free(info, ierr)
  call MPI_Type_size(MPI_LOGICAL1, sz, ierr)
  call check(sz == 1, 'MPI_LOGICAL1 size')
  call MPI_Type_size(MPI_LOGICAL8, sz, ierr)
  call check(sz == 8, 'MPI_LOGICAL8 size')
  call MPI_Type_get_name(MPI_LOGICAL2, name, n, ierr)
  call check(name == 'MPI_LOGICAL2' .and. n == 12, 'MPI_LOGICAL2 name')
  call check(MPI_WIN_BASE /= MPI_WIN_SIZE .and. MPI_WIN_SIZE /= MPI_WIN_DISP_UNIT .and. &
             MPI_WIN_BASE /= 0, 'MPI_WIN_BASE, MPI_WIN_SIZE, MPI_WIN_DISP_UNIT')
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a)', 'fortran types: MPI_LOGICAL1..16 ok on ', np, ' ranks'
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
end program types
