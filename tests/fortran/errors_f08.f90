! mpi_f08 refuses a non-contiguous array section as a buffer
! (MPI_SUBARRAYS_SUPPORTED is .false.): under MPI_ERRORS_ARE_FATAL the job
! ends with one line saying which call and what to pass instead.
program errors_f08
  use mpi_f08
  implicit none
  integer :: a(10), rank
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  a = rank
  if (rank == 0) call MPI_Send(a(1:10:2), 5, MPI_INTEGER, 1, 0, MPI_COMM_WORLD)
  if (rank == 1) call MPI_Recv(a, 5, MPI_INTEGER, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call MPI_Finalize()
end program errors_f08
