/* courier — the IBM SP2 Message-Passing Library (MPL), C binding mpc_*.
 *
 * Programs written for MPL compile unchanged against this header and run with
 * `courier run -n N prog`. Tasks are the ranks of the job, 0..numtask-1; no
 * initialization call is needed. See docs/mpl.md for the details.
 *
 * Every call returns an int: 0 (or a documented count) on success, -1 on error
 * with the reason in mperrno. By default an error ends the job with one line
 * naming the call, the task and the reason, as MPL did; mpc_task_set
 * (MPL_SET_ERRORS_RETURN) makes argument errors return -1 instead.
 *
 * Point-to-point: a receive selects by source and type; either may be DONTCARE,
 * and the source and type actually received are written back (for nonblocking
 * receives when mpc_wait or mpc_status sees completion). Messages from one task
 * to another are received in the order they were sent, and receives posted
 * with the same source and type are satisfied in the order they were posted.
 * A message longer than the receive buffer is cut to fit (nbytes tells what was
 * kept) unless the task set MPL_SET_OVERFLOW_ERROR. Types are 0..INT_MAX.
 *
 * Groups: ALLGRP holds every task. A collective names a group id; every member
 * calls it, in the same order as the other members. Roots are ranks in the
 * group. Send and receive buffers of a collective must not overlap. */
#ifndef COURIER_MPL_H
#define COURIER_MPL_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility push(default) /* libcourier exports only its interfaces */
#endif

/* Wildcards (also returned by mpc_task_query(buf, 4, MPL_Q_WILDCARDS)). */
#define DONTCARE (-1) /* any source / any type; as a msgid in mpc_wait: any one pending */
#define ALLMSG (-2)   /* as a msgid in mpc_wait: every pending operation */
#define NULLTASK (-3) /* no task (e.g. the source of an end-off shift's first member) */
#define ALLGRP 0      /* the group of all tasks */

/* mpc_status results besides a byte count. */
#define MPL_NOT_COMPLETED (-1)
#define MPL_INACTIVE (-2) /* the msgid was already completed by mpc_wait or mpc_status */

/* mpc_task_query types. */
#define MPL_Q_BUFFERS 1   /* 2 ints: eager (per-message) limit, per-task unexpected-buffer bytes */
#define MPL_Q_TYPES 2     /* 2 ints: lowest and highest user message type */
#define MPL_Q_WILDCARDS 3 /* 4 ints: dontcare, allmsg, nulltask, allgrp */
#define MPL_Q_OVERFLOW 4  /* 1 int: 1 when a too-long message is an error, 0 when cut */
#define MPL_Q_ERRORS 5    /* 1 int: 1 when errors end the job, 0 when they return -1 */
/* mpc_task_set types (1 int each). */
#define MPL_SET_OVERFLOW_ERROR 4 /* 1: a message longer than the receive buffer is an error */
#define MPL_SET_ERRORS_FATAL 5   /* 0: argument errors return -1 with mperrno instead */

/* mperrno values. */
#define MPL_EOK 0
#define MPL_EINVAL 1  /* a length, count, stride, type or flag is invalid */
#define MPL_ETASK 2   /* a task id or rank is out of range */
#define MPL_EGROUP 3  /* a group id is unknown, or this task is not a member */
#define MPL_EMSGID 4  /* a msgid is unknown or was already completed */
#define MPL_EBUF 5    /* a buffer is NULL with a non-zero length */
#define MPL_EFUNC 6   /* a reduction function or handler is NULL */
#define MPL_ENOPEND 7 /* mpc_wait(DONTCARE) with nothing pending */
#define MPL_EQTYPE 8  /* an unknown query or set type, or a wrong nelem */
#define MPL_ENOMEM 9  /* out of memory */

extern int mperrno;

/* Reduction functions: out[i] = in1[i] op in2[i] over *len BYTES; in1 holds the
 * data of lower-ranked tasks. Predefined: s_ float, d_ double, i_ int, b_ byte,
 * l_ logical (int, non-zero is true). */
#if defined(__cplusplus)
typedef void (*mpl_reduce_fn)(void *, void *, void *, int *);
typedef void (*mpl_handler_fn)(int *);
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ > 201710L
/* C23 has no unprototyped function types: take any function pointer. */
typedef void *mpl_reduce_fn;
typedef void *mpl_handler_fn;
#else
typedef void (*mpl_reduce_fn)();  /* any void f(T in1[], T in2[], T out[], int *len) */
typedef void (*mpl_handler_fn)(); /* void handler(int *msgid) */
#endif

/* Task management. */
int mpc_environ(int *numtask, int *taskid);
int mpc_task_query(int *buf, int nelem, int qtype);
int mpc_task_set(int *buf, int nelem, int stype);
int mpc_stopall(int errcode);

