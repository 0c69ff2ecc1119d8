C     The node program of nx_host.f: nodes 0..N-1, the host outside them.
      PROGRAM NODE
      INCLUDE 'fnx.h'
      INTEGER N, I, ME, NN
      DOUBLE PRECISION PART, SUM, W
      ME = MYNODE()
      NN = NUMNODES()
      CALL CRECV(10, N, 4)
      IF (INFONODE() .NE. MYHOST()) STOP 2
      PART = 0.0D0
      DO 10 I = ME, N - 1, NN
         PART = PART + I
   10 CONTINUE
      CALL CSEND(20, PART, 8, MYHOST(), 0)
      SUM = PART
      CALL GDSUM(SUM, 1, W)
      IF (SUM .NE. 499500.0D0) STOP 3
      END
