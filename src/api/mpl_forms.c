/* Other spellings of the MPL calls, each a thin translation into its mpc_ form
 * (src/api/mpl.c holds the semantics):
 *  - the length-width forms (mpl_*_w) that mpl.h's macros call, so a length is
 *    read and written in the width of the caller's variable: int (the SP2's
 *    32-bit MPL), or size_t/long (later releases, TCGMSG's port);
 *  - mpc_bsendrecv with IBM's 8 arguments (one type for both messages);
 *  - the Fortran binding's mp_ names, which C programs call with every argument
 *    by reference (Fortran INTEGERs: int; their point-to-point lengths also in
 *    the caller's width).
 * Invariants: no state of its own; a length variable that is neither 4 nor 8
 * bytes wide, or an 8-byte length beyond INT_MAX, is a bad call like any other
 * (one line naming the call and the task, or -1 and MPL_EINVAL when errors
 * return), and then nothing has been done; an error names the mpc_ call. */
#define COURIER_MPL_IMPL /* the real entry points, not mpl.h's macros */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../core/engine.h"
#include "courier/mpl.h"

/* A bad length variable: fatal by default, else -1 with MPL_EINVAL. */
__attribute__((format(printf, 2, 3))) static int bad(const char *call, const char *fmt, ...)
{
    int fatal = 1;
    mpc_task_query(&fatal, 1, MPL_Q_ERRORS);
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (fatal) cr_fatal(cr_job_get(), call, "%s", msg);
    mperrno = MPL_EINVAL;
    return -1;
}

/* 0 if a length variable of this width can be read and written. */
static int width_bad(const char *call, const void *p, size_t width)
{
    if (!p || width == sizeof(int) || width == sizeof(int64_t)) return 0;
    return bad(call,
               "the length variable is %zu bytes wide: pass an int, a long or a size_t (4 or 8 "
               "bytes)",
               width);
}

/* Read a length passed by reference, in its width, into *out. */
static int get_len(const char *call, const void *p, size_t width, int *out)
{
    *out = 0; /* defined on every path (GCC -O3 cannot see that bad() fails) */
    if (!p) return bad(call, "the length is passed as NULL");
    if (width_bad(call, p, width)) return -1;
    if (width == sizeof(int)) {
        memcpy(out, p, sizeof *out);
        return 0;
    }
    int64_t v;
    memcpy(&v, p, sizeof v);
    if (v > INT_MAX || v < INT_MIN)
        return bad(call, "length %lld does not fit an int: MPL lengths are at most %d bytes",
                   (long long)v, INT_MAX);
    *out = (int)v;
    return 0;
}

/* Write v into the caller's length variable, in its width. */
static void put_len(void *p, size_t width, int v)
{
    if (!p) return;
    if (width == sizeof(int64_t)) {
        int64_t w = v;
        memcpy(p, &w, sizeof w);
    } else {
        memcpy(p, &v, sizeof v);
    }
}

int mpl_brecv_w(void *buf, int len, int *src, int *type, void *nbytes, size_t width)
{
    if (width_bad("mpc_brecv", nbytes, width)) return -1;
    int n = 0, rc = mpc_brecv(buf, len, src, type, nbytes ? &n : NULL);
    if (rc == 0) put_len(nbytes, width, n);
    return rc;
}

int mpl_bsendrecv_w(void *sbuf, int slen, int dest, int stype, void *rbuf, int rlen, int *src,
                    int *rtype, void *nbytes, size_t width)
{
    if (width_bad("mpc_bsendrecv", nbytes, width)) return -1;
    int n = 0,
        rc = mpc_bsendrecv(sbuf, slen, dest, stype, rbuf, rlen, src, rtype, nbytes ? &n : NULL);
    if (rc == 0) put_len(nbytes, width, n);
    return rc;
}

int mpl_bsendrecv1_w(void *sbuf, int slen, int dest, int type, void *rbuf, int rlen, int *src,
                     void *nbytes, size_t width)
{
    int rtype = type;
    return mpl_bsendrecv_w(sbuf, slen, dest, type, rbuf, rlen, src, &rtype, nbytes, width);
}

