/* The NX/2 interface (seed 000 §4): argument checks, NX naming and semantics,
 * translated into engine calls. No matching, buffering or algorithm lives here.
 *
 * Invariants: every entry point validates its arguments before touching the
 * engine (a bad call ends the job with one line and changes nothing); the info
 * calls describe the last message received or probed by the calling program
 * (handlers get their own arguments instead); a message id is released by the
 * msgwait, or the msgdone that returns 1, that completes it. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "../coll/coll.h"
#include "courier/nx.h"

/* NX/2 traffic and the job-wide group of the global operations. */
static cr_group nx_group;

static cr_job *nx_enter(void)
{
    cr_job *job = cr_job_get();
    if (!nx_group.size) {
        nx_group.size = job->size;
        nx_group.me = job->rank;
        nx_group.ctx = CR_CTX_COLL;
        nx_group.area = CR_AREA_NX;
    }
    cr_lock(job);
    return job;
}

static void nx_leave(cr_job *job)
{
    cr_unlock(job);
}

static int32_t check_type(cr_job *job, const char *op, long type)
{
    if (type < 0 || type > INT32_MAX)
        cr_fatal(job, op, "type %ld is invalid: message types are 0..%d", type, INT32_MAX);
    return (int32_t)type;
}

static cr_sel typesel_to_sel(cr_job *job, const char *op, long typesel)
{
    cr_sel s = {.src = CR_ANY_SOURCE, .ctx = CR_CTX_NX};
    if (typesel >= 0) {
        s.tag_mode = CR_TAG_EXACT;
        s.tag = check_type(job, op, typesel);
    } else if (typesel == -1) {
        s.tag_mode = CR_TAG_ANY;
    } else {
        /* A mask: bits 0..30 select types 0..30, whether the caller built it in a
         * 32-bit or a 64-bit long. */
        s.tag_mode = CR_TAG_MASK;
        s.mask = (uint32_t)(unsigned long)typesel & 0x7fffffffu;
        if (!s.mask)
            cr_fatal(job, op, "typesel %ld is a mask that selects no type (bits 0..30 are clear)",
                     typesel);
    }
    return s;
}

static void check_buf(cr_job *job, const char *op, const char *buf, long count)
{
    if (count < 0) cr_fatal(job, op, "length %ld is negative", count);
    if (count > 0 && !buf) cr_fatal(job, op, "buffer is NULL but length is %ld", count);
}

static void check_node(cr_job *job, const char *op, long node, long pid, int allow_all)
{
    if (!(node >= 0 && node < job->size) && !(allow_all && node == -1))
        cr_fatal(job, op, "node %ld is out of range: nodes are 0..%d%s", node, job->size - 1,
                 allow_all ? " (or -1 for all others)" : "");
    if (pid < 0) cr_fatal(job, op, "pid %ld is invalid: each node runs process 0", pid);
}

static void set_info(cr_job *job, const cr_status *st)
{
    job->last = *st;
}

/* ---- blocking ------------------------------------------------------------ */

void csend(long type, char *buf, long count, long node, long pid)
{
    cr_job *job = nx_enter();
    int32_t t = check_type(job, "csend", type);
    check_buf(job, "csend", buf, count);
    check_node(job, "csend", node, pid, 1);
    if (node >= 0) {
        cr_send(job, "csend", (int)node, CR_CTX_NX, t, buf, (size_t)count);
    } else {
        for (int p = 0; p < job->size; p++)
            if (p != job->rank) cr_send(job, "csend", p, CR_CTX_NX, t, buf, (size_t)count);
    }
    nx_leave(job);
}

void crecv(long typesel, char *buf, long count)
{
    cr_job *job = nx_enter();
    cr_sel s = typesel_to_sel(job, "crecv", typesel);
    check_buf(job, "crecv", buf, count);
    cr_status st;
    cr_recv(job, "crecv", &s, buf, (size_t)count, &st);
    set_info(job, &st);
    nx_leave(job);
}

void cprobe(long typesel)
{
    cr_job *job = nx_enter();
    cr_sel s = typesel_to_sel(job, "cprobe", typesel);
    cr_status st;
    cr_probe(job, &s, true, &st);
    set_info(job, &st);
    nx_leave(job);
}

