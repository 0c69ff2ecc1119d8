! `use mpi_f08`: non-contiguous array sections as the buffers of nonblocking
! calls, which read and write the sections themselves (a datatype describes
! each): a strided receive completed by MPI_Wait, two by MPI_Waitall, one by
! MPI_Test in a loop, a 2-D section sent by MPI_Isend, a count shorter than
! the section, MPI_Ibcast into a section, persistent requests started twice,
! MPI_Get into a section, and MPI_File_iwrite_at / _iread_at of sections (each
! rank its own part of one file). The elements between those of a section stay
! as they were. Rank 0 prints one line when every check passed; a failed check
! prints FAIL and aborts the job.
program sections
  use mpi_f08
  implicit none
  integer :: rank, np, next, prev, i, j, n, cnt
  ! asynchronous: the buffers of nonblocking and persistent calls change (or
  ! are read) inside later calls that do not name them (MPI-4.1 §19.1.17);
  ! without it an optimizer may keep r2's values across MPI_Waitall (gfortran
  ! -O3 did)
  integer, asynchronous :: s(20), r(20), r2(20), m(6, 5), mr(30)
  real(8), asynchronous :: d(12), dr(12)
  logical :: flag
  type(MPI_Request) :: rq, rqs(4)
  type(MPI_Status) :: st, sts(4)
  type(MPI_Win) :: win
  type(MPI_File) :: fh
  integer(kind=MPI_ADDRESS_KIND) :: wsize
  integer(kind=MPI_OFFSET_KIND) :: at
  integer :: ierr

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  next = mod(rank + 1, np)
  prev = mod(rank + np - 1, np)
  s = [(100 * rank + i, i = 1, 20)]

  ! MPI_Irecv into every other element, MPI_Wait; the count is in the status
  r = -1
  call MPI_Irecv(r(1:20:2), 10, MPI_INTEGER, prev, 1, MPI_COMM_WORLD, rq)
  call MPI_Send(s, 10, MPI_INTEGER, next, 1, MPI_COMM_WORLD)
  call MPI_Wait(rq, st)
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  call check(all(r(1:20:2) == [(100 * prev + i, i = 1, 10)]) .and. all(r(2:20:2) == -1) &
             .and. cnt == 10 .and. st%MPI_SOURCE == prev, 'MPI_Irecv section, MPI_Wait')

  ! two sections of one array (odd and even elements, reversed), MPI_Waitall
  r = -1
  call MPI_Irecv(r(1:19:2), 10, MPI_INTEGER, prev, 2, MPI_COMM_WORLD, rqs(1))
  call MPI_Irecv(r(20:2:-2), 10, MPI_INTEGER, prev, 3, MPI_COMM_WORLD, rqs(2))
  call MPI_Isend(s(1:20:2), 10, MPI_INTEGER, next, 2, MPI_COMM_WORLD, rqs(3))
  call MPI_Isend(s(2:20:2), 10, MPI_INTEGER, next, 3, MPI_COMM_WORLD, rqs(4))
  s = 0 ! ... after the sends started: the datatype reads s when they run
  call MPI_Waitall(4, rqs, sts)
  s = [(100 * rank + i, i = 1, 20)]
  call check(all(r(1:19:2) == [(100 * prev + i, i = 1, 20, 2)]) .and. &
             all(r(20:2:-2) == [(100 * prev + i, i = 2, 20, 2)]), 'MPI_Isend/Irecv sections, MPI_Waitall')

  ! MPI_Test until done; a count shorter than the section (the first 3 elements)
  r = -1
  call MPI_Irecv(r(3:20:3), 3, MPI_INTEGER, prev, 4, MPI_COMM_WORLD, rq)
  call MPI_Send(s(5:7), 3, MPI_INTEGER, next, 4, MPI_COMM_WORLD)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(rq, flag, st)
  end do
  call check(r(3) == 100 * prev + 5 .and. r(6) == 100 * prev + 6 .and. r(9) == 100 * prev + 7 &
             .and. count(r /= -1) == 3, 'MPI_Irecv short count, MPI_Test')

  ! a 2-D section (rows 2..6 step 2 of columns 1, 3, 5) of REAL(8)-sized
  ! INTEGER pairs: a 2-D section goes by MPI_Isend, contiguous on arrival
  m = reshape([(1000 * rank + i, i = 1, 30)], [6, 5])
  mr = -1
  call MPI_Isend(m(2:6:2, 1:5:2), 9, MPI_INTEGER, next, 5, MPI_COMM_WORLD, rq)
  call MPI_Recv(mr, 9, MPI_INTEGER, prev, 5, MPI_COMM_WORLD, st)
  call MPI_Wait(rq, MPI_STATUS_IGNORE)
  call check(all(mr(1:9) == [((1000 * prev + i + 6 * (j - 1), i = 2, 6, 2), j = 1, 5, 2)]) &
             .and. mr(10) == -1, '2-D section through MPI_Isend')

  ! MPI_Ibcast into a section on every rank but the root
  d = -1.0d0
  if (rank == 0) d(1:12:3) = [1.5d0, 2.5d0, 3.5d0, 4.5d0]
  call MPI_Ibcast(d(1:12:3), 4, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, rq)
  call MPI_Wait(rq, MPI_STATUS_IGNORE)
  call check(all(d(1:12:3) == [1.5d0, 2.5d0, 3.5d0, 4.5d0]) .and. all(d(2:12:3) == -1.0d0), &
             'MPI_Ibcast into a section')

  ! persistent requests over sections, started twice (the data read at each start)
  call MPI_Recv_init(r2(20:1:-4), 5, MPI_INTEGER, prev, 6, MPI_COMM_WORLD, rqs(1))
  call MPI_Send_init(s(1:20:4), 5, MPI_INTEGER, next, 6, MPI_COMM_WORLD, rqs(2))
  do n = 1, 2
    r2 = -1
    s = [(100 * rank + i + n, i = 1, 20)]
    call MPI_Startall(2, rqs(1:2))
    call MPI_Waitall(2, rqs(1:2), MPI_STATUSES_IGNORE)
    call check(all(r2(20:1:-4) == [(100 * prev + i + n, i = 1, 20, 4)]) .and. count(r2 /= -1) == 5, &
               'persistent requests over sections')
  end do
  call MPI_Request_free(rqs(1))
  call MPI_Request_free(rqs(2))

  ! MPI_Get into a section
  dr = dble(rank)
  wsize = 12 * 8
  call MPI_Win_create(dr, wsize, 8, MPI_INFO_NULL, MPI_COMM_WORLD, win)
  d = -1.0d0
  call MPI_Win_fence(0, win)
  call MPI_Get(d(2:12:2), 6, MPI_DOUBLE_PRECISION, next, 0_MPI_ADDRESS_KIND, 6, &
               MPI_DOUBLE_PRECISION, win)
  call MPI_Win_fence(0, win)
  call check(all(d(2:12:2) == dble(next)) .and. all(d(1:11:2) == -1.0d0), 'MPI_Get into a section')
  call MPI_Win_free(win)

  ! a file written from a section and read back into another
  m = reshape([(1000 * rank + i, i = 1, 30)], [6, 5])
  call MPI_File_open(MPI_COMM_WORLD, 'sections_f08.dat', ior(MPI_MODE_CREATE, MPI_MODE_RDWR), &
                     MPI_INFO_NULL, fh)
  at = int(rank, MPI_OFFSET_KIND) * 20
  call MPI_File_iwrite_at(fh, at, m(2, :), 5, MPI_INTEGER, rq, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_File_iwrite_at of a section')
  call MPI_Wait(rq, st)
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  call check(cnt == 5, 'MPI_File_iwrite_at: count')
  call MPI_File_sync(fh)
  call MPI_Barrier(MPI_COMM_WORLD)
  r = -1
  call MPI_File_iread_at(fh, int(next, MPI_OFFSET_KIND) * 20, r(1:10:2), 5, MPI_INTEGER, rq, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_File_iread_at into a section')
  call MPI_Wait(rq, st)
  call check(all(r(1:10:2) == [(1000 * next + 2 + 6 * (j - 1), j = 1, 5)]) .and. &
             all(r(2:10:2) == -1), 'MPI_File_iread_at into a section: values')
  call MPI_File_close(fh)
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) call MPI_File_delete('sections_f08.dat', MPI_INFO_NULL)

  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a)', 'fortran mpi_f08 sections: isend, irecv, wait, waitall, test, ' // &
    'ibcast, persistent, get, file ok on ', np, ' ranks'
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
end program sections
