! `use mpi_f08`: what the first binding left out of the module. Keyvals with
! the program's copy and delete procedures and the predefined ones
! (MPI_COMM_DUP_FN, MPI_TYPE_DUP_FN, MPI_WIN_NULL_COPY_FN, ...), datatype and
! window attributes, a generalized request, MPI_Alloc_mem / MPI_Win_allocate /
! MPI_Win_allocate_shared / MPI_Win_shared_query with TYPE(C_PTR),
! MPI_Pack_external and back, MPI_Status_f082f/f2f08, a session (TYPE(MPI_Session)) and a file
! (TYPE(MPI_File)). Rank 0 prints one line when every check passed; a failed
! check prints FAIL and aborts the job.
module cb08
  use mpi_f08
  implicit none
  integer :: copies = 0, deletes = 0, frees = 0
contains
  subroutine copy_fn(oldcomm, comm_keyval, extra_state, attribute_val_in, attribute_val_out, &
      flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: comm_keyval, ierror
    integer(MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    copies = copies + 1
    attribute_val_out = attribute_val_in + extra_state
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine copy_fn
  subroutine delete_fn(comm, comm_keyval, attribute_val, extra_state, ierror)
    type(MPI_Comm) :: comm
    integer :: comm_keyval, ierror
    integer(MPI_ADDRESS_KIND) :: attribute_val, extra_state
    deletes = deletes + 1
    ierror = MPI_SUCCESS
  end subroutine delete_fn
  subroutine type_delete_fn(datatype, type_keyval, attribute_val, extra_state, ierror)
    type(MPI_Datatype) :: datatype
    integer :: type_keyval, ierror
    integer(MPI_ADDRESS_KIND) :: attribute_val, extra_state
    deletes = deletes + 1
    ierror = MPI_SUCCESS
  end subroutine type_delete_fn
  subroutine win_delete_fn(win, win_keyval, attribute_val, extra_state, ierror)
    type(MPI_Win) :: win
    integer :: win_keyval, ierror
    integer(MPI_ADDRESS_KIND) :: attribute_val, extra_state
    deletes = deletes + 1
    ierror = MPI_SUCCESS
  end subroutine win_delete_fn
  subroutine query_fn(extra_state, status, ierror)
    integer(MPI_ADDRESS_KIND) :: extra_state
    type(MPI_Status) :: status
    integer :: ierror
    status%MPI_SOURCE = 0
    status%MPI_TAG = int(extra_state)
    call MPI_Status_set_elements(status, MPI_INTEGER, 2)
    call MPI_Status_set_cancelled(status, .false.)
    ierror = MPI_SUCCESS
  end subroutine query_fn
  subroutine free_fn(extra_state, ierror)
    integer(MPI_ADDRESS_KIND) :: extra_state
    integer :: ierror
    if (extra_state == 99) frees = frees + 1
    ierror = MPI_SUCCESS
  end subroutine free_fn
  subroutine cancel_fn(extra_state, complete, ierror)
    integer(MPI_ADDRESS_KIND) :: extra_state
    logical :: complete
    integer :: ierror
    ierror = MPI_SUCCESS
  end subroutine cancel_fn
end module cb08

program callbacks_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer, c_associated
  use cb08
  implicit none
  integer :: rank, np, kv, kv2, n, i, du, ierr, npsets
  integer(MPI_ADDRESS_KIND) :: val, sz, pos, extra
  logical :: flag
  type(MPI_Comm) :: dup, shm
  type(MPI_Datatype) :: t, t2
  type(MPI_Win) :: win
  type(MPI_Request) :: req
  type(MPI_Status) :: st, st2
  integer :: fst(MPI_STATUS_SIZE)
  type(MPI_Session) :: session
  type(MPI_File) :: fh
  type(c_ptr) :: p, q
  integer, pointer :: mem(:), other(:)
  integer :: ints(3), back(3)
  character(len=1) :: packed(12)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, np)

  ! keyvals: the program's procedures, then the predefined ones
  call MPI_Comm_create_keyval(copy_fn, delete_fn, kv, 10_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kv, 5_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_get_attr(dup, kv, val, flag)
  call check(flag .and. val == 15 .and. copies == 1, 'copy procedure')
  call MPI_Comm_free(dup)
  call check(deletes == 1, 'delete procedure')
  call MPI_Comm_delete_attr(MPI_COMM_WORLD, kv)
  call MPI_Comm_free_keyval(kv)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, kv, 0_MPI_ADDRESS_KIND)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, kv2, &
      0_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kv, 8_MPI_ADDRESS_KIND)
  call MPI_Comm_set_attr(MPI_COMM_WORLD, kv2, 8_MPI_ADDRESS_KIND)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Comm_get_attr(dup, kv, val, flag)
  call check(flag .and. val == 8, 'MPI_COMM_DUP_FN')
  call MPI_Comm_get_attr(dup, kv2, val, flag)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN')
  call MPI_Comm_free(dup)
  call MPI_Comm_free_keyval(kv)
  call MPI_Comm_free_keyval(kv2)

  ! a datatype's attributes
  deletes = 0
  call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete_fn, kv, 0_MPI_ADDRESS_KIND)
  call MPI_Type_contiguous(3, MPI_INTEGER, t)
  call MPI_Type_set_attr(t, kv, 33_MPI_ADDRESS_KIND)
  call MPI_Type_dup(t, t2)
  call MPI_Type_get_attr(t2, kv, val, flag)
  call check(flag .and. val == 33, 'MPI_Type_get_attr / MPI_TYPE_DUP_FN')
  call MPI_Type_free(t2)
  call MPI_Type_free(t)
  call check(deletes == 2, 'datatype delete procedure')
  call MPI_Type_free_keyval(kv)

  ! MPI_Alloc_mem with TYPE(C_PTR)
  call MPI_Alloc_mem(40_MPI_ADDRESS_KIND, MPI_INFO_NULL, p)
  call check(c_associated(p), 'MPI_Alloc_mem')
  call c_f_pointer(p, mem, [10])
  mem = [(i, i = 1, 10)]
  call check(sum(mem) == 55, 'MPI_Alloc_mem memory')
  call MPI_Free_mem(mem)

  ! MPI_Win_allocate, a window's attributes
  deletes = 0
  call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_delete_fn, kv, 0_MPI_ADDRESS_KIND)
  call MPI_Win_allocate(16_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, p, win)
  call c_f_pointer(p, mem, [4])
  mem = -1
  call MPI_Win_set_attr(win, kv, 21_MPI_ADDRESS_KIND)
  call MPI_Win_get_attr(win, kv, val, flag)
  call check(flag .and. val == 21, 'MPI_Win_get_attr')
  call MPI_Win_fence(0, win)
  call MPI_Put(rank, 1, MPI_INTEGER, mod(rank + 1, np), 0_MPI_ADDRESS_KIND, 1, MPI_INTEGER, win)
  call MPI_Win_fence(0, win)
  call check(mem(1) == mod(rank + np - 1, np), 'MPI_Win_allocate memory')
  call MPI_Win_free(win)
  call check(deletes == 1, 'window delete procedure')
  call MPI_Win_free_keyval(kv)

  ! MPI_Win_allocate_shared and MPI_Win_shared_query
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, shm)
  call MPI_Win_allocate_shared(4_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, shm, p, win)
  call c_f_pointer(p, mem, [1])
  call MPI_Win_fence(0, win)
  mem(1) = 100 + rank
  call MPI_Win_fence(0, win)
  call MPI_Win_shared_query(win, 0, sz, du, q)
  call c_f_pointer(q, other, [1])
  call check(sz == 4 .and. du == 4 .and. other(1) == 100, 'MPI_Win_shared_query')
  call MPI_Win_fence(0, win)
  call MPI_Win_free(win)
  call MPI_Comm_free(shm)

  ! a generalized request
  extra = 99
  call MPI_Grequest_start(query_fn, free_fn, cancel_fn, extra, req)
  call MPI_Grequest_complete(req)
  call MPI_Wait(req, st)
  call MPI_Get_count(st, MPI_INTEGER, n)
  call check(st%MPI_TAG == 99 .and. n == 2 .and. frees == 1, 'MPI_Grequest_start')
  ! MPI-4's conversions between the two Fortran status forms
  call MPI_Status_f082f(st, fst)
  call MPI_Status_f2f08(fst, st2)
  call MPI_Get_count(st2, MPI_INTEGER, n)
  call check(fst(MPI_TAG) == 99 .and. st2%MPI_TAG == 99 .and. n == 2, 'MPI_Status_f082f / f2f08')

  ! MPI_Pack_external: big-endian, 4 bytes an INTEGER
  ints = [1, 2, 3 + rank]
  pos = 0
  call MPI_Pack_external('external32', ints, 3, MPI_INTEGER, packed, 12_MPI_ADDRESS_KIND, pos)
  call check(pos == 12 .and. ichar(packed(4)) == 1 .and. ichar(packed(1)) == 0, &
      'MPI_Pack_external')
  pos = 0
  call MPI_Unpack_external('external32', packed, 12_MPI_ADDRESS_KIND, pos, back, 3, MPI_INTEGER)
  call check(all(back == ints), 'MPI_Unpack_external')

  ! a session
  call MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, session, ierr)
  call check(ierr == MPI_SUCCESS .and. session /= MPI_SESSION_NULL, 'MPI_Session_init')
  call MPI_Session_get_num_psets(session, MPI_INFO_NULL, npsets)
  call check(npsets >= 2, 'MPI_Session_get_num_psets')
  call MPI_Session_finalize(session)

  ! a file: every rank writes its INTEGER at its place, reads its neighbour's
  call MPI_File_open(MPI_COMM_WORLD, 'callbacks_f08.tmp', ior(MPI_MODE_CREATE, MPI_MODE_RDWR), &
      MPI_INFO_NULL, fh)
  call check(fh /= MPI_FILE_NULL, 'MPI_File_open')
  call MPI_File_write_at(fh, int(4 * rank, MPI_OFFSET_KIND), 500 + rank, 1, MPI_INTEGER, st)
  call MPI_File_sync(fh)
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_File_read_at(fh, int(4 * mod(rank + 1, np), MPI_OFFSET_KIND), n, 1, MPI_INTEGER, st)
  call check(n == 500 + mod(rank + 1, np), 'MPI_File_read_at')
  call MPI_File_close(fh)
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) call MPI_File_delete('callbacks_f08.tmp', MPI_INFO_NULL)

  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a)', 'fortran mpi_f08: keyvals, attributes, grequest, memory, ' // &
      'pack_external, session, file ok on ', np, ' ranks'
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
end program callbacks_f08
