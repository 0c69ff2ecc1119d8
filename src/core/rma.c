/* One-sided operations of the engine: shared memory between the ranks of a
 * host, the choice of path per target, and the service that serves requests
 * for memory no other path reaches (rma.h says what each path is).
 *
 * Invariants:
 *  - everything here runs under the engine lock; the state is job->rma;
 *  - the service is a background hook (cr_bg_add): it runs in every
 *    cr_progress of the target, whichever thread makes it, never waits, and
 *    keeps exactly one receive posted for requests (context CR_CTX_RMA, tag
 *    RMA_TAG_REQ, any source) while it is on;
 *  - replies travel on CR_CTX_RMA too, with the origin's ticket as tag (> 0);
 *    the data of a large put follows its request with tag -ticket: the tags of
 *    the two directions and of the requests never meet;
 *  - an origin's transfer through the service is complete when its reply
 *    (ack, data, old word) has arrived: the service replies only after the
 *    memory was written or read; tickets increase, so a ticket that is not
 *    among those in flight is complete;
 *  - the service never reads or writes outside memory exposed here. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rma.h"
#include "single_copy.h"

#define RMA_TAG_REQ 0

enum { RQ_PUT = 1, RQ_PUT_LARGE, RQ_GET, RQ_AMO, RQ_AMO_NOREPLY, RQ_PUTV, RQ_GETV, RQ_CALL };

/* RQ_CALL: len bytes for the layer above's handler at the target
 * (cr_rma_set_call), inside the request up to CR_RMA_INLINE, else in the message
 * that follows with tag -ticket; the answer is what the handler gives back.
 * Calls are run in the order they came, and one the handler finds busy (a
 * lock another holds) holds back those after it. */

/* Vector requests (RQ_PUTV, RQ_GETV: a strided datatype's pieces) carry a
 * = the number of pieces, and len = the bytes of the message that follows
 * with tag -ticket: the pieces' descriptors, then (a put) their data packed;
 * a get's answer is its data packed. One request moves up to VEC_RUNS pieces
 * and VEC_BYTES of data: one message per piece cost a million requests for
 * a transposed matrix of a million words. */
typedef struct rma_vrun {
    uint64_t addr, len;
} rma_vrun;
#define VEC_RUNS 8192
#define VEC_BYTES (1u << 20)

/* A request to the service. A put of a hardware broadcast under the simulator
 * (RQ_F_BCAST: cr_put_bcast on a machine that has one) carries the range in a
 * (lo | hi << 32) and the origin's group in b: its answer is marked so that
 * the model combines it with the other targets' (cr_vt_answer_next). */
#define RQ_F_BCAST 1
/* A call without an answer (cr_rma_call_quiet): its completion is told by
 * the next answered call of the same origin, since calls run in order. */
#define RQ_F_QUIET 2
typedef struct rma_msg {
    uint8_t op, amo;
    uint16_t flags;
    int32_t ticket; /* the reply's tag */
    uint64_t addr, len;
    uint64_t a, b;
    uint64_t ev; /* address of the event word to increment when done (0: none) */
} rma_msg;

/* A transfer in flight at the origin, or a reply in flight at the target. */
typedef struct rma_op {
    struct rma_op *next;
    uint64_t ticket;
    int peer;
    cr_req *req;         /* the reply receive (origin) / the reply send or data receive (service) */
    cr_req *data;        /* origin: the large put's data send */
    uint64_t ev;         /* service: event word to increment once req completes */
    bool ack;            /* service: send an ack once req (a data receive) completes */
    uint64_t bc_a, bc_b; /* service: the request's broadcast (a, b; b = 0: none) */
    void (*done)(cr_job *job, void *arg);
    void *arg;
    uint64_t old; /* an atomic's reply */
    void *own;    /* freed with the op: a vector request's buffer */
    uint8_t vec;  /* service: RQ_PUTV, RQ_GETV (their descriptors come into own) or RQ_CALL */
    uint64_t nvec, vlen; /* ... how many pieces, and their bytes (a call: vlen bytes) */
    size_t owncap;       /* a call's: own's size */
    bool quiet;          /* service: a call not answered (RQ_F_QUIET) */
} rma_op;

typedef struct rma_span {
    uintptr_t base;
    size_t len;
} rma_span;

typedef struct cr_rma {
    uint64_t next_ticket;
    rma_op *inflight; /* origin: oldest first */
    rma_op **inflight_end;
    rma_op *serving;            /* service: replies and data receives under way */
    rma_op *calls, **calls_end; /* service: calls to run, in order */
    void *callbuf;              /* ... a large call's buffer kept for the next (a fresh large
                                   malloc is a page fault per page, every call) */
    size_t callbuf_len;
    cr_rma_call_fn call_fn;
    rma_op *spare;
    /* the service */
    bool on;
    cr_req *in; /* the posted request receive */
    char inbuf[sizeof(rma_msg) + CR_RMA_INLINE];
    rma_span *spans;
    int nspans, cap;
} cr_rma;

static cr_rma *rma_of(cr_job *job)
{
    if (!job->rma) {
        job->rma = calloc(1, sizeof *job->rma);
        if (!job->rma) cr_fatal(job, "one-sided", "out of memory for its state");
        job->rma->next_ticket = 1;
    }
    return job->rma;
}

