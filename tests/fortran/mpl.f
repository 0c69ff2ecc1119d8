! MPL from Fortran (INCLUDE 'mplf.h'): MP_ENVIRON, MP_TASK_QUERY's
! wildcards, a ring of MP_SEND/MP_RECV/MP_WAIT with the source and length
! checked, MP_BCAST, MP_REDUCE with I_VADD, MP_COMBINE with D_VMAX and with
! a Fortran reduction subroutine. Task 0 prints one line when every check
! passed; a failed check stops the task with status 1, ending the job.
      PROGRAM MPLF
      IMPLICIT NONE
      INCLUDE 'mplf.h'
      INTEGER NT, ME, NEXT, PREV, I, SID, RID, NB, SRC, TYP
      INTEGER WC(4), IN(4), OUT(4), TOK, B(3)
      DOUBLE PRECISION D(2), DR(2)
      EXTERNAL MYADD
      CALL MP_ENVIRON(NT, ME)
      CALL MP_TASK_QUERY(WC, 4, MPL_Q_WILDCARDS)
      CALL CHECK(WC(1) .EQ. DONTCARE .AND. WC(4) .EQ. ALLGRP,
     &           'wildcards')
      NEXT = MOD(ME + 1, NT)
      PREV = MOD(ME + NT - 1, NT)
!     A ring: each task sends its number on and receives its neighbour's.
      SRC = DONTCARE
      TYP = 5
      CALL MP_RECV(TOK, 4, SRC, TYP, RID)
      CALL MP_SEND(ME, 4, NEXT, 5, SID)
      CALL MP_WAIT(RID, NB)
      CALL CHECK(NB .EQ. 4 .AND. TOK .EQ. PREV, 'recv')
      CALL CHECK(SRC .EQ. PREV .AND. TYP .EQ. 5, 'recv source')
      CALL MP_WAIT(SID, NB)
!     Broadcast from task 0.
      IF (ME .EQ. 0) THEN
         B(1) = 7
         B(2) = 8
         B(3) = 9
      END IF
      CALL MP_BCAST(B, 12, 0, ALLGRP)
      CALL CHECK(B(1) .EQ. 7 .AND. B(3) .EQ. 9, 'bcast')
!     Reductions: predefined and a Fortran subroutine.
      DO I = 1, 4
         IN(I) = ME + I
      END DO
      CALL MP_REDUCE(IN, OUT, 16, 0, I_VADD, ALLGRP)
      IF (ME .EQ. 0) THEN
         DO I = 1, 4
            CALL CHECK(OUT(I) .EQ. NT * (NT - 1) / 2 + NT * I, 'reduce')
         END DO
      END IF
      D(1) = ME
      D(2) = -ME
      CALL MP_COMBINE(D, DR, 16, D_VMAX, ALLGRP)
      CALL CHECK(DR(1) .EQ. NT - 1 .AND. DR(2) .EQ. 0, 'combine')
      CALL MP_COMBINE(IN, OUT, 16, MYADD, ALLGRP)
      DO I = 1, 4
         CALL CHECK(OUT(I) .EQ. NT * (NT - 1) / 2 + NT * I, 'myadd')
      END DO
      CALL MP_SYNC(ALLGRP)
      IF (ME .EQ. 0) PRINT '(A,I0,A)',
     &   'fortran mpl: ring, bcast, reduce, combine ok on ', NT,
     &   ' tasks'
      END

!     A reduction function as MPL calls it: LEN is in bytes.
      SUBROUTINE MYADD(A, B, C, LEN)
      INTEGER LEN, A(*), B(*), C(*), I
      DO I = 1, LEN / 4
         C(I) = A(I) + B(I)
      END DO
      END

      SUBROUTINE CHECK(OK, WHAT)
      LOGICAL OK
      CHARACTER*(*) WHAT
      IF (.NOT. OK) THEN
         PRINT *, 'FAIL: ', WHAT
         STOP 1
      END IF
      END
