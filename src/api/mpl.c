/* The IBM SP2 MPL interface (seed 003, C binding mpc_*): argument checks, MPL
 * naming and semantics, translated into engine and collective-layer calls. No
 * matching, buffering or collective algorithm lives here.
 *
 * Contexts: MPL point-to-point traffic, group set-up, ALLGRP and every group
 * created later each have a context of their own (from MPL_CTX_BASE up), so MPL
 * never matches NX/2 traffic and collectives never match point-to-point. A new
 * group's context is the largest "next free context" among its members, so it
 * is fresh for every one of them; disjoint groups made by one partition share
 * it safely since they never talk to each other.
 *
 * Invariants:
 *  - every entry point validates its arguments before touching the engine: a
 *    bad call ends the job with one line (default) or returns -1 with mperrno,
 *    and changes nothing either way;
 *  - a msgid names one slot of this file's table (index + generation); the
 *    slot lives from the nonblocking call until mpc_wait / mpc_status retires it
 *    (receive-and-call: until its handler returns), and the source / type the
 *    caller asked to have written back are written exactly once, at retirement
 *    (receive-and-call: before the handler runs);
 *  - the table and groups are touched only under the engine lock; handlers run
 *    without it, on the progress thread. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../coll/coll.h"
#include "../coll/coll_split.h"
#include "mpi_check_mpl.h"
#define COURIER_MPL_IMPL /* the int entry points themselves, not job->mpl->h's macros */
#include "courier/mpl.h"

int mperrno;

enum {
    MPL_CTX_BASE = 0x1000,
    CTX_P2P = MPL_CTX_BASE,
    CTX_SETUP = MPL_CTX_BASE + 1,
    CTX_ALLGRP = MPL_CTX_BASE + 2,
    CTX_FIRST_FREE = MPL_CTX_BASE + 3
};

#define MSG_REUSE_MIN 256 /* free slots before one is reused */

enum { M_FREE = 0, M_SEND, M_RECV, M_RNC };

typedef struct mpl_msg {
    cr_idslot id; /* its slot in job->mpl->msgs: the msgid's index and generation */
    uint8_t state;
    uint8_t fired; /* receive-and-call: the message is in and the handler due */
    cr_req *r;
    int *src_out, *type_out; /* a receive's wildcards, written at completion (else NULL) */
    /* Completed by mpc_status, slot free: one mpc_wait on the id may still
     * take its count (status_n) until the slot is reused. */
    bool by_status;
    int status_n;
    char *tmp; /* strided: packed copy (send) or staging buffer (receive) */
    char *ubuf;
    int blknum, blklen, stride;
    void (*handler)(int *);
    int nbytes; /* receive-and-call: bytes received */
} mpl_msg;

typedef struct mpl_grp {
    bool used;
    int label;
    int *ranks;
    cr_group g;
} mpl_grp;

/* The interface's state, reached from the job (job->mpl, made by the first
 * call; changed only under the engine lock). */
struct cr_mpl {
    bool overflow_err;
    bool errors_fatal;
    int next_ctx;
    cr_idt msgs; /* msgids (core/idtable.h): a slot never moves (waits hold it) */
    mpl_grp *grps;
    int ngrps;
    bool check; /* courier run --check: collectives agree first (mpi_check_mpl.h) */
};

/* ---- entry, exit, errors ------------------------------------------------- */

static cr_job *mpl_enter(const char *call)
{
    cr_job *job = cr_job_get();
    cr_lock(job);
    cr_call_enter(job, call);
    if (!job->mpl) {
        struct cr_mpl *m = calloc(1, sizeof *m);
        if (!m || !(m->grps = calloc(8, sizeof *m->grps)))
            cr_fatal(job, "mpl", "out of memory for the interface's state");
        m->errors_fatal = true;
        m->next_ctx = CTX_FIRST_FREE;
        cr_idt_init(&m->msgs, sizeof(mpl_msg), MSG_REUSE_MIN);
        m->check = cr_check_coll_wanted();
        m->ngrps = 1;
        m->grps[0] = (mpl_grp){
            .used = true,
            .g = {.size = job->size, .me = job->rank, .ctx = CTX_ALLGRP, .area = CR_AREA_MPL}};
        job->mpl = m;
    }
    return job;
}

static int leave(cr_job *job, int rc)
{
    cr_call_leave(job);
    cr_unlock(job);
    return rc;
}

/* Report a bad call: fatal by default, else -1 with mperrno (caller unlocks). */
__attribute__((format(printf, 4, 5))) static int fail(cr_job *job, const char *call, int code,
                                                      const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (job->mpl->errors_fatal) cr_fatal(job, call, "%s", msg);
    mperrno = code;
    return -1;
}

static int check_len(cr_job *job, const char *call, const void *buf, int len, const char *what)
{
    if (len < 0) return fail(job, call, MPL_EINVAL, "%s %d is negative", what, len);
    if (len > 0 && !buf) return fail(job, call, MPL_EBUF, "buffer is NULL but %s is %d", what, len);
    return 0;
}

static int check_task(cr_job *job, const char *call, int task, const char *what)
{
    if (task < 0 || task >= job->size)
        return fail(job, call, MPL_ETASK, "%s %d is not a task: tasks are 0..%d", what, task,
                    job->size - 1);
    return 0;
}

static int check_type(cr_job *job, const char *call, int type)
{
    if (type < 0)
        return fail(job, call, MPL_EINVAL, "type %d is invalid: message types are 0..%d", type,
                    INT_MAX);
    return 0;
}

static int check_ptr(cr_job *job, const char *call, const void *p, const char *what)
{
    if (!p) return fail(job, call, MPL_EINVAL, "%s is NULL", what);
    return 0;
}