uint64_t cr_amo_apply(uint64_t *p, int op, uint64_t a, uint64_t b)
{
    switch (op) {
    case CR_AMO_READ:
        return __atomic_load_n(p, __ATOMIC_SEQ_CST);
    case CR_AMO_SWAP:
        return __atomic_exchange_n(p, a, __ATOMIC_SEQ_CST);
    case CR_AMO_ADD:
        return __atomic_fetch_add(p, a, __ATOMIC_SEQ_CST);
    case CR_AMO_CAS:
        __atomic_compare_exchange_n(p, &b, a, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        return b; /* the old word, whether it was swapped or not */
    case CR_AMO_OR:
        return __atomic_fetch_or(p, a, __ATOMIC_SEQ_CST);
    case CR_AMO_AND:
        return __atomic_fetch_and(p, a, __ATOMIC_SEQ_CST);
    default:
        return __atomic_fetch_xor(p, a, __ATOMIC_SEQ_CST);
    }
}

/* ---- shared memory ---------------------------------------------------------- */

void *cr_shared_alloc(cr_job *job, size_t len, cr_shared *out)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t maplen = len ? (len + pg - 1) / pg * pg : pg;
    int fd = memfd_create("courier-rma", MFD_CLOEXEC);
    if (fd < 0) return NULL;
    if (ftruncate(fd, (off_t)maplen) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return NULL;
    }
    void *p = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        close(fd);
        errno = e;
        return NULL;
    }
    *out = (cr_shared){.pid = (int32_t)getpid(), .fd = fd, .len = maplen};
    (void)job;
    return p;
}

void cr_shared_free(void *p, const cr_shared *s)
{
    if (!p) return;
    munmap(p, s->len);
    if (s->fd >= 0) close(s->fd);
}

/* COURIER_RMA_NO_MAP=1 (0 or 1, as courier run checks): never map a peer's window. */
static bool no_map(void)
{
    const char *v = getenv("COURIER_RMA_NO_MAP");
    return v && *v && strcmp(v, "0") != 0;
}

void *cr_shared_map(cr_job *job, int peer, const cr_shared *s)
{
    if (s->fd < 0 || !job->host.base || job->host_of[peer] != job->host_of[job->rank] || no_map())
        return NULL;
    if (peer == job->rank) return NULL; /* the owner has its own mapping */
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)s->pid, (int)s->fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return NULL;
    void *p = mmap(NULL, s->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : (char *)p + s->off;
}

void cr_shared_unmap(void *p, const cr_shared *s)
{
    if (p) munmap((char *)p - s->off, s->len);
}

/* ---- the service ------------------------------------------------------------ */

/* Does [addr, addr+len) lie in exposed memory (it may run from one exposed
 * span into the next, as MPI's attached regions may)? */
static bool exposed(cr_rma *m, uint64_t addr, uint64_t len)
{
    bool found = true;
    while (len && found) {
        found = false;
        for (int i = 0; i < m->nspans && !found; i++)
            if (addr >= m->spans[i].base && addr - m->spans[i].base < m->spans[i].len) {
                uint64_t room = m->spans[i].len - (addr - m->spans[i].base);
                uint64_t take = room < len ? room : len;
                addr += take;
                len -= take;
                found = true;
            }
    }
    return len == 0;
}

static rma_op *op_new(cr_job *job, cr_rma *m)
{
    rma_op *o = m->spare;
    if (o)
        m->spare = o->next;
    else if (!(o = malloc(sizeof *o)))
        cr_fatal(job, "one-sided", "out of memory for a transfer in flight");
    memset(o, 0, sizeof *o);
    return o;
}

static void op_put(cr_rma *m, rma_op *o)
{
    free(o->own);
    o->own = NULL;
    o->next = m->spare;
    m->spare = o;
}

static void post_service(cr_job *job, cr_rma *m)
{
    cr_sel s = {
        .src = CR_ANY_SOURCE, .ctx = CR_CTX_RMA, .tag_mode = CR_TAG_EXACT, .tag = RMA_TAG_REQ};
    m->in = cr_irecv(job, "one-sided service", &s, m->inbuf, sizeof m->inbuf);
}

static void event_bump(cr_job *job, uint64_t ev)
{
    if (!ev) return;
    cr_amo_apply((uint64_t *)(uintptr_t)ev, CR_AMO_ADD, 1, 0);
    cr_wake_self(job);
}

/* Reply to origin with len bytes at p (tracked until sent), or 0 bytes; own:
 * p is malloc'd, to be freed once sent. */
static void reply_own(cr_job *job, cr_rma *m, int origin, int32_t ticket, const void *p, size_t len,
                      uint64_t ev, void *own)
{
    if (cr_send_now(job, origin, CR_CTX_RMA, ticket, p, len)) {
        event_bump(job, ev);
        free(own);
        return;
    }
    rma_op *o = op_new(job, m);
    o->peer = origin;
    o->ev = ev;
    o->own = own;
    o->req = cr_isend(job, "one-sided service", origin, CR_CTX_RMA, ticket, p, len);
    o->next = m->serving;
    m->serving = o;
}

static void reply(cr_job *job, cr_rma *m, int origin, int32_t ticket, const void *p, size_t len,
                  uint64_t ev)
{
    reply_own(job, m, origin, ticket, p, len, ev, NULL);
}

/* Under --sim where the network interface does puts and gets itself (the CS-2's Elan:
 * cr_vt_hw_next): the request about to be sent to peer is its transaction, the rma_msg its
 * header; the answer about to be sent costs this rank's processor nothing. */
static void hw_request(cr_job *job, int peer, size_t len)
{
    if (job->vt.base) cr_vt_hw_next(&job->vt, peer, len, sizeof(rma_msg), false);
}

