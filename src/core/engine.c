/* The message engine: requests, matching and the point-to-point protocols.
 *
 * Protocols (seed 000 §3, seed 004 §7):
 *  - eager: a message up to the transport's payload limit travels at once as one
 *    active message; the transport's credits make the sender wait when the
 *    receiver's buffers for it are full.
 *  - rendezvous: a larger message sends an RTS (the "proxy") with its size and
 *    address; the receiver, once a receive matches, pulls the data straight into
 *    the user buffer with the transport's get (single copy) and answers FIN.
 *    Where get is denied it answers CTS and the sender pushes DATA chunks
 *    through the transport (a pipelined copy); the receiver drives either way.
 *    A receive of an exchange (cr_irecv_push: a collective's step that also
 *    sends to that peer) asks for the push too when the message is below
 *    XCHG_PUSH_BELOW, unless ranks outnumber cores (docs/engine.md: the push
 *    won at every size on 2026-11-30, and from 256 KiB lost 1.3-2.3x to the
 *    read on 2026-12-04, on the same project VM). Any other message is read,
 *    whether its sender waits for it or not (pushing a waited send below 128
 *    KiB was 2-3x slower than the read on 2026-12-04).
 *    Every single copy goes through single_copy.h, which holds the rule for a
 *    refusal (that peer goes by messages from then on).
 *  - cooperative copy (64 KiB and more, no more ranks than cores, not an
 *    exchange: this rank sending to that sender too, sends_to): the
 *    receiver reads the first half while the sender writes the rest (CTW,
 *    WDONE); a sender that is not blocked in its send gets the rest only by
 *    winning a claim slot first (start_pull), so a receive never waits for a
 *    sender outside the library, and exactly one side copies the rest.
 *  - detached (more ranks than cores): a blocking send of rendezvous size up to
 *    64 KiB to a single-copy peer sends its RTS from a copy and returns; the
 *    copy lives, counted in detached_bytes, until the FIN (or the push) ends
 *    the send, and the process does not leave before (cr_engine_drain).
 *  - cancel (MPI_Cancel of a send): the sender asks its RTS back (CANCEL); the
 *    receiver answers CANCELLED only if it still holds that RTS unmatched, so a
 *    send completes exactly once: cancelled, or by FIN/CTS/CTW as usual.
 * Invariants:
 *  - messages from one source are matched in the order they were sent: the
 *    transport delivers in order, the unexpected queue keeps arrival order and
 *    every later send to a peer queues behind a send that is waiting for credits;
 *    lane messages (cr_isend_lane: a reserved stream's) keep that order among
 *    themselves, in a queue of their own, and may overtake ordinary ones;
 *  - the unexpected queue holds no more than unexp_limit bytes from other ranks
 *    while nothing may be waited for behind them: past that, deliver refuses and
 *    the transport leaves the message (and everything behind it) with the
 *    sender, which waits for credits; a sender owed a reply, or one a posted
 *    receive may want (naming it, or any source), is never refused;
 *  - a request id names a live request: ids carry a generation, so a stale or
 *    made-up id is detected instead of touching another request;
 *  - several threads may wait at once (a progress thread, or the program's
 *    threads under MPI_THREAD_MULTIPLE): completing a request or queueing an
 *    unexpected message wakes the waiters that sleep and may want it
 *    (wake_for, job->sleepers), whichever thread's progress did it; blocking
 *    waits live on their threads' stacks (cr_wait), and the watchdog's board
 *    shows one of them only while the rank cannot move by itself: its one
 *    thread blocked, or every thread of the process blocked (a thread that
 *    computes may yet send what another waits for);
 *  - a message carries the check value its sender's interface gave it
 *    (job->chk_sig, courier run --check; opaque here, 0 while checking is off)
 *    in the header's rreq, which EAGER and RTS have no other use for, to the
 *    status of the receive that takes it (cr_status.sig). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "rma.h"
#include "single_copy.h"

/* ---- requests ------------------------------------------------------------ */

/* Reset what callers do not always set (this is on every receive's path). */
static inline void req_reset(cr_req *r, uint8_t kind, const char *op)
{
    r->done = r->stage = r->trunc_ok = 0;
    r->handler = NULL;
    r->user_fn = NULL;
    r->got = r->pushed = 0;
    r->rreq = 0;
    r->for_unexp = NULL;
    r->trunc_to = NULL;
    r->chain = NULL;
    r->fwd = NULL;
    r->sync = r->blocking = r->cancel = r->sleeper = r->fresh = r->lane = r->detached = 0;
    r->push = 0;
    r->kind = kind;
    r->op = op;
}

__attribute__((noreturn, noinline)) static void no_req(cr_job *job, const char *op)
{
    if (cr_idt_full(&job->reqs))
        cr_fatal(job, op, "more than %u requests outstanding; wait for some (msgwait) first",
                 (unsigned)CR_ID_MAX_SLOTS);
    cr_fatal(job, op, "out of memory for requests");
}

static inline cr_req *req_alloc(cr_job *job, uint8_t kind, const char *op)
{
    cr_req *r = cr_idt_alloc(&job->reqs);
    if (__builtin_expect(!r, 0)) no_req(job, op);
    req_reset(r, kind, op);
    return r;
}

void cr_req_release(cr_job *job, cr_req *r)
{
    cr_idt_free(&job->reqs, r);
}

uint64_t cr_req_id(const cr_req *r)
{
    return cr_idt_id(r);
}

cr_req *cr_req_from_id(cr_job *job, uint64_t id)
{
    return id > UINT32_MAX ? NULL : cr_idt_get(&job->reqs, (uint32_t)id);
}

static inline size_t accept_size(cr_job *job, cr_req *r, int src, int32_t tag, size_t size,
                                 uint64_t sig, const char *how);

/* A message this rank started sending, or that a receive of it matched: counted
 * for `courier status` (job->stats) and, while tracing, recorded with how it
 * goes. Every message passes exactly one of each. A send is recorded at 'at'
 * (0: now), a time taken before its receiver could see it: a receiver's record
 * is never earlier than its sender's. */
static inline void count_sent(cr_job *job, int dst, uint16_t ctx, int32_t tag, size_t len,
                              uint64_t at, const char *how)
{
    job->stats->sent_msgs++;
    job->stats->sent_bytes += len;
    if (__builtin_expect(job->trace != NULL, 0)) cr_trace_send_on(job, dst, ctx, tag, len, at, how);
}
static inline void count_matched(cr_job *job, int src, uint16_t ctx, int32_t tag, size_t len,
                                 uint64_t posted, const char *how)
{
    job->stats->recv_msgs++;
    job->stats->recv_bytes += len;
    if (__builtin_expect(job->trace != NULL, 0))
        cr_trace_recv_on(job, src, ctx, tag, len, posted, how);
}

/* An internal receive (cr_engine_buffer_rts) has all its data: the unexpected
 * entry now holds the message, or the user receive that matched it meanwhile
 * gets it. */
static inline void complete(cr_job *job, cr_req *r);
static void finish_internal(cr_job *job, cr_req *ri)
{
    if (ri->for_unexp) {
        cr_unexp *u = ri->for_unexp;
        u->op = CR_OP_EAGER;
        u->data = ri->buf;
        u->owned = 1;
        u->arriving = NULL;
    } else {
        cr_req *r = ri->chain;
        size_t n = accept_size(job, r, ri->st.src, ri->st.tag, ri->st.size, ri->st.sig, "buffered");
        if (n) memcpy(r->buf, ri->buf, n);
        free(ri->buf);
        complete(job, r);
    }
    cr_req_release(job, ri);
}

