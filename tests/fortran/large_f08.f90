! `use mpi_f08`: the large-count forms through the generic names, chosen by
! an INTEGER(MPI_COUNT_KIND) count (MPI_Send reaching MPI_Send_c, ...):
! a ring with MPI_Send/MPI_Recv and MPI_Get_count, MPI_Bcast, MPI_Allreduce,
! MPI_Type_size and MPI_Type_contiguous, next to the default-INTEGER forms.
! Rank 0 prints one line when every check passed; a failed check prints FAIL
! and aborts the job.
program large
  use mpi_f08
  implicit none
  integer :: rank, np, i, n4
  integer(kind=MPI_COUNT_KIND) :: n, got, sz
  integer :: a(100), b(100)
  type(MPI_Status) :: st
  type(MPI_Datatype) :: t

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  a = [(rank * 1000 + i, i = 1, 100)]
  b = -1
  n = 100
  call MPI_Sendrecv(a, n, MPI_INTEGER, mod(rank + 1, np), 3, b, n, MPI_INTEGER, &
                    mod(rank + np - 1, np), 3, MPI_COMM_WORLD, st)
  call MPI_Get_count(st, MPI_INTEGER, got)
  call MPI_Get_count(st, MPI_INTEGER, n4)
  call check(got == 100 .and. n4 == 100 .and. b(100) == mod(rank + np - 1, np) * 1000 + 100, &
             'MPI_Sendrecv_c, MPI_Get_count_c')
  if (rank == 0) then
    call MPI_Send(a, 60_MPI_COUNT_KIND, MPI_INTEGER, 1, 4, MPI_COMM_WORLD)
  else if (rank == 1) then
    b = -1
    call MPI_Recv(b, n, MPI_INTEGER, 0, 4, MPI_COMM_WORLD, st)
    call MPI_Get_count(st, MPI_INTEGER, got)
    call check(got == 60 .and. b(60) == 60 .and. b(61) == -1, 'MPI_Send_c, MPI_Recv_c')
  end if
  b = a
  call MPI_Bcast(b, n, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call check(b(7) == 7, 'MPI_Bcast_c')
  call MPI_Allreduce(a, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call check(b(1) == 1000 * np * (np - 1) / 2 + np, 'MPI_Allreduce_c')
  call MPI_Type_contiguous(5_MPI_COUNT_KIND, MPI_INTEGER, t)
  call MPI_Type_size(t, sz)
  call MPI_Type_size(t, n4)
  call check(sz == 20 .and. n4 == 20, 'MPI_Type_contiguous_c, MPI_Type_size_c')
  call MPI_Type_free(t)
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a)', 'fortran mpi_f08 large counts: generic _c forms ok on ', np, ' ranks'
  call MPI_Finalize()
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
      print *, 'FAIL: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1)
    end if
  end subroutine check
end program large