/* Strided buffer: blknum blocks of blklen bytes, stride apart. */
static int check_strided(cr_job *job, const char *call, const void *buf, int blknum, int blklen,
                         int stride)
{
    if (blknum < 0) return fail(job, call, MPL_EINVAL, "number of blocks %d is negative", blknum);
    if (blklen < 0) return fail(job, call, MPL_EINVAL, "block size %d is negative", blklen);
    if (blknum > 1 && stride < blklen)
        return fail(job, call, MPL_EINVAL,
                    "block size %d is larger than the stride %d: blocks would overlap", blklen,
                    stride);
    if ((long long)blknum * blklen > INT_MAX)
        return fail(job, call, MPL_EINVAL, "%d blocks of %d bytes exceed %d bytes", blknum, blklen,
                    INT_MAX);
    if (blknum && blklen && !buf)
        return fail(job, call, MPL_EBUF, "buffer is NULL but holds %d blocks of %d bytes", blknum,
                    blklen);
    return 0;
}

static bool contiguous(int blknum, int blklen, int stride)
{
    return blknum <= 1 || stride == blklen;
}

static void pack(char *dst, const char *src, int blknum, int blklen, int stride)
{
    for (int i = 0; i < blknum; i++)
        memcpy(dst + (size_t)i * blklen, src + (size_t)i * stride, blklen);
}

static void unpack(char *dst, const char *src, size_t n, int blklen, int stride)
{
    for (size_t off = 0, i = 0; off < n; off += (size_t)blklen, i++) {
        size_t l = n - off < (size_t)blklen ? n - off : (size_t)blklen;
        memcpy(dst + i * (size_t)stride, src + off, l);
    }
}

/* A receive selector from MPL's source and type (DONTCARE: any). */
static int make_sel(cr_job *job, const char *call, const int *src, const int *type, cr_sel *s)
{
    if (check_ptr(job, call, src, "source pointer") || check_ptr(job, call, type, "type pointer"))
        return -1;
    *s = (cr_sel){.src = CR_ANY_SOURCE, .ctx = CTX_P2P, .tag_mode = CR_TAG_ANY};
    if (*src != DONTCARE) {
        if (check_task(job, call, *src, "source")) return -1;
        s->src = *src;
    }
    if (*type != DONTCARE) {
        if (check_type(job, call, *type)) return -1;
        s->tag_mode = CR_TAG_EXACT;
        s->tag = *type;
    }
    return 0;
}

/* ---- task management ----------------------------------------------------- */

int mpc_environ(int *numtask, int *taskid)
{
    cr_job *job = mpl_enter("mpc_environ");
    if (check_ptr(job, "mpc_environ", numtask, "numtask") ||
        check_ptr(job, "mpc_environ", taskid, "taskid"))
        return leave(job, -1);
    *numtask = job->size;
    *taskid = job->rank;
    return leave(job, 0);
}

int mpc_task_query(int *buf, int nelem, int qtype)
{
    const char *call = "mpc_task_query";
    cr_job *job = mpl_enter(call);
    int want = qtype == MPL_Q_WILDCARDS                         ? 4
               : qtype == MPL_Q_TYPES || qtype == MPL_Q_BUFFERS ? 2
                                                                : 1;
    if (qtype < MPL_Q_BUFFERS || qtype > MPL_Q_ERRORS)
        return leave(job, fail(job, call, MPL_EQTYPE, "query type %d is unknown (1..5)", qtype));
    if (nelem < want)
        return leave(job, fail(job, call, MPL_EQTYPE, "query type %d needs %d elements, got %d",
                               qtype, want, nelem));
    if (check_ptr(job, call, buf, "buffer")) return leave(job, -1);
    switch (qtype) {
    case MPL_Q_BUFFERS: {
        size_t e = job->size > 1 ? cr_eager(job, (job->rank + 1) % job->size) : 0;
        buf[0] = e > INT_MAX ? INT_MAX : (int)e;
        buf[1] = job->unexp_limit > INT_MAX ? INT_MAX : (int)job->unexp_limit;
        break;
    }
    case MPL_Q_TYPES:
        buf[0] = 0;
        buf[1] = INT_MAX;
        break;
    case MPL_Q_WILDCARDS:
        buf[0] = DONTCARE;
        buf[1] = ALLMSG;
        buf[2] = NULLTASK;
        buf[3] = ALLGRP;
        break;
    case MPL_Q_OVERFLOW:
        buf[0] = job->mpl->overflow_err;
        break;
    case MPL_Q_ERRORS:
        buf[0] = job->mpl->errors_fatal;
        break;
    }
    return leave(job, 0);
}

int mpc_task_set(int *buf, int nelem, int stype)
{
    const char *call = "mpc_task_set";
    cr_job *job = mpl_enter(call);
    if (stype != MPL_SET_OVERFLOW_ERROR && stype != MPL_SET_ERRORS_FATAL)
        return leave(job, fail(job, call, MPL_EQTYPE, "set type %d is unknown (%d or %d)", stype,
                               MPL_SET_OVERFLOW_ERROR, MPL_SET_ERRORS_FATAL));
    if (nelem < 1)
        return leave(
            job, fail(job, call, MPL_EQTYPE, "set type %d needs 1 element, got %d", stype, nelem));
    if (check_ptr(job, call, buf, "buffer")) return leave(job, -1);
    if (buf[0] != 0 && buf[0] != 1)
        return leave(job, fail(job, call, MPL_EINVAL, "value %d is invalid: use 0 or 1", buf[0]));
    if (stype == MPL_SET_OVERFLOW_ERROR)
        job->mpl->overflow_err = buf[0];
    else
        job->mpl->errors_fatal = buf[0];
    return leave(job, 0);
}

int mpc_stopall(int errcode)
{
    cr_job *job = cr_job_get();
    fflush(stdout);
    fprintf(stderr, "courier: rank %d: mpc_stopall(%d): ending every task\n", job->rank, errcode);
    fflush(stderr);
    cr_abort_exit(job, errcode);
}

/* ---- message ids --------------------------------------------------------- */

static mpl_msg *msg_at(struct cr_mpl *l, int i)
{
    return cr_idt_at(&l->msgs, (uint32_t)i);
}