/* Blocking point-to-point. */
int mpc_bsend(void *buf, int len, int dest, int type);
int mpc_brecv(void *buf, int len, int *src, int *type, int *nbytes);
int mpc_bsendrecv(void *sbuf, int slen, int dest, int stype, void *rbuf, int rlen, int *src,
                  int *rtype, int *nbytes);
/* Strided: blknum blocks of blklen bytes, stride bytes apart (blklen <= stride). */
int mpc_bvsend(void *buf, int blknum, int blklen, int stride, int dest, int type);
int mpc_bvrecv(void *buf, int blknum, int blklen, int stride, int *src, int *type, int *nbytes);

/* Nonblocking point-to-point: *msgid names the operation for mpc_wait/mpc_status.
 * The buffer must not be touched until the operation has completed. */
int mpc_send(void *buf, int len, int dest, int type, int *msgid);
int mpc_recv(void *buf, int len, int *src, int *type, int *msgid);
int mpc_vsend(void *buf, int blknum, int blklen, int stride, int dest, int type, int *msgid);
int mpc_vrecv(void *buf, int blknum, int blklen, int stride, int *src, int *type, int *msgid);
/* Bytes received (for a send: its length) when complete, and the msgid is retired;
 * MPL_NOT_COMPLETED if not yet; MPL_INACTIVE if already retired. */
int mpc_status(int msgid);
/* Waits until *msgid completes and retires it; *msgid DONTCARE waits for any one
 * pending operation and writes its msgid back; ALLMSG waits for all of them. */
int mpc_wait(int *msgid, int *nbytes);
/* Nonblocking look for a matching message: *nbytes is its length, or -1 (and
 * src/type unchanged) when none has arrived. */
int mpc_probe(int *src, int *type, int *nbytes);

/* Receive-and-call: handler(&msgid) runs once the message is in buf, also while
 * the task computes; src and type are written back before it runs. The msgid
 * stays valid while the handler runs (it may mpc_wait for it) and is retired
 * when it returns. mpc_lockrnc(1, &old) holds handlers back (waiting for a
 * running one), mpc_lockrnc(0, &old) lets them run. */
int mpc_rcvncall(void *buf, int len, int *src, int *type, int *msgid, mpl_handler_fn handler);
int mpc_lockrnc(int state, int *oldstate);

/* Groups. */
int mpc_group(int gsize, int glist[], int label, int *gid);      /* every listed task calls it */
int mpc_partition(int parent_gid, int key, int label, int *gid); /* every parent member calls it */
int mpc_getsize(int *gsize, int gid);
int mpc_getrank(int *rank, int taskid, int gid);
int mpc_gettaskid(int rank, int *taskid, int gid);
int mpc_getlabel(int *label, int gid);

/* Collective communication over a group (lengths in bytes). */
int mpc_sync(int gid);
int mpc_bcast(void *buf, int msglen, int root, int gid);
int mpc_reduce(void *sendbuf, void *recvbuf, int msglen, int root, mpl_reduce_fn func, int gid);
int mpc_combine(void *sendbuf, void *recvbuf, int msglen, mpl_reduce_fn func, int gid);
int mpc_prefix(void *sendbuf, void *recvbuf, int msglen, mpl_reduce_fn func, int gid);
int mpc_gather(void *sendbuf, void *recvbuf, int blklen, int root, int gid);
int mpc_scatter(void *sendbuf, void *recvbuf, int blklen, int root, int gid);
int mpc_concat(void *sendbuf, void *recvbuf, int blklen, int gid);
int mpc_index(void *sendbuf, void *recvbuf, int blklen, int gid);
/* flag 1: circular; 0: end-off (the first |step| members receive nothing). */
int mpc_shift(void *sendbuf, void *recvbuf, int msglen, int step, int flag, int gid);

/* Predefined reduction functions. */
void s_vadd(float in1[], float in2[], float out[], int *len);
void d_vadd(double in1[], double in2[], double out[], int *len);
void i_vadd(int in1[], int in2[], int out[], int *len);
void s_vmul(float in1[], float in2[], float out[], int *len);
void d_vmul(double in1[], double in2[], double out[], int *len);
void i_vmul(int in1[], int in2[], int out[], int *len);
void s_vmax(float in1[], float in2[], float out[], int *len);
void d_vmax(double in1[], double in2[], double out[], int *len);
void i_vmax(int in1[], int in2[], int out[], int *len);
void s_vmin(float in1[], float in2[], float out[], int *len);
void d_vmin(double in1[], double in2[], double out[], int *len);
void i_vmin(int in1[], int in2[], int out[], int *len);
void i_vand(int in1[], int in2[], int out[], int *len);
void i_vor(int in1[], int in2[], int out[], int *len);
void i_vxor(int in1[], int in2[], int out[], int *len);
void b_vand(char in1[], char in2[], char out[], int *len);
void b_vor(char in1[], char in2[], char out[], int *len);
void b_vxor(char in1[], char in2[], char out[], int *len);
void l_vand(int in1[], int in2[], int out[], int *len);
void l_vor(int in1[], int in2[], int out[], int *len);
void l_vxor(int in1[], int in2[], int out[], int *len);

