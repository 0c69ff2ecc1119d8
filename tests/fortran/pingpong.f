! An NX/2 ping-pong in Fortran, timed with DCLOCK: node 0 sends 0 bytes to
! node 1 and waits for the reply, 100 times; half a round trip is the
! one-way time. Under courier run --sim ipsc2 it must come out as C's does
! (the iPSC/2's published 350 us, within 5 %): the argument is that figure.
      PROGRAM PINGPONG
      IMPLICIT NONE
      INCLUDE 'fnx.h'
      INTEGER I, N, BUF(1)
      DOUBLE PRECISION T0, US, FIG
      CHARACTER*32 ARG
      PARAMETER (N = 100)
      CALL GET_COMMAND_ARGUMENT(1, ARG)
      READ (ARG, *) FIG
      BUF(1) = 0
      CALL GSYNC()
      T0 = DCLOCK()
      DO I = 1, N
         IF (MYNODE() .EQ. 0) THEN
            CALL CSEND(1, BUF, 0, 1, 0)
            CALL CRECV(2, BUF, 0)
         ELSE
            CALL CRECV(1, BUF, 0)
            CALL CSEND(2, BUF, 0, 0, 0)
         END IF
      END DO
      US = (DCLOCK() - T0) / (2 * N) * 1D6
      IF (MYNODE() .EQ. 0) THEN
         IF (ABS(US - FIG) .GT. 0.05D0 * FIG) THEN
            PRINT '(A,F8.1,A,F6.1,A)', 'FAIL: one way in ', US,
     &         ' us, not within 5 % of ', FIG, ' us'
            STOP 1
         END IF
         PRINT '(A,F6.1,A,F6.1,A)',
     &      'fortran nx ping-pong: 0 bytes one way in ', US,
     &      ' us (figure ', FIG, ' us)'
      END IF
      END