/* A slot for a new operation. Freed slots wait in a queue and are reused only
 * once MSG_REUSE_MIN of them are free, so a program that waits for one message
 * at a time still cycles through many slots, and an id's generation comes round
 * again only after about MSG_REUSE_MIN * 1023 operations: a stale msgid is
 * reported, never taken for a newer operation. */
static mpl_msg *msg_new(cr_job *job, const char *call, uint8_t state, int *id)
{
    mpl_msg *m = cr_idt_alloc(&job->mpl->msgs);
    if (!m && cr_idt_full(&job->mpl->msgs))
        cr_fatal(job, call, "more than %u operations pending; wait for some first",
                 (unsigned)CR_ID_MAX_SLOTS);
    if (!m) cr_fatal(job, call, "out of memory for message ids");
    *m = (mpl_msg){.id = m->id, .state = state};
    *id = (int)cr_idt_id(m);
    return m;
}

static void msg_free(struct cr_mpl *l, mpl_msg *m)
{
    free(m->tmp);
    m->tmp = NULL;
    m->state = M_FREE;
    cr_idt_free(&l->msgs, m);
}

enum { ID_UNKNOWN, ID_ACTIVE, ID_RETIRED };

static int msg_find(struct cr_mpl *l, int id, mpl_msg **out)
{
    if (id <= 0) return ID_UNKNOWN;
    void *slot = NULL;
    enum cr_id_state how = cr_idt_find(&l->msgs, (uint32_t)id, &slot);
    *out = slot;
    return how == CR_ID_LIVE ? ID_ACTIVE : how == CR_ID_RETIRED ? ID_RETIRED : ID_UNKNOWN;
}

static bool msg_done(const mpl_msg *m)
{
    return m->state == M_RNC ? m->fired : m->r->done;
}

/* Retire a completed operation: write back what the caller asked for. */
static int msg_finish(cr_job *job, mpl_msg *m)
{
    int n;
    if (m->state == M_RNC) {
        n = m->nbytes;
    } else if (m->state == M_SEND) {
        n = (int)m->r->cap;
        cr_req_release(job, m->r);
    } else {
        n = (int)m->r->st.count;
        if (m->tmp) unpack(m->ubuf, m->tmp, m->r->st.count, m->blklen, m->stride);
        if (m->src_out) *m->src_out = m->r->st.src;
        if (m->type_out) *m->type_out = m->r->st.tag;
        cr_req_release(job, m->r);
    }
    msg_free(job->mpl, m);
    return n;
}

static bool one_done(void *arg)
{
    return msg_done(arg);
}

/* Pending operations mpc_wait's wildcards cover (not receive-and-call). */
static bool waitable(const mpl_msg *m)
{
    return m->state == M_SEND || m->state == M_RECV;
}

/* A wildcard wait's question (any_done): its table, and the slot it found. */
typedef struct any_wait {
    struct cr_mpl *l;
    int which;
} any_wait;

static bool any_done(void *arg)
{
    any_wait *w = arg;
    for (int i = 0; i < (int)w->l->msgs.n; i++)
        if (waitable(msg_at(w->l, i)) && msg_done(msg_at(w->l, i))) {
            w->which = i;
            return true;
        }
    return false;
}

/* What a wildcard wait reports to the watchdog: the oldest pending operation. */
static const cr_req *first_pending(struct cr_mpl *l)
{
    for (int i = 0; i < (int)l->msgs.n; i++)
        if (waitable(msg_at(l, i)) && !msg_done(msg_at(l, i))) return msg_at(l, i)->r;
    return NULL;
}

/* ---- point-to-point ------------------------------------------------------ */

static int send_checks(cr_job *job, const char *call, const void *buf, int len, int dest, int type)
{
    if (check_len(job, call, buf, len, "length") || check_task(job, call, dest, "destination") ||
        check_type(job, call, type))
        return -1;
    return 0;
}

int mpc_bsend(void *buf, int len, int dest, int type)
{
    cr_job *job = mpl_enter("mpc_bsend");
    if (send_checks(job, "mpc_bsend", buf, len, dest, type)) return leave(job, -1);
    cr_send(job, "mpc_bsend", dest, CTX_P2P, type, buf, (size_t)len);
    return leave(job, 0);
}

static cr_req *post_recv(cr_job *job, const char *call, const cr_sel *s, void *buf, size_t len)
{
    return cr_irecv_call(job, call, s, buf, len, !job->mpl->overflow_err, NULL, NULL);
}

static int brecv(cr_job *job, const char *call, char *buf, size_t len, const cr_sel *s, int *src,
                 int *type, int *nbytes)
{
    cr_req *r = post_recv(job, call, s, buf, len);
    cr_req_wait(job, r);
    *src = r->st.src;
    *type = r->st.tag;
    int n = (int)r->st.count;
    if (nbytes) *nbytes = n;
    cr_req_release(job, r);
    return n;
}

int mpc_brecv(void *buf, int len, int *src, int *type, int *nbytes)
{
    const char *call = "mpc_brecv";
    cr_job *job = mpl_enter(call);
    cr_sel s;
    if (check_len(job, call, buf, len, "length") || make_sel(job, call, src, type, &s) ||
        check_ptr(job, call, nbytes, "nbytes"))
        return leave(job, -1);
    brecv(job, call, buf, (size_t)len, &s, src, type, nbytes);
    return leave(job, 0);
}

int mpc_bsendrecv(void *sbuf, int slen, int dest, int stype, void *rbuf, int rlen, int *src,
                  int *rtype, int *nbytes)
{
    const char *call = "mpc_bsendrecv";
    cr_job *job = mpl_enter(call);
    cr_sel s;
    if (send_checks(job, call, sbuf, slen, dest, stype) ||
        check_len(job, call, rbuf, rlen, "receive length") || make_sel(job, call, src, rtype, &s) ||
        check_ptr(job, call, nbytes, "nbytes"))
        return leave(job, -1);
    cr_req *r = post_recv(job, call, &s, rbuf, (size_t)rlen); /* first: no deadlock */
    cr_send(job, call, dest, CTX_P2P, stype, sbuf, (size_t)slen);
    cr_req_wait(job, r);
    *src = r->st.src;
    *rtype = r->st.tag;
    *nbytes = (int)r->st.count;
    cr_req_release(job, r);
    return leave(job, 0);
}

