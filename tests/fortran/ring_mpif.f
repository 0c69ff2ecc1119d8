! mpif.h (fixed form, as Fortran 77 programs are written): a token around a
! ring with its statuses checked, an all-reduce with MPI_IN_PLACE, a vector
! datatype, MPI_WAITANY's index (from 1), a name, an attribute and MPI_WTIME.
! Rank 0 prints one line when every check passed; a failed check prints
! FAIL and aborts the job.
      PROGRAM RING
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NP, NEXT, PREV, TOKEN, I, N, VEC, IDX
      INTEGER STATUS(MPI_STATUS_SIZE), REQS(2), A(10), B(5), C(2)
      DOUBLE PRECISION X(4)
      INTEGER(KIND=MPI_ADDRESS_KIND) TAGUB
      LOGICAL FLAG
      CHARACTER*(MPI_MAX_OBJECT_NAME) NAME
      CALL MPI_INIT(IERR)
      CALL CHECK(IERR .EQ. MPI_SUCCESS, 'MPI_INIT')
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
      NEXT = MOD(RANK + 1, NP)
      PREV = MOD(RANK + NP - 1, NP)
!     The ring: each rank adds its number to the token.
      IF (RANK .EQ. 0) THEN
         TOKEN = 0
         CALL MPI_SEND(TOKEN, 1, MPI_INTEGER, NEXT, 7, MPI_COMM_WORLD,
     &                 IERR)
      END IF
      CALL MPI_RECV(TOKEN, 1, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG,
     &              MPI_COMM_WORLD, STATUS, IERR)
      CALL CHECK(STATUS(MPI_SOURCE) .EQ. PREV, 'status source')
      CALL CHECK(STATUS(MPI_TAG) .EQ. 7, 'status tag')
      CALL MPI_GET_COUNT(STATUS, MPI_INTEGER, N, IERR)
      CALL CHECK(N .EQ. 1, 'MPI_GET_COUNT')
      IF (RANK .NE. 0) THEN
         TOKEN = TOKEN + RANK
         CALL MPI_SEND(TOKEN, 1, MPI_INTEGER, NEXT, 7, MPI_COMM_WORLD,
     &                 IERR)
      ELSE
         CALL CHECK(TOKEN .EQ. NP * (NP - 1) / 2, 'token')
      END IF
!     All-reduce in place.
      DO I = 1, 4
         X(I) = RANK + I
      END DO
      CALL MPI_ALLREDUCE(MPI_IN_PLACE, X, 4, MPI_DOUBLE_PRECISION,
     &                   MPI_SUM, MPI_COMM_WORLD, IERR)
      DO I = 1, 4
         CALL CHECK(ABS(X(I) - (NP * (NP - 1) / 2 + NP * I)) .LT. 1D-9,
     &              'allreduce')
      END DO
!     A vector type: every other element of A arrives packed in B.
      CALL MPI_TYPE_VECTOR(5, 1, 2, MPI_INTEGER, VEC, IERR)
      CALL MPI_TYPE_COMMIT(VEC, IERR)
      IF (RANK .EQ. 0) THEN
         DO I = 1, 10
            A(I) = 100 + I
         END DO
         CALL MPI_SEND(A, 1, VEC, 1, 3, MPI_COMM_WORLD, IERR)
      ELSE IF (RANK .EQ. 1) THEN
         CALL MPI_RECV(B, 5, MPI_INTEGER, 0, 3, MPI_COMM_WORLD,
     &                 MPI_STATUS_IGNORE, IERR)
         DO I = 1, 5
            CALL CHECK(B(I) .EQ. 100 + 2 * I - 1, 'vector type')
         END DO
      END IF
      CALL MPI_TYPE_FREE(VEC, IERR)
      CALL CHECK(VEC .EQ. MPI_DATATYPE_NULL, 'MPI_TYPE_FREE')
!     MPI_WAITANY counts from 1.
      IF (RANK .EQ. 1) THEN
         CALL MPI_IRECV(C(1), 1, MPI_INTEGER, 0, 11, MPI_COMM_WORLD,
     &                  REQS(1), IERR)
         CALL MPI_IRECV(C(2), 1, MPI_INTEGER, 0, 12, MPI_COMM_WORLD,
     &                  REQS(2), IERR)
         CALL MPI_WAITANY(2, REQS, IDX, STATUS, IERR)
         CALL CHECK(IDX .EQ. 2, 'MPI_WAITANY index')
         CALL CHECK(STATUS(MPI_TAG) .EQ. 12, 'MPI_WAITANY status')
         CALL MPI_SEND(C(2), 1, MPI_INTEGER, 0, 13, MPI_COMM_WORLD,
     &                 IERR)
         CALL MPI_WAITALL(2, REQS, MPI_STATUSES_IGNORE, IERR)
         CALL CHECK(C(1) .EQ. 41 .AND. C(2) .EQ. 42, 'irecv data')
      ELSE IF (RANK .EQ. 0) THEN
         CALL MPI_SEND(42, 1, MPI_INTEGER, 1, 12, MPI_COMM_WORLD, IERR)
         CALL MPI_RECV(N, 1, MPI_INTEGER, 1, 13, MPI_COMM_WORLD,
     &                 MPI_STATUS_IGNORE, IERR)
         CALL MPI_SEND(41, 1, MPI_INTEGER, 1, 11, MPI_COMM_WORLD, IERR)
      END IF
!     A parameterized type: REAL(8)'s size, its own combiner.
      CALL MPI_TYPE_CREATE_F90_REAL(15, 300, N, IERR)
      CALL MPI_TYPE_SIZE(N, I, IERR)
      CALL CHECK(I .EQ. 8, 'MPI_TYPE_CREATE_F90_REAL')
!     A name (blank-padded), an attribute, the clock.
      CALL MPI_COMM_GET_NAME(MPI_COMM_WORLD, NAME, N, IERR)
      CALL CHECK(NAME .EQ. 'MPI_COMM_WORLD' .AND. N .EQ. 14, 'name')
      CALL MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, TAGUB, FLAG,
     &                       IERR)
      CALL CHECK(FLAG .AND. TAGUB .GE. 32767, 'MPI_TAG_UB')
      CALL CHECK(MPI_WTIME() .GT. 0D0, 'MPI_WTIME')
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0) PRINT '(A,I0,A)',
     &   'fortran mpif.h: ring, allreduce, vector type ok on ', NP,
     &   ' ranks'
      CALL MPI_FINALIZE(IERR)
      END

      SUBROUTINE CHECK(OK, WHAT)
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      LOGICAL OK
      CHARACTER*(*) WHAT
      INTEGER IERR
      IF (.NOT. OK) THEN
         PRINT *, 'FAIL: ', WHAT
         CALL MPI_ABORT(MPI_COMM_WORLD, 1, IERR)
      END IF
      END