/* Request r is done: wake a thread that sleeps waiting for it, or for
 * anything (engine.h: job->sleepers). A load on the fast path. */
static inline void wake_for(cr_job *job, const cr_req *r)
{
    if (__builtin_expect(job->sleepers != 0, 0) && (r->sleeper || (job->sleep_any && !r->fresh)))
        cr_wake_self(job);
}

/* complete for an internal receive or a stand-in (rare: out of line). */
static __attribute__((noinline)) void complete_internal(cr_job *job, cr_req *r)
{
    if (!r->fwd) {
        finish_internal(job, r);
        return;
    }
    r->fwd->st = r->st; /* a stand-in for a blocking receive (start_pull) */
    r->fwd->done = 1;
    cr_req_release(job, r);
    wake_for(job, r->fwd);
}

/* A detached send (send_wait) is done: nobody waits for it; its copy and
 * its request go. */
static __attribute__((noinline)) void finish_detached(cr_job *job, cr_req *r)
{
    job->detached_bytes -= r->cap;
    free(r->buf);
    cr_req_release(job, r);
}

static inline void complete(cr_job *job, cr_req *r)
{
    if (__builtin_expect(r->for_unexp || r->chain || r->fwd, 0)) {
        complete_internal(job, r);
        return;
    }
    if (r->kind == CR_REQ_SEND) {
        job->sends_active--;
        job->sends_to[r->peer]--;
        if (__builtin_expect(r->detached, 0)) {
            finish_detached(job, r);
            return;
        }
    }
    if (__builtin_expect(r->handler != NULL, 0)) {
        r->next = NULL;
        *job->handlers_due_tail = r;
        job->handlers_due_tail = &r->next;
        cr_wake_self(job); /* the progress thread runs it */
    }
    r->done = 1;
    wake_for(job, r); /* another thread may sleep in a wait for it */
}

/* ---- matching ------------------------------------------------------------ */

static cr_req *take_posted(cr_job *job, int src, uint16_t ctx, int32_t tag)
{
    for (cr_req **pp = &job->posted; *pp; pp = &(*pp)->next) {
        cr_req *r = *pp;
        if (!cr_sel_match(&r->sel, src, ctx, tag)) continue;
        *pp = r->next;
        if (!*pp) job->posted_tail = pp;
        job->stats->posted--;
        return r;
    }
    return NULL;
}

static cr_unexp *find_unexp(cr_job *job, const cr_sel *s, cr_unexp ***where)
{
    for (cr_unexp **pp = &job->unexp; *pp; pp = &(*pp)->next)
        if (cr_sel_match(s, (*pp)->src, (*pp)->ctx, (*pp)->tag)) {
            if (where) *where = pp;
            return *pp;
        }
    return NULL;
}

static void unlink_unexp(cr_job *job, cr_unexp **pp)
{
    cr_unexp *u = *pp;
    *pp = u->next;
    if (!*pp) job->unexp_tail = pp;
    if (u->src != job->rank) job->unexp_bytes -= sizeof *u + u->held;
    job->stats->unexpected--;
    job->stats->unexp_bytes -= u->size;
    job->recv_gen++; /* space freed: a refused sender may now be taken */
}

/* A reply from p is now owed (a CTS, FIN, DATA or WDONE): a message of p
 * refused while nothing was owed to it (over the unexpected budget) is taken
 * now, since the reply may be queued behind it; the transport offers it again
 * once recv_gen moves. */
static inline void owe(cr_job *job, int p)
{
    if (job->owed[p]++ == 0) job->recv_gen++;
}

/* Is a receive posted that a later message of src may match (one naming src,
 * or any source)? Then a message of src over the unexpected budget is taken
 * all the same: the transport holds everything behind a refused message, and
 * a send and a receive that match must complete (MPI's progress rule), even
 * when a message the program receives later came first. */
static bool recv_wants(const cr_job *job, int src)
{
    for (const cr_req *r = job->posted; r; r = r->next)
        if (r->sel.src == src || r->sel.src == CR_ANY_SOURCE) return true;
    return false;
}

/* A message of 'size' bytes matched receive r: count it (and trace it, saying
 * how it comes), check it fits, fill the status (sig: its sender's check value). */
static inline size_t accept_size(cr_job *job, cr_req *r, int src, int32_t tag, size_t size,
                                 uint64_t sig, const char *how)
{
    count_matched(job, src, r->sel.ctx, tag, size, r->posted_at, how);
    r->st.sig = sig;
    r->st.src = src;
    r->st.tag = tag;
    r->st.size = size;
    r->st.count = size;
    if (size > r->cap) {
        if (r->trunc_to) {
            if (!r->trunc_to->set) *r->trunc_to = (cr_trunc){size, r->cap, src, true};
        } else if (!r->trunc_ok) {
            cr_fatal(job, r->op,
                     "message of %zu bytes (type %d from node %d) is longer than the %zu-byte "
                     "receive buffer; post a larger buffer (probe first to learn the size)",
                     size, (int)tag, src, r->cap);
        }
        r->st.count = r->cap;
    }
    return r->st.count;
}

/* ---- sending ------------------------------------------------------------- */

/* The queue of sends to peer waiting for credits: its lane's or its ordinary one. */
static inline cr_req **backlog_of(cr_job *job, int peer, bool lane)
{
    return &job->backlog[2 * peer + lane];
}

static void backlog_push(cr_job *job, int peer, cr_req *r)
{
    r->next = NULL;
    cr_req **pp = backlog_of(job, peer, r->lane);
    while (*pp) pp = &(*pp)->next;
    *pp = r;
    job->nbacklog++;
}

/* Poll every transport but l; how many messages they delivered. */
static int progress_others(cr_job *job, const cr_link *l)
{
    int n = 0;
    for (int i = 0; i < job->nlinks; i++)
        if (&job->links[i] != l) n += job->links[i].ops->poll(job->links[i].ctx);
    return n;
}

static void ctrl_send(cr_job *job, int peer, const cr_hdr *h)
{
    if (!job->ctrlq[peer] && cr_tp_send(job, peer, h, NULL, 0) == 0) return;
    cr_ctrl *c = malloc(sizeof *c), **pp = &job->ctrlq[peer];
    if (!c) cr_fatal(job, "progress", "out of memory for a control message");
    c->h = *h;
    c->next = NULL;
    while (*pp) pp = &(*pp)->next;
    *pp = c;
    job->nctrl++;
}

