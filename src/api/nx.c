/* The NX/2 interface (seed 000 §4), with the Paragon's extended calls and the
 * iPSC's host process: argument checks, NX naming and semantics, translated
 * into engine and collective calls. No matching, buffering or algorithm lives
 * here.
 *
 * Invariants: every entry point validates its arguments before touching the
 * engine (a bad call ends the job with one line and changes nothing); the info
 * calls describe the last message received or probed by a call
 * without an info array (handlers get their own arguments instead); an x call
 * reports its message in its own info array only; a message id is released by
 * the msgwait, or the msgdone that returns 1, that completes it, and an irecvx
 * id fills its info array then.
 *
 * Host and nodes: in a job whose first program is an iPSC host program (one
 * rank; courier run finds its host calls and sets COURIER_NX_HOST), that rank
 * is the host, outside the cube: the nodes are ranks 1.., numbered 0..; the
 * host is node NX_HOST_NODE (myhost()) in every call that names a node, and
 * takes no part in global operations. Every node number crosses this file's
 * boundary through to_rank/to_node. Without a host, node n is rank n, and a
 * message to myhost() goes to the first rank of the job's first program.
 *
 * The underscore forms (_csend, _crecv, ...: the Paragon's) do what the plain
 * call does, but a bad argument or a message longer than the buffer returns -1
 * with errno set instead of ending the job: the argument checks (nx_fail) jump
 * back to the underscore call, which they can do because they all come before
 * the engine is touched; a longer message is cut to fit and found at the end. */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../coll/coll.h"
#include "../host/contexts.h"
#include "courier/cube.h"

/* myhost(): a number no node has (the iPSC/2's own value is not in the
 * sources at hand: docs/nx.md). */
#define NX_HOST_NODE (-32768L)

/* NX's own info array for the x calls, part of the interface like errno: the
 * library never reads or writes it except through the info a program passes. */
long msginfo[8];

/* An irecvx or an underscore irecv in flight: its message id, and where its
 * info goes (x: the info array, may be NULL; else the info calls'). Only an
 * underscore irecv allows a longer message (cut to fit, an error at its
 * msgwait), so one found cut is one of those. */
typedef struct nx_xrecv {
    uint64_t id;
    long *info;
    bool x;
} nx_xrecv;

/* The interface's state, reached from the job (job->nx, made by the first
 * call; changed only under the engine lock): the group of the global
 * operations (the nodes), the irecvx ids in flight, indexed by their request
 * slot (an entry counts only while its id matches), and the host process:
 * its rank (-1: none), and on the host the nodes whose end it has heard of. */
struct cr_nx {
    cr_group group;
    nx_xrecv *xrecv;
    uint32_t nxrecv;
    int host;     /* the host process's rank, or -1 */
    int off;      /* node n is rank n + off */
    int *members; /* with a host: the nodes' ranks, the group's members */
    bool *ended;  /* on the host: node i has ended (waitall) */
    int nended;
    jmp_buf *soft; /* the underscore call in its argument checks (NULL: a plain one) */
    char err[320]; /* what the last underscore call that failed said (nx_perror), */
    int err_no;    /* with the errno it set */
};

static void node_exit(void);

static struct cr_nx *nx_state(cr_job *job, const char *call)
{
    if (job->nx) return job->nx;
    struct cr_nx *nx = calloc(1, sizeof *nx);
    if (!nx) cr_fatal(job, call, "out of memory");
    const char *h = getenv("COURIER_NX_HOST");
    nx->host = h && *h == '1' && job->size > 1 ? 0 : -1; /* courier run puts the host first */
    if (nx->host < 0) {
        nx->group =
            (cr_group){.size = job->size, .me = job->rank, .ctx = CR_CTX_COLL, .area = CR_AREA_NX};
    } else {
        nx->off = 1;
        int n = job->size - 1;
        nx->members = malloc((size_t)n * sizeof *nx->members);
        nx->ended = calloc((size_t)n, sizeof *nx->ended);
        if (!nx->members || !nx->ended) cr_fatal(job, call, "out of memory");
        for (int i = 0; i < n; i++) nx->members[i] = i + 1;
        nx->group = (cr_group){.size = n,
                               .me = job->rank == nx->host ? -1 : job->rank - 1,
                               .ranks = nx->members,
                               .ctx = CR_CTX_COLL};
    }
    job->nx = nx;
    if (nx->host >= 0 && job->rank != nx->host)
        cr_ctx_atexit(node_exit); /* before the job's own exit handler runs: it drains */
    return nx;
}

/* soft: the underscore call's return point for a bad argument (NULL: plain). */
static cr_job *nx_enter_as(const char *call, jmp_buf *soft)
{
    cr_job *job = cr_job_get();
    cr_lock(job);
    cr_call_enter(job, call);
    nx_state(job, call)->soft = soft;
    return job;
}

static cr_job *nx_enter(const char *call)
{
    return nx_enter_as(call, NULL);
}

static void nx_leave(cr_job *job)
{
    job->nx->soft = NULL;
    cr_call_leave(job);
    cr_unlock(job);
}

