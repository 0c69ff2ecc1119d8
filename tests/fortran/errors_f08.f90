! mpi_f08 refuses a non-contiguous array section as the buffer of a
! nonblocking call (MPI_SUBARRAYS_SUPPORTED is .false.; a blocking call takes
! it through a copy): under MPI_ERRORS_ARE_FATAL the job ends with one line
! saying which call and what to pass instead.
program errors_f08
  use mpi_f08
  implicit none
  integer :: a(10), rank
  type(MPI_Request) :: rq
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  a = rank
  if (rank == 0) call MPI_Isend(a(1:10:2), 5, MPI_INTEGER, 1, 0, MPI_COMM_WORLD, rq)
  if (rank == 1) call MPI_Recv(a, 5, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call MPI_Finalize()
end program errors_f08