static void hw_answer(cr_job *job, int origin, size_t len)
{
    if (job->vt.base) cr_vt_hw_next(&job->vt, origin, len, 0, true);
}

/* The answer about to be sent to origin is for a put of its hardware
 * broadcast (a, b from the request): tell the simulator, so that the model
 * combines it with the other targets' answers. A range that does not hold
 * this rank is no broadcast of the simulator's: answered as any other. */
static void answer_bcast(cr_job *job, int origin, uint64_t a, uint64_t b)
{
    int lo = (int)(uint32_t)a, hi = (int)(uint32_t)(a >> 32);
    if (!job->vt.base || !b || b > UINT32_MAX || lo < 0 || hi >= job->size || lo > hi ||
        job->rank < lo || job->rank > hi)
        return;
    cr_vt_answer_next(&job->vt, origin, (uint32_t)b, lo, hi);
}

/* The service touches only memory exposed here: anything else ends the job. */
static void check_exposed(cr_job *job, cr_rma *m, int origin, uint64_t addr, uint64_t len)
{
    if (!exposed(m, addr, len))
        cr_fatal(job, "one-sided service",
                 "rank %d asked for %llu bytes at %#llx, outside every region this rank "
                 "registered (a freed region, or a bad offset)",
                 origin, (unsigned long long)len, (unsigned long long)addr);
}

/* A vector request's descriptors have come in (o->own): check every piece, then
 * scatter a put's data and answer, or gather a get's data into its answer. */
static void serve_vec(cr_job *job, cr_rma *m, rma_op *o)
{
    const rma_vrun *v = o->own;
    const char *data = (const char *)(v + o->nvec);
    uint64_t total = 0;
    for (uint64_t i = 0; i < o->nvec; i++) {
        check_exposed(job, m, o->peer, v[i].addr, v[i].len);
        total += v[i].len;
    }
    if (total != o->vlen)
        cr_fatal(job, "one-sided service",
                 "a vector request from rank %d says %llu bytes, its pieces %llu", o->peer,
                 (unsigned long long)o->vlen, (unsigned long long)total);
    int32_t ticket = (int32_t)o->old;
    if (o->vec == RQ_PUTV) {
        for (uint64_t i = 0; i < o->nvec; i++) {
            memcpy((void *)(uintptr_t)v[i].addr, data, v[i].len);
            data += v[i].len;
        }
        reply(job, m, o->peer, ticket, NULL, 0, o->ev);
        return;
    }
    char *out = malloc(total ? total : 1);
    if (!out)
        cr_fatal(job, "one-sided service", "out of memory for a get's %llu bytes",
                 (unsigned long long)total);
    char *at = out;
    for (uint64_t i = 0; i < o->nvec; i++) {
        memcpy(at, (const void *)(uintptr_t)v[i].addr, v[i].len);
        at += v[i].len;
    }
    reply_own(job, m, o->peer, ticket, out, total, o->ev, out);
}

static void call_queue(cr_rma *m, rma_op *o)
{
    o->next = NULL;
    if (!m->calls) m->calls_end = &m->calls;
    *m->calls_end = o;
    m->calls_end = &o->next;
}

/* Run the calls that came, in order, until one is busy or still waits for
 * its data; how many ran. */
static int run_calls(cr_job *job, cr_rma *m)
{
    int n = 0;
    while (m->calls) {
        rma_op *o = m->calls;
        if (o->req) { /* its data follows */
            if (!o->req->done) break;
            cr_req_release(job, o->req);
            o->req = NULL;
        }
        if (!m->call_fn)
            cr_fatal(job, "one-sided service",
                     "rank %d made a call this rank has no handler for (its windows are gone)",
                     o->peer);
        void *out = NULL;
        size_t outlen = 0;
        if (m->call_fn(job, o->peer, o->own, (size_t)o->vlen, &out, &outlen)) break;
        m->calls = o->next;
        if (o->vlen > CR_RMA_INLINE && o->owncap > m->callbuf_len) { /* kept for the next */
            free(m->callbuf);
            m->callbuf = o->own;
            m->callbuf_len = o->owncap;
            o->own = NULL;
        }
        if (o->quiet)
            free(out);
        else
            reply_own(job, m, o->peer, (int32_t)o->old, out, outlen, 0, out);
        op_put(m, o);
        n++;
    }
    return n;
}