/* Try the next wire step of send r; returns 0 when done with it, CR_EAGAIN otherwise. */
static int send_step(cr_job *job, cr_req *r)
{
    const cr_link *l = cr_via(job, r->peer);
    int tp = r->peer - l->base; /* the peer as its transport numbers it */
    cr_hdr h = {.ctx = r->ctx, .tag = r->tag, .size = r->cap, .rreq = r->sig};
    switch (r->stage) {
    case CR_STAGE_EAGER:
        h.op = CR_OP_EAGER;
        h.flags = (r->lane ? CR_HDR_LANE : 0) | (r->sig ? CR_HDR_WHOLE : 0);
        if (l->ops->send_am(l->ctx, tp, &h, r->buf, r->cap)) return CR_EAGAIN;
        complete(job, r);
        return 0;
    case CR_STAGE_RTS:
        h.op = CR_OP_RTS;
        h.flags = (r->sync ? CR_HDR_SYNC : 0) | (r->blocking ? CR_HDR_WAITS : 0);
        h.addr = (uint64_t)(uintptr_t)r->buf;
        h.sreq = cr_req_id(r);
        /* Waiting for the reply before the RTS goes: to this rank itself the
         * RTS is delivered, matched and answered (FIN) inside send_am. */
        r->stage = CR_STAGE_WAIT;
        owe(job, r->peer); /* a FIN or a CTS will come */
        if (l->ops->send_am(l->ctx, tp, &h, NULL, 0)) {
            r->stage = CR_STAGE_RTS;
            job->owed[r->peer]--;
            return CR_EAGAIN;
        }
        return 0;
    case CR_STAGE_PUSH:
        h.op = CR_OP_DATA;
        h.rreq = r->rreq;
        while (r->pushed < r->cap) {
            size_t n = r->cap - r->pushed, max = l->ops->max_payload(l->ctx, tp);
            if (n > max) n = max;
            h.addr = r->pushed;
            if (l->ops->send_am(l->ctx, tp, &h, (const char *)r->buf + r->pushed, n))
                return CR_EAGAIN;
            r->pushed += n;
        }
        complete(job, r);
        return 0;
    default:
        return 0;
    }
}

static int drain_backlogs(cr_job *job)
{
    int n = 0;
    for (int p = 0; p < job->npeers && (job->nbacklog || job->nctrl); p++) {
        while (job->ctrlq[p]) {
            cr_ctrl *c = job->ctrlq[p];
            if (cr_tp_send(job, p, &c->h, NULL, 0)) break;
            job->ctrlq[p] = c->next;
            free(c);
            job->nctrl--;
            n++;
        }
        for (int lane = 1; lane >= 0; lane--) { /* the lane first */
            cr_req **q = backlog_of(job, p, lane);
            while (*q) {
                /* (a send done here may be freed or queued for its handler) */
                cr_req *r = *q, *next = r->next;
                if (send_step(job, r)) break;
                *q = next;
                job->nbacklog--;
                n++;
            }
        }
    }
    return n;
}

static void check_dst(cr_job *job, const char *op, int dst)
{
    if (dst < 0 || dst >= job->npeers)
        cr_fatal(job, op, "destination %d is out of range 0..%d", dst, job->npeers - 1);
}

/* A synchronous send always takes the rendezvous path: it completes only when
 * the receiver has matched it (seed 004's end-to-end significance). */
static cr_req *start_send(cr_job *job, const char *op, int dst, uint16_t ctx, int32_t tag,
                          const void *buf, size_t len, bool sync, bool blocking, bool lane)
{
    check_dst(job, op, dst);
    cr_req *r = req_alloc(job, CR_REQ_SEND, op);
    r->lane = lane;
    r->fresh = 1;
    r->peer = dst;
    r->ctx = ctx;
    r->tag = tag;
    r->buf = (void *)buf;
    r->cap = len;
    r->stage = len <= cr_eager(job, dst) && !sync ? CR_STAGE_EAGER : CR_STAGE_RTS;
    r->sync = sync;
    r->blocking = blocking;
    r->sig = job->chk_sig;
    job->sends_active++;
    job->sends_to[dst]++;
    count_sent(job, dst, ctx, tag, len, 0,
               sync                         ? "sync"
               : r->stage == CR_STAGE_EAGER ? "eager"
                                            : "rendezvous");
    if (*backlog_of(job, dst, lane) || send_step(job, r)) backlog_push(job, dst, r);
    r->fresh = 0;
    return r;
}

cr_req *cr_isend(cr_job *job, const char *op, int dst, uint16_t ctx, int32_t tag, const void *buf,
                 size_t len)
{
    return start_send(job, op, dst, ctx, tag, buf, len, false, false, false);
}

/* A lane message is eager: it must not wait for a receive to match it. */
static void check_lane(cr_job *job, const char *op, int dst, size_t len)
{
    check_dst(job, op, dst);
    if (len > cr_eager(job, dst))
        cr_fatal(job, op,
                 "a lane message of %zu bytes to rank %d is longer than the eager size (%zu "
                 "bytes); send it in parts",
                 len, dst, cr_eager(job, dst));
}

cr_req *cr_isend_lane(cr_job *job, const char *op, int dst, uint16_t ctx, int32_t tag,
                      const void *buf, size_t len)
{
    check_lane(job, op, dst, len);
    return start_send(job, op, dst, ctx, tag, buf, len, false, false, true);
}

cr_req *cr_issend(cr_job *job, const char *op, int dst, uint16_t ctx, int32_t tag, const void *buf,
                  size_t len)
{
    return start_send(job, op, dst, ctx, tag, buf, len, true, false, false);
}

void cr_ssend(cr_job *job, const char *op, int dst, uint16_t ctx, int32_t tag, const void *buf,
              size_t len)
{
    cr_req *r = start_send(job, op, dst, ctx, tag, buf, len, true, true, false);
    cr_req_wait(job, r);
    cr_req_release(job, r);
}

/* Detached sends: with more ranks than cores, a blocking send of a rendezvous
 * message up to DETACH_MAX bytes, to a peer that reads it by single copy,
 * copies it aside and returns at once; the receiver reads the copy whenever a
 * receive matches, and its FIN (or CTS: the copy is pushed) frees it. The
 * sender no longer waits for its receiver to be given a core — under
 * oversubscription a wait for a FIN is a sleep and a wake-up — at the price of
 * one memcpy. Not where the data would have to be pushed (tcp, ucx, refused
 * single copy): the push waits for the sender's next call. Copies held at once
 * are bounded (DETACH_BUDGET); past it, sends wait as before. Measured
 * (bench/results/npb.md): NPB CG, 4 ranks on 2 CPUs, a sleep less per
 * exchange; the copy costs a 2-rank ping-pong on one CPU 1-3 us at 32-64 KiB
 * (5 us at 128 KiB: hence the limit). */
#define DETACH_MAX (64u << 10)
#define DETACH_BUDGET (4u << 20)
static bool send_detached(cr_job *job, const char *op, int dst, uint16_t ctx, int32_t tag,
                          const void *buf, size_t len)
{
    if (!job->oversub || len <= cr_eager(job, dst) || len > DETACH_MAX ||
        job->detached_bytes + len > DETACH_BUDGET || !cr_sc_on(job, dst, CR_SC_READ))
        return false;
    void *copy = malloc(len);
    if (!copy) return false;
    memcpy(copy, buf, len);
    job->detached_bytes += len;
    cr_req *r = start_send(job, op, dst, ctx, tag, copy, len, false, false, false);
    if (r->done) /* (a FIN cannot come before the RTS has gone; for safety) */
        finish_detached(job, r);
    else
        r->detached = 1;
    return true;
}

/* cr_send's path with a request: long, or queued behind others, or no credits. */
static __attribute__((noinline)) void send_wait(cr_job *job, const char *op, int dst, uint16_t ctx,
                                                int32_t tag, const void *buf, size_t len)
{
    if (send_detached(job, op, dst, ctx, tag, buf, len)) return;
    cr_req *r = start_send(job, op, dst, ctx, tag, buf, len, false, true, false);
    cr_req_wait(job, r);
    cr_req_release(job, r);
}