int mpc_bvsend(void *buf, int blknum, int blklen, int stride, int dest, int type)
{
    const char *call = "mpc_bvsend";
    cr_job *job = mpl_enter(call);
    if (check_strided(job, call, buf, blknum, blklen, stride) ||
        check_task(job, call, dest, "destination") || check_type(job, call, type))
        return leave(job, -1);
    size_t len = (size_t)blknum * (size_t)blklen;
    if (contiguous(blknum, blklen, stride)) {
        cr_send(job, call, dest, CTX_P2P, type, buf, len);
    } else {
        char *tmp = malloc(len);
        if (!tmp)
            return leave(job, fail(job, call, MPL_ENOMEM, "out of memory for %zu bytes", len));
        pack(tmp, buf, blknum, blklen, stride);
        cr_send(job, call, dest, CTX_P2P, type, tmp, len);
        free(tmp);
    }
    return leave(job, 0);
}

int mpc_bvrecv(void *buf, int blknum, int blklen, int stride, int *src, int *type, int *nbytes)
{
    const char *call = "mpc_bvrecv";
    cr_job *job = mpl_enter(call);
    cr_sel s;
    if (check_strided(job, call, buf, blknum, blklen, stride) ||
        make_sel(job, call, src, type, &s) || check_ptr(job, call, nbytes, "nbytes"))
        return leave(job, -1);
    size_t len = (size_t)blknum * (size_t)blklen;
    if (contiguous(blknum, blklen, stride)) {
        brecv(job, call, buf, len, &s, src, type, nbytes);
    } else {
        char *tmp = malloc(len);
        if (!tmp)
            return leave(job, fail(job, call, MPL_ENOMEM, "out of memory for %zu bytes", len));
        int n = brecv(job, call, tmp, len, &s, src, type, nbytes);
        unpack(buf, tmp, (size_t)n, blklen, stride);
        free(tmp);
    }
    return leave(job, 0);
}

static int isend_common(cr_job *job, const char *call, const char *buf, size_t len, char *tmp,
                        int dest, int type, int *msgid)
{
    int id;
    mpl_msg *m = msg_new(job, call, M_SEND, &id);
    m->tmp = tmp;
    m->r = cr_isend(job, call, dest, CTX_P2P, type, tmp ? tmp : buf, len);
    *msgid = id;
    return 0;
}

int mpc_send(void *buf, int len, int dest, int type, int *msgid)
{
    const char *call = "mpc_send";
    cr_job *job = mpl_enter(call);
    if (send_checks(job, call, buf, len, dest, type) || check_ptr(job, call, msgid, "msgid"))
        return leave(job, -1);
    return leave(job, isend_common(job, call, buf, (size_t)len, NULL, dest, type, msgid));
}

int mpc_vsend(void *buf, int blknum, int blklen, int stride, int dest, int type, int *msgid)
{
    const char *call = "mpc_vsend";
    cr_job *job = mpl_enter(call);
    if (check_strided(job, call, buf, blknum, blklen, stride) ||
        check_task(job, call, dest, "destination") || check_type(job, call, type) ||
        check_ptr(job, call, msgid, "msgid"))
        return leave(job, -1);
    size_t len = (size_t)blknum * (size_t)blklen;
    char *tmp = NULL;
    if (!contiguous(blknum, blklen, stride)) {
        tmp = malloc(len);
        if (!tmp)
            return leave(job, fail(job, call, MPL_ENOMEM, "out of memory for %zu bytes", len));
        pack(tmp, buf, blknum, blklen, stride);
    }
    return leave(job, isend_common(job, call, buf, len, tmp, dest, type, msgid));
}

/* Where a nonblocking receive writes back at completion: only the source and
 * type given as DONTCARE. A receive with its source and type given may be
 * posted with pointers to variables that are gone before it completes (an
 * N-body code's MPL layer did so on the SP2). */
static void write_back_wildcards(mpl_msg *m, int *src, int *type)
{
    m->src_out = *src == DONTCARE ? src : NULL;
    m->type_out = *type == DONTCARE ? type : NULL;
}

static int irecv_common(cr_job *job, const char *call, char *buf, size_t len, const cr_sel *s,
                        int *src, int *type, int *msgid, int blknum, int blklen, int stride)
{
    int id;
    char *tmp = NULL;
    if (!contiguous(blknum, blklen, stride)) {
        tmp = malloc(len ? len : 1);
        if (!tmp) return fail(job, call, MPL_ENOMEM, "out of memory for %zu bytes", len);
    }
    mpl_msg *m = msg_new(job, call, M_RECV, &id);
    m->tmp = tmp;
    m->ubuf = buf;
    m->blknum = blknum;
    m->blklen = blklen;
    m->stride = stride;
    write_back_wildcards(m, src, type);
    m->r = post_recv(job, call, s, tmp ? tmp : buf, len);
    *msgid = id;
    return 0;
}

int mpc_recv(void *buf, int len, int *src, int *type, int *msgid)
{
    const char *call = "mpc_recv";
    cr_job *job = mpl_enter(call);
    cr_sel s;
    if (check_len(job, call, buf, len, "length") || make_sel(job, call, src, type, &s) ||
        check_ptr(job, call, msgid, "msgid"))
        return leave(job, -1);
    return leave(job, irecv_common(job, call, buf, (size_t)len, &s, src, type, msgid, 1, len, len));
}

int mpc_vrecv(void *buf, int blknum, int blklen, int stride, int *src, int *type, int *msgid)
{
    const char *call = "mpc_vrecv";
    cr_job *job = mpl_enter(call);
    cr_sel s;
    if (check_strided(job, call, buf, blknum, blklen, stride) ||
        make_sel(job, call, src, type, &s) || check_ptr(job, call, msgid, "msgid"))
        return leave(job, -1);
    return leave(job, irecv_common(job, call, buf, (size_t)blknum * (size_t)blklen, &s, src, type,
                                   msgid, blknum, blklen, stride));
}

