/* MPL for Fortran: the SP2's Fortran calls (CALL MP_SEND(OUTMSG, MSGLEN, DEST,
 * TYPE, MSGID), CALL MP_REDUCE(IN, OUT, MSGLEN, ROOT, I_VADD, ALLGRP)) with
 * gfortran's names (mp_send_), every argument by reference. Each calls the mp_
 * (or mpc_) call of mpl.h, so its checks, mperrno and semantics are docs/mpl.md's;
 * each also returns what that call returns, so that a program may call it as a
 * subroutine or as an INTEGER function. mplf.h declares the constants and the
 * predefined reduction functions, which are here under their Fortran names
 * (i_vadd_, d_vmax_, ...): the C ones already take their arguments by reference.
 *
 * Invariants: INTEGERs are Fortran's default (4 bytes), as mpl.h's int; a
 * reduction function or a handler a Fortran program passes is called as MPL
 * calls a C one, every argument by reference, which is what a Fortran
 * subroutine expects. */
#define MPL_INT_LENGTHS /* the plain int functions, not the width-routing macros */
#include "courier/mpl.h"
#include "fortran.h"

#define MP(name, a, ca)                                                                            \
    CR_FEXPORT int name##_ a                                                                       \
    {                                                                                              \
        return name ca;                                                                            \
    }

MP(mp_environ, (int *numtask, int *taskid), (numtask, taskid))
MP(mp_task_query, (int *buf, int *nelem, int *qtype), (buf, nelem, qtype))
MP(mp_task_set, (int *buf, int *nelem, int *stype), (buf, nelem, stype))
MP(mp_stopall, (int *errcode), (errcode))
MP(mp_bsend, (void *buf, int *len, int *dest, int *type), (buf, len, dest, type))
MP(mp_brecv, (void *buf, int *len, int *src, int *type, int *nbytes), (buf, len, src, type, nbytes))
MP(mp_bsendrecv,
   (void *sbuf, int *slen, int *dest, int *stype, void *rbuf, int *rlen, int *src, int *rtype,
    int *nbytes),
   (sbuf, slen, dest, stype, rbuf, rlen, src, rtype, nbytes))
MP(mp_send, (void *buf, int *len, int *dest, int *type, int *msgid), (buf, len, dest, type, msgid))
MP(mp_recv, (void *buf, int *len, int *src, int *type, int *msgid), (buf, len, src, type, msgid))
MP(mp_status, (int *msgid), (msgid))
MP(mp_wait, (int *msgid, int *nbytes), (msgid, nbytes))
MP(mp_probe, (int *src, int *type, int *nbytes), (src, type, nbytes))
MP(mp_rcvncall, (void *buf, int *len, int *src, int *type, int *msgid, mpl_handler_fn handler),
   (buf, len, src, type, msgid, handler))
MP(mp_lockrnc, (int *state, int *oldstate), (state, oldstate))
MP(mp_group, (int *gsize, int glist[], int *label, int *gid), (gsize, glist, label, gid))
MP(mp_partition, (int *parent_gid, int *key, int *label, int *gid), (parent_gid, key, label, gid))
MP(mp_getsize, (int *gsize, int *gid), (gsize, gid))
MP(mp_getrank, (int *rank, int *taskid, int *gid), (rank, taskid, gid))
MP(mp_gettaskid, (int *rank, int *taskid, int *gid), (rank, taskid, gid))
MP(mp_getlabel, (int *label, int *gid), (label, gid))
MP(mp_sync, (int *gid), (gid))
MP(mp_bcast, (void *buf, int *msglen, int *root, int *gid), (buf, msglen, root, gid))
MP(mp_reduce, (void *sendbuf, void *recvbuf, int *msglen, int *root, mpl_reduce_fn func, int *gid),
   (sendbuf, recvbuf, msglen, root, func, gid))
MP(mp_combine, (void *sendbuf, void *recvbuf, int *msglen, mpl_reduce_fn func, int *gid),
   (sendbuf, recvbuf, msglen, func, gid))
MP(mp_prefix, (void *sendbuf, void *recvbuf, int *msglen, mpl_reduce_fn func, int *gid),
   (sendbuf, recvbuf, msglen, func, gid))
MP(mp_gather, (void *sendbuf, void *recvbuf, int *blklen, int *root, int *gid),
   (sendbuf, recvbuf, blklen, root, gid))
MP(mp_scatter, (void *sendbuf, void *recvbuf, int *blklen, int *root, int *gid),
   (sendbuf, recvbuf, blklen, root, gid))
MP(mp_concat, (void *sendbuf, void *recvbuf, int *blklen, int *gid),
   (sendbuf, recvbuf, blklen, gid))
MP(mp_index, (void *sendbuf, void *recvbuf, int *blklen, int *gid), (sendbuf, recvbuf, blklen, gid))
MP(mp_shift, (void *sendbuf, void *recvbuf, int *msglen, int *step, int *flag, int *gid),
   (sendbuf, recvbuf, msglen, step, flag, gid))

/* The strided forms, which have no mp_ form in C: through the mpc_ ones. */
CR_FEXPORT int mp_vsend_(void *buf, int *blknum, int *blklen, int *stride, int *dest, int *type,
                         int *msgid)
{
    return mpc_vsend(buf, *blknum, *blklen, *stride, *dest, *type, msgid);
}

CR_FEXPORT int mp_vrecv_(void *buf, int *blknum, int *blklen, int *stride, int *src, int *type,
                         int *msgid)
{
    return mpc_vrecv(buf, *blknum, *blklen, *stride, src, type, msgid);
}

CR_FEXPORT int mp_bvsend_(void *buf, int *blknum, int *blklen, int *stride, int *dest, int *type)
{
    return mpc_bvsend(buf, *blknum, *blklen, *stride, *dest, *type);
}

CR_FEXPORT int mp_bvrecv_(void *buf, int *blknum, int *blklen, int *stride, int *src, int *type,
                          int *nbytes)
{
    return mpc_bvrecv(buf, *blknum, *blklen, *stride, src, type, nbytes);
}

/* The predefined reduction functions under their Fortran names. */
#define RED(name, T)                                                                               \
    CR_FEXPORT void name##_(T in1[], T in2[], T out[], int *len)                                   \
    {                                                                                              \
        name(in1, in2, out, len);                                                                  \
    }
RED(s_vadd, float)
RED(d_vadd, double)
RED(i_vadd, int)
RED(s_vmul, float)
RED(d_vmul, double)
RED(i_vmul, int)
RED(s_vmax, float)
RED(d_vmax, double)
RED(i_vmax, int)
RED(s_vmin, float)
RED(d_vmin, double)
RED(i_vmin, int)
RED(i_vand, int)
RED(i_vor, int)
RED(i_vxor, int)
RED(b_vand, char)
RED(b_vor, char)
RED(b_vxor, char)
RED(l_vand, int)
RED(l_vor, int)
RED(l_vxor, int)
