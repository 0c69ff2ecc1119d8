! `use mpi_f08`: MPI's Fortran 2008 binding (docs/fortran.md). The handles are
! derived types holding the INTEGER handle (MPI_VAL, the same value as mpif.h's
! and C's), MPI_Status is a derived type laid out as C's MPI_Status (public
! MPI_SOURCE, MPI_TAG, MPI_ERROR), ierror is OPTIONAL, and choice buffers are
! TS 29113 TYPE(*), DIMENSION(..), ASYNCHRONOUS (a non-contiguous section
! goes to a blocking call as a copy, and is refused by a nonblocking one:
! MPI_SUBARRAYS_SUPPORTED is .false.). Every routine is a BIND(C) interface to
! a C function of libcourier_fort (courier_f08_send, ...) generated from mpi.h
! at build time (mpi_f08_interfaces.h, by tools/fortran_gen.awk), which calls
! the C routine: the checks and error handlers are C's. The routines with
! strings are module procedures over mpif.h's entry points (mpi_f08_procs.h);
! those with procedure arguments (keyvals, error handlers, MPI_Op_create,
! MPI_Grequest_start), MPI_Pack/Unpack_external, the attribute calls, MPI-4's
! info and status conversion calls are written here.
module mpi_f08
  use, intrinsic :: iso_c_binding, only: c_char, c_size_t, c_ptr, c_funptr, c_funloc
  implicit none
  private :: c_char, c_size_t, c_funptr, c_funloc
  private :: cr_eq_comm, cr_eq_datatype, cr_eq_group, cr_eq_op, cr_eq_request, &
      cr_eq_errhandler, cr_eq_info, cr_eq_win, cr_eq_message, cr_eq_file, cr_eq_session
  private :: cr_ne_comm, cr_ne_datatype, cr_ne_group, cr_ne_op, cr_ne_request, &
      cr_ne_errhandler, cr_ne_info, cr_ne_win, cr_ne_message, cr_ne_file, cr_ne_session
  type, bind(C) :: MPI_Comm
    integer :: MPI_VAL
  end type MPI_Comm
  type, bind(C) :: MPI_Datatype
    integer :: MPI_VAL
  end type MPI_Datatype
  type, bind(C) :: MPI_Group
    integer :: MPI_VAL
  end type MPI_Group
  type, bind(C) :: MPI_Op
    integer :: MPI_VAL
  end type MPI_Op
  type, bind(C) :: MPI_Request
    integer :: MPI_VAL
  end type MPI_Request
  type, bind(C) :: MPI_Errhandler
    integer :: MPI_VAL
  end type MPI_Errhandler
  type, bind(C) :: MPI_Info
    integer :: MPI_VAL
  end type MPI_Info
  type, bind(C) :: MPI_Win
    integer :: MPI_VAL
  end type MPI_Win
  type, bind(C) :: MPI_Message
    integer :: MPI_VAL
  end type MPI_Message
  type, bind(C) :: MPI_File
    integer :: MPI_VAL
  end type MPI_File
  type, bind(C) :: MPI_Session
    integer :: MPI_VAL
  end type MPI_Session
  type, bind(C) :: MPI_Status
    integer :: MPI_SOURCE, MPI_TAG, MPI_ERROR
    integer :: cr_internal(3) ! cancelled, bytes received: as C's MPI_Status
  end type MPI_Status

  include 'mpi_f08_consts.h'
  integer, parameter :: MPI_ADDRESS_KIND = 8, MPI_OFFSET_KIND = 8, MPI_COUNT_KIND = 8
  integer, parameter :: MPI_INTEGER_KIND = 4
  ! an INTEGER(MPI_STATUS_SIZE) status' elements (MPI_Status_f082f)
  integer, parameter :: MPI_SOURCE = 1, MPI_TAG = 2, MPI_ERROR = 3
  logical, parameter :: MPI_SUBARRAYS_SUPPORTED = .false.
  logical, parameter :: MPI_ASYNC_PROTECTS_NONBLOCKING = .false.

  ! The sentinels: only their addresses count (src/api/mpi_f2c.c).
  integer :: MPI_BOTTOM, MPI_IN_PLACE, MPI_ERRCODES_IGNORE(1)
  integer :: MPI_UNWEIGHTED(1), MPI_WEIGHTS_EMPTY(1)
  type(MPI_Status) :: MPI_STATUS_IGNORE, MPI_STATUSES_IGNORE(1)
  common /mpi_fortran_bottom/ MPI_BOTTOM
  common /mpi_fortran_in_place/ MPI_IN_PLACE
  common /mpi_fortran_errcodes_ignore/ MPI_ERRCODES_IGNORE
  common /mpi_fortran_unweighted/ MPI_UNWEIGHTED
  common /mpi_fortran_weights_empty/ MPI_WEIGHTS_EMPTY
  common /mpi_fortran_f08_status_ignore/ MPI_STATUS_IGNORE
  common /mpi_fortran_f08_statuses_ignore/ MPI_STATUSES_IGNORE
  ! MPI_Comm_spawn's (src/fortran/mpi_fspawn.c)
  character(len=1) :: MPI_ARGV_NULL(1), MPI_ARGVS_NULL(1, 1)
  common /mpi_fortran_argv_null/ MPI_ARGV_NULL
  common /mpi_fortran_argvs_null/ MPI_ARGVS_NULL

  interface operator(==)
    module procedure cr_eq_comm, cr_eq_datatype, cr_eq_group, cr_eq_op, cr_eq_request, &
      cr_eq_errhandler, cr_eq_info, cr_eq_win, cr_eq_message, cr_eq_file, cr_eq_session
  end interface
  interface operator(/=)
    module procedure cr_ne_comm, cr_ne_datatype, cr_ne_group, cr_ne_op, cr_ne_request, &
      cr_ne_errhandler, cr_ne_info, cr_ne_win, cr_ne_message, cr_ne_file, cr_ne_session
  end interface

  interface
    subroutine MPI_Init(ierror) bind(C, name="courier_f08_init")
      integer, optional, intent(out) :: ierror
    end subroutine MPI_Init
    subroutine MPI_Init_thread(required, provided, ierror) bind(C, name="courier_f08_init_thread")
      integer, intent(in) :: required
      integer, intent(out) :: provided
      integer, optional, intent(out) :: ierror
    end subroutine MPI_Init_thread
    subroutine PMPI_Init(ierror) bind(C, name="courier_f08_pmpi_init")
      integer, optional, intent(out) :: ierror
    end subroutine PMPI_Init
    subroutine PMPI_Init_thread(required, provided, ierror) bind(C, name="courier_f08_pmpi_init_thread")
      integer, intent(in) :: required
      integer, intent(out) :: provided
      integer, optional, intent(out) :: ierror
    end subroutine PMPI_Init_thread
  end interface
  include 'mpi_f08_interfaces.h'

  ! The program's procedures that MPI calls: as C calls them (the vectors as
  ! C pointers by value, the rest by reference), which is what these say.
  abstract interface
    subroutine MPI_User_function(invec, inoutvec, len, datatype)
      import
      type(c_ptr), value :: invec, inoutvec
      integer :: len
      type(MPI_Datatype) :: datatype
    end subroutine MPI_User_function
    subroutine MPI_Comm_errhandler_function(comm, error_code)
      import
      type(MPI_Comm) :: comm
      integer :: error_code
    end subroutine MPI_Comm_errhandler_function
    subroutine MPI_Win_errhandler_function(win, error_code)
      import
      type(MPI_Win) :: win
      integer :: error_code
    end subroutine MPI_Win_errhandler_function
    subroutine MPI_File_errhandler_function(file, error_code)
      import
      type(MPI_File) :: file
      integer :: error_code
    end subroutine MPI_File_errhandler_function
    subroutine MPI_Session_errhandler_function(session, error_code)
      import
      type(MPI_Session) :: session
      integer :: error_code
    end subroutine MPI_Session_errhandler_function
    subroutine MPI_Comm_copy_attr_function(oldcomm, comm_keyval, extra_state, &
        attribute_val_in, attribute_val_out, flag, ierror)
      import
      type(MPI_Comm) :: oldcomm
      integer :: comm_keyval, ierror
      integer(MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
      logical :: flag
    end subroutine MPI_Comm_copy_attr_function
    subroutine MPI_Comm_delete_attr_function(comm, comm_keyval, attribute_val, extra_state, &
        ierror)
      import
      type(MPI_Comm) :: comm
      integer :: comm_keyval, ierror
      integer(MPI_ADDRESS_KIND) :: attribute_val, extra_state
    end subroutine MPI_Comm_delete_attr_function
    subroutine MPI_Type_copy_attr_function(oldtype, type_keyval, extra_state, &
        attribute_val_in, attribute_val_out, flag, ierror)
      import
      type(MPI_Datatype) :: oldtype
      integer :: type_keyval, ierror
      integer(MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
      logical :: flag
    end subroutine MPI_Type_copy_attr_function
    subroutine MPI_Type_delete_attr_function(datatype, type_keyval, attribute_val, extra_state, &
        ierror)
      import
      type(MPI_Datatype) :: datatype
      integer :: type_keyval, ierror
      integer(MPI_ADDRESS_KIND) :: attribute_val, extra_state
    end subroutine MPI_Type_delete_attr_function
    subroutine MPI_Win_copy_attr_function(oldwin, win_keyval, extra_state, &
        attribute_val_in, attribute_val_out, flag, ierror)
      import
      type(MPI_Win) :: oldwin
      integer :: win_keyval, ierror
      integer(MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
      logical :: flag
    end subroutine MPI_Win_copy_attr_function
    subroutine MPI_Win_delete_attr_function(win, win_keyval, attribute_val, extra_state, &
        ierror)
      import
      type(MPI_Win) :: win
      integer :: win_keyval, ierror
      integer(MPI_ADDRESS_KIND) :: attribute_val, extra_state
    end subroutine MPI_Win_delete_attr_function
    subroutine MPI_Grequest_query_function(extra_state, status, ierror)
      import
      integer(MPI_ADDRESS_KIND) :: extra_state
      type(MPI_Status) :: status
      integer :: ierror
    end subroutine MPI_Grequest_query_function
    subroutine MPI_Grequest_free_function(extra_state, ierror)
      import
      integer(MPI_ADDRESS_KIND) :: extra_state
      integer :: ierror
    end subroutine MPI_Grequest_free_function
    subroutine MPI_Grequest_cancel_function(extra_state, complete, ierror)
      import
      integer(MPI_ADDRESS_KIND) :: extra_state
      logical :: complete
      integer :: ierror
    end subroutine MPI_Grequest_cancel_function
  end interface
  interface
    subroutine cr_op_create(fn, commute, op, ierr) bind(C, name="courier_f08_op_create")
      import
      type(c_funptr), value :: fn
      logical, intent(in) :: commute
      type(MPI_Op) :: op
      integer :: ierr
    end subroutine cr_op_create
    subroutine cr_errh_create(fn, what, errhandler, ierr) bind(C, name="courier_f08_errh_create")
      import
      type(c_funptr), value :: fn
      integer, intent(in) :: what
      type(MPI_Errhandler) :: errhandler
      integer :: ierr
    end subroutine cr_errh_create
  end interface
  ! MPI_Sizeof: the size in bytes of one element of x, of any rank
  interface MPI_Sizeof
    module procedure cr_sizeof_i1, cr_sizeof_i2, cr_sizeof_i4, cr_sizeof_i8, cr_sizeof_r4, &
      cr_sizeof_r8, cr_sizeof_c4, cr_sizeof_c8, cr_sizeof_l4, cr_sizeof_ch, &
      cr_sizeof_i16, cr_sizeof_r16, cr_sizeof_c16, cr_sizeof_l1, cr_sizeof_l2, &
      cr_sizeof_l8, cr_sizeof_l16
  end interface
  private :: cr_sizeof_i1, cr_sizeof_i2, cr_sizeof_i4, cr_sizeof_i8, cr_sizeof_r4, &
    cr_sizeof_r8, cr_sizeof_c4, cr_sizeof_c8, cr_sizeof_l4, cr_sizeof_ch, &
      cr_sizeof_i16, cr_sizeof_r16, cr_sizeof_c16, cr_sizeof_l1, cr_sizeof_l2, &
      cr_sizeof_l8, cr_sizeof_l16

contains
  ! The routines with strings (generated: mpi_f08_procs.h) call the mpif.h
  ! entry points, which take the strings' lengths as gfortran passes them.
  include 'mpi_f08_procs.h'

  ! Attributes: INTEGER(MPI_ADDRESS_KIND) values, through mpif.h's entry points
  ! (src/fortran/mpi_fspecial.c: predefined attributes as their values).
  subroutine MPI_Comm_get_attr(comm, comm_keyval, attribute_val, flag, ierror)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: comm_keyval
    integer(MPI_ADDRESS_KIND), intent(out) :: attribute_val
    logical, intent(out) :: flag
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    interface
      subroutine cr_f(comm, keyval, val, flag, ierr) bind(C, name="mpi_comm_get_attr_")
        import
        type(MPI_Comm), intent(in) :: comm
        integer, intent(in) :: keyval
        integer(MPI_ADDRESS_KIND) :: val
        logical :: flag
        integer :: ierr
      end subroutine cr_f
    end interface
    call cr_f(comm, comm_keyval, attribute_val, flag, cr_e)
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Comm_get_attr
  subroutine MPI_Comm_set_attr(comm, comm_keyval, attribute_val, ierror)
    type(MPI_Comm), intent(in) :: comm
    integer, intent(in) :: comm_keyval
    integer(MPI_ADDRESS_KIND), intent(in) :: attribute_val
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    interface
      subroutine cr_f(comm, keyval, val, ierr) bind(C, name="mpi_comm_set_attr_")
        import
        type(MPI_Comm), intent(in) :: comm
        integer, intent(in) :: keyval
        integer(MPI_ADDRESS_KIND), intent(in) :: val
        integer :: ierr
      end subroutine cr_f
    end interface
    call cr_f(comm, comm_keyval, attribute_val, cr_e)
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Comm_set_attr

  subroutine MPI_Comm_create_keyval(comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, &
      extra_state, ierror)
    procedure(MPI_Comm_copy_attr_function) :: comm_copy_attr_fn
    procedure(MPI_Comm_delete_attr_function) :: comm_delete_attr_fn
    integer, intent(out) :: comm_keyval
    integer(MPI_ADDRESS_KIND), intent(in) :: extra_state
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    interface
      subroutine cr_f(copy, del, keyval, extra, ierr) bind(C, name="mpi_comm_create_keyval_")
        import
        type(c_funptr), value :: copy, del
        integer :: keyval
        integer(MPI_ADDRESS_KIND) :: extra
        integer :: ierr
      end subroutine cr_f
    end interface
    call cr_f(c_funloc(comm_copy_attr_fn), c_funloc(comm_delete_attr_fn), comm_keyval, extra_state, cr_e)
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Comm_create_keyval
  subroutine MPI_COMM_NULL_COPY_FN(oldcomm, comm_keyval, extra_state, attribute_val_in, &
      attribute_val_out, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: comm_keyval, ierror
    integer(MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    flag = .false.
    ierror = MPI_SUCCESS
  end subroutine MPI_COMM_NULL_COPY_FN
  subroutine MPI_COMM_DUP_FN(oldcomm, comm_keyval, extra_state, attribute_val_in, &
      attribute_val_out, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: comm_keyval, ierror
    integer(MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    attribute_val_out = attribute_val_in
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine MPI_COMM_DUP_FN
  subroutine MPI_COMM_NULL_DELETE_FN(comm, comm_keyval, attribute_val, extra_state, ierror)
    type(MPI_Comm) :: comm
    integer :: comm_keyval, ierror
    integer(MPI_ADDRESS_KIND) :: attribute_val, extra_state
    ierror = MPI_SUCCESS
  end subroutine MPI_COMM_NULL_DELETE_FN
  subroutine MPI_Type_create_keyval(type_copy_attr_fn, type_delete_attr_fn, type_keyval, &
      extra_state, ierror)
    procedure(MPI_Type_copy_attr_function) :: type_copy_attr_fn
    procedure(MPI_Type_delete_attr_function) :: type_delete_attr_fn
    integer, intent(out) :: type_keyval
    integer(MPI_ADDRESS_KIND), intent(in) :: extra_state
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    interface
      subroutine cr_f(copy, del, keyval, extra, ierr) bind(C, name="mpi_type_create_keyval_")
        import
        type(c_funptr), value :: copy, del
        integer :: keyval
        integer(MPI_ADDRESS_KIND) :: extra
        integer :: ierr
      end subroutine cr_f
    end interface
    call cr_f(c_funloc(type_copy_attr_fn), c_funloc(type_delete_attr_fn), type_keyval, extra_state, cr_e)
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Type_create_keyval
  subroutine MPI_TYPE_NULL_COPY_FN(oldtype, type_keyval, extra_state, attribute_val_in, &
      attribute_val_out, flag, ierror)
    type(MPI_Datatype) :: oldtype
    integer :: type_keyval, ierror
    integer(MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    flag = .false.
    ierror = MPI_SUCCESS
  end subroutine MPI_TYPE_NULL_COPY_FN
  subroutine MPI_TYPE_DUP_FN(oldtype, type_keyval, extra_state, attribute_val_in, &
      attribute_val_out, flag, ierror)
    type(MPI_Datatype) :: oldtype
    integer :: type_keyval, ierror
    integer(MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    attribute_val_out = attribute_val_in
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine MPI_TYPE_DUP_FN
  subroutine MPI_TYPE_NULL_DELETE_FN(datatype, type_keyval, attribute_val, extra_state, ierror)
    type(MPI_Datatype) :: datatype
    integer :: type_keyval, ierror
    integer(MPI_ADDRESS_KIND) :: attribute_val, extra_state
    ierror = MPI_SUCCESS
  end subroutine MPI_TYPE_NULL_DELETE_FN
  subroutine MPI_Type_get_attr(datatype, type_keyval, attribute_val, flag, ierror)
    type(MPI_Datatype), intent(in) :: datatype
    integer, intent(in) :: type_keyval
    integer(MPI_ADDRESS_KIND), intent(out) :: attribute_val
    logical, intent(out) :: flag
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    interface
      subroutine cr_f(h, keyval, val, flag, ierr) bind(C, name="mpi_type_get_attr_")
        import
        type(MPI_Datatype), intent(in) :: h
        integer, intent(in) :: keyval
        integer(MPI_ADDRESS_KIND) :: val
        logical :: flag
        integer :: ierr
      end subroutine cr_f
    end interface
    call cr_f(datatype, type_keyval, attribute_val, flag, cr_e)
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Type_get_attr
  subroutine MPI_Type_set_attr(datatype, type_keyval, attribute_val, ierror)
    type(MPI_Datatype), intent(in) :: datatype
    integer, intent(in) :: type_keyval
    integer(MPI_ADDRESS_KIND), intent(in) :: attribute_val
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    interface
      subroutine cr_f(h, keyval, val, ierr) bind(C, name="mpi_type_set_attr_")
        import
        type(MPI_Datatype), intent(in) :: h
        integer, intent(in) :: keyval
        integer(MPI_ADDRESS_KIND) :: val
        integer :: ierr
      end subroutine cr_f
    end interface
    call cr_f(datatype, type_keyval, attribute_val, cr_e)
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Type_set_attr
  subroutine MPI_Win_create_keyval(win_copy_attr_fn, win_delete_attr_fn, win_keyval, &
      extra_state, ierror)
    procedure(MPI_Win_copy_attr_function) :: win_copy_attr_fn
    procedure(MPI_Win_delete_attr_function) :: win_delete_attr_fn
    integer, intent(out) :: win_keyval
    integer(MPI_ADDRESS_KIND), intent(in) :: extra_state
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    interface
      subroutine cr_f(copy, del, keyval, extra, ierr) bind(C, name="mpi_win_create_keyval_")
        import
        type(c_funptr), value :: copy, del
        integer :: keyval
        integer(MPI_ADDRESS_KIND) :: extra
        integer :: ierr
      end subroutine cr_f
    end interface
    call cr_f(c_funloc(win_copy_attr_fn), c_funloc(win_delete_attr_fn), win_keyval, extra_state, cr_e)
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Win_create_keyval
  subroutine MPI_WIN_NULL_COPY_FN(oldwin, win_keyval, extra_state, attribute_val_in, &
      attribute_val_out, flag, ierror)
    type(MPI_Win) :: oldwin
    integer :: win_keyval, ierror
    integer(MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    flag = .false.
    ierror = MPI_SUCCESS
  end subroutine MPI_WIN_NULL_COPY_FN
  subroutine MPI_WIN_DUP_FN(oldwin, win_keyval, extra_state, attribute_val_in, &
      attribute_val_out, flag, ierror)
    type(MPI_Win) :: oldwin
    integer :: win_keyval, ierror
    integer(MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out
    logical :: flag
    attribute_val_out = attribute_val_in
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine MPI_WIN_DUP_FN
  subroutine MPI_WIN_NULL_DELETE_FN(win, win_keyval, attribute_val, extra_state, ierror)
    type(MPI_Win) :: win
    integer :: win_keyval, ierror
    integer(MPI_ADDRESS_KIND) :: attribute_val, extra_state
    ierror = MPI_SUCCESS
  end subroutine MPI_WIN_NULL_DELETE_FN
  subroutine MPI_Win_get_attr(win, win_keyval, attribute_val, flag, ierror)
    type(MPI_Win), intent(in) :: win
    integer, intent(in) :: win_keyval
    integer(MPI_ADDRESS_KIND), intent(out) :: attribute_val
    logical, intent(out) :: flag
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    interface
      subroutine cr_f(h, keyval, val, flag, ierr) bind(C, name="mpi_win_get_attr_")
        import
        type(MPI_Win), intent(in) :: h
        integer, intent(in) :: keyval
        integer(MPI_ADDRESS_KIND) :: val
        logical :: flag
        integer :: ierr
      end subroutine cr_f
    end interface
    call cr_f(win, win_keyval, attribute_val, flag, cr_e)
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Win_get_attr
  subroutine MPI_Win_set_attr(win, win_keyval, attribute_val, ierror)
    type(MPI_Win), intent(in) :: win
    integer, intent(in) :: win_keyval
    integer(MPI_ADDRESS_KIND), intent(in) :: attribute_val
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    interface
      subroutine cr_f(h, keyval, val, ierr) bind(C, name="mpi_win_set_attr_")
        import
        type(MPI_Win), intent(in) :: h
        integer, intent(in) :: keyval
        integer(MPI_ADDRESS_KIND) :: val
        integer :: ierr
      end subroutine cr_f
    end interface
    call cr_f(win, win_keyval, attribute_val, cr_e)
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Win_set_attr
  subroutine MPI_Grequest_start(query_fn, free_fn, cancel_fn, extra_state, request, ierror)
    procedure(MPI_Grequest_query_function) :: query_fn
    procedure(MPI_Grequest_free_function) :: free_fn
    procedure(MPI_Grequest_cancel_function) :: cancel_fn
    integer(MPI_ADDRESS_KIND) :: extra_state ! the procedures get this variable
    type(MPI_Request), intent(out) :: request
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    interface
      subroutine cr_f(query, free, cancel, extra, request, ierr) bind(C, name="mpi_grequest_start_")
        import
        type(c_funptr), value :: query, free, cancel
        integer(MPI_ADDRESS_KIND) :: extra
        type(MPI_Request) :: request
        integer :: ierr
      end subroutine cr_f
    end interface
    call cr_f(c_funloc(query_fn), c_funloc(free_fn), c_funloc(cancel_fn), extra_state, request, cr_e)
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Grequest_start
  subroutine MPI_File_create_errhandler(file_errhandler_fn, errhandler, ierror)
    procedure(MPI_File_errhandler_function) :: file_errhandler_fn
    type(MPI_Errhandler), intent(out) :: errhandler
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    call cr_errh_create(c_funloc(file_errhandler_fn), 2, errhandler, cr_e)
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_File_create_errhandler
  subroutine MPI_Session_create_errhandler(session_errhandler_fn, errhandler, ierror)
    procedure(MPI_Session_errhandler_function) :: session_errhandler_fn
    type(MPI_Errhandler), intent(out) :: errhandler
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    call cr_errh_create(c_funloc(session_errhandler_fn), 3, errhandler, cr_e)
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Session_create_errhandler
  subroutine MPI_Pack_external(datarep, inbuf, incount, datatype, outbuf, outsize, position, ierror)
    character(len=*), intent(in) :: datarep
    type(*), dimension(..), intent(in) :: inbuf
    integer, intent(in) :: incount
    type(MPI_Datatype), intent(in) :: datatype
    type(*), dimension(..) :: outbuf
    integer(MPI_ADDRESS_KIND), intent(in) :: outsize
    integer(MPI_ADDRESS_KIND), intent(inout) :: position
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    interface
      subroutine cr_f(datarep, inbuf, incount, datatype, outbuf, outsize, position, ierr, &
          datarep_len) bind(C, name="courier_f08_pack_external")
        import
        character(kind=c_char) :: datarep(*)
        type(*), dimension(..), intent(in) :: inbuf
        integer, intent(in) :: incount
        type(MPI_Datatype), intent(in) :: datatype
        type(*), dimension(..) :: outbuf
        integer(MPI_ADDRESS_KIND), intent(in) :: outsize
        integer(MPI_ADDRESS_KIND) :: position
        integer :: ierr
        integer(c_size_t), value :: datarep_len
      end subroutine cr_f
    end interface
    call cr_f(datarep, inbuf, incount, datatype, outbuf, outsize, position, cr_e, &
        len(datarep, kind=c_size_t))
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Pack_external
  subroutine MPI_Unpack_external(datarep, inbuf, insize, position, outbuf, outcount, datatype, &
      ierror)
    character(len=*), intent(in) :: datarep
    type(*), dimension(..), intent(in) :: inbuf
    integer(MPI_ADDRESS_KIND), intent(in) :: insize
    integer(MPI_ADDRESS_KIND), intent(inout) :: position
    type(*), dimension(..) :: outbuf
    integer, intent(in) :: outcount
    type(MPI_Datatype), intent(in) :: datatype
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    interface
      subroutine cr_f(datarep, inbuf, insize, position, outbuf, outcount, datatype, ierr, &
          datarep_len) bind(C, name="courier_f08_unpack_external")
        import
        character(kind=c_char) :: datarep(*)
        type(*), dimension(..), intent(in) :: inbuf
        integer(MPI_ADDRESS_KIND), intent(in) :: insize
        integer(MPI_ADDRESS_KIND) :: position
        type(*), dimension(..) :: outbuf
        integer, intent(in) :: outcount
        type(MPI_Datatype), intent(in) :: datatype
        integer :: ierr
        integer(c_size_t), value :: datarep_len
      end subroutine cr_f
    end interface
    call cr_f(datarep, inbuf, insize, position, outbuf, outcount, datatype, cr_e, &
        len(datarep, kind=c_size_t))
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Unpack_external
  subroutine MPI_Info_get_string(info, key, buflen, value, flag, ierror)
    type(MPI_Info), intent(in) :: info
    character(len=*), intent(in) :: key
    integer, intent(inout) :: buflen
    character(len=*), intent(out) :: value
    logical, intent(out) :: flag
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    interface
      subroutine cr_f(info, key, buflen, value, flag, ierr, key_len, value_len) &
          bind(C, name="mpi_info_get_string_")
        import
        type(MPI_Info), intent(in) :: info
        character(kind=c_char) :: key(*), value(*)
        integer :: buflen, ierr
        logical :: flag
        integer(c_size_t), value :: key_len, value_len
      end subroutine cr_f
    end interface
    call cr_f(info, key, buflen, value, flag, cr_e, len(key, kind=c_size_t), &
        len(value, kind=c_size_t))
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Info_get_string
  ! The spawn calls: mpif.h's entry points (src/fortran/mpi_fspawn.c), which
  ! take the arrays of strings with their elements' length.
  subroutine MPI_Comm_spawn(command, argv, maxprocs, info, root, comm, intercomm, &
      array_of_errcodes, ierror)
    character(len=*), intent(in) :: command, argv(*)
    integer, intent(in) :: maxprocs, root
    type(MPI_Info), intent(in) :: info
    type(MPI_Comm), intent(in) :: comm
    type(MPI_Comm), intent(out) :: intercomm
    integer :: array_of_errcodes(*)
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    interface
      subroutine cr_f(command, argv, maxprocs, info, root, comm, intercomm, codes, ierr, &
          command_len, argv_len) bind(C, name="mpi_comm_spawn_")
        import
        character(kind=c_char) :: command(*), argv(*)
        integer :: maxprocs, root, codes(*), ierr
        type(MPI_Info) :: info
        type(MPI_Comm) :: comm, intercomm
        integer(c_size_t), value :: command_len, argv_len
      end subroutine cr_f
    end interface
    call cr_f(command, argv, maxprocs, info, root, comm, intercomm, array_of_errcodes, cr_e, &
        len(command, kind=c_size_t), len(argv, kind=c_size_t))
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Comm_spawn
  subroutine MPI_Comm_spawn_multiple(count, array_of_commands, array_of_argv, &
      array_of_maxprocs, array_of_info, root, comm, intercomm, array_of_errcodes, ierror)
    integer, intent(in) :: count, array_of_maxprocs(*), root
    character(len=*), intent(in) :: array_of_commands(*), array_of_argv(count, *)
    type(MPI_Info), intent(in) :: array_of_info(*)
    type(MPI_Comm), intent(in) :: comm
    type(MPI_Comm), intent(out) :: intercomm
    integer :: array_of_errcodes(*)
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    interface
      subroutine cr_f(count, commands, argvs, maxprocs, infos, root, comm, intercomm, codes, &
          ierr, commands_len, argvs_len) bind(C, name="mpi_comm_spawn_multiple_")
        import
        character(kind=c_char) :: commands(*), argvs(*)
        integer :: count, maxprocs(*), root, codes(*), ierr
        type(MPI_Info) :: infos(*)
        type(MPI_Comm) :: comm, intercomm
        integer(c_size_t), value :: commands_len, argvs_len
      end subroutine cr_f
    end interface
    call cr_f(count, array_of_commands, array_of_argv, array_of_maxprocs, array_of_info, root, &
        comm, intercomm, array_of_errcodes, cr_e, len(array_of_commands, kind=c_size_t), &
        len(array_of_argv, kind=c_size_t))
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Comm_spawn_multiple
  subroutine MPI_Info_create_env(info, ierror)
    type(MPI_Info), intent(out) :: info
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    interface
      subroutine cr_f(info, ierr) bind(C, name="mpi_info_create_env_")
        import
        type(MPI_Info) :: info
        integer :: ierr
      end subroutine cr_f
    end interface
    call cr_f(info, cr_e)
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Info_create_env
  subroutine MPI_Status_f082f(f08_status, f_status, ierror)
    type(MPI_Status), intent(in) :: f08_status
    integer, intent(out) :: f_status(MPI_STATUS_SIZE)
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    interface
      subroutine cr_f(f08, f, ierr) bind(C, name="mpi_status_f082f_")
        import
        type(MPI_Status), intent(in) :: f08
        integer :: f(*), ierr
      end subroutine cr_f
    end interface
    call cr_f(f08_status, f_status, cr_e)
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Status_f082f
  subroutine MPI_Status_f2f08(f_status, f08_status, ierror)
    integer, intent(in) :: f_status(MPI_STATUS_SIZE)
    type(MPI_Status), intent(out) :: f08_status
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    interface
      subroutine cr_f(f, f08, ierr) bind(C, name="mpi_status_f2f08_")
        import
        integer, intent(in) :: f(*)
        type(MPI_Status) :: f08
        integer :: ierr
      end subroutine cr_f
    end interface
    call cr_f(f_status, f08_status, cr_e)
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Status_f2f08
  subroutine MPI_Op_create(user_fn, commute, op, ierror)
    procedure(MPI_User_function) :: user_fn
    logical, intent(in) :: commute
    type(MPI_Op), intent(out) :: op
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    call cr_op_create(c_funloc(user_fn), commute, op, cr_e)
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Op_create
  subroutine MPI_Comm_create_errhandler(comm_errhandler_fn, errhandler, ierror)
    procedure(MPI_Comm_errhandler_function) :: comm_errhandler_fn
    type(MPI_Errhandler), intent(out) :: errhandler
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    call cr_errh_create(c_funloc(comm_errhandler_fn), 0, errhandler, cr_e)
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Comm_create_errhandler
  subroutine MPI_Win_create_errhandler(win_errhandler_fn, errhandler, ierror)
    procedure(MPI_Win_errhandler_function) :: win_errhandler_fn
    type(MPI_Errhandler), intent(out) :: errhandler
    integer, optional, intent(out) :: ierror
    integer :: cr_e
    call cr_errh_create(c_funloc(win_errhandler_fn), 1, errhandler, cr_e)
    if (present(ierror)) ierror = cr_e
  end subroutine MPI_Win_create_errhandler
  subroutine cr_sizeof_i1(x, size, ierror)
    integer(1), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine cr_sizeof_i1
  subroutine cr_sizeof_i2(x, size, ierror)
    integer(2), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine cr_sizeof_i2
  subroutine cr_sizeof_i4(x, size, ierror)
    integer(4), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine cr_sizeof_i4
  subroutine cr_sizeof_i8(x, size, ierror)
    integer(8), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine cr_sizeof_i8
  subroutine cr_sizeof_i16(x, size, ierror)
    integer(16), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine cr_sizeof_i16
  subroutine cr_sizeof_r16(x, size, ierror)
    real(16), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine cr_sizeof_r16
  subroutine cr_sizeof_c16(x, size, ierror)
    complex(16), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine cr_sizeof_c16
  subroutine cr_sizeof_r4(x, size, ierror)
    real(4), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine cr_sizeof_r4
  subroutine cr_sizeof_r8(x, size, ierror)
    real(8), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine cr_sizeof_r8
  subroutine cr_sizeof_c4(x, size, ierror)
    complex(4), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine cr_sizeof_c4
  subroutine cr_sizeof_c8(x, size, ierror)
    complex(8), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine cr_sizeof_c8
  subroutine cr_sizeof_l4(x, size, ierror)
    logical(4), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine cr_sizeof_l4
  subroutine cr_sizeof_l1(x, size, ierror)
    logical(1), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine cr_sizeof_l1
  subroutine cr_sizeof_l2(x, size, ierror)
    logical(2), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine cr_sizeof_l2
  subroutine cr_sizeof_l8(x, size, ierror)
    logical(8), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine cr_sizeof_l8
  subroutine cr_sizeof_l16(x, size, ierror)
    logical(16), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine cr_sizeof_l16
  subroutine cr_sizeof_ch(x, size, ierror)
    character(len=*), dimension(..), intent(in) :: x
    integer, intent(out) :: size
    integer, optional, intent(out) :: ierror
    size = storage_size(x) / 8
    if (present(ierror)) ierror = MPI_SUCCESS
  end subroutine cr_sizeof_ch
  elemental logical function cr_eq_comm(a, b)
    type(MPI_Comm), intent(in) :: a, b
    cr_eq_comm = a%MPI_VAL == b%MPI_VAL
  end function cr_eq_comm
  elemental logical function cr_ne_comm(a, b)
    type(MPI_Comm), intent(in) :: a, b
    cr_ne_comm = a%MPI_VAL /= b%MPI_VAL
  end function cr_ne_comm
  elemental logical function cr_eq_datatype(a, b)
    type(MPI_Datatype), intent(in) :: a, b
    cr_eq_datatype = a%MPI_VAL == b%MPI_VAL
  end function cr_eq_datatype
  elemental logical function cr_ne_datatype(a, b)
    type(MPI_Datatype), intent(in) :: a, b
    cr_ne_datatype = a%MPI_VAL /= b%MPI_VAL
  end function cr_ne_datatype
  elemental logical function cr_eq_group(a, b)
    type(MPI_Group), intent(in) :: a, b
    cr_eq_group = a%MPI_VAL == b%MPI_VAL
  end function cr_eq_group
  elemental logical function cr_ne_group(a, b)
    type(MPI_Group), intent(in) :: a, b
    cr_ne_group = a%MPI_VAL /= b%MPI_VAL
  end function cr_ne_group
  elemental logical function cr_eq_op(a, b)
    type(MPI_Op), intent(in) :: a, b
    cr_eq_op = a%MPI_VAL == b%MPI_VAL
  end function cr_eq_op
  elemental logical function cr_ne_op(a, b)
    type(MPI_Op), intent(in) :: a, b
    cr_ne_op = a%MPI_VAL /= b%MPI_VAL
  end function cr_ne_op
  elemental logical function cr_eq_request(a, b)
    type(MPI_Request), intent(in) :: a, b
    cr_eq_request = a%MPI_VAL == b%MPI_VAL
  end function cr_eq_request
  elemental logical function cr_ne_request(a, b)
    type(MPI_Request), intent(in) :: a, b
    cr_ne_request = a%MPI_VAL /= b%MPI_VAL
  end function cr_ne_request
  elemental logical function cr_eq_errhandler(a, b)
    type(MPI_Errhandler), intent(in) :: a, b
    cr_eq_errhandler = a%MPI_VAL == b%MPI_VAL
  end function cr_eq_errhandler
  elemental logical function cr_ne_errhandler(a, b)
    type(MPI_Errhandler), intent(in) :: a, b
    cr_ne_errhandler = a%MPI_VAL /= b%MPI_VAL
  end function cr_ne_errhandler
  elemental logical function cr_eq_info(a, b)
    type(MPI_Info), intent(in) :: a, b
    cr_eq_info = a%MPI_VAL == b%MPI_VAL
  end function cr_eq_info
  elemental logical function cr_ne_info(a, b)
    type(MPI_Info), intent(in) :: a, b
    cr_ne_info = a%MPI_VAL /= b%MPI_VAL
  end function cr_ne_info
  elemental logical function cr_eq_win(a, b)
    type(MPI_Win), intent(in) :: a, b
    cr_eq_win = a%MPI_VAL == b%MPI_VAL
  end function cr_eq_win
  elemental logical function cr_ne_win(a, b)
    type(MPI_Win), intent(in) :: a, b
    cr_ne_win = a%MPI_VAL /= b%MPI_VAL
  end function cr_ne_win
  elemental logical function cr_eq_message(a, b)
    type(MPI_Message), intent(in) :: a, b
    cr_eq_message = a%MPI_VAL == b%MPI_VAL
  end function cr_eq_message
  elemental logical function cr_ne_message(a, b)
    type(MPI_Message), intent(in) :: a, b
    cr_ne_message = a%MPI_VAL /= b%MPI_VAL
  end function cr_ne_message
  elemental logical function cr_eq_file(a, b)
    type(MPI_File), intent(in) :: a, b
    cr_eq_file = a%MPI_VAL == b%MPI_VAL
  end function cr_eq_file
  elemental logical function cr_ne_file(a, b)
    type(MPI_File), intent(in) :: a, b
    cr_ne_file = a%MPI_VAL /= b%MPI_VAL
  end function cr_ne_file
  elemental logical function cr_eq_session(a, b)
    type(MPI_Session), intent(in) :: a, b
    cr_eq_session = a%MPI_VAL == b%MPI_VAL
  end function cr_eq_session
  elemental logical function cr_ne_session(a, b)
    type(MPI_Session), intent(in) :: a, b
    cr_ne_session = a%MPI_VAL /= b%MPI_VAL
  end function cr_ne_session
end module mpi_f08