static inline bool send_now(cr_job *job, int dst, uint16_t ctx, int32_t tag, const void *buf,
                            size_t len, bool lane)
{
    if (__builtin_expect(len > cr_eager(job, dst) || *backlog_of(job, dst, lane), 0)) return false;
    cr_hdr h = {.op = CR_OP_EAGER,
                .flags = (lane ? CR_HDR_LANE : 0) | (job->chk_sig ? CR_HDR_WHOLE : 0),
                .ctx = ctx,
                .tag = tag,
                .size = len,
                .rreq = job->chk_sig};
    /* stamped before the message is visible: its receiver may record it
     * before cr_tp_send returns (under load, milliseconds before) */
    uint64_t at = __builtin_expect(job->trace != NULL, 0) ? cr_trace_now(job) : 0;
    if (cr_tp_send(job, dst, &h, buf, len)) return false;
    count_sent(job, dst, ctx, tag, len, at, "eager");
    return true;
}

bool cr_send_now(cr_job *job, int dst, uint16_t ctx, int32_t tag, const void *buf, size_t len)
{
    return send_now(job, dst, ctx, tag, buf, len, false);
}

bool cr_send_lane_now(cr_job *job, const char *op, int dst, uint16_t ctx, int32_t tag,
                      const void *buf, size_t len)
{
    check_lane(job, op, dst, len);
    return send_now(job, dst, ctx, tag, buf, len, true);
}

void cr_send_lane(cr_job *job, const char *op, int dst, uint16_t ctx, int32_t tag, const void *buf,
                  size_t len)
{
    if (cr_send_lane_now(job, op, dst, ctx, tag, buf, len)) return;
    cr_req *r = start_send(job, op, dst, ctx, tag, buf, len, false, true, true);
    cr_req_wait(job, r);
    cr_req_release(job, r);
}

void cr_send(cr_job *job, const char *op, int dst, uint16_t ctx, int32_t tag, const void *buf,
             size_t len)
{
    check_dst(job, op, dst);
    if (__builtin_expect(cr_send_now(job, dst, ctx, tag, buf, len), 1)) return;
    send_wait(job, op, dst, ctx, tag, buf, len);
}

/* ---- receiving ----------------------------------------------------------- */

/* A receive that a message on the wire must name: a blocking receive (on the
 * stack, no id) gets a table request that completes it through fwd. */
static cr_req *with_id(cr_job *job, cr_req *r)
{
    if (r->id.idx != CR_NOID) return r;
    cr_req *t = req_alloc(job, CR_REQ_RECV, r->op);
    t->buf = r->buf;
    t->cap = r->cap;
    t->st = r->st;
    t->trunc_ok = r->trunc_ok;
    t->trunc_to = r->trunc_to;
    t->fwd = r;
    return t;
}

/* Ask the sender to push the message (CTS): single copy is denied or failed. */
static void ask_push(cr_job *job, cr_req *r, int src, uint64_t sreq)
{
    r = with_id(job, r);
    cr_hdr h = {.op = CR_OP_CTS, .sreq = sreq, .rreq = cr_req_id(r), .size = r->st.size};
    r->got = 0;
    r->stage = CR_STAGE_PUSH; /* only now may DATA name this receive */
    owe(job, src);            /* DATA will come */
    ctrl_send(job, src, &h);
}

/* Cooperative single copy: for a long message, the receiver reads the first
 * part while the sender writes the rest straight into the receiver's buffer,
 * so two cores copy at once (twice the bandwidth of one process_vm_readv
 * here; docs/engine.md). The split depends only on the length. Not with more
 * ranks than cores: the two may share a core, and the sender's part waits for
 * its turn (8 ranks on 2 cores, 64 KiB ping-pong: 18 us without, 31 us with).
 *
 * A sender that waits for its send (CR_HDR_WAITS: a blocking send) is in the
 * library until the reply comes: the receiver counts on its part (CTW, then
 * WDONE). Any other sender may be computing, so the rest goes to whichever
 * side takes it first, through a claim slot of the receiver's in the host
 * segment (host.h): the receiver arms a free slot with a fresh sequence
 * number (state OPEN), names it in the CTW (CR_HDR_CLAIM), reads its part and
 * then claims the rest (OPEN -> RECEIVER); the sender, on the CTW, claims it
 * (OPEN -> SENDER) and writes it only if it won, then answers WDONE. One
 * compare-exchange wins, so exactly one side copies the rest: the receiver
 * waits for a WDONE only when the sender won, i.e. while the sender is inside
 * its CTW handler writing; otherwise it reads the rest itself and answers FIN,
 * which the sender, behind the CTW it then finds lost, takes as usual. A slot
 * is armed again only once settled (the receiver won, or the WDONE came); a
 * CTW still on its way for an earlier arming carries an older sequence
 * number, so its compare-exchange fails and it writes nothing: no byte lands
 * in a receive that has completed. */
#define COOP_MIN (64u << 10)
static size_t coop_split(size_t n)
{
    return n / 2 & ~(size_t)4095;
}

enum { CLAIM_OPEN = 0, CLAIM_SENDER = 1, CLAIM_RECEIVER = 2 };
#define CLAIM_SEQ_MASK ((1ull << 48) - 1) /* a CTW carries 48 bits: ctx, tag */

static uint64_t claim_word(uint64_t seq, unsigned state)
{
    return (seq & CLAIM_SEQ_MASK) << 2 | state;
}

/* One compare-exchange on claim word w of seq: did 'state' win it? */
static bool claim_take(_Atomic uint64_t *w, uint64_t seq, unsigned state)
{
    uint64_t open = claim_word(seq, CLAIM_OPEN);
    return atomic_compare_exchange_strong(w, &open, claim_word(seq, state));
}

/* COURIER_TEST_CLAIM (tests only): "receiver" claims before reading its part,
 * "sender" waits for the sender's claim before its own (and ends the job if
 * none comes within 2 s). */
static int claim_test(cr_job *job)
{
    if (!job->claim_test) {
        const char *e = getenv("COURIER_TEST_CLAIM");
        job->claim_test = !e ? 1 : !strcmp(e, "receiver") ? 2 : !strcmp(e, "sender") ? 3 : 1;
    }
    return job->claim_test;
}

/* Arm a free claim slot of this rank for a copy from src: the sequence number
 * (its slot: seq % CR_HOST_CLAIMS), or 0: none (no claim slots, src not on
 * this host's segment, every slot armed). */
static uint64_t claim_arm(cr_job *job, int src)
{
    if (!job->host.claims || src >= job->size || job->claim_busy == ~0ull) return 0;
    uint64_t seq = job->claim_seq;
    do seq++;
    while ((job->claim_busy >> (seq % CR_HOST_CLAIMS) & 1) || !(seq & CLAIM_SEQ_MASK));
    job->claim_seq = seq;
    job->claim_busy |= 1ull << (seq % CR_HOST_CLAIMS);
    atomic_store_explicit(cr_host_claim(&job->host, job->rank, (unsigned)(seq % CR_HOST_CLAIMS)),
                          claim_word(seq, CLAIM_OPEN), memory_order_release);
    return seq;
}

static void claim_settled(cr_job *job, unsigned slot)
{
    job->claim_busy &= ~(1ull << slot);
}