int mpl_bvrecv_w(void *buf, int blknum, int blklen, int stride, int *src, int *type, void *nbytes,
                 size_t width)
{
    if (width_bad("mpc_bvrecv", nbytes, width)) return -1;
    int n = 0, rc = mpc_bvrecv(buf, blknum, blklen, stride, src, type, nbytes ? &n : NULL);
    if (rc == 0) put_len(nbytes, width, n);
    return rc;
}

int mpl_wait_w(int *msgid, void *nbytes, size_t width)
{
    if (width_bad("mpc_wait", nbytes, width)) return -1;
    int n = 0, rc = mpc_wait(msgid, nbytes ? &n : NULL);
    if (rc == 0) put_len(nbytes, width, n);
    return rc;
}

int mpl_probe_w(int *src, int *type, void *nbytes, size_t width)
{
    if (width_bad("mpc_probe", nbytes, width)) return -1;
    int n = 0, rc = mpc_probe(src, type, nbytes ? &n : NULL);
    if (rc == 0) put_len(nbytes, width, n);
    return rc;
}

/* ---- the mp_ names with lengths in the caller's width -------------------- */

int mpl_mp_bsend_w(void *buf, const void *len, size_t lw, int *dest, int *type)
{
    int n;
    if (get_len("mpc_bsend", len, lw, &n)) return -1;
    return mpc_bsend(buf, n, *dest, *type);
}

int mpl_mp_brecv_w(void *buf, const void *len, size_t lw, int *src, int *type, void *nbytes,
                   size_t width)
{
    int n;
    if (get_len("mpc_brecv", len, lw, &n)) return -1;
    return mpl_brecv_w(buf, n, src, type, nbytes, width);
}

int mpl_mp_bsendrecv_w(void *sbuf, const void *slen, size_t slw, int *dest, int *stype, void *rbuf,
                       const void *rlen, size_t rlw, int *src, int *rtype, void *nbytes,
                       size_t width)
{
    int sn, rn;
    if (get_len("mpc_bsendrecv", slen, slw, &sn) || get_len("mpc_bsendrecv", rlen, rlw, &rn))
        return -1;
    return mpl_bsendrecv_w(sbuf, sn, *dest, *stype, rbuf, rn, src, rtype, nbytes, width);
}

int mpl_mp_send_w(void *buf, const void *len, size_t lw, int *dest, int *type, int *msgid)
{
    int n;
    if (get_len("mpc_send", len, lw, &n)) return -1;
    return mpc_send(buf, n, *dest, *type, msgid);
}

int mpl_mp_recv_w(void *buf, const void *len, size_t lw, int *src, int *type, int *msgid)
{
    int n;
    if (get_len("mpc_recv", len, lw, &n)) return -1;
    return mpc_recv(buf, n, src, type, msgid);
}

int mpl_mp_rcvncall_w(void *buf, const void *len, size_t lw, int *src, int *type, int *msgid,
                      mpl_handler_fn handler)
{
    int n;
    if (get_len("mpc_rcvncall", len, lw, &n)) return -1;
    return mpc_rcvncall(buf, n, src, type, msgid, handler);
}

/* ---- the mp_ names ------------------------------------------------------- */

int mp_environ(int *numtask, int *taskid)
{
    return mpc_environ(numtask, taskid);
}

int mp_task_query(int *buf, int *nelem, int *qtype)
{
    return mpc_task_query(buf, *nelem, *qtype);
}

int mp_task_set(int *buf, int *nelem, int *stype)
{
    return mpc_task_set(buf, *nelem, *stype);
}

int mp_stopall(int *errcode)
{
    return mpc_stopall(*errcode);
}

int mp_bsend(void *buf, int *len, int *dest, int *type)
{
    return mpc_bsend(buf, *len, *dest, *type);
}

