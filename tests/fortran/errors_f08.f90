! mpi_f08 refuses a non-contiguous array section as a buffer of a
! nonblocking collective other than MPI_Ibcast (MPI_SUBARRAYS_SUPPORTED is
! .false.; a blocking call takes it through a copy, a nonblocking
! point-to-point call as a datatype): under MPI_ERRORS_ARE_FATAL the job ends
! with one line saying which call and what to pass instead. With the argument
! "rank", a send to a rank that does not exist ends the job with the C call's
! check, naming the mpi_f08 call.
program errors_f08
  use mpi_f08
  implicit none
  integer :: a(10), b(5), rank
  type(MPI_Request) :: rq
  character(len=8) :: mode
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  a = rank
  call get_command_argument(1, mode)
  if (mode == "rank" .and. rank == 0) call MPI_Send(a, 1, MPI_INTEGER, 5, 0, MPI_COMM_WORLD)
  if (mode /= "rank" .and. rank == 0) call MPI_Iallreduce(a(1:10:2), b, 5, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, rq)
  call MPI_Barrier(MPI_COMM_WORLD) ! rank 1 waits here until the job ends
  call MPI_Finalize()
end program errors_f08