/* The receiver's side of a claimed cooperative copy of n bytes (CTW sent). */
static void pull_claimed(cr_job *job, cr_req *r, int src, uint64_t addr, size_t n, uint64_t seq)
{
    size_t split = coop_split(n);
    unsigned slot = (unsigned)(seq % CR_HOST_CLAIMS);
    _Atomic uint64_t *w = cr_host_claim(&job->host, job->rank, slot);
    int test = claim_test(job);
    bool mine = test == 2 && claim_take(w, seq, CLAIM_RECEIVER);
    /* refused: single copy with src is off now; the rest is still claimed
     * (or the sender's WDONE awaited) before the whole is asked for (CTS) */
    bool got = cr_sc_read(job, r->op, src, r->buf, addr, split);
    if (test == 3) {
        for (uint64_t t0 = cr_timer_ns();
             atomic_load(w) == claim_word(seq, CLAIM_OPEN) && cr_timer_ns() - t0 < 2000000000ull;)
            cr_cpu_relax();
        if (atomic_load(w) == claim_word(seq, CLAIM_OPEN))
            cr_fatal(job, r->op,
                     "COURIER_TEST_CLAIM=sender, but rank %d did not claim its part of a "
                     "cooperative copy within 2 s (is it in a call?)",
                     src);
    }
    if (!mine && !claim_take(w, seq, CLAIM_RECEIVER)) { /* the sender writes the rest */
        r->claim = (uint8_t)(slot + 1);
        r->stage = CR_STAGE_COOP;
        r->got = got ? split : 0;
        owe(job, src); /* WDONE will come */
        return;
    }
    claim_settled(job, slot); /* the sender's CTW, whenever it comes, finds it lost */
    if (got && cr_sc_read(job, r->op, src, (char *)r->buf + split, addr + split, n - split)) {
        cr_hdr f = {.op = CR_OP_FIN, .sreq = r->rreq, .size = r->st.size};
        ctrl_send(job, src, &f);
        complete(job, r);
        return;
    }
    ask_push(job, r, src, r->rreq);
}

/* An exchange's message shorter than this is pushed (cr_irecv_push), a
 * longer one read: 2 ranks on 2 CPUs, 2026-12-04, interleaved, push against
 * read: MPI_Allgather 32 KiB 7.5-16.4 us against 9.4-20.0, 2 MiB 631-1492
 * against 388-874; MPI_Allreduce 256 KiB 54-121 against 37-79; MPI_Alltoall
 * 256 KiB 102-122 against 32-53. */
#define XCHG_PUSH_BELOW (64u << 10)

/* Receive r matched a rendezvous message: pull it (single copy) or ask for a
 * push. */
static void start_pull(cr_job *job, cr_req *r, int src, int32_t tag, size_t size, uint64_t addr,
                       uint64_t sreq, uint8_t flags, uint64_t sig)
{
    size_t fits = size < r->cap ? size : r->cap;
    bool pull = !(r->push && fits < XCHG_PUSH_BELOW) && cr_sc_on(job, src, CR_SC_READ);
    /* not in an exchange (this rank sends to src too): src has its own copy to
     * make (osu_bibw 256 KiB, 2 ranks on 2 CPUs: 24.3 -> 42.5 GB/s) */
    bool coop =
        pull && src != job->rank && fits >= COOP_MIN && !job->oversub && !job->sends_to[src];
    uint64_t seq = 0; /* a claimed copy's sequence number */
    if (coop && !(flags & CR_HDR_WAITS)) coop = (seq = claim_arm(job, src)) != 0;
    size_t n = accept_size(job, r, src, tag, size, sig,
                           coop                ? "cooperative"
                           : pull || size == 0 ? "single-copy"
                                               : "pushed");
    cr_hdr h = {.sreq = sreq, .size = size};
    if (coop) {
        r = with_id(job, r);
        cr_hdr c = {.op = CR_OP_CTW,
                    .flags = seq ? CR_HDR_CLAIM : 0,
                    .ctx = (uint16_t)(seq >> 32),
                    .tag = (int32_t)(uint32_t)seq,
                    .sreq = sreq,
                    .rreq = cr_req_id(r),
                    .size = n,
                    .addr = (uint64_t)(uintptr_t)r->buf};
        ctrl_send(job, src, &c);
        r->rreq = sreq;
        if (seq) {
            pull_claimed(job, r, src, addr, n, seq);
            return;
        }
        size_t split = coop_split(n);
        owe(job, src); /* WDONE will come */
        r->stage = CR_STAGE_COOP;
        r->claim = 0;
        /* refused: the sender pushes it all once its WDONE is in */
        r->got = cr_sc_read(job, r->op, src, r->buf, addr, split) ? split : 0;
        return;
    }
    /* empty: nothing to pull (MPI_Ssend); refused: have it pushed */
    if (size == 0 || (pull && cr_sc_read(job, r->op, src, r->buf, addr, n))) {
        h.op = CR_OP_FIN;
        ctrl_send(job, src, &h);
        complete(job, r);
        return;
    }
    ask_push(job, r, src, sreq);
}

/* Receive r takes message u, already off the unexpected queue; u is freed. */
static void take_detached(cr_job *job, cr_req *r, cr_unexp *u)
{
    if (u->arriving) { /* still being pushed to us: r completes when it is all there */
        u->arriving->for_unexp = NULL;
        u->arriving->chain = r;
    } else if (u->op == CR_OP_EAGER) {
        size_t n = accept_size(job, r, u->src, u->tag, u->size, u->sig, "eager");
        cr_copy(r->buf, u->data, n);
        if (u->owned) free(u->data);
        complete(job, r);
    } else {
        start_pull(job, r, u->src, u->tag, u->size, u->addr, u->sreq, u->flags, u->sig);
    }
    free(u);
}

static void take_unexp(cr_job *job, cr_req *r, cr_unexp **pp)
{
    cr_unexp *u = *pp;
    unlink_unexp(job, pp);
    take_detached(job, r, u);
}

cr_req *cr_irecv(cr_job *job, const char *op, const cr_sel *sel, void *buf, size_t cap)
{
    return cr_irecv_call(job, op, sel, buf, cap, false, NULL, NULL);
}

/* Match receive r against the unexpected queue, or post it. */
static inline void post_recv(cr_job *job, cr_req *r, const cr_sel *sel, void *buf, size_t cap,
                             bool trunc_ok)
{
    r->sel = *sel;
    r->buf = buf;
    r->cap = cap;
    r->trunc_ok = trunc_ok;
    r->posted_at = __builtin_expect(job->trace != NULL, 0) ? cr_trace_now(job) : 0;
    job->recv_gen++; /* a refused sender may now be taken */
    cr_unexp **pp;
    if (job->unexp && find_unexp(job, sel, &pp)) {
        take_unexp(job, r, pp);
        return;
    }
    r->next = NULL;
    *job->posted_tail = r;
    job->posted_tail = &r->next;
    if (++job->stats->posted > job->stats->posted_max) job->stats->posted_max = job->stats->posted;
}

/* A table receive: trunc_ok, or a longer message noted in *note; fn run at completion. */
static cr_req *irecv_with(cr_job *job, const char *op, const cr_sel *sel, void *buf, size_t cap,
                          bool trunc_ok, cr_trunc *note, cr_handler_fn fn, void (*user_fn)(void),
                          bool push)
{
    cr_req *r = req_alloc(job, CR_REQ_RECV, op);
    r->fresh = 1;
    r->push = push;
    r->handler = fn;
    r->user_fn = user_fn;
    r->trunc_to = note;
    post_recv(job, r, sel, buf, cap, trunc_ok);
    r->fresh = 0;
    return r;
}

cr_req *cr_irecv_call(cr_job *job, const char *op, const cr_sel *sel, void *buf, size_t cap,
                      bool trunc_ok, cr_handler_fn fn, void (*user_fn)(void))
{
    return irecv_with(job, op, sel, buf, cap, trunc_ok, NULL, fn, user_fn, false);
}

cr_req *cr_irecv_note(cr_job *job, const char *op, const cr_sel *sel, void *buf, size_t cap,
                      cr_trunc *note)
{
    return irecv_with(job, op, sel, buf, cap, false, note, NULL, NULL, false);
}

