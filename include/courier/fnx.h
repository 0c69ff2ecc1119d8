!     fnx.h: NX/2 for Fortran (courier; docs/fortran.md, docs/nx.md).
!     INCLUDE 'fnx.h' declares the types of the NX/2 functions; the
!     subroutines (CSEND, CRECV, CPROBE, MSGWAIT, MSGCANCEL, CRECVX,
!     CPROBEX, CSENDX, GSYNC, GDSUM, GISUM, GDHIGH, GIHIGH, GDLOW,
!     GILOW, GDPROD, GSSUM, GSHIGH, GSLOW, GSPROD (REAL arrays),
!     GIPROD, GIAND, GIOR, GIXOR, GCOL, GCOLX, GOPF, FLICK, and a host
!     program's LOAD, SETPID, GETCUBE, ATTACHCUBE, RELCUBE, WAITALL,
!     KILLCUBE) need none.
!     Every argument is a default INTEGER (or the buffer), by reference;
!     GISUM and the other integer operations take INTEGER arrays.
!     Fixed or free form. Link with courier-fort.
      INTEGER ISEND, IRECV, MSGDONE, IPROBE, IPROBEX, MASKTRAP
      INTEGER INFOCOUNT, INFONODE, INFOPID, INFOTYPE
      INTEGER MYNODE, MYPID, NUMNODES, NODEDIM, MYHOST, MCLOCK
      DOUBLE PRECISION DCLOCK
      EXTERNAL ISEND, IRECV, MSGDONE, IPROBE, IPROBEX, MASKTRAP
      EXTERNAL INFOCOUNT, INFONODE, INFOPID, INFOTYPE
      EXTERNAL MYNODE, MYPID, NUMNODES, NODEDIM, MYHOST, MCLOCK
      EXTERNAL DCLOCK
