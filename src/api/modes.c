/* The GMD communication modes of the native interface (courier/modes.h, seed
 * 004 §9): synchronous, single-buffer asynchronous and no-wait sends, and the
 * receive that takes all three. Every call translates to engine calls on
 * context CR_CTX_MODES:
 *  - synchronous: cr_ssend (rendezvous whatever the size; the receiver pulls
 *    the data and only then answers, so the send ends when the receiver has it);
 *  - single-buffer: the message is copied into the one buffer this rank keeps
 *    per destination and sent with cr_issend; the next single-buffer send to
 *    that destination first waits for that request, which completes only once
 *    a receive has taken the message: "cannot send again until the previously
 *    sent message has been consumed". (GMD keeps the buffer at the receiver's
 *    end, filled by a server process there; the semantics are the same, and
 *    keeping it at the sender needs no extra copy at the receiver.)
 *  - no-wait: the message is copied into a record queued in job->modes; a
 *    background hook (modes_bg, run by every cr_progress: the progress thread's
 *    or a waiting call's) starts its send and frees the record once done, as
 *    GMD's sender-side server process does.
 *
 * Invariants: all state is in job->modes and changes only under the engine
 * lock. No-wait records are started in the order queued, and every synchronous
 * or single-buffer send starts all queued ones first, so that messages from
 * one rank to another are received in the order sent, whatever their modes.
 * While a single-buffer send or a no-wait record is outstanding, bg_pending
 * keeps the progress thread moving them (a receiver without single copy asks
 * the sender to push the data, and only a moving engine pushes it). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "../host/contexts.h"
#include "native.h"

/* A no-wait message: queued, then sending (req), then freed. */
typedef struct nowait_msg {
    struct nowait_msg *next;
    cr_req *req; /* NULL until started */
    int dst;
    int32_t type;
    size_t len;
    char data[];
} nowait_msg;

/* Per destination: the single buffer and the send that holds it. */
typedef struct single_slot {
    cr_req *req; /* the last single-buffer send, until consumed */
    char *buf;
    size_t cap;
} single_slot;

typedef struct cr_modes {
    nowait_msg *head, **tail; /* no-wait messages, oldest first */
    nowait_msg *unstarted;    /* first record not yet handed to the engine */
    size_t nowait_count;
    single_slot *single; /* per rank */
    unsigned singles_out;
} cr_modes;

static void modes_atexit(void);

/* ---- state and checks ------------------------------------------------------ */

static cr_modes *modes_get(cr_job *job)
{
    if (job->modes) return job->modes;
    cr_modes *m = calloc(1, sizeof *m);
    single_slot *s = calloc((size_t)job->size, sizeof *s);
    if (!m || !s) cr_fatal(job, "courier", "out of memory for the communication modes' state");
    m->tail = &m->head;
    m->single = s;
    job->modes = m;
    cr_ctx_atexit(modes_atexit); /* runs before the job's own exit: hands over what is queued */
    return m;
}

static void check_len(cr_job *job, const char *op, const void *buf, size_t len)
{
    if ((ssize_t)len < 0) cr_fatal(job, op, "length %zd is negative", (ssize_t)len);
    if (len > ((size_t)1 << 40))
        cr_fatal(job, op, "length %zu is too large (at most 2^40 bytes)", len);
    if (!buf && len) cr_fatal(job, op, "buffer is NULL but length is %zu", len);
}

static void check_send(cr_job *job, const char *op, int dst, int type, const void *buf, size_t len)
{
    if (dst < 0 || dst >= job->size)
        cr_fatal(job, op, "rank %d is out of range: ranks are 0..%d", dst, job->size - 1);
    if (type < 0) cr_fatal(job, op, "type %d is invalid: types are 0..2147483647", type);
    check_len(job, op, buf, len);
}

static cr_sel recv_sel(cr_job *job, const char *op, int src, int type)
{
    if (src != CR_MODE_ANY && (src < 0 || src >= job->size))
        cr_fatal(job, op, "rank %d is out of range: ranks are 0..%d (or CR_MODE_ANY)", src,
                 job->size - 1);
    if (type < CR_MODE_ANY)
        cr_fatal(job, op, "type %d is invalid: types are 0..2147483647 (or CR_MODE_ANY)", type);
    return (cr_sel){.src = src == CR_MODE_ANY ? CR_ANY_SOURCE : src,
                    .ctx = CR_CTX_MODES,
                    .tag_mode = type == CR_MODE_ANY ? CR_TAG_ANY : CR_TAG_EXACT,
                    .tag = type};
}

/* ---- the server: no-wait messages and outstanding single-buffer sends ------ */

/* Hand every queued no-wait message to the engine, oldest first. */
static int start_nowait(cr_job *job, cr_modes *m)
{
    int n = 0;
    for (; m->unstarted; m->unstarted = m->unstarted->next, n++) {
        nowait_msg *x = m->unstarted;
        x->req = cr_isend(job, "cr_send_nowait", x->dst, CR_CTX_MODES, x->type, x->data, x->len);
    }
    return n;
}

/* The background hook: start what is queued, free what was delivered, let go
 * of single buffers whose message was consumed. Never waits. */