/* Serve request msg (got bytes) of origin. */
static void serve(cr_job *job, cr_rma *m, int origin, const char *msg, size_t got)
{
    rma_msg q;
    if (got < sizeof q)
        cr_fatal(job, "one-sided service", "a request from rank %d is %zu bytes, too short", origin,
                 got);
    memcpy(&q, msg, sizeof q);
    uint64_t span = q.op == RQ_AMO || q.op == RQ_AMO_NOREPLY ? 8 : q.len;
    /* (a vector's pieces are checked as they come, a call's by its handler) */
    bool vec = q.op == RQ_PUTV || q.op == RQ_GETV || q.op == RQ_CALL;
    if (!vec) check_exposed(job, m, origin, q.addr, span);
    if (q.ev) check_exposed(job, m, origin, q.ev, 8);
    char *p = (char *)(uintptr_t)q.addr;
    switch (q.op) {
    case RQ_PUT:
        if (got - sizeof q != q.len)
            cr_fatal(job, "one-sided service", "a put from rank %d carries %zu bytes, not %llu",
                     origin, got - sizeof q, (unsigned long long)q.len);
        memcpy(p, msg + sizeof q, q.len);
        if (q.flags & RQ_F_BCAST) answer_bcast(job, origin, q.a, q.b);
        hw_answer(job, origin, 0);
        reply(job, m, origin, q.ticket, NULL, 0, q.ev);
        break;
    case RQ_PUT_LARGE: {
        rma_op *o = op_new(job, m);
        cr_sel s = {.src = origin, .ctx = CR_CTX_RMA, .tag_mode = CR_TAG_EXACT, .tag = -q.ticket};
        o->peer = origin;
        o->ev = q.ev;
        o->ack = true;
        o->old = (uint64_t)q.ticket;
        if (q.flags & RQ_F_BCAST) {
            o->bc_a = q.a;
            o->bc_b = q.b;
        }
        o->req = cr_irecv(job, "one-sided service", &s, p, q.len);
        o->next = m->serving;
        m->serving = o;
        break;
    }
    case RQ_GET:
        hw_answer(job, origin, q.len);
        reply(job, m, origin, q.ticket, p, q.len, q.ev);
        break;
    case RQ_CALL: {
        rma_op *o = op_new(job, m);
        o->peer = origin;
        o->old = (uint64_t)q.ticket;
        o->vec = RQ_CALL;
        o->vlen = q.len;
        o->quiet = q.flags & RQ_F_QUIET;
        if (q.len > CR_RMA_CALL_MAX || (q.len <= CR_RMA_INLINE && got - sizeof q != q.len) ||
            (o->quiet && q.len > CR_RMA_INLINE))
            cr_fatal(job, "one-sided service", "a call from rank %d of %llu bytes carries %zu",
                     origin, (unsigned long long)q.len, got - sizeof q);
        o->owncap = q.len;
        if (q.len > CR_RMA_INLINE && m->callbuf && m->callbuf_len >= q.len) {
            o->own = m->callbuf;
            o->owncap = m->callbuf_len;
            m->callbuf = NULL;
        } else if (!(o->own = malloc(q.len ? q.len : 1))) {
            cr_fatal(job, "one-sided service", "out of memory for a call's %llu bytes",
                     (unsigned long long)q.len);
        }
        if (q.len <= CR_RMA_INLINE) {
            memcpy(o->own, msg + sizeof q, q.len);
        } else { /* in the queue now all the same: calls run in the order they came */
            cr_sel s = {
                .src = origin, .ctx = CR_CTX_RMA, .tag_mode = CR_TAG_EXACT, .tag = -q.ticket};
            o->req = cr_irecv(job, "one-sided service", &s, o->own, q.len);
        }
        call_queue(m, o);
        break;
    }
    case RQ_PUTV:
    case RQ_GETV: {
        uint64_t desc = q.a * sizeof(rma_vrun), follow = q.op == RQ_PUTV ? desc + q.len : desc;
        if (q.a == 0 || q.a > VEC_RUNS || q.len > VEC_BYTES)
            cr_fatal(job, "one-sided service",
                     "a vector request from rank %d has %llu pieces of %llu bytes (at most %d "
                     "and %u)",
                     origin, (unsigned long long)q.a, (unsigned long long)q.len, VEC_RUNS,
                     VEC_BYTES);
        rma_op *o = op_new(job, m);
        cr_sel s = {.src = origin, .ctx = CR_CTX_RMA, .tag_mode = CR_TAG_EXACT, .tag = -q.ticket};
        o->peer = origin;
        o->ev = q.ev;
        o->old = (uint64_t)q.ticket;
        o->vec = q.op;
        o->nvec = q.a;
        o->vlen = q.len;
        if (!(o->own = malloc(follow)))
            cr_fatal(job, "one-sided service", "out of memory for a vector request's %llu bytes",
                     (unsigned long long)follow);
        o->req = cr_irecv(job, "one-sided service", &s, o->own, follow);
        o->next = m->serving;
        m->serving = o;
        break;
    }
    default: {
        if (q.addr % 8)
            cr_fatal(job, "one-sided service",
                     "rank %d asked for an atomic at %#llx, not 8-byte aligned", origin,
                     (unsigned long long)q.addr);
        uint64_t old = cr_amo_apply((uint64_t *)p, q.amo, q.a, q.b);
        if (q.op == RQ_AMO) reply(job, m, origin, q.ticket, &old, sizeof old, 0);
        /* (an event word is bumped with RQ_AMO_NOREPLY itself) */
        break;
    }
    }
}

static int service_hook(cr_job *job, bool *pending)
{
    /* the thread answers messages at once (cr_handlers_start); a busy call
     * is tried again without one */
    cr_rma *m = job->rma;
    int n = 0;
    if (!m->on) { /* started late (cr_rma_unexpected) */
        m->on = true;
        post_service(job, m);
    }
    for (rma_op **pp = &m->serving; *pp;) {
        rma_op *o = *pp;
        if (!o->req->done) {
            pp = &o->next;
            continue;
        }
        cr_req_release(job, o->req);
        *pp = o->next;
        n++;
        if (o->vec)
            serve_vec(job, m, o);
        else if (o->ack) {
            if (o->bc_b) answer_bcast(job, o->peer, o->bc_a, o->bc_b);
            hw_answer(job, o->peer, 0);
            reply(job, m, o->peer, (int32_t)o->old, NULL, 0, o->ev);
        } else
            event_bump(job, o->ev);
        op_put(m, o);
    }
    while (m->in && m->in->done) {
        cr_req *r = m->in;
        int origin = r->st.src;
        size_t got = r->st.count;
        cr_req_release(job, r);
        /* Taken out of the buffer, which the receive posted again may fill at
         * once with a request that waits unexpected. */
        char msg[sizeof m->inbuf];
        memcpy(msg, m->inbuf, got);
        post_service(job, m);
        serve(job, m, origin, msg, got);
        n++;
    }
    n += run_calls(job, m);
    if (m->calls) *pending = true;
    return n;
}