int mpc_status(int msgid)
{
    cr_job *job = mpl_enter("mpc_status");
    mpl_msg *m = NULL;
    int how = msg_find(job->mpl, msgid, &m);
    if (how == ID_UNKNOWN)
        return leave(job, fail(job, "mpc_status", MPL_EMSGID,
                               "msgid %d is unknown: no nonblocking call returned it", msgid));
    if (how == ID_RETIRED) return leave(job, MPL_INACTIVE);
    if (!msg_done(m)) cr_progress(job);
    if (!msg_done(m)) {
        if (m->state != M_RNC) cr_poll_missed(job, "mpc_status", &(cr_wait){.req = m->r});
        return leave(job, MPL_NOT_COMPLETED);
    }
    int n = msg_finish(job, m);
    m->by_status = true; /* the slot is free (poll-only programs never wait) */
    m->status_n = n;
    return leave(job, n);
}

int mpc_wait(int *msgid, int *nbytes)
{
    const char *call = "mpc_wait";
    cr_job *job = mpl_enter(call);
    if (check_ptr(job, call, msgid, "msgid") || check_ptr(job, call, nbytes, "nbytes"))
        return leave(job, -1);
    int id = *msgid;
    if (id == ALLMSG) {
        any_wait w = {job->mpl, 0};
        while (1) {
            bool pending = false;
            for (int i = 0; i < (int)w.l->msgs.n && !pending; i++)
                pending = waitable(msg_at(w.l, i));
            if (!pending) break;
            cr_wait_until(job, call, any_done, &w, first_pending(w.l));
            msg_finish(job, msg_at(w.l, w.which));
        }
        *nbytes = 0;
        return leave(job, 0);
    }
    if (id == DONTCARE) {
        any_wait w = {job->mpl, 0};
        bool pending = false;
        for (int i = 0; i < (int)w.l->msgs.n && !pending; i++) pending = waitable(msg_at(w.l, i));
        if (!pending)
            return leave(job, fail(job, call, MPL_ENOPEND,
                                   "msgid DONTCARE waits for any pending operation, but none is "
                                   "pending"));
        cr_wait_until(job, call, any_done, &w, first_pending(w.l));
        mpl_msg *m = msg_at(w.l, w.which);
        *msgid = (int)cr_idt_id(m);
        *nbytes = msg_finish(job, m);
        return leave(job, 0);
    }
    mpl_msg *m = NULL;
    int how = msg_find(job->mpl, id, &m);
    if (how == ID_RETIRED && m->by_status && m->id.gen == cr_id_gen((uint32_t)id)) {
        /* mpc_status said it completed: the wait returns its count at once */
        m->by_status = false;
        *nbytes = m->status_n;
        return leave(job, 0);
    }
    if (how != ID_ACTIVE)
        return leave(job, fail(job, call, MPL_EMSGID,
                               how == ID_UNKNOWN
                                   ? "msgid %d is unknown: no nonblocking call returned it"
                                   : "msgid %d is not pending: it completed and its count was "
                                     "taken (by mpc_wait, or by mpc_status and one mpc_wait after "
                                     "it), so do not wait on it again",
                               id));
    cr_wait_until(job, call, one_done, m, m->r);
    *nbytes = msg_finish(job, m);
    return leave(job, 0);
}

int mpc_probe(int *src, int *type, int *nbytes)
{
    const char *call = "mpc_probe";
    cr_job *job = mpl_enter(call);
    cr_sel s;
    if (make_sel(job, call, src, type, &s) || check_ptr(job, call, nbytes, "nbytes"))
        return leave(job, -1);
    cr_status st;
    if (cr_probe(job, &s, false, &st)) {
        *src = st.src;
        *type = st.tag;
        *nbytes = st.size > INT_MAX ? INT_MAX : (int)st.size;
    } else {
        *nbytes = -1;
        cr_poll_missed(job, call, &(cr_wait){.sel = &s});
    }
    return leave(job, 0);
}

/* ---- receive-and-call ---------------------------------------------------- */

/* Progress thread, engine lock not held: the message of msgid is in. */
static void rnc_fire(cr_job *job, void (*user)(void), const cr_status *st)
{
    int id = (int)(uintptr_t)user;
    mpl_msg *m = NULL;
    cr_lock(job);
    if (msg_find(job->mpl, id, &m) != ID_ACTIVE || m->state != M_RNC) {
        cr_unlock(job);
        return;
    }
    if (m->src_out) *m->src_out = st->src;
    if (m->type_out) *m->type_out = st->tag;
    m->nbytes = (int)st->count;
    m->fired = 1;
    void (*h)(int *) = m->handler;
    cr_unlock(job);
    int arg = id;
    h(&arg);
    cr_lock(job);
    if (msg_find(job->mpl, id, &m) == ID_ACTIVE)
        msg_free(job->mpl, m); /* the handler did not wait for it */
    cr_unlock(job);
}

int mpc_rcvncall(void *buf, int len, int *src, int *type, int *msgid, mpl_handler_fn handler)
{
    const char *call = "mpc_rcvncall";
    cr_job *job = mpl_enter(call);
    cr_sel s;
    if (check_len(job, call, buf, len, "length") || make_sel(job, call, src, type, &s) ||
        check_ptr(job, call, msgid, "msgid"))
        return leave(job, -1);
    if (!handler) return leave(job, fail(job, call, MPL_EFUNC, "handler is NULL"));
    cr_unlock(job);
    cr_handlers_start(job); /* without the lock: from now on every call takes it */
    cr_lock(job);
    int id;
    mpl_msg *m = msg_new(job, call, M_RNC, &id);
    m->handler = (void (*)(int *))handler;
    write_back_wildcards(m, src, type);
    *msgid = id;
    cr_irecv_call(job, call, &s, buf, (size_t)len, !job->mpl->overflow_err, rnc_fire,
                  (void (*)(void))(uintptr_t)id);
    return leave(job, 0);
}

