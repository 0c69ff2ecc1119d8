! `use mpi_f08`: non-contiguous array sections as the buffers of nonblocking
! and persistent collectives, each read and written in place through a
! datatype describing it: MPI_Igather from a strided section into one of
! per-rank blocks, MPI_Iscatter, MPI_Ialltoall (both sides strided),
! MPI_Iallgather into a row of a 2-D array with MPI_IN_PLACE,
! MPI_Iallreduce between two sections laid out alike and in place into a row,
! MPI_Iscan, and MPI_Allreduce_init started twice. Every value is checked,
! and the elements between those of a section stay as they were. Rank 0
! prints one line when every check passed; a failed check prints FAIL and
! aborts the job.
program nbcoll_sections
  use mpi_f08
  implicit none
  integer, parameter :: k = 3, maxp = 16
  integer :: rank, np, i, j, p, it
  ! ASYNCHRONOUS: MPI_Wait changes them (MPI-3.1 17.1.17), which the compiler
  ! would otherwise not know (it kept z's old values across MPI_Start/MPI_Wait)
  integer, asynchronous :: s(2 * k), r(2 * k * maxp), b(3 * k * maxp)
  integer, asynchronous :: x(2, maxp), y(4, 3), z(4, 3)
  real(8), asynchronous :: d(9), e(9)
  integer :: a(k * maxp), sums(3)
  type(MPI_Request) :: rq
  type(MPI_Status) :: st

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  if (np > maxp) call check(.false., 'at most 16 ranks')

  ! MPI_Igather: k items from every other element, into blocks of k of every
  ! other element at the root
  s = -1
  s(1:2 * k:2) = [(100 * rank + i, i = 1, k)]
  r = -1
  call MPI_Igather(s(1:2 * k:2), k, MPI_INTEGER, r(1:2 * k * np:2), k, MPI_INTEGER, 0, &
                   MPI_COMM_WORLD, rq)
  call MPI_Wait(rq, MPI_STATUS_IGNORE)
  if (rank == 0) then
    call check(all([((r(2 * (p * k + i) - 1) == 100 * p + i, i = 1, k), p = 0, np - 1)]) &
               .and. all(r(2:2 * k * np:2) == -1), 'MPI_Igather sections')
  end if

  ! MPI_Iscatter: the root's every other element out, into every third
  r = -1
  if (rank == 0) r(1:2 * k * np:2) = [(1000 + i, i = 1, k * np)]
  b = -1
  call MPI_Iscatter(r(1:2 * k * np:2), k, MPI_INTEGER, b(1:3 * k:3), k, MPI_INTEGER, 0, &
                    MPI_COMM_WORLD, rq)
  call MPI_Wait(rq, st)
  call check(all(b(1:3 * k:3) == [(1000 + rank * k + i, i = 1, k)]) .and. &
             all(b(2:3 * k:3) == -1) .and. all(b(3:3 * k:3) == -1), 'MPI_Iscatter sections')

  ! MPI_Ialltoall: from every other element, into every third one
  r = -1
  r(1:2 * k * np:2) = [((10000 * rank + 100 * p + i, i = 1, k), p = 0, np - 1)]
  b = -1
  call MPI_Ialltoall(r(1:2 * k * np:2), k, MPI_INTEGER, b(1:3 * k * np:3), k, MPI_INTEGER, &
                     MPI_COMM_WORLD, rq)
  call MPI_Wait(rq, st)
  a = -1
  a(1:k * np) = [((10000 * p + 100 * rank + i, i = 1, k), p = 0, np - 1)]
  call check(all(b(1:3 * k * np:3) == a(1:k * np)) .and. all(b(2:3 * k * np:3) == -1) .and. &
             all(b(3:3 * k * np:3) == -1), 'MPI_Ialltoall sections')

  ! MPI_Iallgather in place into the first row of x (one element a rank)
  x = -1
  x(1, rank + 1) = 7 * rank
  call MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, x(1, 1:np), 1, MPI_INTEGER, &
                      MPI_COMM_WORLD, rq)
  call MPI_Wait(rq, st)
  call check(all(x(1, 1:np) == [(7 * p, p = 0, np - 1)]) .and. all(x(2, :) == -1), &
             'MPI_Iallgather in place into a row')

  ! MPI_Iallreduce between two sections of the same layout (a row of y, z)
  y = -1
  z = -1
  y(2, :) = [(rank + j, j = 1, 3)]
  call MPI_Iallreduce(y(2, :), z(2, :), 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, rq)
  call MPI_Wait(rq, st)
  sums = [(np * j + np * (np - 1) / 2, j = 1, 3)]
  call check(all(z(2, :) == sums) .and. all(z(1, :) == -1) .and. all(z(3:4, :) == -1) &
             .and. all(y(2, :) == [(rank + j, j = 1, 3)]), 'MPI_Iallreduce sections')

  ! MPI_Iallreduce in place into a row
  y(3, :) = [(rank + j, j = 1, 3)]
  call MPI_Iallreduce(MPI_IN_PLACE, y(3, :), 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, rq)
  call MPI_Wait(rq, st)
  call check(all(y(3, :) == sums) .and. all(y(1, :) == -1) .and. all(y(4, :) == -1), &
             'MPI_Iallreduce in place into a row')

  ! MPI_Iscan of reals in every third element
  d = -1
  e = -1
  d(1:9:3) = [(real(rank + i, 8), i = 1, 3)]
  call MPI_Iscan(d(1:9:3), e(1:9:3), 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, rq)
  call MPI_Wait(rq, st)
  call check(all(nint(e(1:9:3)) == [((rank + 1) * i + rank * (rank + 1) / 2, i = 1, 3)]) .and. &
             all(nint(e(2:9:3)) == -1) .and. all(nint(e(3:9:3)) == -1), 'MPI_Iscan sections')

  ! MPI_Allreduce_init between sections, started twice with new values
  call MPI_Allreduce_init(y(1, :), z(4, :), 3, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, &
                          MPI_INFO_NULL, rq)
  do it = 1, 2
    y(1, :) = [(it * (rank + j), j = 1, 3)]
    call MPI_Start(rq)
    call MPI_Wait(rq, st)
    call check(all(z(4, :) == [(it * (np - 1 + j), j = 1, 3)]) .and. all(z(1, :) == -1), &
               'MPI_Allreduce_init sections')
  end do
  call MPI_Request_free(rq)

  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a, i0, a)', 'fortran mpi_f08 collective sections: igather, iscatter, ' &
    // 'ialltoall, iallgather, iallreduce, iscan, allreduce_init ok on ', np, ' ranks'
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
end program nbcoll_sections