cr_req *cr_irecv_push(cr_job *job, const char *op, const cr_sel *sel, void *buf, size_t cap,
                      cr_trunc *note)
{
    return irecv_with(job, op, sel, buf, cap, false, note, NULL, NULL, !job->oversub);
}

/* The latency path of a blocking receive (DESIGN.md §3): with no receive posted
 * ahead of it and nothing queued that matches, a message that arrives eager and
 * matching goes straight into the buffer, never through a request or a queue.
 * Only while spinning: once the wait would yield, the caller posts a request and
 * waits the ordinary way (watchdog reports, credits, long messages). Order holds:
 * the message is the oldest from its sender that nothing has taken, and no
 * earlier receive could claim it. */
static int peek_direct(cr_job *job, cr_link *l, const cr_sel *sel, void *buf, size_t cap,
                       cr_status *st)
{
    int src;
    cr_hdr h;
    const void *payload;
    size_t len;
    if (!l->ops->peek(l->ctx, &src, &h, &payload, &len)) return 0;
    if (h.op == CR_OP_EAGER && len <= cap && cr_sel_match(sel, src, h.ctx, h.tag)) {
        cr_copy(buf, payload, len);
        *st = (cr_status){.src = src, .tag = h.tag, .size = len, .count = len, .sig = h.rreq};
        l->ops->take(l->ctx, src);
        count_matched(job, src, h.ctx, h.tag, len, 0, "eager");
        return 1;
    }
    if (!cr_engine_deliver(job, src, &h, payload, len)) {
        l->ops->refused(l->ctx, src);
        return 0;
    }
    l->ops->take(l->ctx, src);
    return -1;
}

static bool recv_direct(cr_job *job, const cr_sel *sel, void *buf, size_t cap, cr_status *st)
{
    cr_link *l = job->peek_link;
    if (job->posted || !l || (job->unexp && find_unexp(job, sel, NULL))) return false;
    for (unsigned spins = 0; spins < job->spin_now;) {
        if (job->nbacklog || job->nctrl) drain_backlogs(job);
        int rc = peek_direct(job, l, sel, buf, cap, st);
        if (rc > 0) return true;
        if (rc < 0) { /* the engine took a message: it may be ours, unexpected now */
            if (job->unexp && find_unexp(job, sel, NULL)) return false;
            spins = 0;
            continue;
        }
        /* other transports' peers may send too */
        if (job->nlinks > 2 && progress_others(job, l)) {
            if (job->unexp && find_unexp(job, sel, NULL)) return false;
            spins = 0;
            continue;
        }
        spins++;
        cr_cpu_relax();
    }
    return false;
}

/* A blocking receive needs no id unless its message is pushed (start_pull), so
 * its request lives on the stack: no allocation on the latency path. With a
 * progress thread, handlers may receive too; they take table requests. */
static void recv_with(cr_job *job, const char *op, const cr_sel *sel, void *buf, size_t cap,
                      bool trunc_ok, cr_trunc *note, cr_status *st)
{
    uint64_t since = __builtin_expect(job->trace != NULL, 0) ? cr_trace_ns(job) : 0;
    bool direct = !job->threaded && recv_direct(job, sel, buf, cap, st);
    if (since) cr_trace_wait_on(job, cr_trace_ns(job) - since); /* spun for it */
    if (direct) return;
    if (job->threaded) {
        cr_req *r = irecv_with(job, op, sel, buf, cap, trunc_ok, note, NULL, NULL, false);
        cr_req_wait(job, r);
        *st = r->st;
        cr_req_release(job, r);
        return;
    }
    cr_req r;
    r.id = (cr_idslot){.idx = CR_NOID};
    req_reset(&r, CR_REQ_RECV, op);
    r.trunc_to = note;
    post_recv(job, &r, sel, buf, cap, trunc_ok);
    cr_req_wait(job, &r);
    *st = r.st;
}

void cr_recv_trunc(cr_job *job, const char *op, const cr_sel *sel, void *buf, size_t cap,
                   bool trunc_ok, cr_status *st)
{
    recv_with(job, op, sel, buf, cap, trunc_ok, NULL, st);
}

void cr_recv_note(cr_job *job, const char *op, const cr_sel *sel, void *buf, size_t cap,
                  cr_trunc *note, cr_status *st)
{
    recv_with(job, op, sel, buf, cap, false, note, st);
}

void cr_recv(cr_job *job, const char *op, const cr_sel *sel, void *buf, size_t cap, cr_status *st)
{
    cr_recv_trunc(job, op, sel, buf, cap, false, st);
}

/* cr_probe, and with 'out' cr_mprobe: the message found leaves the queue. */
static bool probe(cr_job *job, const cr_sel *sel, bool wait, cr_status *st, cr_unexp **out)
{
    cr_wait w = {.sel = sel};
    bool counted = false; /* in job->waiting */
    uint64_t since = 0;   /* tracing: when the wait began */
    for (;;) {
        cr_unexp **pp;
        cr_unexp *u = find_unexp(job, sel, &pp);
        if (u) {
            if (counted) cr_wait_leave(job);
            if (since && job->trace) cr_trace_wait_on(job, cr_trace_ns(job) - since);
            if (w.listed) cr_wait_report(job, &w, false);
            st->src = u->src;
            st->tag = u->tag;
            st->size = st->count = u->size;
            if (out) {
                unlink_unexp(job, pp);
                u->next = NULL;
                *out = u;
            }
            return true;
        }
        if (wait ? cr_progress_poll(job) : cr_progress(job)) continue;
        if (!wait) return false;
        if (job->npeers == 1 && !job->threaded)
            cr_fatal(job, "cprobe",
                     "waits for a message that can never come: this is the only rank "
                     "(start the program with courier run -n N)");
        if (!counted) {
            cr_wait_enter(job);
            if (__builtin_expect(job->trace != NULL, 0)) since = cr_trace_ns(job);
        }
        counted = true;
        cr_idle(job, &w, NULL, NULL);
    }
}

bool cr_probe(cr_job *job, const cr_sel *sel, bool wait, cr_status *st)
{
    return probe(job, sel, wait, st, NULL);
}

bool cr_mprobe(cr_job *job, const cr_sel *sel, bool wait, cr_status *st, cr_unexp **out)
{
    return probe(job, sel, wait, st, out);
}

cr_req *cr_irecv_unexp(cr_job *job, const char *op, cr_unexp *u, void *buf, size_t cap,
                       bool trunc_ok)
{
    cr_req *r = req_alloc(job, CR_REQ_RECV, op);
    r->sel = (cr_sel){.src = u->src, .ctx = u->ctx, .tag_mode = CR_TAG_EXACT, .tag = u->tag};
    r->buf = buf;
    r->cap = cap;
    r->trunc_ok = trunc_ok;
    r->posted_at = 0; /* traced as matched now */
    r->fresh = 1;
    take_detached(job, r, u);
    r->fresh = 0;
    return r;
}

/* ---- delivery (transport up-call) ---------------------------------------- */

/* The request a reply names: it must be live, of the kind and at the stage that
 * expects this reply (a send waiting for FIN/CTS, a receive waiting for DATA). */
static cr_req *req_by_wire_id(cr_job *job, uint64_t id, int src, uint8_t kind, uint8_t stage,
                              const char *what)
{
    cr_req *r = cr_req_from_id(job, id);
    if (!r || r->done || r->kind != kind || r->stage != stage ||
        (kind == CR_REQ_SEND && r->peer != src) || (kind == CR_REQ_RECV && r->st.src != src))
        cr_fatal(job, "progress", "rank %d sent a %s for unknown request %llu (corrupt peer?)", src,
                 what, (unsigned long long)id);
    return r;
}