/* Lengths in the caller's width. The 32-bit MPL returned lengths through int *;
 * later releases declare size_t * (mpc_brecv, mpc_wait), and real programs pass
 * int, size_t and long variables side by side, even in one file (Charm++'s SP
 * layer: an int for mpc_probe, a size_t for mpc_brecv and mpc_wait). The macros
 * at the end of this header route each call with a length passed by reference
 * to a form told the size of the caller's variable (4 or 8 bytes), so that a
 * length is read and written in full, never half. Message ids, sources, types
 * and group ids stay int *, as in every MPL release. Define MPL_INT_LENGTHS
 * before including this header to call the plain int functions (to take their
 * address, or to declare their prototypes yourself). */
int mpl_brecv_w(void *buf, int len, int *src, int *type, void *nbytes, size_t width);
int mpl_bsendrecv_w(void *sbuf, int slen, int dest, int stype, void *rbuf, int rlen, int *src,
                    int *rtype, void *nbytes, size_t width);
/* mpc_bsendrecv with 8 arguments, as programs built against IBM's mpproto.h
 * call it: one type for both messages; src selects and gets the actual source. */
int mpl_bsendrecv1_w(void *sbuf, int slen, int dest, int type, void *rbuf, int rlen, int *src,
                     void *nbytes, size_t width);
int mpl_bvrecv_w(void *buf, int blknum, int blklen, int stride, int *src, int *type, void *nbytes,
                 size_t width);
int mpl_wait_w(int *msgid, void *nbytes, size_t width);
int mpl_probe_w(int *src, int *type, void *nbytes, size_t width);
/* The mp_ forms whose lengths are passed by reference (lw: the width of *len). */
int mpl_mp_bsend_w(void *buf, const void *len, size_t lw, int *dest, int *type);
int mpl_mp_brecv_w(void *buf, const void *len, size_t lw, int *src, int *type, void *nbytes,
                   size_t width);
int mpl_mp_bsendrecv_w(void *sbuf, const void *slen, size_t slw, int *dest, int *stype, void *rbuf,
                       const void *rlen, size_t rlw, int *src, int *rtype, void *nbytes,
                       size_t width);
int mpl_mp_send_w(void *buf, const void *len, size_t lw, int *dest, int *type, int *msgid);
int mpl_mp_recv_w(void *buf, const void *len, size_t lw, int *src, int *type, int *msgid);
int mpl_mp_rcvncall_w(void *buf, const void *len, size_t lw, int *src, int *type, int *msgid,
                      mpl_handler_fn handler);

/* The Fortran binding's names, called from C by real programs (TCGMSG, Global
 * Arrays): every argument by reference, INTEGERs as int (the Fortran default
 * INTEGER), no extra return-code argument: each returns what its mpc_ form
 * returns. The point-to-point lengths (len, nbytes) may also be long or size_t
 * variables (the macros at the end of this header). */
int mp_environ(int *numtask, int *taskid);
int mp_task_query(int *buf, int *nelem, int *qtype);
int mp_task_set(int *buf, int *nelem, int *stype);
int mp_stopall(int *errcode);
int mp_bsend(void *buf, int *len, int *dest, int *type);
int mp_brecv(void *buf, int *len, int *src, int *type, int *nbytes);
int mp_bsendrecv(void *sbuf, int *slen, int *dest, int *stype, void *rbuf, int *rlen, int *src,
                 int *rtype, int *nbytes);
