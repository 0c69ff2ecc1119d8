! NX/2 from Fortran (INCLUDE 'fnx.h'): a ring of CSEND/CRECV with the info
! calls checked, IRECV with MSGWAIT and MSGDONE, CRECVX's info array, and
! the global operations GDSUM, GSSUM, GSHIGH (REAL), GISUM, GIHIGH, GIPROD on
! INTEGER arrays and
! GOPF with an INTEGER FUNCTION F(A, B, L) that reads its length.
! Node 0 prints one line when every check passed; a failed check stops the
! node with status 1, which ends the job.
      PROGRAM NXF
      IMPLICIT NONE
      INCLUDE 'fnx.h'
      INTEGER ME, NP, NEXT, PREV, I, MID, TOK, INFO(8), IX(3), IW(3)
      INTEGER ISUMOP
      EXTERNAL ISUMOP
      DOUBLE PRECISION X(3), W(3), T0
      REAL SX(2), SW(2)
      ME = MYNODE()
      NP = NUMNODES()
      NEXT = MOD(ME + 1, NP)
      PREV = MOD(ME + NP - 1, NP)
      T0 = DCLOCK()
!     The ring: each node adds its number to the token.
      IF (ME .EQ. 0) THEN
         TOK = 0
         CALL CSEND(10, TOK, 4, NEXT, 0)
      END IF
      CALL CRECV(10, TOK, 4)
      CALL CHECK(INFONODE() .EQ. PREV, 'infonode')
      CALL CHECK(INFOCOUNT() .EQ. 4, 'infocount')
      CALL CHECK(INFOTYPE() .EQ. 10, 'infotype')
      IF (ME .NE. 0) THEN
         TOK = TOK + ME
         CALL CSEND(10, TOK, 4, NEXT, 0)
      ELSE
         CALL CHECK(TOK .EQ. NP * (NP - 1) / 2, 'token')
      END IF
!     IRECV, then the neighbour's message; MSGWAIT completes it.
      MID = IRECV(20, IX, 12)
      IW(1) = ME
      IW(2) = ME * 2
      IW(3) = ME * 3
      CALL CSEND(20, IW, 12, NEXT, 0)
      CALL MSGWAIT(MID)
      CALL CHECK(IX(1) .EQ. PREV .AND. IX(3) .EQ. 3 * PREV, 'irecv')
      MID = IRECV(21, TOK, 4)
      CALL CSEND(21, ME, 4, NEXT, 0)
      DO WHILE (MSGDONE(MID) .EQ. 0)
         CALL FLICK()
      END DO
      CALL CHECK(TOK .EQ. PREV, 'msgdone')
!     CRECVX: type, count, node of the message in INFO.
      CALL CSEND(30, ME, 4, NEXT, 0)
      CALL CRECVX(-1, TOK, 4, PREV, -1, INFO)
      CALL CHECK(INFO(1) .EQ. 30 .AND. INFO(2) .EQ. 4, 'crecvx info')
      CALL CHECK(INFO(3) .EQ. PREV, 'crecvx node')
!     Global operations.
      DO I = 1, 3
         X(I) = ME + I
         IX(I) = ME * I
      END DO
      CALL GDSUM(X, 3, W)
      CALL GISUM(IX, 3, IW)
      DO I = 1, 3
         CALL CHECK(ABS(X(I) - (NP * (NP - 1) / 2 + NP * I)) .LT. 1D-9,
     &              'gdsum')
         CALL CHECK(IX(I) .EQ. I * NP * (NP - 1) / 2, 'gisum')
      END DO
      IX(1) = ME
      CALL GIHIGH(IX, 1, IW)
      CALL CHECK(IX(1) .EQ. NP - 1, 'gihigh')
      IX(1) = 2
      CALL GIPROD(IX, 1, IW)
      CALL CHECK(IX(1) .EQ. 2 ** NP, 'giprod')
      SX(1) = ME + 0.5
      SX(2) = ME
      CALL GSSUM(SX, 1, SW)
      CALL GSHIGH(SX(2), 1, SW)
      CALL CHECK(SX(1) .EQ. NP * (NP - 1) / 2 + 0.5 * NP, 'gssum')
      CALL CHECK(SX(2) .EQ. NP - 1, 'gshigh')
!     GOPF with a function that reads its length (by reference).
      DO I = 1, 3
         IX(I) = ME + I
      END DO
      CALL GOPF(IX, 12, IW, ISUMOP)
      DO I = 1, 3
         CALL CHECK(IX(I) .EQ. NP * (NP - 1) / 2 + NP * I, 'gopf')
      END DO
      CALL GSYNC()
      CALL CHECK(DCLOCK() .GE. T0 .AND. MCLOCK() .GE. 0, 'clocks')
      IF (ME .EQ. 0) PRINT '(A,I0,A)',
     &   'fortran nx: ring, irecv, crecvx, gdsum, gisum ok on ', NP,
     &   ' nodes'
      END

      SUBROUTINE CHECK(OK, WHAT)
      LOGICAL OK
      CHARACTER*(*) WHAT
      IF (.NOT. OK) THEN
         PRINT *, 'FAIL: ', WHAT
         STOP 1
      END IF
      END

!     GOPF's function: A = A + B over L bytes of INTEGERs.
      INTEGER FUNCTION ISUMOP(A, B, L)
      INTEGER L, A(L / 4), B(L / 4), I
      DO I = 1, L / 4
         A(I) = A(I) + B(I)
      END DO
      ISUMOP = 0
      END