static int modes_bg(cr_job *job, bool *pending)
{
    cr_modes *m = job->modes;
    if (!m) return 0;
    int n = start_nowait(job, m);
    while (m->head && m->head->req && m->head->req->done) {
        nowait_msg *x = m->head;
        m->head = x->next;
        if (!m->head) m->tail = &m->head;
        cr_req_release(job, x->req);
        free(x);
        m->nowait_count--;
        n++;
    }
    if (m->singles_out)
        for (int p = 0; p < job->size; p++) {
            single_slot *s = &m->single[p];
            if (s->req && s->req->done) {
                cr_req_release(job, s->req);
                s->req = NULL;
                m->singles_out--;
                n++;
            }
        }
    *pending |= m->head || m->singles_out;
    return n;
}

/* The server runs on the progress thread (and in every waiting call). */
static void server_start(cr_job *job)
{
    cr_bg_add(job, modes_bg);
    if (!job->progress_on) {
        /* started without the lock (a no-op until now); from then on every
         * call takes it, so take it as cr_native_enter would have */
        bool held = job->threaded;
        cr_progress_start(job);
        if (!held) cr_lock(job);
    }
    job->bg_pending = true;
    cr_bg_kick(job);
}

static void modes_atexit(void)
{
    cr_job *job = cr_job_get();
    cr_lock(job);
    if (job->modes) start_nowait(job, job->modes); /* the engine's drain completes them */
    cr_unlock(job);
}

/* ---- the calls ------------------------------------------------------------- */

void cr_send_sync(int dst, int type, const void *buf, size_t len)
{
    cr_job *job = cr_native_enter("cr_send_sync");
    check_send(job, "cr_send_sync", dst, type, buf, len);
    cr_modes *m = modes_get(job);
    start_nowait(job, m);
    cr_ssend(job, "cr_send_sync", dst, CR_CTX_MODES, type, buf, len);
    cr_native_leave(job);
}

static bool single_free(void *arg)
{
    single_slot *s = arg;
    return !s->req || s->req->done; /* the server may have let it go meanwhile */
}

void cr_send_single(int dst, int type, const void *buf, size_t len)
{
    cr_job *job = cr_native_enter("cr_send_single");
    check_send(job, "cr_send_single", dst, type, buf, len);
    cr_modes *m = modes_get(job);
    single_slot *s = &m->single[dst];
    if (s->req) { /* the buffer is full until the receiver consumed its message */
        cr_wait_until(job, "cr_send_single", single_free, s, s->req);
        if (s->req) {
            cr_req_release(job, s->req);
            s->req = NULL;
            m->singles_out--;
        }
    }
    if (len > s->cap) {
        char *b = realloc(s->buf, len);
        if (!b) cr_fatal(job, "cr_send_single", "out of memory for a buffer of %zu bytes", len);
        s->buf = b;
        s->cap = len;
    }
    if (len) memcpy(s->buf, buf, len);
    start_nowait(job, m);
    s->req = cr_issend(job, "cr_send_single", dst, CR_CTX_MODES, type, s->buf, len);
    m->singles_out++;
    server_start(job);
    cr_native_leave(job);
}

void cr_send_nowait(int dst, int type, const void *buf, size_t len)
{
    cr_job *job = cr_native_enter("cr_send_nowait");
    check_send(job, "cr_send_nowait", dst, type, buf, len);
    cr_modes *m = modes_get(job);
    nowait_msg *x = malloc(sizeof *x + len);
    if (!x)
        cr_fatal(job, "cr_send_nowait",
                 "out of memory for a copy of %zu bytes (%zu messages queued)", len,
                 m->nowait_count);
    x->next = NULL;
    x->req = NULL;
    x->dst = dst;
    x->type = type;
    x->len = len;
    if (len) memcpy(x->data, buf, len);
    *m->tail = x;
    m->tail = &x->next;
    if (!m->unstarted) m->unstarted = x;
    m->nowait_count++;
    server_start(job);
    cr_wake_self(job); /* the server may sleep at the waiting point */
    cr_native_leave(job);
}

size_t cr_recv_mode(int src, int type, void *buf, size_t cap, cr_mode_status *st)
{
    cr_job *job = cr_native_enter("cr_recv_mode");
    check_len(job, "cr_recv_mode", buf, cap);
    cr_sel sel = recv_sel(job, "cr_recv_mode", src, type);
    cr_status s;
    cr_recv(job, "cr_recv_mode", &sel, buf, cap, &s);
    cr_native_leave(job);
    if (st) *st = (cr_mode_status){.src = s.src, .type = s.tag, .size = s.size};
    return s.size;
}

int cr_probe_mode(int src, int type, cr_mode_status *st)
{
    cr_job *job = cr_native_enter("cr_probe_mode");
    cr_sel sel = recv_sel(job, "cr_probe_mode", src, type);
    cr_status s;
    bool got = cr_probe(job, &sel, false, &s);
    cr_native_leave(job);
    if (got && st) *st = (cr_mode_status){.src = s.src, .type = s.tag, .size = s.size};
    return got;
}

static bool all_delivered(void *arg)
{
    cr_modes *m = arg;
    return !m->head && !m->singles_out;
}

void cr_modes_flush(void)
{
    cr_job *job = cr_native_enter("cr_modes_flush");
    cr_modes *m = modes_get(job);
    start_nowait(job, m);
    cr_wait_until(job, "cr_modes_flush", all_delivered, m, NULL);
    cr_native_leave(job);
}
