! mpi_f08's PMPI_ names (MPI-4.1 19.1.5), as a tool or a program calls them:
! each with mpi_f08's arguments (handles typed, ierror optional), a string
! routine, a function and a large-count generic among them. 3 ranks.
program pmpi_f08
  use mpi_f08
  implicit none
  integer :: rank, np, v, s, ierr
  integer(MPI_COUNT_KIND) :: one = 1
  integer :: big(1), bigsum(1)
  type(MPI_Status) :: st
  type(MPI_Info) :: info
  character(len=16) :: val
  logical :: flag
  double precision :: t, tick
  call PMPI_Init()
  call PMPI_Comm_rank(MPI_COMM_WORLD, rank)
  call PMPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  if (ierr /= MPI_SUCCESS) stop 'PMPI_Comm_size ierror'
  v = rank + 1
  call PMPI_Allreduce(v, s, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (s /= np * (np + 1) / 2) stop 'PMPI_Allreduce'
  big(1) = rank
  call PMPI_Allreduce(big, bigsum, one, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
  if (bigsum(1) /= np - 1) stop 'PMPI_Allreduce with an MPI_COUNT_KIND count'
  if (rank == 0) call PMPI_Send(v, 1, MPI_INTEGER, 1, 5, MPI_COMM_WORLD)
  if (rank == 1) then
    call PMPI_Recv(s, 1, MPI_INTEGER, 0, 5, MPI_COMM_WORLD, st)
    if (s /= 1 .or. st%MPI_SOURCE /= 0 .or. st%MPI_TAG /= 5) stop 'PMPI_Recv'
  end if
  call PMPI_Info_create(info)
  call PMPI_Info_set(info, 'color', 'blue')
  call PMPI_Info_get(info, 'color', 16, val, flag)
  if (.not. flag .or. val /= 'blue') stop 'PMPI_Info_get'
  call PMPI_Info_free(info)
  t = PMPI_Wtime()
  tick = PMPI_Wtick()
  if (t <= 0.0d0 .or. tick <= 0.0d0) stop 'PMPI_Wtime'
  call PMPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a)', 'fortran mpi_f08 PMPI_: init, p2p, allreduce, info, wtime ok on ', &
    np, ' ranks'
  call PMPI_Finalize()
end program pmpi_f08