/* The receive DATA message h names, its bytes checked against the message. */
static cr_req *data_recv(cr_job *job, int src, const cr_hdr *h, size_t len)
{
    cr_req *r = req_by_wire_id(job, h->rreq, src, CR_REQ_RECV, CR_STAGE_PUSH, "DATA");
    if (h->addr > r->st.size || len > r->st.size - h->addr)
        cr_fatal(job, "progress", "rank %d sent data past the end of its message (corrupt peer?)",
                 src);
    return r;
}

void *cr_engine_data_dest(cr_job *job, int src, const cr_hdr *h, size_t len)
{
    cr_req *r = data_recv(job, src, h, len);
    return h->addr + len <= r->st.count ? (char *)r->buf + h->addr : NULL;
}

int cr_engine_deliver(cr_job *job, int src, const cr_hdr *h, const void *payload, size_t len)
{
    cr_req *r;
    switch (h->op) {
    case CR_OP_EAGER:
    case CR_OP_RTS:
        r = job->posted ? take_posted(job, src, h->ctx, h->tag) : NULL;
        if (r) {
            if (h->op == CR_OP_RTS) {
                start_pull(job, r, src, h->tag, h->size, h->addr, h->sreq, h->flags, h->rreq);
            } else {
                size_t n = accept_size(job, r, src, h->tag, len, h->rreq, "eager");
                cr_copy(r->buf, payload, n);
                complete(job, r);
            }
            return 1;
        } else {
            size_t keep = h->op == CR_OP_EAGER ? len : 0;
            /* Over budget the sender keeps it until we receive, unless a reply or
             * a message we wait for from that sender may be queued behind it. */
            if (src != job->rank && job->unexp_bytes + keep > job->unexp_limit && job->unexp &&
                !job->owed[src] && !recv_wants(job, src))
                return 0;
            cr_unexp *u = malloc(sizeof *u + keep);
            if (!u) return 0;
            u->next = NULL;
            u->src = src;
            u->ctx = h->ctx;
            u->tag = h->tag;
            u->op = h->op;
            u->size = h->op == CR_OP_EAGER ? len : h->size;
            u->addr = h->addr;
            u->sreq = h->sreq;
            u->flags = h->op == CR_OP_RTS ? h->flags : 0;
            u->sig = h->rreq;
            u->data = (char *)(u + 1);
            u->owned = 0;
            u->held = keep;
            u->arriving = NULL;
            cr_copy(u->data, payload, keep);
            if (src != job->rank) job->unexp_bytes += sizeof *u + keep;
            *job->unexp_tail = u;
            job->unexp_tail = &u->next;
            if (++job->stats->unexpected > job->stats->unexpected_max)
                job->stats->unexpected_max = job->stats->unexpected;
            job->stats->unexp_bytes += u->size;
            if (__builtin_expect(h->ctx == CR_CTX_RMA, 0)) cr_rma_unexpected(job, h->tag);
            if (job->sleep_msg || job->sleep_any) cr_wake_self(job); /* a probe may want it */
            return 1;
        }
    case CR_OP_FIN:
        r = req_by_wire_id(job, h->sreq, src, CR_REQ_SEND, CR_STAGE_WAIT, "FIN");
        job->owed[src]--;
        complete(job, r);
        return 1;
    case CR_OP_CTS:
        r = req_by_wire_id(job, h->sreq, src, CR_REQ_SEND, CR_STAGE_WAIT, "CTS");
        job->owed[src]--;
        r->rreq = h->rreq;
        r->stage = CR_STAGE_PUSH;
        backlog_push(job, src, r);
        return 1;
    case CR_OP_CTW: {
        r = req_by_wire_id(job, h->sreq, src, CR_REQ_SEND, CR_STAGE_WAIT, "CTW");
        if (h->size > r->cap)
            cr_fatal(job, "progress",
                     "rank %d asked for more than the message holds (corrupt peer?)", src);
        if (h->flags & CR_HDR_CLAIM) {
            /* the rest is ours only if we claim it first (a sender that
             * cannot write leaves it to the receiver); lost: the receiver
             * reads it, and its FIN (or CTS) follows this CTW */
            uint64_t seq = (uint64_t)h->ctx << 32 | (uint32_t)h->tag;
            _Atomic uint64_t *w =
                src < job->size ? cr_host_claim(&job->host, src, (unsigned)(seq % CR_HOST_CLAIMS))
                                : NULL;
            if (!w || !cr_sc_on(job, src, CR_SC_WRITE) || !claim_take(w, seq, CLAIM_SENDER))
                return 1;
        }
        size_t split = coop_split(h->size);
        bool wrote = cr_sc_write(job, "progress", src, h->addr + split,
                                 (const char *)r->buf + split, h->size - split);
        cr_hdr d = {.op = CR_OP_WDONE,
                    .flags = wrote ? 0 : CR_HDR_FAILED,
                    .sreq = h->sreq,
                    .rreq = h->rreq,
                    .size = h->size};
        ctrl_send(job, src, &d); /* then FIN (or a CTS) completes this send */
        return 1;
    }
    case CR_OP_WDONE:
        r = req_by_wire_id(job, h->rreq, src, CR_REQ_RECV, CR_STAGE_COOP, "WDONE");
        job->owed[src]--;
        if (r->claim) claim_settled(job, r->claim - 1u); /* the sender had won it */
        r->claim = 0;
        if (!(h->flags & CR_HDR_FAILED) && r->got) {
            cr_hdr f = {.op = CR_OP_FIN, .sreq = r->rreq, .size = r->st.size};
            ctrl_send(job, src, &f);
            complete(job, r);
        } else {
            ask_push(job, r, src, r->rreq); /* a part is missing: have it all pushed */
        }
        return 1;
    case CR_OP_CANCEL:
        /* The sender wants RTS sreq back. The RTS came before this (one channel
         * per pair, in order): still an unmatched record here, it is dropped and
         * CANCELLED answers; else a receive has matched it or its data is being
         * taken, and the FIN, CTS or CTW already sent completes the send. */
        for (cr_unexp **pp = &job->unexp; *pp; pp = &(*pp)->next) {
            cr_unexp *u = *pp;
            if (u->src != src || u->op != CR_OP_RTS || u->sreq != h->sreq || u->arriving) continue;
            unlink_unexp(job, pp);
            free(u);
            cr_hdr a = {.op = CR_OP_CANCELLED, .sreq = h->sreq};
            ctrl_send(job, src, &a);
            break;
        }
        return 1;
    case CR_OP_CANCELLED:
        r = req_by_wire_id(job, h->sreq, src, CR_REQ_SEND, CR_STAGE_WAIT, "CANCELLED");
        if (r->cancel != CR_CANCEL_ASKED)
            cr_fatal(job, "progress",
                     "rank %d cancelled a send that was not asked back (corrupt peer?)", src);
        job->owed[src]--; /* instead of the FIN or CTS */
        r->cancel = CR_CANCEL_DONE;
        complete(job, r);
        return 1;
    case CR_OP_DATA:
        r = data_recv(job, src, h, len);
        if (h->addr < r->st.count && payload != (char *)r->buf + h->addr) {
            size_t n = len;
            if (h->addr + n > r->st.count) n = r->st.count - h->addr;
            memcpy((char *)r->buf + h->addr, payload, n);
        }
        r->got += len;
        if (r->got >= r->st.size) {
            job->owed[src]--;
            complete(job, r);
        }
        return 1;
    default:
        cr_fatal(job, "progress", "rank %d sent an unknown operation %d (corrupt peer?)", src,
                 h->op);
    }
}

