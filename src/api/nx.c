/* The NX/2 interface (seed 000 §4), with the Paragon's extended calls: argument
 * checks, NX naming and semantics, translated into engine and collective calls.
 * No matching, buffering or algorithm lives here.
 *
 * Invariants: every entry point validates its arguments before touching the
 * engine (a bad call ends the job with one line and changes nothing); the info
 * calls describe the last message received or probed by a call
 * without an info array (handlers get their own arguments instead); an x call
 * reports its message in its own info array only; a message id is released by
 * the msgwait, or the msgdone that returns 1, that completes it, and an irecvx
 * id fills its info array then. */
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../coll/coll.h"
#include "courier/nx.h"

/* NX's own info array for the x calls, part of the interface like errno: the
 * library never reads or writes it except through the info a program passes. */
long msginfo[8];

/* An irecvx in flight: its message id, and where its info goes (may be NULL). */
typedef struct nx_xrecv {
    uint64_t id;
    long *info;
} nx_xrecv;

/* The interface's state, reached from the job (job->nx, made by the first
 * call; changed only under the engine lock): the job-wide group of the global
 * operations and the irecvx ids in flight, indexed by their request slot (an
 * entry counts only while its id matches). */
struct cr_nx {
    cr_group group;
    nx_xrecv *xrecv;
    uint32_t nxrecv;
};

static cr_job *nx_enter(const char *call)
{
    cr_job *job = cr_job_get();
    cr_lock(job);
    cr_call_enter(job, call);
    if (!job->nx) {
        job->nx = calloc(1, sizeof *job->nx);
        if (!job->nx) cr_fatal(job, call, "out of memory");
        job->nx->group =
            (cr_group){.size = job->size, .me = job->rank, .ctx = CR_CTX_COLL, .area = CR_AREA_NX};
    }
    return job;
}

static void nx_leave(cr_job *job)
{
    cr_call_leave(job);
    cr_unlock(job);
}

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
        cr_fatal(job, op, "type %ld is invalid: message types are 0..%d", type, INT32_MAX);
    return (int32_t)type;
}