/* An underscore call failed: its words kept for nx_perror, errno set. */
static void soft_error(cr_job *job, const char *op, int err, const char *msg)
{
    snprintf(job->nx->err, sizeof job->nx->err, "%s: %s", op, msg);
    job->nx->err_no = err;
    errno = err;
}

/* A bad argument: the job ends (plain calls), or the underscore call that is
 * checking it returns -1 with errno EINVAL. Only before the engine is touched. */
__attribute__((format(printf, 3, 4))) static void nx_fail(cr_job *job, const char *op,
                                                          const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!job->nx || !job->nx->soft) cr_fatal(job, op, "%s", msg);
    soft_error(job, op, EINVAL, msg);
    longjmp(*job->nx->soft, 1);
}

/* A receive of an underscore call found a message longer than its buffer
 * (cut to fit): -1 with errno EMSGSIZE; a plain call's ends the job. */
static long too_long(cr_job *job, const char *op, bool soft, const cr_status *st, size_t cap);

/* A type, type selector, node or process type as the 32-bit original had it.
 * A 64-bit program that calls NX/2 without <nx.h> passes its int arguments in
 * the low half of the register, and -1 (any type, all nodes), made unsigned on
 * the way, arrives as 4294967295: a value whose upper 32 bits are zero is taken
 * as the 32-bit value it was (-1, or a negative mask of types). No valid type
 * or node lies in 2^31..2^32-1, so nothing a 64-bit program means is lost. */
static long w32(long v)
{
    return ((unsigned long)v >> 32) == 0 ? (long)(int32_t)(uint32_t)v : v;
}

static int32_t check_type(cr_job *job, const char *op, long type)
{
    if (type < 0 || type > INT32_MAX)
        nx_fail(job, op, "type %ld is invalid: message types are 0..%d", type, INT32_MAX);
    return (int32_t)type;
}

static cr_sel typesel_to_sel(cr_job *job, const char *op, long typesel)
{
    typesel = w32(typesel);
    cr_sel s = {.src = CR_ANY_SOURCE, .ctx = CR_CTX_NX};
    if (typesel >= 0) {
        s.tag_mode = CR_TAG_EXACT;
        s.tag = check_type(job, op, typesel);
    } else if (typesel == -1) { /* every type but the force types */
        s.tag_mode = CR_TAG_BELOW;
        s.tag = (int32_t)FORCE_TYPE;
    } else {
        /* A mask: bits 0..30 select types 0..30, whether the caller built it in a
         * 32-bit or a 64-bit long. */
        s.tag_mode = CR_TAG_MASK;
        s.mask = (uint32_t)(unsigned long)typesel & 0x7fffffffu;
        if (!s.mask)
            nx_fail(job, op, "typesel %ld is a mask that selects no type (bits 0..30 are clear)",
                    typesel);
    }
    return s;
}

static void check_buf(cr_job *job, const char *op, const char *buf, long count)
{
    if (count < 0) nx_fail(job, op, "length %ld is negative", count);
    if (count > 0 && !buf) nx_fail(job, op, "buffer is NULL but length is %ld", count);
}

static int nnodes(const cr_job *job)
{
    return job->size - job->nx->off;
}

/* The rank of node n (a node, or the host's number: the host process, or
 * without one the first rank of the job's first program). */
static int to_rank(const cr_job *job, long n)
{
    if (n == NX_HOST_NODE) return job->nx->host >= 0 ? job->nx->host : job->host_rank;
    return (int)n + job->nx->off;
}

/* The node number of rank r (the host's: NX_HOST_NODE). */
static long to_node(const cr_job *job, int r)
{
    return r == job->nx->host ? NX_HOST_NODE : (long)r - job->nx->off;
}

static bool is_host_node(long node)
{
    return node == NX_HOST_NODE;
}

static void check_node(cr_job *job, const char *op, long node, long pid, int allow_all)
{
    int n = nnodes(job);
    if (!(node >= 0 && node < n) && !(allow_all && node == -1) && !is_host_node(node))
        nx_fail(job, op,
                "node %ld is out of range: nodes are 0..%d%s, and the host, myhost() = %ld", node,
                n - 1, allow_all ? " (or -1 for all others)" : "", NX_HOST_NODE);
    if (pid < 0) nx_fail(job, op, "pid %ld is invalid: each node runs process 0", pid);
}

static void check_nodesel(cr_job *job, const char *op, long nodesel, long ptypesel)
{
    int n = nnodes(job);
    if (!(nodesel >= -1 && nodesel < n) && !is_host_node(nodesel))
        nx_fail(job, op,
                "node %ld is out of range: nodes are 0..%d (or -1 for any), and the host, "
                "myhost() = %ld",
                nodesel, n - 1, NX_HOST_NODE);
    if (ptypesel < -1)
        nx_fail(job, op, "ptype %ld is invalid: use -1 for any or a process type >= 0", ptypesel);
}