void cr_rma_expose(cr_job *job, const void *base, size_t len)
{
    cr_rma *m = rma_of(job);
    if (m->nspans == m->cap) {
        int cap = m->cap ? 2 * m->cap : 8;
        rma_span *s = realloc(m->spans, (size_t)cap * sizeof *s);
        if (!s) cr_fatal(job, "one-sided", "out of memory for the regions' list");
        m->spans = s;
        m->cap = cap;
    }
    m->spans[m->nspans++] = (rma_span){(uintptr_t)base, len};
}

void cr_rma_serve(cr_job *job)
{
    cr_rma *m = rma_of(job);
    /* --sim: one-sided traffic has its own costs; say so before it starts,
     * so that the lookahead it may lower costs no operation a delay */
    if (job->vt.base) cr_vt_use_class(&job->vt, CR_VT_CLASS_ONESIDED);
    if (!m->on && job->size > 1) {
        m->on = true;
        post_service(job, m);
        cr_bg_add(job, service_hook);
        /* Serve while the program computes: the thread wakes on messages. */
        cr_unlock(job);
        cr_handlers_start(job);
        cr_lock(job);
    }
}

void cr_rma_unexpected(cr_job *job, int tag)
{
    cr_rma *m = job->rma;
    if (tag == RMA_TAG_REQ && m && !m->on && m->nspans) cr_bg_add(job, service_hook);
}

void cr_rma_hide(cr_job *job, const void *base)
{
    cr_rma *m = rma_of(job);
    for (int i = 0; i < m->nspans; i++)
        if (m->spans[i].base == (uintptr_t)base) {
            m->spans[i] = m->spans[--m->nspans];
            return;
        }
}

/* ---- the origin ------------------------------------------------------------- */

static bool self_or_mapped(cr_job *job, const cr_rtarget *t)
{
    return t->map || t->peer == job->rank;
}

static char *local_addr(const cr_rtarget *t)
{
    return t->map ? t->map : (char *)(uintptr_t)t->addr;
}

/* Single copy serves one-sided transfers with peer: it reads and writes. */
static bool single_copy(cr_job *job, int peer)
{
    return cr_sc_on(job, peer, CR_SC_READ | CR_SC_WRITE);
}

/* Move len bytes between buf here and the target by single copy (put: to it);
 * false when that did not work: the service moves them then, and checks the
 * address in its own words. */
static bool copy_direct(cr_job *job, const cr_rtarget *t, void *buf, size_t len, bool put)
{
    struct iovec l = {buf, len}, r = {(void *)(uintptr_t)t->addr, len};
    return cr_sc_try(job, t->peer, put, &l, &r, 1);
}

bool cr_rma_reaches(cr_job *job, const cr_rtarget *t, size_t len, bool atomics)
{
    if (self_or_mapped(job, t)) return true;
    if ((atomics && len) || !single_copy(job, t->peer)) return false;
    char byte;
    return !len || copy_direct(job, t, &byte, 1, false); /* tried once, now */
}

static int32_t ticket_tag(uint64_t ticket)
{
    return (int32_t)(ticket & 0x3fffffff) + 1; /* > 0, fits a tag either way round */
}

/* The event after a direct transfer: bump it where it lives. */
static void event_direct(cr_job *job, const char *call, const cr_rtarget *ev)
{
    if (!ev) return;
    if (self_or_mapped(job, ev)) {
        cr_amo_apply((uint64_t *)local_addr(ev), CR_AMO_ADD, 1, 0);
        if (ev->peer == job->rank)
            cr_wake_self(job);
        else
            cr_nudge(job, ev->peer);
        return;
    }
    rma_msg q = {.op = RQ_AMO_NOREPLY, .amo = CR_AMO_ADD, .addr = ev->addr, .a = 1};
    hw_request(job, ev->peer, sizeof q); /* the Elan's remote event */
    cr_send(job, call, ev->peer, CR_CTX_RMA, RMA_TAG_REQ, &q, sizeof q);
}

/* own: freed once the transfer is complete (what data sends from) */
static uint64_t track(cr_job *job, cr_rma *m, int peer, cr_req *reply, cr_req *data, void *own,
                      const cr_rma_opt *opt, uint64_t ticket)
{
    rma_op *o = op_new(job, m);
    o->ticket = ticket;
    o->own = own;
    o->peer = peer;
    o->req = reply;
    o->data = data;
    if (opt) {
        o->done = opt->done;
        o->arg = opt->arg;
    }
    if (!m->inflight) m->inflight_end = &m->inflight;
    *m->inflight_end = o; /* (appended at the end kept: a million in flight cost a scan each) */
    m->inflight_end = &o->next;
    return ticket;
}

/* Retire the transfers that completed; how many. */
static int reap(cr_job *job, cr_rma *m)
{
    int n = 0;
    for (rma_op **pp = &m->inflight; *pp;) {
        rma_op *o = *pp;
        if (!o->req->done || (o->data && !o->data->done)) {
            pp = &o->next;
            continue;
        }
        *pp = o->next;
        if (!*pp) m->inflight_end = pp;
        cr_req_release(job, o->req);
        if (o->data) cr_req_release(job, o->data);
        if (o->done) o->done(job, o->arg);
        op_put(m, o);
        n++;
    }
    return n;
}

