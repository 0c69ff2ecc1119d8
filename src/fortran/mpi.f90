! `use mpi`: the constants, sentinels and function types of mpif.h in a
! module (built with the Fortran compiler found at configure time: .mod files
! are that compiler's). The routines are the external ones of mpif.h
! (src/fortran's C wrappers), called without explicit interfaces, as with
! mpif.h: a program that passes a scalar or any array as a choice buffer
! compiles whatever its type.
module mpi
  implicit none
  include 'mpif.h'
  logical, parameter :: MPI_SUBARRAYS_SUPPORTED = .false.
  logical, parameter :: MPI_ASYNC_PROTECTS_NONBLOCKING = .false.
end module mpi