int mp_send(void *buf, int *len, int *dest, int *type, int *msgid);
int mp_recv(void *buf, int *len, int *src, int *type, int *msgid);
int mp_status(int *msgid);
int mp_wait(int *msgid, int *nbytes);
int mp_probe(int *src, int *type, int *nbytes);
int mp_rcvncall(void *buf, int *len, int *src, int *type, int *msgid, mpl_handler_fn handler);
int mp_lockrnc(int *state, int *oldstate);
int mp_group(int *gsize, int glist[], int *label, int *gid);
int mp_partition(int *parent_gid, int *key, int *label, int *gid);
int mp_getsize(int *gsize, int *gid);
int mp_getrank(int *rank, int *taskid, int *gid);
int mp_gettaskid(int *rank, int *taskid, int *gid);
int mp_getlabel(int *label, int *gid);
int mp_sync(int *gid);
int mp_bcast(void *buf, int *msglen, int *root, int *gid);
int mp_reduce(void *sendbuf, void *recvbuf, int *msglen, int *root, mpl_reduce_fn func, int *gid);
int mp_combine(void *sendbuf, void *recvbuf, int *msglen, mpl_reduce_fn func, int *gid);
int mp_prefix(void *sendbuf, void *recvbuf, int *msglen, mpl_reduce_fn func, int *gid);
int mp_gather(void *sendbuf, void *recvbuf, int *blklen, int *root, int *gid);
int mp_scatter(void *sendbuf, void *recvbuf, int *blklen, int *root, int *gid);
int mp_concat(void *sendbuf, void *recvbuf, int *blklen, int *gid);
int mp_index(void *sendbuf, void *recvbuf, int *blklen, int *gid);
int mp_shift(void *sendbuf, void *recvbuf, int *msglen, int *step, int *flag, int *gid);

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif

#if !defined(MPL_INT_LENGTHS) && !defined(COURIER_MPL_IMPL)
#define MPL_SIZEOF_(p) sizeof(*(p))
#define mpc_brecv(buf, len, src, type, nbytes)                                                     \
    mpl_brecv_w((char *)(buf), (len), (src), (type), (nbytes), MPL_SIZEOF_(nbytes))
/* mpc_bsendrecv takes 9 arguments (a receive type of its own) or IBM's 8. */
#define MPL_PICK9_(a1, a2, a3, a4, a5, a6, a7, a8, a9, f, ...) f
#define mpc_bsendrecv(...) MPL_PICK9_(__VA_ARGS__, MPL_BSR9_, MPL_BSR8_, )(__VA_ARGS__)
#define MPL_BSR9_(sbuf, slen, dest, stype, rbuf, rlen, src, rtype, nbytes)                         \
    mpl_bsendrecv_w((char *)(sbuf), (slen), (dest), (stype), (char *)(rbuf), (rlen), (src),        \
                    (rtype), (nbytes), MPL_SIZEOF_(nbytes))
#define MPL_BSR8_(sbuf, slen, dest, type, rbuf, rlen, src, nbytes)                                 \
    mpl_bsendrecv1_w((char *)(sbuf), (slen), (dest), (type), (char *)(rbuf), (rlen), (src),        \
                     (nbytes), MPL_SIZEOF_(nbytes))
#define mpc_bvrecv(buf, blknum, blklen, stride, src, type, nbytes)                                 \
    mpl_bvrecv_w((char *)(buf), (blknum), (blklen), (stride), (src), (type), (nbytes),             \
                 MPL_SIZEOF_(nbytes))
#define mpc_wait(msgid, nbytes) mpl_wait_w((msgid), (nbytes), MPL_SIZEOF_(nbytes))
#define mpc_probe(src, type, nbytes) mpl_probe_w((src), (type), (nbytes), MPL_SIZEOF_(nbytes))
#define mp_bsend(buf, len, dest, type)                                                             \
    mpl_mp_bsend_w((buf), (len), MPL_SIZEOF_(len), (dest), (type))
#define mp_brecv(buf, len, src, type, nbytes)                                                      \
    mpl_mp_brecv_w((buf), (len), MPL_SIZEOF_(len), (src), (type), (nbytes), MPL_SIZEOF_(nbytes))
#define mp_bsendrecv(sbuf, slen, dest, stype, rbuf, rlen, src, rtype, nbytes)                      \
    mpl_mp_bsendrecv_w((sbuf), (slen), MPL_SIZEOF_(slen), (dest), (stype), (rbuf), (rlen),         \
                       MPL_SIZEOF_(rlen), (src), (rtype), (nbytes), MPL_SIZEOF_(nbytes))
#define mp_send(buf, len, dest, type, msgid)                                                       \
    mpl_mp_send_w((buf), (len), MPL_SIZEOF_(len), (dest), (type), (msgid))
#define mp_recv(buf, len, src, type, msgid)                                                        \
    mpl_mp_recv_w((buf), (len), MPL_SIZEOF_(len), (src), (type), (msgid))
#define mp_rcvncall(buf, len, src, type, msgid, handler)                                           \
    mpl_mp_rcvncall_w((buf), (len), MPL_SIZEOF_(len), (src), (type), (msgid), (handler))
#define mp_wait(msgid, nbytes) mpl_wait_w((msgid), (nbytes), MPL_SIZEOF_(nbytes))
#define mp_probe(src, type, nbytes) mpl_probe_w((src), (type), (nbytes), MPL_SIZEOF_(nbytes))
#endif
#endif