static cr_sel typesel_to_sel(cr_job *job, const char *op, long typesel)
{
    typesel = w32(typesel);
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

static void check_nodesel(cr_job *job, const char *op, long nodesel, long ptypesel)
{
    if (!(nodesel >= -1 && nodesel < job->size))
        cr_fatal(job, op, "node %ld is out of range: nodes are 0..%d (or -1 for any)", nodesel,
                 job->size - 1);
    if (ptypesel < -1)
        cr_fatal(job, op, "ptype %ld is invalid: use -1 for any or a process type >= 0", ptypesel);
}

static void set_info(cr_job *job, const cr_status *st)
{
    job->last = *st;
}

/* What an x call found goes to its info array only (NULL: nowhere). */
static void set_xinfo(long *info, const cr_status *st)
{
    if (!info) return;
    info[0] = st->tag;
    info[1] = (long)st->count;
    info[2] = st->src;
    info[3] = 0; /* the process type: every courier process is 0 */
}

/* ---- blocking ------------------------------------------------------------ */

static void send_as(const char *op, long type, char *buf, long count, long node, long pid)
{
    type = w32(type), node = w32(node), pid = w32(pid);
    cr_job *job = nx_enter(op);
    int32_t t = check_type(job, op, type);
    check_buf(job, op, buf, count);
    check_node(job, op, node, pid, 1);
    if (node >= 0) {
        cr_send(job, op, (int)node, CR_CTX_NX, t, buf, (size_t)count);
    } else {
        for (int p = 0; p < job->size; p++)
            if (p != job->rank) cr_send(job, op, p, CR_CTX_NX, t, buf, (size_t)count);
    }
    nx_leave(job);
}

void csend(long type, char *buf, long count, long node, long pid)
{
    send_as("csend", type, buf, count, node, pid);
}

void crecv(long typesel, char *buf, long count)
{
    cr_job *job = nx_enter("crecv");
    cr_sel s = typesel_to_sel(job, "crecv", typesel);
    check_buf(job, "crecv", buf, count);
    cr_status st;
    cr_recv(job, "crecv", &s, buf, (size_t)count, &st);
    set_info(job, &st);
    nx_leave(job);
}

void cprobe(long typesel)
{
    cr_job *job = nx_enter("cprobe");
    cr_sel s = typesel_to_sel(job, "cprobe", typesel);
    cr_status st;
    cr_probe(job, &s, true, &st);
    set_info(job, &st);
    nx_leave(job);
}

long iprobe(long typesel)
{
    cr_job *job = nx_enter("iprobe");
    cr_sel s = typesel_to_sel(job, "iprobe", typesel);
    cr_status st;
    bool found = cr_probe(job, &s, false, &st);
    if (found)
        set_info(job, &st);
    else
        cr_poll_missed(job, "iprobe", &(cr_wait){.sel = &s});
    nx_leave(job);
    return found;
}

/* ---- asynchronous -------------------------------------------------------- */

static long isend_as(const char *op, long type, char *buf, long count, long node, long pid)
{
    type = w32(type), node = w32(node), pid = w32(pid);
    cr_job *job = nx_enter(op);
    int32_t t = check_type(job, op, type);
    check_buf(job, op, buf, count);
    check_node(job, op, node, pid, 0);
    cr_req *r = cr_isend(job, op, (int)node, CR_CTX_NX, t, buf, (size_t)count);
    long id = (long)cr_req_id(r);
    nx_leave(job);
    return id;
}

long isend(long type, char *buf, long count, long node, long pid)
{
    return isend_as("isend", type, buf, count, node, pid);
}

long irecv(long typesel, char *buf, long count)
{
    cr_job *job = nx_enter("irecv");
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
    if (r->kind == CR_REQ_RECV) {
        nx_xrecv *x = r->id.idx < job->nx->nxrecv ? &job->nx->xrecv[r->id.idx] : NULL;
        if (x && x->id == cr_req_id(r)) {
            set_xinfo(x->info, &r->st);
            *x = (nx_xrecv){0};
        } else {
            set_info(job, &r->st);
        }
    }
    cr_req_release(job, r);
}

void msgwait(long mid)
{
    cr_job *job = nx_enter("msgwait");
    cr_req *r = lookup(job, "msgwait", mid);
    cr_req_wait(job, r);
    finish(job, r);
    nx_leave(job);
}

long msgdone(long mid)
{
    cr_job *job = nx_enter("msgdone");
    cr_req *r = lookup(job, "msgdone", mid);
    if (!r->done) cr_progress(job);
    long done = r->done;
    if (done)
        finish(job, r);
    else
        cr_poll_missed(job, "msgdone", &(cr_wait){.req = r});
    nx_leave(job);
    return done;
}

/* ---- extended (Paragon) --------------------------------------------------- */

static cr_sel xsel(cr_job *job, const char *op, long typesel, long nodesel, long ptypesel)
{
    nodesel = w32(nodesel), ptypesel = w32(ptypesel);
    cr_sel s = typesel_to_sel(job, op, typesel);
    check_nodesel(job, op, nodesel, ptypesel);
    s.src = nodesel == -1 ? CR_ANY_SOURCE : (int)nodesel;
    return s;
}

void crecvx(long typesel, char *buf, long count, long nodesel, long ptypesel, long info[])
{
    cr_job *job = nx_enter("crecvx");
    cr_sel s = xsel(job, "crecvx", typesel, nodesel, ptypesel);
    check_buf(job, "crecvx", buf, count);
    cr_status st;
    cr_recv(job, "crecvx", &s, buf, (size_t)count, &st);
    set_xinfo(info, &st);
    nx_leave(job);
}

long irecvx(long typesel, char *buf, long count, long nodesel, long ptypesel, long info[])
{
    cr_job *job = nx_enter("irecvx");
    cr_sel s = xsel(job, "irecvx", typesel, nodesel, ptypesel);
    check_buf(job, "irecvx", buf, count);
    cr_req *r = cr_irecv(job, "irecvx", &s, buf, (size_t)count);
    if (r->id.idx >= job->nx->nxrecv) { /* room for this slot's entry */
        uint32_t n = job->nx->nxrecv ? job->nx->nxrecv : 64;
        while (n <= r->id.idx) n *= 2;
        nx_xrecv *t = realloc(job->nx->xrecv, n * sizeof *t);
        if (!t) cr_fatal(job, "irecvx", "out of memory for %u message ids", n);
        memset(t + job->nx->nxrecv, 0, (n - job->nx->nxrecv) * sizeof *t);
        job->nx->xrecv = t;
        job->nx->nxrecv = n;
    }
    long id = (long)cr_req_id(r);
    job->nx->xrecv[r->id.idx] = (nx_xrecv){(uint64_t)id, info};
    nx_leave(job);
    return id;
}

void cprobex(long typesel, long nodesel, long ptypesel, long info[])
{
    cr_job *job = nx_enter("cprobex");
    cr_sel s = xsel(job, "cprobex", typesel, nodesel, ptypesel);
    cr_status st;
    cr_probe(job, &s, true, &st);
    set_xinfo(info, &st);
    nx_leave(job);
}

long iprobex(long typesel, long nodesel, long ptypesel, long info[])
{
    cr_job *job = nx_enter("iprobex");
    cr_sel s = xsel(job, "iprobex", typesel, nodesel, ptypesel);
    cr_status st;
    bool found = cr_probe(job, &s, false, &st);
    if (found)
        set_xinfo(info, &st);
    else
        cr_poll_missed(job, "iprobex", &(cr_wait){.sel = &s});
    nx_leave(job);
    return found;
}

/* A send reports its own message: type, count, destination node, process type. */
static void sent_info(long *info, long type, long count, long node)
{
    type = w32(type), node = w32(node);
    cr_status st = {
        .src = (int)node, .tag = (int32_t)type, .size = (size_t)count, .count = (size_t)count};
    set_xinfo(info, &st);
}

void csendx(long type, char *buf, long count, long node, long ptype, long info[])
{
    send_as("csendx", type, buf, count, node, ptype);
    sent_info(info, type, count, node);
}

long isendx(long type, char *buf, long count, long node, long ptype, long info[])
{
    long id = isend_as("isendx", type, buf, count, node, ptype);
    sent_info(info, type, count, node);
    return id;
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
    cr_job *job = nx_enter("gsync");
    cr_coll_barrier(job, &job->nx->group, "gsync");
    nx_leave(job);
}

static void global_op(const char *op, void *x, long n, void *work, cr_redop o)
{
    cr_job *job = nx_enter(op);
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
    int n = job->size;
    size_t *displs = cr_coll_alloc(job, op, (size_t)n * sizeof *displs), total = 0;
    for (int i = 0; i < n; i++) {
        displs[i] = total;
        total += lens[i];
    }
    cr_coll_allgatherv(job, &job->nx->group, op, x, lens[job->rank], y, lens, displs);
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
    check_buf(job, "gcol", x, xlen);
    check_buf(job, "gcol", y, ylen);
    if (!ncnt) cr_fatal(job, "gcol", "ncnt is NULL");
    int n = job->size;
    size_t *lens = cr_coll_alloc(job, "gcol", (size_t)n * sizeof *lens);
    lens[job->rank] = (size_t)xlen;
    cr_coll_allgather(job, &job->nx->group, "gcol", &lens[job->rank], lens, sizeof *lens);
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
    int n = job->size;
    if (!xlens) cr_fatal(job, "gcolx", "xlens is NULL");
    size_t *lens = cr_coll_alloc(job, "gcolx", (size_t)n * sizeof *lens);
    for (int i = 0; i < n; i++) {
        if (xlens[i] < 0) cr_fatal(job, "gcolx", "length xlens[%d] = %ld is negative", i, xlens[i]);
        lens[i] = (size_t)xlens[i];
    }
    check_buf(job, "gcolx", x, xlens[job->rank]);
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