static uint64_t finish_direct(cr_job *job, const char *call, const cr_rma_opt *opt)
{
    if (opt) {
        event_direct(job, call, opt->ev);
        if (opt->done) opt->done(job, opt->arg);
    }
    return 0;
}

/* A put (or get) that needs no service: nothing to move, mapped memory, or
 * single copy. True when it is done (its event and done too). */
static bool moved_direct(cr_job *job, const char *call, const cr_rtarget *t, char *buf, size_t len,
                         bool put, const cr_rma_opt *opt)
{
    cr_trace_args(job, t->peer, 0, len, CR_CTX_RMA);
    if (len && self_or_mapped(job, t)) {
        cr_trace_how(job, "mapped");
        if (put)
            memmove(local_addr(t), buf, len);
        else
            memmove(buf, local_addr(t), len);
    } else if (len && single_copy(job, t->peer)) {
        cr_trace_how(job, "single-copy");
        if (!copy_direct(job, t, buf, len, put)) return false; /* the service does it */
    } else if (len) {
        return false;
    }
    finish_direct(job, call, opt);
    return true;
}

/* A transfer through the service was tracked as tk: an event at another
 * rank than the target is bumped once it is complete. */
static uint64_t service_started(cr_job *job, const char *call, const cr_rtarget *t,
                                const cr_rma_opt *opt, uint64_t tk)
{
    cr_trace_how(job, "service");
    if (!opt || !opt->ev || opt->ev->peer == t->peer) return tk;
    cr_rma_flush(job, call, t->peer);
    event_direct(job, call, opt->ev);
    return 0;
}

const cr_rma_opt *cr_rma_bcast_begin(cr_job *job, int lo, int hi, cr_rma_opt *o)
{
    if (!job->vt.base) return NULL;
    cr_vt_group_begin(&job->vt, CR_VT_CLASS_ONESIDED, lo, hi);
    if (!job->vt.grp.on) return NULL; /* the model has no broadcast */
    *o = (cr_rma_opt){.bcast_grp = job->vt.grp.id, .bcast_lo = lo, .bcast_hi = hi};
    return o;
}

void cr_rma_bcast_end(cr_job *job)
{
    if (job->vt.base) cr_vt_group_end(&job->vt);
}

uint64_t cr_rma_put(cr_job *job, const char *call, const cr_rtarget *t, const void *src, size_t len,
                    const cr_rma_opt *opt)
{
    cr_rma *m = rma_of(job);
    if (moved_direct(job, call, t, (char *)src, len, true, opt)) return 0;
    uint64_t ticket = m->next_ticket++;
    int32_t tag = ticket_tag(ticket);
    rma_msg q = {.op = len <= CR_RMA_INLINE ? RQ_PUT : RQ_PUT_LARGE,
                 .ticket = tag,
                 .addr = t->addr,
                 .len = len,
                 .flags = opt && opt->bcast_grp ? RQ_F_BCAST : 0,
                 .a = opt ? (uint32_t)opt->bcast_lo | (uint64_t)(uint32_t)opt->bcast_hi << 32 : 0,
                 .b = opt ? opt->bcast_grp : 0,
                 /* an event at another rank is bumped once the put is complete */
                 .ev = opt && opt->ev && opt->ev->peer == t->peer ? opt->ev->addr : 0};
    cr_sel s = {.src = t->peer, .ctx = CR_CTX_RMA, .tag_mode = CR_TAG_EXACT, .tag = tag};
    cr_req *ack = cr_irecv(job, call, &s, NULL, 0);
    cr_req *data = NULL;
    if (q.op == RQ_PUT) {
        char buf[sizeof q + CR_RMA_INLINE];
        memcpy(buf, &q, sizeof q);
        memcpy(buf + sizeof q, src, len);
        hw_request(job, t->peer, sizeof q + len);
        cr_send(job, call, t->peer, CR_CTX_RMA, RMA_TAG_REQ, buf, sizeof q + len);
    } else {
        hw_request(job, t->peer, sizeof q);
        cr_send(job, call, t->peer, CR_CTX_RMA, RMA_TAG_REQ, &q, sizeof q);
        data = cr_isend(job, call, t->peer, CR_CTX_RMA, -tag, src, len);
    }
    return service_started(job, call, t, opt, track(job, m, t->peer, ack, data, NULL, opt, ticket));
}

uint64_t cr_rma_get(cr_job *job, const char *call, const cr_rtarget *t, void *dst, size_t len,
                    const cr_rma_opt *opt)
{
    cr_rma *m = rma_of(job);
    if (moved_direct(job, call, t, dst, len, false, opt)) return 0;
    uint64_t ticket = m->next_ticket++;
    int32_t tag = ticket_tag(ticket);
    bool ev_here = opt && opt->ev && opt->ev->peer == t->peer;
    rma_msg q = {.op = RQ_GET,
                 .ticket = tag,
                 .addr = t->addr,
                 .len = len,
                 .ev = ev_here ? opt->ev->addr : 0};
    cr_sel s = {.src = t->peer, .ctx = CR_CTX_RMA, .tag_mode = CR_TAG_EXACT, .tag = tag};
    cr_req *r = cr_irecv(job, call, &s, dst, len);
    hw_request(job, t->peer, sizeof q);
    cr_send(job, call, t->peer, CR_CTX_RMA, RMA_TAG_REQ, &q, sizeof q);
    return service_started(job, call, t, opt, track(job, m, t->peer, r, NULL, NULL, opt, ticket));
}