int mpc_lockrnc(int state, int *oldstate)
{
    cr_job *job = mpl_enter("mpc_lockrnc");
    if (state != 0 && state != 1)
        return leave(job, fail(job, "mpc_lockrnc", MPL_EINVAL,
                               "state %d is invalid: use 1 to hold handlers back, 0 to let them "
                               "run",
                               state));
    if (check_ptr(job, "mpc_lockrnc", oldstate, "oldstate")) return leave(job, -1);
    cr_unlock(job); /* masking waits for a running handler, which may need the lock */
    *oldstate = cr_handlers_mask(job, state);
    return 0;
}

/* ---- groups -------------------------------------------------------------- */

static mpl_grp *grp_get(cr_job *job, const char *call, int gid)
{
    if (gid < 0 || gid >= job->mpl->ngrps || !job->mpl->grps[gid].used) {
        fail(job, call, MPL_EGROUP,
             "group id %d is unknown: use ALLGRP or an id from mpc_group/mpc_partition", gid);
        return NULL;
    }
    return &job->mpl->grps[gid];
}

static int grp_add(cr_job *job, const char *call, int *ranks, int size, int me, int ctx, int label)
{
    if (job->mpl->ngrps % 8 == 0) {
        mpl_grp *g = realloc(job->mpl->grps, (size_t)(job->mpl->ngrps + 8) * sizeof *g);
        if (!g) cr_fatal(job, call, "out of memory for groups");
        job->mpl->grps = g;
    }
    int gid = job->mpl->ngrps++;
    job->mpl->grps[gid] =
        (mpl_grp){.used = true,
                  .label = label,
                  .ranks = ranks,
                  .g = {.size = size, .me = me, .ranks = ranks, .ctx = (uint16_t)ctx}};
    return gid;
}

static int ctx_check(cr_job *job, const char *call, long ctx)
{
    if (ctx > 0xffff)
        cr_fatal(job, call, "out of contexts: more than %d groups were created",
                 0xffff - CTX_FIRST_FREE);
    job->mpl->next_ctx = (int)ctx + 1;
    return (int)ctx;
}

int mpc_group(int gsize, int glist[], int label, int *gid)
{
    const char *call = "mpc_group";
    cr_job *job = mpl_enter(call);
    if (gsize < 1 || gsize > job->size)
        return leave(job, fail(job, call, MPL_EINVAL, "group size %d is out of range 1..%d", gsize,
                               job->size));
    if (check_ptr(job, call, glist, "task list") || check_ptr(job, call, gid, "gid"))
        return leave(job, -1);
    int me = -1;
    char *seen = calloc((size_t)job->size, 1);
    if (!seen) cr_fatal(job, call, "out of memory");
    for (int i = 0; i < gsize; i++) {
        if (check_task(job, call, glist[i], "task in the list")) {
            free(seen);
            return leave(job, -1);
        }
        if (seen[glist[i]]++) {
            free(seen);
            return leave(job, fail(job, call, MPL_ETASK, "task %d is listed twice", glist[i]));
        }
        if (glist[i] == job->rank) me = i;
    }
    free(seen);
    if (me < 0)
        return leave(job, fail(job, call, MPL_ETASK,
                               "this task is not in the list: only the members call mpc_group"));
    int *ranks = malloc((size_t)gsize * sizeof *ranks);
    if (!ranks) cr_fatal(job, call, "out of memory");
    memcpy(ranks, glist, (size_t)gsize * sizeof *ranks);
    /* Agree on a context fresh for every member. */
    cr_group setup = {.size = gsize, .me = me, .ranks = ranks, .ctx = CTX_SETUP};
    long next = job->mpl->next_ctx;
    cr_redop mx = CR_OP_PREDEF(cr_op_max_long, long);
    cr_coll_allreduce(job, &setup, call, &next, &next, 1, &mx);
    *gid = grp_add(job, call, ranks, gsize, me, ctx_check(job, call, next), label);
    return leave(job, 0);
}

int mpc_partition(int parent_gid, int key, int label, int *gid)
{
    const char *call = "mpc_partition";
    cr_job *job = mpl_enter(call);
    mpl_grp *p = grp_get(job, call, parent_gid);
    if (!p || check_ptr(job, call, gid, "gid")) return leave(job, -1);
    int ctx, me, *ranks;
    int m = cr_split(job, &p->g, call, label, key, job->mpl->next_ctx, &ctx, &ranks, &me);
    for (int i = 0; i < m; i++) ranks[i] = cr_group_rank(&p->g, ranks[i]);
    *gid = grp_add(job, call, ranks, m, me, ctx_check(job, call, ctx), label);
    return leave(job, 0);
}

int mpc_getsize(int *gsize, int gid)
{
    cr_job *job = mpl_enter("mpc_getsize");
    mpl_grp *g = grp_get(job, "mpc_getsize", gid);
    if (!g || check_ptr(job, "mpc_getsize", gsize, "gsize")) return leave(job, -1);
    *gsize = g->g.size;
    return leave(job, 0);
}

int mpc_getrank(int *rank, int taskid, int gid)
{
    const char *call = "mpc_getrank";
    cr_job *job = mpl_enter(call);
    mpl_grp *g = grp_get(job, call, gid);
    if (!g || check_ptr(job, call, rank, "rank") || check_task(job, call, taskid, "task id"))
        return leave(job, -1);
    for (int i = 0; i < g->g.size; i++)
        if (cr_group_rank(&g->g, i) == taskid) {
            *rank = i;
            return leave(job, 0);
        }
    return leave(job,
                 fail(job, call, MPL_ETASK, "task %d is not a member of group %d", taskid, gid));
}

int mpc_gettaskid(int rank, int *taskid, int gid)
{
    const char *call = "mpc_gettaskid";
    cr_job *job = mpl_enter(call);
    mpl_grp *g = grp_get(job, call, gid);
    if (!g || check_ptr(job, call, taskid, "taskid")) return leave(job, -1);
    if (rank < 0 || rank >= g->g.size)
        return leave(job, fail(job, call, MPL_ETASK, "rank %d is out of range 0..%d of group %d",
                               rank, g->g.size - 1, gid));
    *taskid = cr_group_rank(&g->g, rank);
    return leave(job, 0);
}