/* Global operations are the nodes': the host process takes no part. */
static void check_node_call(cr_job *job, const char *op)
{
    if (job->rank == job->nx->host)
        nx_fail(job, op,
                "the host process takes no part in global operations: they are the nodes' "
                "(call %s in the node program)",
                op);
}

static void set_info(cr_job *job, const cr_status *st)
{
    job->last = *st;
}

/* What an x call found goes to its info array only (NULL: nowhere). */
static void set_xinfo(const cr_job *job, long *info, const cr_status *st)
{
    if (!info) return;
    info[0] = st->tag;
    info[1] = (long)st->count;
    info[2] = to_node(job, st->src);
    info[3] = 0; /* the process type: every courier process is 0 */
}

/* ---- blocking ------------------------------------------------------------ */

/* A send reports its own message: type, count, destination node, process type. */
static void sent_info(long *info, long type, long count, long node)
{
    if (!info) return;
    info[0] = w32(type);
    info[1] = count;
    info[2] = w32(node);
    info[3] = 0;
}

/* info: an x send's (NULL: none). */
static long send_as(const char *op, long type, char *buf, long count, long node, long pid,
                    long info[], jmp_buf *soft)
{
    type = w32(type), node = w32(node), pid = w32(pid);
    cr_job *job = nx_enter_as(op, soft);
    int32_t t = check_type(job, op, type);
    check_buf(job, op, buf, count);
    check_node(job, op, node, pid, 1);
    if (node != -1) {
        cr_send(job, op, to_rank(job, node), CR_CTX_NX, t, buf, (size_t)count);
    } else { /* every other node (not the host) */
        for (int p = job->nx->off; p < job->size; p++)
            if (p != job->rank) cr_send(job, op, p, CR_CTX_NX, t, buf, (size_t)count);
    }
    nx_leave(job);
    sent_info(info, type, count, node);
    return 0;
}

void csend(long type, char *buf, long count, long node, long pid)
{
    send_as("csend", type, buf, count, node, pid, NULL, NULL);
}

static cr_sel xsel(cr_job *job, const char *op, long typesel, long nodesel, long ptypesel);

/* The selector of crecv (x false) or crecvx and its kin. */
static cr_sel sel_as(cr_job *job, const char *op, bool x, long typesel, long nodesel, long ptypesel)
{
    return x ? xsel(job, op, typesel, nodesel, ptypesel) : typesel_to_sel(job, op, typesel);
}

/* What a receive or probe found goes to info (an x call's) or to the info calls. */
static void found(cr_job *job, bool x, long *info, const cr_status *st)
{
    if (x)
        set_xinfo(job, info, st);
    else
        set_info(job, st);
}

static long recv_as(const char *op, bool x, long typesel, char *buf, long count, long nodesel,
                    long ptypesel, long info[], jmp_buf *soft)
{
    cr_job *job = nx_enter_as(op, soft);
    cr_sel s = sel_as(job, op, x, typesel, nodesel, ptypesel);
    check_buf(job, op, buf, count);
    cr_status st;
    cr_recv_trunc(job, op, &s, buf, (size_t)count, soft != NULL, &st);
    found(job, x, info, &st);
    long rc = st.size > st.count ? too_long(job, op, soft != NULL, &st, (size_t)count) : 0;
    nx_leave(job);
    return rc;
}

void crecv(long typesel, char *buf, long count)
{
    recv_as("crecv", false, typesel, buf, count, -1, -1, NULL, NULL);
}

static long probe_as(const char *op, bool x, bool wait, long typesel, long nodesel, long ptypesel,
                     long info[], jmp_buf *soft)
{
    cr_job *job = nx_enter_as(op, soft);
    cr_sel s = sel_as(job, op, x, typesel, nodesel, ptypesel);
    cr_status st;
    bool got = cr_probe(job, &s, wait, &st);
    if (got)
        found(job, x, info, &st);
    else
        cr_poll_missed(job, op, &(cr_wait){.sel = &s});
    nx_leave(job);
    return wait ? 0 : got;
}

void cprobe(long typesel)
{
    probe_as("cprobe", false, true, typesel, -1, -1, NULL, NULL);
}

long iprobe(long typesel)
{
    return probe_as("iprobe", false, false, typesel, -1, -1, NULL, NULL);
}

/* ---- asynchronous -------------------------------------------------------- */

static long isend_as(const char *op, long type, char *buf, long count, long node, long pid,
                     long info[], jmp_buf *soft)
{
    type = w32(type), node = w32(node), pid = w32(pid);
    cr_job *job = nx_enter_as(op, soft);
    int32_t t = check_type(job, op, type);
    check_buf(job, op, buf, count);
    check_node(job, op, node, pid, 0);
    cr_req *r = cr_isend(job, op, to_rank(job, node), CR_CTX_NX, t, buf, (size_t)count);
    long id = (long)cr_req_id(r);
    nx_leave(job);
    sent_info(info, type, count, node);
    return id;
}

long isend(long type, char *buf, long count, long node, long pid)
{
    return isend_as("isend", type, buf, count, node, pid, NULL, NULL);
}