/* A vector transfer through the service: one engine transfer per run, and
 * the caller's done once all of them are. */
typedef struct rma_batch {
    int left;
    void (*done)(cr_job *job, void *arg);
    void *arg;
} rma_batch;

static void batch_done(cr_job *job, void *arg)
{
    rma_batch *b = arg;
    if (--b->left) return;
    if (b->done) b->done(job, b->arg);
    free(b);
}

/* k pieces (bytes of data at data) through the service in one request: its
 * descriptors (and a put's data) follow it; a get's answer lands at data. */
static void vec_request(cr_job *job, const char *call, const cr_rtarget *t, const cr_run *runs,
                        int k, char *data, size_t bytes, bool put, const cr_rma_opt *opt)
{
    cr_rma *m = rma_of(job);
    uint64_t ticket = m->next_ticket++;
    int32_t tag = ticket_tag(ticket);
    size_t desc = (size_t)k * sizeof(rma_vrun), follow = put ? desc + bytes : desc;
    rma_vrun *v = malloc(follow);
    if (!v) cr_fatal(job, call, "out of memory for a transfer of %d pieces", k);
    for (int i = 0; i < k; i++) v[i] = (rma_vrun){t->addr + (uint64_t)runs[i].off, runs[i].len};
    if (put) memcpy(v + k, data, bytes);
    rma_msg q = {.op = put ? RQ_PUTV : RQ_GETV,
                 .ticket = tag,
                 .len = bytes,
                 .a = (uint64_t)k,
                 .ev = opt && opt->ev && opt->ev->peer == t->peer ? opt->ev->addr : 0};
    cr_sel s = {.src = t->peer, .ctx = CR_CTX_RMA, .tag_mode = CR_TAG_EXACT, .tag = tag};
    cr_req *answer = cr_irecv(job, call, &s, put ? NULL : data, put ? 0 : bytes);
    cr_send(job, call, t->peer, CR_CTX_RMA, RMA_TAG_REQ, &q, sizeof q);
    cr_req *follows = cr_isend(job, call, t->peer, CR_CTX_RMA, -tag, v, follow);
    service_started(job, call, t, opt, track(job, m, t->peer, answer, follows, v, opt, ticket));
}

static bool xferv(cr_job *job, const char *call, const cr_rtarget *t, const cr_run *runs, int n,
                  char *data, const cr_rma_opt *opt, bool put)
{
    if (self_or_mapped(job, t)) {
        char *base = local_addr(t);
        size_t at = 0;
        for (int i = 0; i < n; i++) {
            if (put)
                memmove(base + runs[i].off, data + at, runs[i].len);
            else
                memmove(data + at, base + runs[i].off, runs[i].len);
            at += runs[i].len;
        }
        finish_direct(job, call, opt);
        return true;
    }
    if (single_copy(job, t->peer) &&
        cr_sc_on(job, t->peer, (put ? CR_SC_WRITE : CR_SC_READ) | CR_SC_VEC)) {
        struct iovec loc[256], rem[256];
        size_t at = 0;
        bool ok = true;
        for (int i = 0; i < n && ok;) {
            int k = 0;
            for (; k < 256 && i < n; k++, i++) {
                loc[k] = (struct iovec){data + at, runs[i].len};
                rem[k] = (struct iovec){(void *)(uintptr_t)(t->addr + (uint64_t)runs[i].off),
                                        runs[i].len};
                at += runs[i].len;
            }
            ok = cr_sc_try(job, t->peer, put, loc, rem, k);
        }
        if (ok) {
            finish_direct(job, call, opt);
            return true;
        }
        /* the service, for all of it */
    }
    rma_batch *b = malloc(sizeof *b);
    if (!b) cr_fatal(job, call, "out of memory for a transfer in flight");
    *b = (rma_batch){1, opt ? opt->done : NULL, opt ? opt->arg : NULL};
    cr_rma_opt o = {.done = batch_done, .arg = b};
    size_t at = 0;
    for (int i = 0; i < n;) {
        int k = 0;
        size_t bytes = 0;
        while (i + k < n && k < VEC_RUNS && (k == 0 || bytes + runs[i + k].len <= VEC_BYTES))
            bytes += runs[i + k++].len;
        o.ev = i + k == n && opt ? opt->ev : NULL; /* the event once, after the last */
        b->left++;
        if (k == 1 || bytes > VEC_BYTES) { /* one piece: the plain request */
            cr_rtarget r = {t->peer, t->addr + (uint64_t)runs[i].off, NULL};
            if (put)
                cr_rma_put(job, call, &r, data + at, bytes, &o);
            else
                cr_rma_get(job, call, &r, data + at, bytes, &o);
        } else {
            vec_request(job, call, t, runs + i, k, data + at, bytes, put, &o);
        }
        at += bytes;
        i += k;
    }
    bool now = b->left == 1;
    batch_done(job, b); /* this call's hold */
    return now;
}

bool cr_rma_putv(cr_job *job, const char *call, const cr_rtarget *t, const cr_run *runs, int n,
                 const char *data, const cr_rma_opt *opt)
{
    return xferv(job, call, t, runs, n, (char *)data, opt, true);
}

bool cr_rma_getv(cr_job *job, const char *call, const cr_rtarget *t, const cr_run *runs, int n,
                 char *data, const cr_rma_opt *opt)
{
    return xferv(job, call, t, runs, n, data, opt, false);
}