int mpc_getlabel(int *label, int gid)
{
    cr_job *job = mpl_enter("mpc_getlabel");
    mpl_grp *g = grp_get(job, "mpc_getlabel", gid);
    if (!g || check_ptr(job, "mpc_getlabel", label, "label")) return leave(job, -1);
    *label = g->label;
    return leave(job, 0);
}

/* ---- reduction functions ------------------------------------------------- */

#define MPL_OPS(X)                                                                                 \
    X(s_vadd, float, a[i] + b[i])                                                                  \
    X(d_vadd, double, a[i] + b[i])                                                                 \
    X(i_vadd, int, (int)((unsigned)a[i] + (unsigned)b[i]))                                         \
    X(s_vmul, float, a[i] * b[i])                                                                  \
    X(d_vmul, double, a[i] * b[i])                                                                 \
    X(i_vmul, int, (int)((unsigned)a[i] * (unsigned)b[i]))                                         \
    X(s_vmax, float, a[i] > b[i] ? a[i] : b[i])                                                    \
    X(d_vmax, double, a[i] > b[i] ? a[i] : b[i])                                                   \
    X(i_vmax, int, a[i] > b[i] ? a[i] : b[i])                                                      \
    X(s_vmin, float, a[i] < b[i] ? a[i] : b[i])                                                    \
    X(d_vmin, double, a[i] < b[i] ? a[i] : b[i])                                                   \
    X(i_vmin, int, a[i] < b[i] ? a[i] : b[i])                                                      \
    X(i_vand, int, a[i] & b[i])                                                                    \
    X(i_vor, int, a[i] | b[i])                                                                     \
    X(i_vxor, int, a[i] ^ b[i])                                                                    \
    X(b_vand, char, (char)(a[i] & b[i]))                                                           \
    X(b_vor, char, (char)(a[i] | b[i]))                                                            \
    X(b_vxor, char, (char)(a[i] ^ b[i]))                                                           \
    X(l_vand, int, a[i] && b[i])                                                                   \
    X(l_vor, int, a[i] || b[i])                                                                    \
    X(l_vxor, int, !a[i] != !b[i])

/* The MPL-callable function and the collective layer's element-wise form. */
#define DEFINE_MPL_OP(name, T, expr)                                                               \
    static void op_##name(const void *lo, const void *hi, void *out, size_t n, const void *arg)    \
    {                                                                                              \
        (void)arg;                                                                                 \
        const T *a = lo, *b = hi;                                                                  \
        T *o = out;                                                                                \
        for (size_t i = 0; i < n; i++) o[i] = (T)(expr);                                           \
    }                                                                                              \
    void name(T in1[], T in2[], T out[], int *len)                                                 \
    {                                                                                              \
        op_##name(in1, in2, out, *len > 0 ? (size_t)*len / sizeof(T) : 0, NULL);                   \
    }
MPL_OPS(DEFINE_MPL_OP)

typedef struct predef {
    void (*mpl)(void);
    cr_op_fn fn;
    size_t elem;
} predef;

#define PREDEF_ENTRY(name, T, expr) {(void (*)(void))name, op_##name, sizeof(T)},
static const predef predefs[] = {MPL_OPS(PREDEF_ENTRY)};

typedef void (*user_fn)(void *, void *, void *, int *);

struct user_arg {
    user_fn f;
    int len;
};

/* A user function sees the whole vector at once: one element of len bytes. */
static void op_user(const void *lo, const void *hi, void *out, size_t n, const void *arg)
{
    const struct user_arg *u = arg;
    int len = u->len;
    if (n) u->f((void *)lo, (void *)hi, out, &len);
}

/* The reduction for func over msglen bytes; count is the number of elements. */
static int make_op(cr_job *job, const char *call, mpl_reduce_fn func, int msglen,
                   struct user_arg *ua, cr_redop *o, size_t *count)
{
    if (!func) return fail(job, call, MPL_EFUNC, "reduction function is NULL");
    for (size_t i = 0; i < sizeof predefs / sizeof *predefs; i++)
        if (predefs[i].mpl == (void (*)(void))func) {
            if ((size_t)msglen % predefs[i].elem)
                return fail(job, call, MPL_EINVAL,
                            "length %d is not a multiple of the %zu-byte elements of the "
                            "predefined function",
                            msglen, predefs[i].elem);
            *o = (cr_redop){predefs[i].fn, NULL, predefs[i].elem, true, true};
            *count = (size_t)msglen / predefs[i].elem;
            return 0;
        }
    ua->f = (user_fn)func;
    ua->len = msglen;
    *o = (cr_redop){op_user, ua, msglen ? (size_t)msglen : 1, false, false};
    *count = msglen ? 1 : 0;
    return 0;
}

/* ---- collective communication -------------------------------------------- */

/* courier run --check: the members agree on the call, root and length. */
static void agree(cr_job *job, const char *call, mpl_grp *g, int root, long len)
{
    if (__builtin_expect(!job->mpl->check, 1)) return;
    char gw[32];
    snprintf(gw, sizeof gw, "group %d", (int)(g - job->mpl->grps));
    cr_check_group_agree(job, &g->g, call, root, len, "task", gw);
}

static int check_root(cr_job *job, const char *call, const mpl_grp *g, int root)
{
    if (root < 0 || root >= g->g.size)
        return fail(job, call, MPL_ETASK, "root %d is not a rank of the group: ranks are 0..%d",
                    root, g->g.size - 1);
    return 0;
}

int mpc_sync(int gid)
{
    cr_job *job = mpl_enter("mpc_sync");
    mpl_grp *g = grp_get(job, "mpc_sync", gid);
    if (!g) return leave(job, -1);
    agree(job, "mpc_sync", g, -1, -1);
    cr_coll_barrier(job, &g->g, "mpc_sync");
    return leave(job, 0);
}