/* The entry of receive r in the table of irecvx and underscore receives, or NULL. */
static nx_xrecv *entry_of(cr_job *job, const cr_req *r)
{
    nx_xrecv *x = r->id.idx < job->nx->nxrecv ? &job->nx->xrecv[r->id.idx] : NULL;
    return x && x->id == cr_req_id(r) ? x : NULL;
}

static long irecv_as(const char *op, bool x, long typesel, char *buf, long count, long nodesel,
                     long ptypesel, long info[], jmp_buf *soft)
{
    cr_job *job = nx_enter_as(op, soft);
    cr_sel s = sel_as(job, op, x, typesel, nodesel, ptypesel);
    check_buf(job, op, buf, count);
    cr_req *r = cr_irecv_call(job, op, &s, buf, (size_t)count, soft != NULL, NULL, NULL);
    long id = (long)cr_req_id(r);
    if (x || soft) {
        if (r->id.idx >= job->nx->nxrecv) { /* room for this slot's entry */
            uint32_t n = job->nx->nxrecv ? job->nx->nxrecv : 64;
            while (n <= r->id.idx) n *= 2;
            nx_xrecv *t = realloc(job->nx->xrecv, n * sizeof *t);
            if (!t) cr_fatal(job, op, "out of memory for %u message ids", n);
            memset(t + job->nx->nxrecv, 0, (n - job->nx->nxrecv) * sizeof *t);
            job->nx->xrecv = t;
            job->nx->nxrecv = n;
        }
        job->nx->xrecv[r->id.idx] = (nx_xrecv){(uint64_t)id, info, x};
    }
    nx_leave(job);
    return id;
}

long irecv(long typesel, char *buf, long count)
{
    return irecv_as("irecv", false, typesel, buf, count, -1, -1, NULL, NULL);
}

static cr_req *lookup(cr_job *job, const char *op, long mid)
{
    cr_req *r = mid > 0 ? cr_req_from_id(job, (uint64_t)mid) : NULL;
    if (!r || r->handler)
        nx_fail(job, op,
                "message id %ld is unknown: it was never returned by isend/irecv, or msgwait "
                "or msgdone already completed it",
                mid);
    return r;
}

/* Request r is complete: its info where it goes, its id released. -1 (an
 * underscore call's) for an underscore receive's message cut to fit. */
static long finish(cr_job *job, const char *op, cr_req *r, bool soft)
{
    long rc = 0;
    if (r->kind == CR_REQ_RECV) {
        nx_xrecv *x = entry_of(job, r);
        found(job, x && x->x, x ? x->info : NULL, &r->st);
        if (x && r->st.size > r->st.count) rc = too_long(job, op, soft, &r->st, r->cap);
        if (x) *x = (nx_xrecv){0};
    }
    cr_req_release(job, r);
    return rc;
}

static long msgwait_as(const char *op, long mid, jmp_buf *soft)
{
    cr_job *job = nx_enter_as(op, soft);
    cr_req *r = lookup(job, op, mid);
    cr_req_wait(job, r);
    long rc = finish(job, op, r, soft != NULL);
    nx_leave(job);
    return rc;
}

void msgwait(long mid)
{
    msgwait_as("msgwait", mid, NULL);
}

static long msgdone_as(const char *op, long mid, jmp_buf *soft)
{
    cr_job *job = nx_enter_as(op, soft);
    cr_req *r = lookup(job, op, mid);
    if (!r->done) cr_progress(job);
    long done = r->done;
    if (done)
        done = finish(job, op, r, soft != NULL) < 0 ? -1 : 1;
    else
        cr_poll_missed(job, op, &(cr_wait){.req = r});
    nx_leave(job);
    return done;
}

long msgdone(long mid)
{
    return msgdone_as("msgdone", mid, NULL);
}

static long msgcancel_as(const char *op, long mid, jmp_buf *soft)
{
    cr_job *job = nx_enter_as(op, soft);
    cr_req *r = lookup(job, op, mid);
    if (!r->done) {
        if (r->kind == CR_REQ_RECV)
            cr_cancel_recv(job, r);
        else
            cr_cancel_send(job, r);
    }
    cr_req_wait(job, r);
    if (r->kind == CR_REQ_RECV) { /* an irecvx's info is not filled */
        nx_xrecv *x = entry_of(job, r);
        if (x) *x = (nx_xrecv){0};
    }
    cr_req_release(job, r);
    nx_leave(job);
    return 0;
}

void msgcancel(long mid)
{
    msgcancel_as("msgcancel", mid, NULL);
}

/* ---- extended (Paragon) --------------------------------------------------- */

static cr_sel xsel(cr_job *job, const char *op, long typesel, long nodesel, long ptypesel)
{
    nodesel = w32(nodesel), ptypesel = w32(ptypesel);
    cr_sel s = typesel_to_sel(job, op, typesel);
    check_nodesel(job, op, nodesel, ptypesel);
    s.src = nodesel == -1 ? CR_ANY_SOURCE : to_rank(job, nodesel);
    return s;
}

