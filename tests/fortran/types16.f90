! mpif.h (free form): the pair types of MPI_MAXLOC and MPI_MINLOC
! (MPI_2REAL, MPI_2DOUBLE_PRECISION, MPI_2INTEGER), gfortran's 16-byte kinds
! (MPI_INTEGER16, MPI_REAL16, MPI_COMPLEX32: sums and a ring), and the types
! of MPI_TYPE_CREATE_F90_* (their combiner, the P and R they give back, one
! handle per (P, R), usable for communication and reductions, not freed).
! Rank 0 prints one line when every check passed; a failed check prints FAIL
! and aborts the job.
program types16
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, np, sz, ni, na, nd, comb, t1, t2, t3, ints(2), dts(1), err
  integer(kind=MPI_ADDRESS_KIND) :: adds(1)
  real :: r2(2, 2)
  double precision :: d2(2, 2)
  integer :: i2(2, 2)
  integer(16) :: big(2), bigr(2)
  real(16) :: q(2), qr(2)
  complex(16) :: z, zr
  real(8) :: x(3)
  integer :: st(MPI_STATUS_SIZE)
  character(len=MPI_MAX_OBJECT_NAME) :: name

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)

  ! MAXLOC / MINLOC over pairs: the value is rank-dependent, the "index" too
  r2(1, 1) = real(mod(rank + 1, np)); r2(2, 1) = real(rank)     ! max on rank np-2
  r2(1, 2) = real(mod(rank + 1, np)); r2(2, 2) = real(rank)     ! min on rank np-1
  call MPI_Allreduce(MPI_IN_PLACE, r2(:, 1), 1, MPI_2REAL, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, r2(:, 2), 1, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD, ierr)
  call check(ierr == MPI_SUCCESS .and. r2(1, 1) == real(np - 1) .and. r2(2, 1) == real(np - 2) &
             .and. r2(1, 2) == 0.0 .and. r2(2, 2) == real(np - 1), 'MPI_2REAL MAXLOC/MINLOC')
  d2(1, :) = -dble(rank); d2(2, :) = dble(10 * rank)
  call MPI_Allreduce(MPI_IN_PLACE, d2, 2, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD, ierr)
  call check(d2(1, 2) == -dble(np - 1) .and. d2(2, 2) == dble(10 * (np - 1)), &
             'MPI_2DOUBLE_PRECISION MINLOC')
  i2(1, :) = 7; i2(2, :) = rank + 3                              ! ties: the lowest index
  call MPI_Allreduce(MPI_IN_PLACE, i2, 2, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  call check(i2(1, 1) == 7 .and. i2(2, 1) == 3 .and. i2(2, 2) == 3, 'MPI_2INTEGER MAXLOC')
  call MPI_Type_size(MPI_2DOUBLE_PRECISION, sz, ierr)
  call check(sz == 16, 'MPI_2DOUBLE_PRECISION size')

  ! 16-byte kinds: sums beyond 64 bits and beyond double's precision
  big(1) = 2_16**100 + rank; big(2) = -1
  call MPI_Allreduce(big, bigr, 2, MPI_INTEGER16, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(bigr(1) == np * 2_16**100 + np * (np - 1) / 2 .and. bigr(2) == -np, &
             'MPI_INTEGER16 MPI_SUM')
  q(1) = 1.0_16 + 1.0e-30_16 * (rank + 1); q(2) = real(rank, 16)
  call MPI_Allreduce(q, qr, 2, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(abs(qr(1) - (np + 1.0e-30_16 * np * (np + 1) / 2)) < 1.0e-32_16, 'MPI_REAL16 MPI_SUM')
  call MPI_Allreduce(q(2:2), qr(2:2), 1, MPI_REAL16, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(qr(2) == real(np - 1, 16), 'MPI_REAL16 MPI_MAX')
  z = cmplx(0.0_16, 1.0_16, 16)
  call MPI_Allreduce(z, zr, 1, MPI_COMPLEX32, MPI_PROD, MPI_COMM_WORLD, ierr)
  call check(zr == (0.0_16, 1.0_16)**np, 'MPI_COMPLEX32 MPI_PROD')
  z = cmplx(rank, -rank, 16)
  call MPI_Sendrecv(z, 1, MPI_COMPLEX32, mod(rank + 1, np), 5, zr, 1, MPI_COMPLEX32, &
                    mod(rank + np - 1, np), 5, MPI_COMM_WORLD, st, ierr)
  call check(zr == cmplx(mod(rank + np - 1, np), -mod(rank + np - 1, np), 16), 'MPI_COMPLEX32 ring')
  call MPI_Type_get_name(MPI_INTEGER16, name, sz, ierr)
  call check(name == 'MPI_INTEGER16', 'MPI_INTEGER16 name')

  ! MPI_TYPE_CREATE_F90_*: the combiner, P and R back, one handle per (P, R)
  call MPI_Type_create_f90_real(15, 300, t1, ierr)
  call MPI_Type_create_f90_real(15, 300, t2, ierr)
  call MPI_Type_create_f90_real(15, MPI_UNDEFINED, t3, ierr)
  call check(ierr == MPI_SUCCESS .and. t1 == t2 .and. t1 /= t3, 'F90_REAL: one handle per (p, r)')
  call MPI_Type_get_envelope(t1, ni, na, nd, comb, ierr)
  call check(comb == MPI_COMBINER_F90_REAL .and. ni == 2 .and. na == 0 .and. nd == 0, &
             'F90_REAL envelope')
  ints = 0
  call MPI_Type_get_contents(t1, 2, 0, 0, ints, adds, dts, ierr)
  call check(ierr == MPI_SUCCESS .and. ints(1) == 15 .and. ints(2) == 300, 'F90_REAL contents')
  call MPI_Type_size(t1, sz, ierr)
  call check(sz == 8, 'F90_REAL(15, 300) is 8 bytes')
  x = dble(rank)
  call MPI_Allreduce(MPI_IN_PLACE, x, 3, t1, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(x(3) == dble(np * (np - 1) / 2), 'F90_REAL in MPI_SUM')
  call MPI_Type_create_f90_integer(30, t2, ierr)
  call MPI_Type_get_envelope(t2, ni, na, nd, comb, ierr)
  call MPI_Type_get_contents(t2, 1, 0, 0, ints, adds, dts, ierr)
  call MPI_Type_size(t2, sz, ierr)
  call check(comb == MPI_COMBINER_F90_INTEGER .and. ni == 1 .and. ints(1) == 30 .and. sz == 16, &
             'F90_INTEGER(30)')
  call MPI_Type_create_f90_complex(30, MPI_UNDEFINED, t3, ierr)
  call MPI_Type_get_envelope(t3, ni, na, nd, comb, ierr)
  call MPI_Type_size(t3, sz, ierr)
  call check(comb == MPI_COMBINER_F90_COMPLEX .and. sz == 32, 'F90_COMPLEX(30)')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Type_free(t3, err)
  call check(err /= MPI_SUCCESS, 'an F90 type is not freed')
  call MPI_Type_create_f90_real(40, MPI_UNDEFINED, t3, err)
  call check(err == MPI_ERR_ARG, 'F90_REAL(40) is MPI_ERR_ARG')

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a)', 'fortran types16: pairs, 16-byte kinds, f90 types ok on ', np, ' ranks'
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
end program types16