int mpc_bcast(void *buf, int msglen, int root, int gid)
{
    const char *call = "mpc_bcast";
    cr_job *job = mpl_enter(call);
    mpl_grp *g = grp_get(job, call, gid);
    if (!g || check_len(job, call, buf, msglen, "length") || check_root(job, call, g, root))
        return leave(job, -1);
    agree(job, call, g, root, msglen);
    cr_coll_bcast(job, &g->g, call, buf, (size_t)msglen, root);
    return leave(job, 0);
}

static int reduce_common(const char *call, void *sendbuf, void *recvbuf, int msglen, int root,
                         mpl_reduce_fn func, int gid, int kind)
{
    cr_job *job = mpl_enter(call);
    mpl_grp *g = grp_get(job, call, gid);
    if (!g || check_len(job, call, sendbuf, msglen, "length")) return leave(job, -1);
    if (kind == 0 && check_root(job, call, g, root)) return leave(job, -1);
    if ((kind != 0 || g->g.me == root) && check_len(job, call, recvbuf, msglen, "length"))
        return leave(job, -1);
    struct user_arg ua;
    cr_redop o;
    size_t count = 0;
    if (make_op(job, call, func, msglen, &ua, &o, &count)) return leave(job, -1);
    agree(job, call, g, kind == 0 ? root : -1, msglen);
    if (kind == 0)
        cr_coll_reduce(job, &g->g, call, sendbuf, recvbuf, count, &o, root);
    else if (kind == 1)
        cr_coll_allreduce(job, &g->g, call, sendbuf, recvbuf, count, &o);
    else
        cr_coll_scan(job, &g->g, call, sendbuf, recvbuf, count, &o);
    return leave(job, 0);
}

int mpc_reduce(void *sendbuf, void *recvbuf, int msglen, int root, mpl_reduce_fn func, int gid)
{
    return reduce_common("mpc_reduce", sendbuf, recvbuf, msglen, root, func, gid, 0);
}

int mpc_combine(void *sendbuf, void *recvbuf, int msglen, mpl_reduce_fn func, int gid)
{
    return reduce_common("mpc_combine", sendbuf, recvbuf, msglen, 0, func, gid, 1);
}

int mpc_prefix(void *sendbuf, void *recvbuf, int msglen, mpl_reduce_fn func, int gid)
{
    return reduce_common("mpc_prefix", sendbuf, recvbuf, msglen, 0, func, gid, 2);
}

/* Gather, scatter, concat, index: blocks of blklen bytes, one per member. */
static int blocks_common(const char *call, void *sendbuf, void *recvbuf, int blklen, int root,
                         int gid, int kind)
{
    cr_job *job = mpl_enter(call);
    mpl_grp *g = grp_get(job, call, gid);
    if (!g) return leave(job, -1);
    if (blklen < 0)
        return leave(job, fail(job, call, MPL_EINVAL, "block length %d is negative", blklen));
    bool rooted = kind == 0 || kind == 1;
    if (rooted && check_root(job, call, g, root)) return leave(job, -1);
    long long all = (long long)blklen * g->g.size;
    if (all > INT_MAX)
        return leave(job, fail(job, call, MPL_EINVAL, "%d blocks of %d bytes exceed %d bytes",
                               g->g.size, blklen, INT_MAX));
    agree(job, call, g, rooted ? root : -1, blklen);
    bool at_root = g->g.me == root;
    /* Which buffers hold one block and which hold one per member. */
    int slen = kind == 1 ? (at_root ? (int)all : 0) : kind == 3 ? (int)all : blklen;
    int rlen = kind == 0 ? (at_root ? (int)all : 0) : kind == 1 ? blklen : (int)all;
    if (check_len(job, call, sendbuf, slen, "send length") ||
        check_len(job, call, recvbuf, rlen, "receive length"))
        return leave(job, -1);
    size_t b = (size_t)blklen;
    switch (kind) {
    case 0:
        cr_coll_gather(job, &g->g, call, sendbuf, recvbuf, b, root);
        break;
    case 1:
        cr_coll_scatter(job, &g->g, call, sendbuf, recvbuf, b, root);
        break;
    case 2:
        cr_coll_allgather(job, &g->g, call, sendbuf, recvbuf, b);
        break;
    default:
        cr_coll_alltoall(job, &g->g, call, sendbuf, recvbuf, b);
    }
    return leave(job, 0);
}

int mpc_gather(void *sendbuf, void *recvbuf, int blklen, int root, int gid)
{
    return blocks_common("mpc_gather", sendbuf, recvbuf, blklen, root, gid, 0);
}

int mpc_scatter(void *sendbuf, void *recvbuf, int blklen, int root, int gid)
{
    return blocks_common("mpc_scatter", sendbuf, recvbuf, blklen, root, gid, 1);
}

int mpc_concat(void *sendbuf, void *recvbuf, int blklen, int gid)
{
    return blocks_common("mpc_concat", sendbuf, recvbuf, blklen, 0, gid, 2);
}

int mpc_index(void *sendbuf, void *recvbuf, int blklen, int gid)
{
    return blocks_common("mpc_index", sendbuf, recvbuf, blklen, 0, gid, 3);
}

int mpc_shift(void *sendbuf, void *recvbuf, int msglen, int step, int flag, int gid)
{
    const char *call = "mpc_shift";
    cr_job *job = mpl_enter(call);
    mpl_grp *g = grp_get(job, call, gid);
    if (!g || check_len(job, call, sendbuf, msglen, "length") ||
        check_len(job, call, recvbuf, msglen, "length"))
        return leave(job, -1);
    if (flag != 0 && flag != 1)
        return leave(job, fail(job, call, MPL_EINVAL,
                               "flag %d is invalid: 1 for a circular shift, 0 for end-off", flag));
    cr_coll_shift(job, &g->g, call, sendbuf, recvbuf, (size_t)msglen, step, flag == 1);
    return leave(job, 0);
}