void crecvx(long typesel, char *buf, long count, long nodesel, long ptypesel, long info[])
{
    recv_as("crecvx", true, typesel, buf, count, nodesel, ptypesel, info, NULL);
}

long irecvx(long typesel, char *buf, long count, long nodesel, long ptypesel, long info[])
{
    return irecv_as("irecvx", true, typesel, buf, count, nodesel, ptypesel, info, NULL);
}

void cprobex(long typesel, long nodesel, long ptypesel, long info[])
{
    probe_as("cprobex", true, true, typesel, nodesel, ptypesel, info, NULL);
}

long iprobex(long typesel, long nodesel, long ptypesel, long info[])
{
    return probe_as("iprobex", true, false, typesel, nodesel, ptypesel, info, NULL);
}

void csendx(long type, char *buf, long count, long node, long ptype, long info[])
{
    send_as("csendx", type, buf, count, node, ptype, info, NULL);
}

long isendx(long type, char *buf, long count, long node, long ptype, long info[])
{
    return isend_as("isendx", type, buf, count, node, ptype, info, NULL);
}

/* ---- the underscore forms (Paragon OSF/1) --------------------------------- */

/* The call, with a bad argument's return point here: -1 (errno and the words
 * for nx_perror set by nx_fail), the call left as it was entered. */
#define SOFT(call)                                                                                 \
    jmp_buf back;                                                                                  \
    if (setjmp(back)) {                                                                            \
        nx_leave(cr_job_get());                                                                    \
        return -1;                                                                                 \
    }                                                                                              \
    return call

long _csend(long type, char *buf, long count, long node, long pid)
{
    SOFT(send_as("_csend", type, buf, count, node, pid, NULL, &back));
}

long _crecv(long typesel, char *buf, long count)
{
    SOFT(recv_as("_crecv", false, typesel, buf, count, -1, -1, NULL, &back));
}

long _cprobe(long typesel)
{
    SOFT(probe_as("_cprobe", false, true, typesel, -1, -1, NULL, &back));
}

long _iprobe(long typesel)
{
    SOFT(probe_as("_iprobe", false, false, typesel, -1, -1, NULL, &back));
}

long _isend(long type, char *buf, long count, long node, long pid)
{
    SOFT(isend_as("_isend", type, buf, count, node, pid, NULL, &back));
}

long _irecv(long typesel, char *buf, long count)
{
    SOFT(irecv_as("_irecv", false, typesel, buf, count, -1, -1, NULL, &back));
}

long _msgwait(long mid)
{
    SOFT(msgwait_as("_msgwait", mid, &back));
}

long _msgdone(long mid)
{
    SOFT(msgdone_as("_msgdone", mid, &back));
}

long _msgcancel(long mid)
{
    SOFT(msgcancel_as("_msgcancel", mid, &back));
}

long _crecvx(long typesel, char *buf, long count, long nodesel, long ptypesel, long info[])
{
    SOFT(recv_as("_crecvx", true, typesel, buf, count, nodesel, ptypesel, info, &back));
}

long _irecvx(long typesel, char *buf, long count, long nodesel, long ptypesel, long info[])
{
    SOFT(irecv_as("_irecvx", true, typesel, buf, count, nodesel, ptypesel, info, &back));
}

long _cprobex(long typesel, long nodesel, long ptypesel, long info[])
{
    SOFT(probe_as("_cprobex", true, true, typesel, nodesel, ptypesel, info, &back));
}

long _iprobex(long typesel, long nodesel, long ptypesel, long info[])
{
    SOFT(probe_as("_iprobex", true, false, typesel, nodesel, ptypesel, info, &back));
}

long _csendx(long type, char *buf, long count, long node, long ptype, long info[])
{
    SOFT(send_as("_csendx", type, buf, count, node, ptype, info, &back));
}

long _isendx(long type, char *buf, long count, long node, long ptype, long info[])
{
    SOFT(isend_as("_isendx", type, buf, count, node, ptype, info, &back));
}

/* A receive found a message longer than its buffer, cut to fit (only an
 * underscore call's receive allows that). */
static long too_long(cr_job *job, const char *op, bool soft, const cr_status *st, size_t cap)
{
    char msg[256];
    snprintf(msg, sizeof msg,
             "message of %zu bytes (type %d from node %ld) is longer than the %zu-byte receive "
             "buffer; post a larger buffer (probe first to learn the size)",
             st->size, (int)st->tag, to_node(job, st->src), cap);
    if (!soft) cr_fatal(job, op, "%s", msg);
    soft_error(job, op, EMSGSIZE, msg);
    return -1;
}

void nx_perror(const char *s)
{
    cr_job *job = cr_job_get();
    int err = errno;
    const char *what =
        job->nx && job->nx->err[0] && err == job->nx->err_no ? job->nx->err : strerror(err);
    fprintf(stderr, "%s%s%s\n", s && *s ? s : "", s && *s ? ": " : "", what);
}

/* ---- interrupt-driven ---------------------------------------------------- */