void cr_rma_set_call(cr_job *job, cr_rma_call_fn fn)
{
    rma_of(job)->call_fn = fn;
}

bool cr_rma_exposed(cr_job *job, uint64_t addr, uint64_t len)
{
    return job->rma && exposed(job->rma, addr, len);
}

/* Send call request q with its len bytes at in (at most CR_RMA_INLINE) inside
 * it; in is freed. */
static void call_inline(cr_job *job, const char *call, int peer, const rma_msg *q, void *in,
                        size_t len)
{
    char buf[sizeof *q + CR_RMA_INLINE];
    memcpy(buf, q, sizeof *q);
    memcpy(buf + sizeof *q, in, len);
    cr_send(job, call, peer, CR_CTX_RMA, RMA_TAG_REQ, buf, sizeof *q + len);
    free(in);
}

uint64_t cr_rma_call(cr_job *job, const char *call, int peer, void *in, size_t len, void *out,
                     size_t outlen)
{
    if (len > CR_RMA_CALL_MAX)
        cr_fatal(job, call, "a call of %zu bytes to rank %d (at most %d)", len, peer,
                 CR_RMA_CALL_MAX);
    cr_rma *m = rma_of(job);
    uint64_t ticket = m->next_ticket++;
    int32_t tag = ticket_tag(ticket);
    rma_msg q = {.op = RQ_CALL, .ticket = tag, .len = len};
    cr_sel s = {.src = peer, .ctx = CR_CTX_RMA, .tag_mode = CR_TAG_EXACT, .tag = tag};
    cr_req *answer = cr_irecv(job, call, &s, out, outlen);
    cr_req *follows = NULL;
    void *own = in;
    if (len <= CR_RMA_INLINE) {
        call_inline(job, call, peer, &q, in, len);
        own = NULL;
    } else { /* sent from in itself, freed once sent */
        cr_send(job, call, peer, CR_CTX_RMA, RMA_TAG_REQ, &q, sizeof q);
        follows = cr_isend(job, call, peer, CR_CTX_RMA, -tag, in, len);
    }
    return track(job, m, peer, answer, follows, own, NULL, ticket);
}

void cr_rma_call_quiet(cr_job *job, const char *call, int peer, void *in, size_t len)
{
    if (len > CR_RMA_INLINE) {
        uint64_t ticket = cr_rma_call(job, call, peer, in, len, NULL, 0);
        (void)ticket; /* the next flush waits for it */
        return;
    }
    rma_msg q = {.op = RQ_CALL, .flags = RQ_F_QUIET, .len = len};
    call_inline(job, call, peer, &q, in, len);
}

uint64_t cr_rma_amo(cr_job *job, const char *call, const cr_rtarget *t, int op, uint64_t a,
                    uint64_t b)
{
    bool quiet = op & CR_AMO_QUIET;
    op &= ~CR_AMO_QUIET;
    if (self_or_mapped(job, t)) {
        uint64_t old = cr_amo_apply((uint64_t *)local_addr(t), op, a, b);
        if (op != CR_AMO_READ && !quiet && t->peer != job->rank) cr_nudge(job, t->peer);
        return old;
    }
    cr_rma *m = rma_of(job);
    uint64_t ticket = m->next_ticket++;
    int32_t tag = ticket_tag(ticket);
    rma_msg q = {.op = RQ_AMO, .amo = (uint8_t)op, .ticket = tag, .addr = t->addr, .a = a, .b = b};
    uint64_t old = 0;
    cr_sel s = {.src = t->peer, .ctx = CR_CTX_RMA, .tag_mode = CR_TAG_EXACT, .tag = tag};
    cr_req *r = cr_irecv(job, call, &s, &old, sizeof old);
    cr_send(job, call, t->peer, CR_CTX_RMA, RMA_TAG_REQ, &q, sizeof q);
    cr_req_wait(job, r);
    cr_req_release(job, r);
    return old;
}

bool cr_rma_done(cr_job *job, uint64_t ticket)
{
    if (!ticket || !job->rma) return true;
    reap(job, job->rma);
    for (rma_op *o = job->rma->inflight; o; o = o->next)
        if (o->ticket == ticket) return false;
    return true;
}

void cr_rma_reap(cr_job *job)
{
    if (job->rma) reap(job, job->rma);
}

typedef struct flush_arg {
    cr_job *job;
    int peer;
} flush_arg;

static bool flushed(void *p)
{
    flush_arg *f = p;
    cr_rma *m = f->job->rma;
    reap(f->job, m);
    for (rma_op *o = m->inflight; o; o = o->next)
        if (f->peer < 0 || o->peer == f->peer) return false;
    return true;
}

bool cr_rma_idle(cr_job *job)
{
    return !job->rma || !job->rma->inflight;
}

void cr_rma_flush(cr_job *job, const char *call, int peer)
{
    cr_rma_sim_serve(job);
    if (!job->rma || !job->rma->inflight) return;
    flush_arg f = {job, peer};
    cr_wait_until(job, call, flushed, &f, NULL);
}

void cr_rma_sim_serve(cr_job *job)
{
    if (__builtin_expect(job->vt.base != NULL, 0) && job->rma && job->rma->on) cr_progress(job);
}

void cr_rma_wait_word(cr_job *job, const char *call, bool (*ready)(void *), void *arg)
{
    cr_wait_until(job, call, ready, arg, NULL);
}
