!     mpif.h (fixed form): the MPI-1 calls MPI-3 removed, as old Fortran
!     codes call them, with default INTEGER displacements and extents:
!     MPI_TYPE_HINDEXED and MPI_TYPE_HVECTOR carrying data between two
!     ranks, MPI_TYPE_STRUCT with the MPI_LB and MPI_UB markers,
!     MPI_TYPE_EXTENT, MPI_TYPE_LB, MPI_TYPE_UB, and MPI_ADDRESS (its
!     value, or MPI_ERR_ARG where an address does not fit an INTEGER),
!     and MPI_TYPE_GET_NAME naming the markers (MPICH's allctypesf).
!     Rank 0 prints one line when every check passed.
      PROGRAM LEGACY
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, I, T1, T2, T3, EXT, LB, UB, ADDR, CLS
      INTEGER BLS(3), DISPS(3), TYPES(3), A(20), B(20)
      INTEGER(KIND=MPI_ADDRESS_KIND) GADDR
      CHARACTER*(MPI_MAX_OBJECT_NAME) TNAME
      INTEGER TLEN
      INTEGER STATUS(MPI_STATUS_SIZE)
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      DO I = 1, 20
         A(I) = 100 * RANK + I
         B(I) = -1
      END DO
!     elements 1, 2 and 7 (displacements in bytes, default INTEGERs)
      BLS(1) = 2
      BLS(2) = 1
      DISPS(1) = 0
      DISPS(2) = 24
      CALL MPI_TYPE_HINDEXED(2, BLS, DISPS, MPI_INTEGER, T1, IERR)
      CALL MPI_TYPE_COMMIT(T1, IERR)
      CALL MPI_TYPE_EXTENT(T1, EXT, IERR)
      CALL CHECK(IERR .EQ. MPI_SUCCESS .AND. EXT .EQ. 28, 'HINDEXED')
!     every third element, 4 of them
      CALL MPI_TYPE_HVECTOR(4, 1, 12, MPI_INTEGER, T2, IERR)
      CALL MPI_TYPE_COMMIT(T2, IERR)
      IF (RANK .EQ. 0) THEN
         CALL MPI_SEND(A, 1, T1, 1, 1, MPI_COMM_WORLD, IERR)
         CALL MPI_SEND(A, 1, T2, 1, 2, MPI_COMM_WORLD, IERR)
      ELSE IF (RANK .EQ. 1) THEN
         CALL MPI_RECV(B, 3, MPI_INTEGER, 0, 1, MPI_COMM_WORLD,
     &        STATUS, IERR)
         CALL CHECK(B(1) .EQ. 1 .AND. B(2) .EQ. 2 .AND. B(3) .EQ. 7,
     &        'data through HINDEXED')
         CALL MPI_RECV(B, 1, T2, 0, 2, MPI_COMM_WORLD, STATUS, IERR)
         CALL CHECK(B(1) .EQ. 1 .AND. B(4) .EQ. 4 .AND. B(10) .EQ. 10
     &        .AND. B(2) .EQ. 2, 'data through HVECTOR')
      END IF
!     an INTEGER between the markers at -8 and 32
      BLS(1) = 1
      BLS(2) = 1
      BLS(3) = 1
      DISPS(1) = -8
      DISPS(2) = 4
      DISPS(3) = 32
      TYPES(1) = MPI_LB
      TYPES(2) = MPI_INTEGER
      TYPES(3) = MPI_UB
      CALL MPI_TYPE_STRUCT(3, BLS, DISPS, TYPES, T3, IERR)
      CALL MPI_TYPE_LB(T3, LB, IERR)
      CALL MPI_TYPE_UB(T3, UB, IERR)
      CALL MPI_TYPE_EXTENT(T3, EXT, IERR)
      CALL CHECK(IERR .EQ. MPI_SUCCESS .AND. LB .EQ. -8 .AND.
     &     UB .EQ. 32 .AND. EXT .EQ. 40, 'STRUCT with MPI_LB, MPI_UB')
      CALL MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN,
     &     IERR)
      CALL MPI_TYPE_GET_NAME(MPI_LB, TNAME, TLEN, IERR)
      CALL CHECK(IERR .EQ. MPI_SUCCESS .AND. TNAME .EQ. 'MPI_LB' .AND.
     &     TLEN .EQ. 6, 'MPI_TYPE_GET_NAME of MPI_LB')
      CALL MPI_TYPE_GET_NAME(MPI_UB, TNAME, TLEN, IERR)
      CALL CHECK(IERR .EQ. MPI_SUCCESS .AND. TNAME .EQ. 'MPI_UB' .AND.
     &     TLEN .EQ. 6, 'MPI_TYPE_GET_NAME of MPI_UB')
      CALL MPI_GET_ADDRESS(A, GADDR, IERR)
      CALL MPI_ADDRESS(A, ADDR, IERR)
      CALL MPI_ERROR_CLASS(IERR, CLS, I)
      IF (GADDR .GT. HUGE(ADDR)) THEN
         CALL CHECK(CLS .EQ. MPI_ERR_ARG, 'MPI_ADDRESS beyond INTEGER')
      ELSE
         CALL CHECK(IERR .EQ. MPI_SUCCESS .AND. ADDR .EQ. GADDR,
     &        'MPI_ADDRESS')
      END IF
      CALL MPI_TYPE_FREE(T1, IERR)
      CALL MPI_TYPE_FREE(T2, IERR)
      CALL MPI_TYPE_FREE(T3, IERR)
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0) PRINT '(A)', 'fortran legacy: MPI-1 calls ok'
      CALL MPI_FINALIZE(IERR)
      END

      SUBROUTINE CHECK(OK, WHAT)
      LOGICAL OK
      CHARACTER*(*) WHAT
      INCLUDE 'mpif.h'
      INTEGER E
      IF (.NOT. OK) THEN
         PRINT *, 'FAIL: ', WHAT
         CALL MPI_ABORT(MPI_COMM_WORLD, 1, E)
      END IF
      END