static void nx_handler(cr_job *job, void (*user)(void), const cr_status *st)
{
    void (*h)(long, long, long, long) = (void (*)(long, long, long, long))user;
    h(st->tag, (long)st->count, to_node(job, st->src), 0);
}

void hrecv(long typesel, char *buf, long count, void (*handler)(long, long, long, long))
{
    cr_job *job = cr_job_get();
    if (!handler) cr_fatal(job, "hrecv", "handler is NULL");
    cr_handlers_start(job);
    job = nx_enter("hrecv");
    cr_sel s = typesel_to_sel(job, "hrecv", typesel);
    check_buf(job, "hrecv", buf, count);
    cr_irecv_call(job, "hrecv", &s, buf, (size_t)count, false, nx_handler, (void (*)(void))handler);
    nx_leave(job);
}

long masktrap(long state)
{
    cr_job *job = cr_job_get();
    if (state != 0 && state != 1)
        cr_fatal(job, "masktrap", "state %ld is invalid: use 1 to mask, 0 to unmask", state);
    return cr_handlers_mask(job, (int)state);
}

/* ---- information --------------------------------------------------------- */

long infocount(void)
{
    return (long)cr_job_get()->last.count;
}

long infonode(void)
{
    cr_job *job = cr_job_get();
    return job->nx ? to_node(job, job->last.src) : job->last.src;
}

long infopid(void)
{
    return 0;
}

long infotype(void)
{
    return cr_job_get()->last.tag;
}

/* The calls that say where this process stands make the interface's state
 * (whether there is a host) the first time, and read it without the lock. */
static cr_job *nx_info(void)
{
    cr_job *job = cr_job_get();
    if (!job->nx) nx_leave(nx_enter("mynode"));
    return job;
}

long mynode(void)
{
    cr_job *job = nx_info();
    return to_node(job, job->rank);
}

long mypid(void)
{
    return 0;
}

long numnodes(void)
{
    return nnodes(nx_info());
}

long nodedim(void)
{
    long d = 0, n = numnodes();
    while ((1L << d) < n) d++;
    return d;
}

/* A number no node has, with a host process or without (docs/nx.md). */
long myhost(void)
{
    return NX_HOST_NODE;
}

/* ---- the host process (the iPSC's; declared in cube.h) ------------------- */

/* A node's end, said to the host process for its waitall: run at the node
 * process's exit, before the job's own exit handler drains what it sent. */
static void node_exit(void)
{
    cr_job *job = cr_job_get();
    if (!job->nx || job->nx->host < 0) return;
    cr_lock(job);
    cr_send(job, "exit", job->nx->host, CR_CTX_NX_HOST, 0, NULL, 0);
    cr_unlock(job);
}

static cr_job *host_enter(const char *call)
{
    cr_job *job = nx_enter(call);
    if (job->nx->host < 0 || job->rank != job->nx->host)
        cr_fatal(job, call,
                 "%s is a call of the iPSC's host process, and this is node %ld: start the host "
                 "program first, on one rank (courier run -n 1 ./host : -n 8 ./node), and call "
                 "%s there",
                 call, to_node(job, job->rank), call);
    return job;
}

static void check_host_node(cr_job *job, const char *call, long node, long pid)
{
    if (!(node == -1 || (node >= 0 && node < nnodes(job))))
        cr_fatal(job, call, "node %ld is out of range: nodes are 0..%d (or -1 for all)", node,
                 nnodes(job) - 1);
    if (pid < -1) cr_fatal(job, call, "pid %ld is invalid: use -1 for all or a pid >= 0", pid);
}

/* The host waits for the end of node (-1: of every node). */
static void wait_nodes(cr_job *job, const char *call, long node)
{
    int n = nnodes(job);
    cr_sel s = {.src = CR_ANY_SOURCE, .ctx = CR_CTX_NX_HOST, .tag_mode = CR_TAG_ANY};
    while (node == -1 ? job->nx->nended < n : !job->nx->ended[node]) {
        cr_status st;
        cr_recv(job, call, &s, NULL, 0, &st);
        long i = to_node(job, st.src);
        if (i >= 0 && i < n && !job->nx->ended[i]) {
            job->nx->ended[i] = true;
            job->nx->nended++;
        }
    }
}

long load(char *filename, long node, long pid)
{
    cr_job *job = host_enter("load");
    node = w32(node), pid = w32(pid);
    if (!filename || !*filename) cr_fatal(job, "load", "filename is NULL or empty");
    check_host_node(job, "load", node, pid);
    /* courier run started the node program beside the host: nothing is left to load */
    nx_leave(job);
    return 0;
}

/* waitall and killcube: the host waits until node (-1: every node) has ended. */
static long host_wait(const char *call, long node, long pid)
{
    cr_job *job = host_enter(call);
    node = w32(node), pid = w32(pid);
    check_host_node(job, call, node, pid);
    wait_nodes(job, call, node);
    nx_leave(job);
    return 0;
}

long waitall(long node, long pid)
{
    return host_wait("waitall", node, pid);
}

/* The nodes are not killed: killcube waits for them to end (docs/nx.md). */
long killcube(long node, long pid)
{
    return host_wait("killcube", node, pid);
}