/* NX/2's long protocol (seed 000 §3.2): with no receive posted but memory to
 * spare, the receiver takes the whole message and the sender goes on. Done only
 * when this rank is about to idle, so that a receive posted soon after the
 * message arrives still gets the single copy. Without single copy, an internal
 * receive asks the sender to push the data (CTS); a user receive that matches
 * the entry meanwhile waits for that push (take_unexp). */
void cr_engine_buffer_rts(cr_job *job)
{
    for (cr_unexp *u = job->unexp; u; u = u->next) {
        if (u->op != CR_OP_RTS || u->arriving || u->src == job->rank || (u->flags & CR_HDR_SYNC))
            continue;
        if (u->size > job->unexp_limit || job->unexp_bytes > job->unexp_limit - u->size)
            return; /* (a peer's size may be anything: no sum that can wrap) */
        char *data = malloc(u->size ? u->size : 1);
        if (!data) return;
        bool got = cr_sc_on(job, u->src, CR_SC_READ) &&
                   cr_sc_read(job, "progress", u->src, data, u->addr, u->size);
        job->unexp_bytes += u->size;
        u->held = u->size;
        if (got) {
            cr_hdr fin = {.op = CR_OP_FIN, .sreq = u->sreq, .size = u->size};
            ctrl_send(job, u->src, &fin);
            u->op = CR_OP_EAGER;
            u->data = data;
            u->owned = 1;
            continue;
        }
        cr_req *ri = req_alloc(job, CR_REQ_RECV, "progress");
        ri->buf = data;
        ri->cap = u->size;
        ri->st = (cr_status){
            .src = u->src, .tag = u->tag, .size = u->size, .count = u->size, .sig = u->sig};
        ri->for_unexp = u;
        ri->stage = CR_STAGE_PUSH; /* DATA may name it */
        u->arriving = ri;
        cr_hdr cts = {.op = CR_OP_CTS, .sreq = u->sreq, .rreq = cr_req_id(ri), .size = u->size};
        owe(job, u->src); /* DATA will come */
        ctrl_send(job, u->src, &cts);
    }
}

/* ---- progress ------------------------------------------------------------ */

static __attribute__((noinline)) int run_bg(cr_job *job)
{
    int n = 0;
    bool pending = false;
    job->in_bg = true;
    for (int i = 0; i < job->nbg; i++) n += job->bg[i](job, &pending);
    job->in_bg = false;
    job->bg_pending = pending;
    return n;
}

static inline int progress(cr_job *job)
{
    int n = 0;
    if (job->nbacklog || job->nctrl) n += drain_backlogs(job);
    for (int i = 0; i < job->nlinks; i++) n += job->links[i].ops->poll(job->links[i].ctx);
    /* Once more: the poll may have made room that no later event announces (an
     * EPOLLOUT edge that let tcp empty its queue, credits come back), and a rank
     * that went to sleep now would wait for its own backlog (COURIER_NAP_MS). */
    if (job->nbacklog || job->nctrl) n += drain_backlogs(job);
    if (__builtin_expect(job->nbg != 0, 0) && !job->in_bg) n += run_bg(job);
    return n;
}

void cr_bg_add(cr_job *job, int (*fn)(cr_job *job, bool *pending))
{
    for (int i = 0; i < job->nbg; i++)
        if (job->bg[i] == fn) return;
    if (job->nbg == CR_MAX_BG) cr_fatal(job, "progress", "too many background hooks");
    job->bg[job->nbg++] = fn;
}

int cr_progress_poll(cr_job *job)
{
    return progress(job);
}

int cr_progress(cr_job *job)
{
    if (__builtin_expect(job->vt.base != NULL, 0)) {
        cr_vt_sync(&job->vt);
        int n = progress(job);
        if (!n) cr_vt_spend(&job->vt, job->vt.hd->poll_ps, NULL);
        if (job->handlers_due) n += cr_sim_handlers(job);
        return n;
    }
    return progress(job);
}

/* Before the process leaves: every send must reach its receiver (the segment
 * keeps eager data, but rendezvous data lives in this process). A peer that has
 * already finished will read nothing more, so it is not waited for. */
static bool owes_live_peer(cr_job *job)
{
    for (int p = 0; p < job->npeers; p++)
        if ((job->backlog[2 * p] || job->backlog[2 * p + 1] || job->ctrlq[p]) &&
            !cr_tp_gone(job, p))
            return true;
    if (!job->sends_active) return false;
    for (uint32_t i = 0; i < job->reqs.n; i++) {
        cr_req *r = cr_idt_at(&job->reqs, i);
        if (cr_idt_live(r) && r->kind == CR_REQ_SEND && !r->done && !cr_tp_gone(job, r->peer))
            return true;
    }
    return false;
}

void cr_engine_drain(cr_job *job)
{
    cr_wait w = {0};
    while (owes_live_peer(job)) {
        if (progress(job))
            w.spins = 0;
        else
            cr_idle(job, &w, NULL, NULL);
    }
    if (w.listed) cr_wait_report(job, &w, false);
    cr_tp_flush(job);
}

/* ---- cancelling and request sets ------------------------------------------ */

bool cr_cancel_recv(cr_job *job, cr_req *r)
{
    if (r->kind != CR_REQ_RECV || r->done) return false;
    for (cr_req **pp = &job->posted; *pp; pp = &(*pp)->next) {
        if (*pp != r) continue;
        *pp = r->next;
        if (!*pp) job->posted_tail = pp;
        job->stats->posted--;
        r->st = (cr_status){.src = CR_ANY_SOURCE};
        r->done = 1;
        wake_for(job, r); /* another thread may sleep in a wait for it */
        return true;
    }
    return false; /* matched: a pull or push is under way */
}

bool cr_ctx_in_use(const cr_job *job, uint16_t lo, uint16_t hi)
{
    for (const cr_req *r = job->posted; r; r = r->next)
        if (r->sel.ctx >= lo && r->sel.ctx <= hi) return true;
    for (const cr_unexp *u = job->unexp; u; u = u->next)
        if (u->ctx >= lo && u->ctx <= hi) return true;
    return false;
}

void cr_cancel_send(cr_job *job, cr_req *r)
{
    if (r->kind != CR_REQ_SEND || r->done || r->blocking || r->cancel) return;
    if (r->stage == CR_STAGE_EAGER || r->stage == CR_STAGE_RTS) {
        /* Nothing on the wire yet: it waits in the backlog for credits. */
        for (cr_req **pp = backlog_of(job, r->peer, r->lane); *pp; pp = &(*pp)->next) {
            if (*pp != r) continue;
            *pp = r->next;
            job->nbacklog--;
            r->cancel = CR_CANCEL_DONE;
            complete(job, r);
            return;
        }
        return;
    }
    if (r->stage != CR_STAGE_WAIT) return; /* matched: its data is moving */
    cr_hdr h = {
        .op = CR_OP_CANCEL, .ctx = r->ctx, .tag = r->tag, .size = r->cap, .sreq = cr_req_id(r)};
    r->cancel = CR_CANCEL_ASKED;
    ctrl_send(job, r->peer, &h);
}

bool cr_req_any_done(void *arg)
{
    cr_req_set *s = arg;
    for (int i = 0; i < s->n; i++)
        if (s->reqs[i] && s->reqs[i]->done) {
            s->which = i;
            return true;
        }
    return false;
}
