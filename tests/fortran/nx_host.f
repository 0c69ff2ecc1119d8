C     An iPSC host program in Fortran (with nx_node.f): it loads the node
C     program, sends N to every node, adds the parts the nodes send back,
C     and waits for the nodes to end. Run first, on one rank:
C     courier run -n 1 nx_fortran_host : -n 4 nx_fortran_node
      PROGRAM HOST
      INCLUDE 'fnx.h'
      INTEGER N, I, NN
      DOUBLE PRECISION PART, TOTAL
      CALL GETCUBE('mycube', 'd2', ' ', 0)
      CALL SETPID(0)
      CALL LOAD('nx_fortran_node', -1, 0)
      N = 1000
      NN = NUMNODES()
      CALL CSEND(10, N, 4, -1, 0)
      TOTAL = 0.0D0
      DO 10 I = 1, NN
         CALL CRECV(20, PART, 8)
         TOTAL = TOTAL + PART
   10 CONTINUE
      CALL WAITALL(-1, -1)
      CALL KILLCUBE(-1, -1)
      CALL RELCUBE('mycube')
      IF (TOTAL .NE. 499500.0D0 .OR. MYNODE() .NE. MYHOST()) THEN
         WRITE (*, *) 'FAIL: sum', TOTAL, ' host is node', MYNODE()
         STOP 1
      END IF
      WRITE (*, '(A,I2,A)') 'fortran nx host: ', NN,
     &   ' nodes, sum 499500'
      END
