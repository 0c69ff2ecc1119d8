! `use mpi`: the constants, sentinels and function types of mpif.h in a
! module (built with the Fortran compiler found at configure time: .mod files
! are that compiler's). The routines are the external ones of mpif.h
! (src/fortran's C wrappers), with explicit interfaces generated from mpi.h
! (mpi_usempi_interfaces.h, tools/fortran_gen.awk): the other arguments are
! checked, a choice buffer is not (gfortran's NO_ARG_CHECK: a scalar or any
! array of any type, as with mpif.h), and a program may rename a routine out
! of the module to define its own (MPICH's profile1f90). The calls the
! script leaves to hand-written code have none (called as externals, as
! with mpif.h). MPI_Sizeof is here (a generic over the intrinsic types), not
! in mpif.h.
module mpi
  implicit none
  include 'mpif.h'
  logical, parameter :: MPI_SUBARRAYS_SUPPORTED = .false.
  logical, parameter :: MPI_ASYNC_PROTECTS_NONBLOCKING = .false.
  ! MPI_Sizeof: the size in bytes of one element of x, of any rank
  interface MPI_Sizeof
    module procedure cr_sizeof_i1, cr_sizeof_i2, cr_sizeof_i4, cr_sizeof_i8, cr_sizeof_r4, &
      cr_sizeof_r8, cr_sizeof_c4, cr_sizeof_c8, cr_sizeof_l4, cr_sizeof_ch, &
      cr_sizeof_i16, cr_sizeof_r16, cr_sizeof_c16, cr_sizeof_l1, cr_sizeof_l2, &
      cr_sizeof_l8, cr_sizeof_l16
  end interface
  private :: cr_sizeof_i1, cr_sizeof_i2, cr_sizeof_i4, cr_sizeof_i8, cr_sizeof_r4, &
    cr_sizeof_r8, cr_sizeof_c4, cr_sizeof_c8, cr_sizeof_l4, cr_sizeof_ch, &
      cr_sizeof_i16, cr_sizeof_r16, cr_sizeof_c16, cr_sizeof_l1, cr_sizeof_l2, &
      cr_sizeof_l8, cr_sizeof_l16
  include 'mpi_usempi_interfaces.h'
contains
  subroutine cr_sizeof_i1(x, size, ierror)
    integer(1), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, intent(out) :: ierror
    size = storage_size(x) / 8
    ierror = MPI_SUCCESS
  end subroutine cr_sizeof_i1
  subroutine cr_sizeof_i2(x, size, ierror)
    integer(2), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, intent(out) :: ierror
    size = storage_size(x) / 8
    ierror = MPI_SUCCESS
  end subroutine cr_sizeof_i2
  subroutine cr_sizeof_i4(x, size, ierror)
    integer(4), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, intent(out) :: ierror
    size = storage_size(x) / 8
    ierror = MPI_SUCCESS
  end subroutine cr_sizeof_i4
  subroutine cr_sizeof_i8(x, size, ierror)
    integer(8), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, intent(out) :: ierror
    size = storage_size(x) / 8
    ierror = MPI_SUCCESS
  end subroutine cr_sizeof_i8
  subroutine cr_sizeof_i16(x, size, ierror)
    integer(16), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, intent(out) :: ierror
    size = storage_size(x) / 8
    ierror = MPI_SUCCESS
  end subroutine cr_sizeof_i16
  subroutine cr_sizeof_r16(x, size, ierror)
    real(16), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, intent(out) :: ierror
    size = storage_size(x) / 8
    ierror = MPI_SUCCESS
  end subroutine cr_sizeof_r16
  subroutine cr_sizeof_c16(x, size, ierror)
    complex(16), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, intent(out) :: ierror
    size = storage_size(x) / 8
    ierror = MPI_SUCCESS
  end subroutine cr_sizeof_c16
  subroutine cr_sizeof_r4(x, size, ierror)
    real(4), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, intent(out) :: ierror
    size = storage_size(x) / 8
    ierror = MPI_SUCCESS
  end subroutine cr_sizeof_r4
  subroutine cr_sizeof_r8(x, size, ierror)
    real(8), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, intent(out) :: ierror
    size = storage_size(x) / 8
    ierror = MPI_SUCCESS
  end subroutine cr_sizeof_r8
  subroutine cr_sizeof_c4(x, size, ierror)
    complex(4), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, intent(out) :: ierror
    size = storage_size(x) / 8
    ierror = MPI_SUCCESS
  end subroutine cr_sizeof_c4
  subroutine cr_sizeof_c8(x, size, ierror)
    complex(8), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, intent(out) :: ierror
    size = storage_size(x) / 8
    ierror = MPI_SUCCESS
  end subroutine cr_sizeof_c8
  subroutine cr_sizeof_l4(x, size, ierror)
    logical(4), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, intent(out) :: ierror
    size = storage_size(x) / 8
    ierror = MPI_SUCCESS
  end subroutine cr_sizeof_l4
  subroutine cr_sizeof_l1(x, size, ierror)
    logical(1), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, intent(out) :: ierror
    size = storage_size(x) / 8
    ierror = MPI_SUCCESS
  end subroutine cr_sizeof_l1
  subroutine cr_sizeof_l2(x, size, ierror)
    logical(2), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, intent(out) :: ierror
    size = storage_size(x) / 8
    ierror = MPI_SUCCESS
  end subroutine cr_sizeof_l2
  subroutine cr_sizeof_l8(x, size, ierror)
    logical(8), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, intent(out) :: ierror
    size = storage_size(x) / 8
    ierror = MPI_SUCCESS
  end subroutine cr_sizeof_l8
  subroutine cr_sizeof_l16(x, size, ierror)
    logical(16), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, intent(out) :: ierror
    size = storage_size(x) / 8
    ierror = MPI_SUCCESS
  end subroutine cr_sizeof_l16
  subroutine cr_sizeof_ch(x, size, ierror)
    character(len=*), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, intent(out) :: ierror
    size = storage_size(x) / 8
    ierror = MPI_SUCCESS
  end subroutine cr_sizeof_ch
end module mpi