long setpid(long pid)
{
    cr_job *job = host_enter("setpid");
    if (w32(pid) < 0) cr_fatal(job, "setpid", "pid %ld is invalid: pids are >= 0", w32(pid));
    nx_leave(job);
    return 0;
}

/* The cube is the job's nodes: allocating, attaching and releasing it are done. */
long getcube(char *cubename, char *cubetype, char *srmname, long keep)
{
    (void)cubename, (void)cubetype, (void)srmname, (void)keep;
    nx_leave(host_enter("getcube"));
    return 0;
}

long attachcube(char *cubename)
{
    (void)cubename;
    nx_leave(host_enter("attachcube"));
    return 0;
}

long relcube(char *cubename)
{
    (void)cubename;
    nx_leave(host_enter("relcube"));
    return 0;
}

/* ---- global operations --------------------------------------------------- */

static long gsync_as(const char *op, jmp_buf *soft)
{
    cr_job *job = nx_enter_as(op, soft);
    check_node_call(job, op);
    cr_coll_barrier(job, &job->nx->group, op);
    nx_leave(job);
    return 0;
}

void gsync(void)
{
    gsync_as("gsync", NULL);
}

long _gsync(void)
{
    SOFT(gsync_as("_gsync", &back));
}

static void global_op(const char *op, void *x, long n, void *work, cr_redop o)
{
    cr_job *job = nx_enter(op);
    check_node_call(job, op);
    if (n < 0) cr_fatal(job, op, "element count %ld is negative", n);
    if (n > 0 && (!x || !work)) cr_fatal(job, op, "x or work is NULL with %ld elements", n);
    cr_coll_allreduce(job, &job->nx->group, op, x, x, (size_t)n, &o);
    nx_leave(job);
}

void gdsum(double x[], long n, double work[])
{
    global_op("gdsum", x, n, work, CR_OP_PREDEF(cr_op_sum_double, double));
}

void gisum(long x[], long n, long work[])
{
    global_op("gisum", x, n, work, CR_OP_PREDEF(cr_op_sum_long, long));
}

void gdhigh(double x[], long n, double work[])
{
    global_op("gdhigh", x, n, work, CR_OP_PREDEF(cr_op_max_double, double));
}

void gihigh(long x[], long n, long work[])
{
    global_op("gihigh", x, n, work, CR_OP_PREDEF(cr_op_max_long, long));
}

void gdlow(double x[], long n, double work[])
{
    global_op("gdlow", x, n, work, CR_OP_PREDEF(cr_op_min_double, double));
}

void gilow(long x[], long n, long work[])
{
    global_op("gilow", x, n, work, CR_OP_PREDEF(cr_op_min_long, long));
}

void gdprod(double x[], long n, double work[])
{
    global_op("gdprod", x, n, work, CR_OP_PREDEF(cr_op_prod_double, double));
}

void gssum(float x[], long n, float work[])
{
    global_op("gssum", x, n, work, CR_OP_PREDEF(cr_op_sum_float, float));
}

void gshigh(float x[], long n, float work[])
{
    global_op("gshigh", x, n, work, CR_OP_PREDEF(cr_op_max_float, float));
}

void gslow(float x[], long n, float work[])
{
    global_op("gslow", x, n, work, CR_OP_PREDEF(cr_op_min_float, float));
}

void gsprod(float x[], long n, float work[])
{
    global_op("gsprod", x, n, work, CR_OP_PREDEF(cr_op_prod_float, float));
}

void giprod(long x[], long n, long work[])
{
    global_op("giprod", x, n, work, CR_OP_PREDEF(cr_op_prod_long, long));
}

void giand(long x[], long n, long work[])
{
    global_op("giand", x, n, work, CR_OP_PREDEF(cr_op_band_long, long));
}

void gior(long x[], long n, long work[])
{
    global_op("gior", x, n, work, CR_OP_PREDEF(cr_op_bor_long, long));
}

void gixor(long x[], long n, long work[])
{
    global_op("gixor", x, n, work, CR_OP_PREDEF(cr_op_bxor_long, long));
}

/* gopf: the user function combines whole xlen-byte values, a op b into a; it is
 * called as fn(a, b, xlen) (functions written for two arguments ignore the
 * third). The collective layer asks for out = lo op hi; the operation commutes,
 * so out may be either input. b is always the caller's work array, which the
 * function may write over (a collective area's data or a peer's result never
 * reaches it). */
typedef struct gopf_op {
    long (*fn)(void *, void *, long);
    char *work;
    size_t len;
} gopf_op;

static void gopf_combine(const void *lo, const void *hi, void *out, size_t n, const void *arg)
{
    const gopf_op *g = arg;
    if (!n) return;
    const void *other = out == hi ? lo : hi;
    if (out != lo && out != hi) memcpy(out, lo, g->len);
    memcpy(g->work, other, g->len);
    g->fn(out, g->work, (long)g->len);
}

