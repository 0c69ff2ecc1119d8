! mpif.h (free form): MPI_COMM_SPAWN with an ARGV array (blank-terminated,
! blank-padded strings: the children see 'a' and 'b c') and ERRCODES, and
! MPI_COMM_SPAWN_MULTIPLE with MPI_ARGVS_NULL and MPI_ERRCODES_IGNORE; only
! the root's commands count (rank 1 passes one that does not exist). Each
! child sends its parent how many arguments it got and whether they were
! right. Rank 0 of the parents prints one line when every check passed; a
! failed check prints FAIL and aborts the job.
program spawn
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, parent, inter, codes(2), got(2), i, n
  character(len=16) :: argv(3), a1, a2
  character(len=4096) :: cmds(2), me
  integer :: maxprocs(2), infos(2)
  integer :: st(MPI_STATUS_SIZE)

  call MPI_Init(ierr)
  call MPI_Comm_get_parent(parent, ierr)
  if (parent /= MPI_COMM_NULL) then
    n = command_argument_count()
    a1 = ''
    a2 = ''
    if (n >= 1) call get_command_argument(1, a1)
    if (n >= 2) call get_command_argument(2, a2)
    i = 10 * n
    if (n == 0 .or. (n == 2 .and. a1 == 'a' .and. a2 == 'b c')) i = i + 1
    call MPI_Send(i, 1, MPI_INTEGER, 0, 1, parent, ierr)
    call MPI_Comm_disconnect(parent, ierr)
    call MPI_Finalize(ierr)
    stop
  end if
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call get_command_argument(0, me)
  if (rank /= 0) me = 'no-such-program'
  argv(1) = 'a'
  argv(2) = 'b c'
  argv(3) = ' '
  codes = -1
  call MPI_Comm_spawn(me, argv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, codes, ierr)
  call check(ierr == MPI_SUCCESS .and. all(codes == MPI_SUCCESS), 'MPI_COMM_SPAWN')
  if (rank == 0) then
    do i = 1, 2
      call MPI_Recv(got(i), 1, MPI_INTEGER, MPI_ANY_SOURCE, 1, inter, st, ierr)
    end do
    call check(all(got == 21), 'the children got ARGV')
  end if
  call MPI_Comm_disconnect(inter, ierr)
  cmds = me
  maxprocs = 1
  infos = MPI_INFO_NULL
  call MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, maxprocs, infos, 0, MPI_COMM_WORLD, &
                               inter, MPI_ERRCODES_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_COMM_SPAWN_MULTIPLE')
  if (rank == 0) then
    do i = 1, 2
      call MPI_Recv(got(i), 1, MPI_INTEGER, MPI_ANY_SOURCE, 1, inter, st, ierr)
    end do
    call check(all(got == 1), 'the children of MPI_COMM_SPAWN_MULTIPLE got no arguments')
  end if
  call MPI_Comm_disconnect(inter, ierr)
  if (rank == 0) print '(a)', 'fortran spawn: spawn with argv, spawn_multiple ok'
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
end program spawn
