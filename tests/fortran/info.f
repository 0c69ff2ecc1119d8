!     mpif.h (fixed form): strings through the binding. MPI_INFO_SET loses
!     the leading and trailing blanks of keys and values; MPI_INFO_GET with
!     flag .false. leaves the program's string as it was; MPI-4's
!     MPI_INFO_GET_STRING (at most BUFLEN characters, BUFLEN back as the
!     value's length) and MPI_INFO_CREATE_ENV. One line when every check
!     passed; a failed check prints FAIL and aborts the job.
      PROGRAM INFOF
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, INFO, ENV, N, BUFL
      LOGICAL FLAG
      CHARACTER*(MPI_MAX_INFO_VAL) VAL
      CHARACTER*(MPI_MAX_INFO_KEY) KEY
      CALL MPI_INIT(IERR)
      CALL MPI_INFO_CREATE(INFO, IERR)
      CALL MPI_INFO_SET(INFO, ' See Below', ' no test ', IERR)
      CALL MPI_INFO_GET_NTHKEY(INFO, 0, KEY, IERR)
      CALL CHECK(KEY .EQ. 'See Below', 'leading blanks of a key')
      CALL MPI_INFO_GET(INFO, 'See Below', MPI_MAX_INFO_VAL, VAL, FLAG,
     &                  IERR)
      CALL CHECK(FLAG .AND. VAL .EQ. 'no test',
     &           'leading blanks of a value')
      VAL = 'canary'
      CALL MPI_INFO_GET(INFO, 'absent', MPI_MAX_INFO_VAL, VAL, FLAG,
     &                  IERR)
      CALL CHECK(.NOT. FLAG .AND. VAL .EQ. 'canary',
     &           'MPI_INFO_GET without the key keeps the string')
      BUFL = 0
      CALL MPI_INFO_GET_STRING(INFO, 'See Below', BUFL, VAL, FLAG, IERR)
      CALL CHECK(FLAG .AND. BUFL .EQ. 7 .AND. VAL .EQ. 'canary',
     &           'MPI_INFO_GET_STRING with BUFLEN 0')
      BUFL = 2
      CALL MPI_INFO_GET_STRING(INFO, 'See Below', BUFL, VAL, FLAG, IERR)
      CALL CHECK(FLAG .AND. BUFL .EQ. 7 .AND. VAL .EQ. 'no',
     &           'MPI_INFO_GET_STRING with BUFLEN 2')
      BUFL = MPI_MAX_INFO_VAL
      CALL MPI_INFO_GET_STRING(INFO, 'See Below', BUFL, VAL, FLAG, IERR)
      CALL CHECK(FLAG .AND. BUFL .EQ. 7 .AND. VAL .EQ. 'no test',
     &           'MPI_INFO_GET_STRING')
      CALL MPI_INFO_CREATE_ENV(ENV, IERR)
      CALL MPI_INFO_GET_NKEYS(ENV, N, IERR)
      CALL CHECK(IERR .EQ. MPI_SUCCESS .AND. ENV .NE. MPI_INFO_NULL,
     &           'MPI_INFO_CREATE_ENV')
      CALL MPI_INFO_FREE(ENV, IERR)
      CALL MPI_INFO_FREE(INFO, IERR)
      PRINT '(A)', 'fortran info: strings, get_string, create_env ok'
      CALL MPI_FINALIZE(IERR)
      END

      SUBROUTINE CHECK(OK, WHAT)
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      LOGICAL OK
      CHARACTER*(*) WHAT
      INTEGER E
      IF (.NOT. OK) THEN
         PRINT *, 'FAIL: ', WHAT
         CALL MPI_ABORT(MPI_COMM_WORLD, 1, E)
      END IF
      END