void gopf(char x[], long xlen, char work[], nx_gopf_fn function)
{
    cr_job *job = nx_enter("gopf");
    check_node_call(job, "gopf");
    if (xlen < 0) cr_fatal(job, "gopf", "length %ld is negative", xlen);
    if (xlen > 0 && (!x || !work)) cr_fatal(job, "gopf", "x or work is NULL with %ld bytes", xlen);
    if (!function) cr_fatal(job, "gopf", "function is NULL");
    gopf_op g = {(long (*)(void *, void *, long))function, work, (size_t)xlen};
    cr_redop o = {gopf_combine, &g, xlen ? (size_t)xlen : 1, true, true};
    cr_coll_allreduce(job, &job->nx->group, "gopf", x, x, xlen ? 1 : 0, &o);
    nx_leave(job);
}

/* ---- global concatenation ------------------------------------------------ */

/* y[] = the contributions of nodes 0..n-1, node i's lens[i] bytes; this node's
 * are x. Returns the total. */
static size_t concat(cr_job *job, const char *op, const char *x, const size_t *lens, char *y)
{
    int n = job->nx->group.size;
    size_t *displs = cr_coll_alloc(job, op, (size_t)n * sizeof *displs), total = 0;
    for (int i = 0; i < n; i++) {
        displs[i] = total;
        total += lens[i];
    }
    cr_coll_allgatherv(job, &job->nx->group, op, x, lens[job->nx->group.me], y, lens, displs);
    free(displs);
    return total;
}

/* The sum of n lengths, or a fatal error when it does not fit a long. */
static size_t total_of(cr_job *job, const char *op, const size_t *lens, int n)
{
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        if (lens[i] > (size_t)LONG_MAX - total)
            cr_fatal(job, op, "the concatenation of %d contributions is longer than %ld bytes", n,
                     LONG_MAX);
        total += lens[i];
    }
    return total;
}

void gcol(char x[], long xlen, char y[], long ylen, long *ncnt)
{
    cr_job *job = nx_enter("gcol");
    check_node_call(job, "gcol");
    check_buf(job, "gcol", x, xlen);
    check_buf(job, "gcol", y, ylen);
    if (!ncnt) cr_fatal(job, "gcol", "ncnt is NULL");
    int n = job->nx->group.size, me = job->nx->group.me;
    size_t *lens = cr_coll_alloc(job, "gcol", (size_t)n * sizeof *lens);
    lens[me] = (size_t)xlen;
    cr_coll_allgather(job, &job->nx->group, "gcol", &lens[me], lens, sizeof *lens);
    size_t total = total_of(job, "gcol", lens, n);
    if (total > (size_t)ylen)
        cr_fatal(job, "gcol", "the concatenation of %zu bytes is longer than the %ld-byte buffer y",
                 total, ylen);
    *ncnt = (long)concat(job, "gcol", x, lens, y);
    free(lens);
    nx_leave(job);
}

void gcolx(char x[], long xlens[], char y[])
{
    cr_job *job = nx_enter("gcolx");
    check_node_call(job, "gcolx");
    int n = job->nx->group.size;
    if (!xlens) cr_fatal(job, "gcolx", "xlens is NULL");
    size_t *lens = cr_coll_alloc(job, "gcolx", (size_t)n * sizeof *lens);
    for (int i = 0; i < n; i++) {
        if (xlens[i] < 0) cr_fatal(job, "gcolx", "length xlens[%d] = %ld is negative", i, xlens[i]);
        lens[i] = (size_t)xlens[i];
    }
    check_buf(job, "gcolx", x, xlens[job->nx->group.me]);
    size_t total = total_of(job, "gcolx", lens, n);
    if (total && !y)
        cr_fatal(job, "gcolx", "buffer y is NULL but the lengths add up to %zu", total);
    concat(job, "gcolx", x, lens, y);
    free(lens);
    nx_leave(job);
}

/* ---- time ---------------------------------------------------------------- */

double dclock(void)
{
    return (double)cr_timer_ns() * 1e-9;
}

double _dclock(void)
{
    return dclock();
}

/* The iPSC/860's hardware clock as PICL's port reads it: ticks of 200 ns in
 * two words, the low 32 bits in t[0] and the high in t[1]. */
void _hwclock(unsigned long t[2])
{
    uint64_t ticks = cr_timer_ns() / 200u;
    t[0] = (unsigned long)(ticks & 0xffffffffu);
    t[1] = (unsigned long)(ticks >> 32);
}

long mclock(void)
{
    return (long)(cr_timer_ns() / 1000000u);
}

/* The node gives its processor up for a moment. Simulated, where no thread
 * runs handlers: a poll (time moves on by a poll's cost when nothing came),
 * at which a handler whose message has arrived runs, so that a loop of
 * flicks waiting for a handler ends as on the node. */
void flick(void)
{
    cr_job *job = cr_job_get();
    if (__builtin_expect(job->vt.base != NULL, 0)) {
        nx_enter("flick");
        cr_progress(job);
        nx_leave(job);
        return;
    }
    sched_yield();
}

long _flick(void)
{
    flick();
    return 0;
}