long iprobe(long typesel)
{
    cr_job *job = nx_enter();
    cr_sel s = typesel_to_sel(job, "iprobe", typesel);
    cr_status st;
    bool found = cr_probe(job, &s, false, &st);
    if (found) set_info(job, &st);
    nx_leave(job);
    return found;
}

/* ---- asynchronous -------------------------------------------------------- */

long isend(long type, char *buf, long count, long node, long pid)
{
    cr_job *job = nx_enter();
    int32_t t = check_type(job, "isend", type);
    check_buf(job, "isend", buf, count);
    check_node(job, "isend", node, pid, 0);
    cr_req *r = cr_isend(job, "isend", (int)node, CR_CTX_NX, t, buf, (size_t)count);
    long id = (long)cr_req_id(r);
    nx_leave(job);
    return id;
}

long irecv(long typesel, char *buf, long count)
{
    cr_job *job = nx_enter();
    cr_sel s = typesel_to_sel(job, "irecv", typesel);
    check_buf(job, "irecv", buf, count);
    cr_req *r = cr_irecv(job, "irecv", &s, buf, (size_t)count);
    long id = (long)cr_req_id(r);
    nx_leave(job);
    return id;
}

static cr_req *lookup(cr_job *job, const char *op, long mid)
{
    cr_req *r = mid > 0 ? cr_req_from_id(job, (uint64_t)mid) : NULL;
    if (!r || r->handler)
        cr_fatal(job, op,
                 "message id %ld is unknown: it was never returned by isend/irecv, or msgwait "
                 "or msgdone already completed it",
                 mid);
    return r;
}

static void finish(cr_job *job, cr_req *r)
{
    if (r->kind == CR_REQ_RECV) set_info(job, &r->st);
    cr_req_release(job, r);
}

void msgwait(long mid)
{
    cr_job *job = nx_enter();
    cr_req *r = lookup(job, "msgwait", mid);
    cr_req_wait(job, r);
    finish(job, r);
    nx_leave(job);
}

long msgdone(long mid)
{
    cr_job *job = nx_enter();
    cr_req *r = lookup(job, "msgdone", mid);
    if (!r->done) cr_progress(job);
    long done = r->done;
    if (done) finish(job, r);
    nx_leave(job);
    return done;
}

/* ---- interrupt-driven ---------------------------------------------------- */

static void nx_handler(cr_job *job, void (*user)(void), const cr_status *st)
{
    (void)job;
    void (*h)(long, long, long, long) = (void (*)(long, long, long, long))user;
    h(st->tag, (long)st->count, st->src, 0);
}

void hrecv(long typesel, char *buf, long count, void (*handler)(long, long, long, long))
{
    cr_job *job = cr_job_get();
    if (!handler) cr_fatal(job, "hrecv", "handler is NULL");
    cr_handlers_start(job);
    job = nx_enter();
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
    return cr_job_get()->last.src;
}

long infopid(void)
{
    return 0;
}

long infotype(void)
{
    return cr_job_get()->last.tag;
}

long mynode(void)
{
    return cr_job_get()->rank;
}

long mypid(void)
{
    return 0;
}

long numnodes(void)
{
    return cr_job_get()->size;
}

long nodedim(void)
{
    long d = 0, n = cr_job_get()->size;
    while ((1L << d) < n) d++;
    return d;
}

long myhost(void)
{
    return cr_job_get()->host_rank;
}

/* ---- global operations --------------------------------------------------- */

void gsync(void)
{
    cr_job *job = nx_enter();
    cr_coll_barrier(job, &nx_group, "gsync");
    nx_leave(job);
}

static void global_op(const char *op, void *x, long n, void *work, cr_redop o)
{
    cr_job *job = nx_enter();
    if (n < 0) cr_fatal(job, op, "element count %ld is negative", n);
    if (n > 0 && (!x || !work)) cr_fatal(job, op, "x or work is NULL with %ld elements", n);
    cr_coll_allreduce(job, &nx_group, op, x, x, (size_t)n, &o);
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