int mp_brecv(void *buf, int *len, int *src, int *type, int *nbytes)
{
    return mpc_brecv(buf, *len, src, type, nbytes);
}

int mp_bsendrecv(void *sbuf, int *slen, int *dest, int *stype, void *rbuf, int *rlen, int *src,
                 int *rtype, int *nbytes)
{
    return mpc_bsendrecv(sbuf, *slen, *dest, *stype, rbuf, *rlen, src, rtype, nbytes);
}

int mp_send(void *buf, int *len, int *dest, int *type, int *msgid)
{
    return mpc_send(buf, *len, *dest, *type, msgid);
}

int mp_recv(void *buf, int *len, int *src, int *type, int *msgid)
{
    return mpc_recv(buf, *len, src, type, msgid);
}

int mp_status(int *msgid)
{
    return mpc_status(*msgid);
}

int mp_wait(int *msgid, int *nbytes)
{
    return mpc_wait(msgid, nbytes);
}

int mp_probe(int *src, int *type, int *nbytes)
{
    return mpc_probe(src, type, nbytes);
}

int mp_rcvncall(void *buf, int *len, int *src, int *type, int *msgid, mpl_handler_fn handler)
{
    return mpc_rcvncall(buf, *len, src, type, msgid, handler);
}

int mp_lockrnc(int *state, int *oldstate)
{
    return mpc_lockrnc(*state, oldstate);
}

int mp_group(int *gsize, int glist[], int *label, int *gid)
{
    return mpc_group(*gsize, glist, *label, gid);
}

int mp_partition(int *parent_gid, int *key, int *label, int *gid)
{
    return mpc_partition(*parent_gid, *key, *label, gid);
}

int mp_getsize(int *gsize, int *gid)
{
    return mpc_getsize(gsize, *gid);
}

int mp_getrank(int *rank, int *taskid, int *gid)
{
    return mpc_getrank(rank, *taskid, *gid);
}

int mp_gettaskid(int *rank, int *taskid, int *gid)
{
    return mpc_gettaskid(*rank, taskid, *gid);
}

int mp_getlabel(int *label, int *gid)
{
    return mpc_getlabel(label, *gid);
}

int mp_sync(int *gid)
{
    return mpc_sync(*gid);
}

int mp_bcast(void *buf, int *msglen, int *root, int *gid)
{
    return mpc_bcast(buf, *msglen, *root, *gid);
}

int mp_reduce(void *sendbuf, void *recvbuf, int *msglen, int *root, mpl_reduce_fn func, int *gid)
{
    return mpc_reduce(sendbuf, recvbuf, *msglen, *root, func, *gid);
}

int mp_combine(void *sendbuf, void *recvbuf, int *msglen, mpl_reduce_fn func, int *gid)
{
    return mpc_combine(sendbuf, recvbuf, *msglen, func, *gid);
}

int mp_prefix(void *sendbuf, void *recvbuf, int *msglen, mpl_reduce_fn func, int *gid)
{
    return mpc_prefix(sendbuf, recvbuf, *msglen, func, *gid);
}

int mp_gather(void *sendbuf, void *recvbuf, int *blklen, int *root, int *gid)
{
    return mpc_gather(sendbuf, recvbuf, *blklen, *root, *gid);
}

int mp_scatter(void *sendbuf, void *recvbuf, int *blklen, int *root, int *gid)
{
    return mpc_scatter(sendbuf, recvbuf, *blklen, *root, *gid);
}

int mp_concat(void *sendbuf, void *recvbuf, int *blklen, int *gid)
{
    return mpc_concat(sendbuf, recvbuf, *blklen, *gid);
}

int mp_index(void *sendbuf, void *recvbuf, int *blklen, int *gid)
{
    return mpc_index(sendbuf, recvbuf, *blklen, *gid);
}

int mp_shift(void *sendbuf, void *recvbuf, int *msglen, int *step, int *flag, int *gid)
{
    return mpc_shift(sendbuf, recvbuf, *msglen, *step, *flag, *gid);
}
