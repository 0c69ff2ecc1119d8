/* Fuzz harness: the engine's handling of what peers deliver (cr_engine_deliver,
 * src/core/engine.c), mixed with the local calls that give it state to work on.
 *
 * A job of three ranks is built by hand: this process is rank 0 (sends to itself
 * go through the real self transport), ranks 1 and 2 sit behind a fake in-memory
 * transport whose send_am can refuse (no credits) and whose get can be denied
 * (no single copy). The input is a program of steps: a header "from" rank 1 or 2
 * with any op (EAGER/RTS/FIN/CTS/DATA/CTW/WDONE/CANCEL/CANCELLED or unknown), any
 * envelope and either a made-up request id or the id of a request this job
 * really has (current or released); posting receives; starting sends,
 * synchronous sends, lane sends; buffering RTS; progress; cancelling receives and sends and
 * releasing requests. cr_fatal, which a corrupt peer must reach rather than
 * corrupting memory, longjmps back here through job->on_fatal.
 *
 * Invariants checked (abort on violation), besides ASan/UBSan/LSan on every byte:
 *  - per-peer counts of awaited replies never underflow;
 *  - the posted and backlog queues stay finite (no cycle) and hold only live
 *    requests of the right kind;
 *  - no more sends are active than were started.
 * Receives are posted with trunc_ok, so the only fatal errors are the ones a peer
 * causes; those are detected before anything is allocated, which lets the
 * teardown below free everything. */
#include <errno.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define NRANKS 3
#define MAXT 64 /* requests the harness keeps track of */
#define MAXSTEPS 256

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_engine_deliver: invariant broken: %s\n", what);
        abort();
    }
}

/* ---- the fake transport to ranks 1 and 2 ---------------------------------- */

static int refuse_sends, deny_get;
static volatile unsigned char sink; /* keeps the payload reads */

static int fake_send_am(void *ctx, int peer, const cr_hdr *h, const void *payload, size_t len)
{
    (void)ctx;
    (void)h;
    check(peer > 0 && peer < NRANKS, "send_am to a rank behind the fake transport");
    if (refuse_sends) return CR_EAGAIN;
    for (size_t i = 0; i < len; i++) sink ^= ((const unsigned char *)payload)[i];
    return 0;
}

static int fake_nothing(void *ctx)
{
    (void)ctx;
    return 0;
}

static int fake_get(void *ctx, int peer, void *dst, uint64_t addr, size_t len)
{
    (void)ctx;
    (void)peer;
    (void)addr;
    if (deny_get) return -EPERM;
    memset(dst, 0x5a, len); /* ASan: dst must hold len bytes */
    return 0;
}

static void fake_flush(void *ctx)
{
    (void)ctx;
}

static int fake_put(void *ctx, int peer, uint64_t addr, const void *src, size_t len)
{
    (void)ctx;
    (void)peer;
    (void)addr;
    if (deny_get) return -EPERM;
    for (size_t i = 0; i < len; i++) sink ^= ((const unsigned char *)src)[i]; /* src holds len */
    return 0;
}

static int fake_gone(void *ctx, int peer)
{
    (void)ctx;
    (void)peer;
    return 1;
}

static size_t fake_max_payload(void *ctx, int peer)
{
    (void)ctx;
    (void)peer;
    return 64;
}

static const cr_transport fake = {
    .name = "fake",
    .caps = CR_CAP_GET | CR_CAP_PUT,
    .send_am = fake_send_am,
    .poll = fake_nothing,
    .get = fake_get,
    .put = fake_put,
    .flush = fake_flush,
    .arm = fake_nothing,
    .peer_gone = fake_gone,
    .max_payload = fake_max_payload,
};

/* ---- input --------------------------------------------------------------- */

typedef struct in {
    const uint8_t *p;
    size_t n;
} in;

static uint64_t take(in *s, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes && s->n; i++, s->n--) v |= (uint64_t)*s->p++ << (8 * i);
    return v;
}

/* ---- the job ------------------------------------------------------------- */

typedef struct tracked {
    cr_req *r;
    uint64_t id; /* its id when it was started (stays the same after release) */
    int released;
} tracked;

static cr_job job;
static jmp_buf on_fatal_jmp;
static tracked tr[MAXT];
static int ntr, sends_started;
static void *bufs[2 * MAXSTEPS];
static int nbufs;
static unsigned char *payload; /* of the delivery under way (a fatal error skips its free) */

static void fatal_hook(cr_job *j, const char *msg)
{
    (void)j;
    (void)msg;
    longjmp(on_fatal_jmp, 1);
}

static int fuzz_deliver(void *owner, int src, const cr_hdr *h, const void *payload, size_t len)
{
    return cr_engine_deliver(owner, src, h, payload, len);
}

static void job_setup(int cma_ok)
{
    static uint8_t link_of[NRANKS];
    static uint8_t single_copy[NRANKS];
    static cr_req *backlog[2 * NRANKS]; /* per peer: its ordinary queue, then its lane's */
    static cr_ctrl *ctrlq[NRANKS];
    static unsigned owed[NRANKS], sends_to[NRANKS];
    memset(&job, 0, sizeof job);
    job.rank = 0;
    job.size = job.npeers = NRANKS;
    job.link_of = link_of;
    job.one_link = -1; /* the peers' transports differ: link_of says */
    job.single_copy = single_copy;
    job.wake_fd = -1;
    static void *self_ctx; /* opened once: it keeps &job, which stays put */
    cr_tp_env env = {.rank = 0, .size = NRANKS, .owner = &job, .deliver = fuzz_deliver};
    if (!self_ctx && cr_transport_self.open(&self_ctx, &env)) abort();
    job.links[0] = (cr_link){.ops = &cr_transport_self, .ctx = self_ctx, .eager = 32};
    job.links[1] = (cr_link){.ops = &fake, .ctx = NULL, .eager = 32};
    job.nlinks = 2;
    job.backlog = backlog;
    job.ctrlq = ctrlq;
    job.owed = owed;
    job.sends_to = sends_to;
    for (int p = 0; p < NRANKS; p++) {
        link_of[p] = p == 0 ? 0 : 1;
        single_copy[p] = p == 0 || cma_ok;
        backlog[2 * p] = backlog[2 * p + 1] = NULL;
        ctrlq[p] = NULL;
        owed[p] = sends_to[p] = 0;
    }
    cr_idt_init(&job.reqs, sizeof(cr_req), 0);
    job.posted_tail = &job.posted;
    job.unexp_tail = &job.unexp;
    job.handlers_due_tail = &job.handlers_due;
    job.unexp_limit = 2048;
    job.stats = &job.own_stats; /* no host segment: the counters stay here */
    job.on_fatal = fatal_hook;
    ntr = sends_started = nbufs = 0;
    refuse_sends = deny_get = 0;
}

/* Free everything the engine and the harness hold, whatever state the job is in. */
static void job_teardown(void)
{
    for (cr_unexp *u = job.unexp, *next; u; u = next) {
        next = u->next;
        if (u->owned) free(u->data);
        free(u);
    }
    for (int p = 0; p < NRANKS; p++)
        for (cr_ctrl *c = job.ctrlq[p], *next; c; c = next) {
            next = c->next;
            free(c);
        }
    for (uint32_t i = 0; i < job.reqs.n; i++) {
        cr_req *r = cr_idt_at(&job.reqs, i);
        if (cr_idt_live(r) && (r->for_unexp || r->chain)) free(r->buf); /* engine-owned */
    }
    cr_idt_destroy(&job.reqs);
    for (int i = 0; i < nbufs; i++) free(bufs[i]);
    free(payload);
    payload = NULL;
}

static void *user_buf(size_t n, uint8_t fill)
{
    void *b = malloc(n);
    check(b != NULL || n == 0, "out of memory");
    if (n) memset(b, fill, n);
    bufs[nbufs++] = b;
    return b;
}

static void track(cr_req *r)
{
    if (ntr < MAXT) tr[ntr++] = (tracked){.r = r, .id = cr_req_id(r)};
}

static void check_state(void)
{
    unsigned sends = 0;
    for (int p = 0; p < NRANKS; p++) sends += job.sends_to[p];
    check(sends == job.sends_active, "sends_to[] does not add up to sends_active");
    for (int p = 0; p < 2 * NRANKS; p++) {
        if (p < NRANKS)
            check(job.owed[p] < 1u << 20, "owed[] underflow: a reply was counted twice");
        int n = 0;
        for (cr_req *r = job.backlog[p]; r; r = r->next, n++) {
            check(n <= (int)job.reqs.n, "a backlog queue has a cycle");
            check(cr_idt_live(r) && r->kind == CR_REQ_SEND && !r->done, "a dead send in a backlog");
        }
    }
    int n = 0;
    for (cr_req *r = job.posted; r; r = r->next, n++) {
        check(n <= (int)job.reqs.n, "the posted queue has a cycle");
        check(cr_idt_live(r) && r->kind == CR_REQ_RECV && !r->done, "a dead receive is posted");
    }
    check(job.sends_active <= (unsigned)sends_started, "more sends active than started");
}

static void step_deliver(in *s)
{
    int src = 1 + (int)(take(s, 1) % (NRANKS - 1));
    uint8_t how = (uint8_t)take(s, 1);
    cr_hdr h = {0};
    h.op = (uint8_t)(how % 11); /* EAGER..CANCELLED, and 0 and 10: unknown */
    h.flags = (how >> 4) & 7;   /* SYNC, WAITS, FAILED */
    h.ctx = (uint16_t)(take(s, 1) % 3);
    h.tag = (int32_t)(take(s, 1) % 6) - 1;
    uint8_t ids = (uint8_t)take(s, 1);
    if (ntr && (ids & 1)) { /* an id this job really issued, and its peer */
        tracked *t = &tr[(ids >> 2) % ntr];
        uint64_t id = t->id;
        if (ids & 2) {
            int peer = t->r->kind == CR_REQ_SEND ? t->r->peer : t->r->st.src;
            if (peer > 0 && peer < NRANKS) src = peer;
        }
        h.sreq = h.rreq = id;
    } else {
        h.sreq = take(s, 4);
        h.rreq = take(s, 4);
    }
    uint8_t sz = (uint8_t)take(s, 1);
    h.size = sz < 200 ? sz : take(s, 8);
    uint8_t ad = (uint8_t)take(s, 1);
    h.addr = ad < 200 ? ad : take(s, 8);
    size_t len = take(s, 1) % 80;
    payload = malloc(len ? len : 1);
    check(payload != NULL, "out of memory");
    for (size_t i = 0; i < len; i++) payload[i] = (unsigned char)take(s, 1);
    cr_engine_deliver(&job, src, &h, payload, len);
    free(payload);
    payload = NULL;
}

static void step(in *s)
{
    switch (take(s, 1) % 9) {
    case 0:
    case 1:
        step_deliver(s);
        break;
    case 2: { /* post a receive */
        cr_sel sel = {0};
        sel.src = (int)(take(s, 1) % (NRANKS + 1)) - 1;
        sel.ctx = (uint16_t)(take(s, 1) % 3);
        sel.tag_mode = (uint8_t)(take(s, 1) % 3);
        sel.tag = (int32_t)(take(s, 1) % 6) - 1;
        sel.mask = (uint32_t)take(s, 1);
        uint8_t c = (uint8_t)take(s, 1);
        size_t cap = c & 0x80 ? (64u << 10) + c % 100 : c % 100; /* large: the shared copy */
        track(cr_irecv_call(&job, "crecv", &sel, user_buf(cap, 0), cap, true, NULL, NULL));
        break;
    }
    case 3: { /* start a send, eager or rendezvous */
        int dst = (int)(take(s, 1) % NRANKS);
        uint8_t how = (uint8_t)take(s, 1);
        size_t len = take(s, 1) % 160;
        void *b = user_buf(len, 0x33);
        uint16_t ctx = how % 3;
        int32_t tag = (int32_t)(how >> 2) % 6 - 1;
        sends_started++;
        track(how & 0x80                ? cr_issend(&job, "MPI_Issend", dst, ctx, tag, b, len)
              : how & 0x40 && len <= 32 ? cr_isend_lane(&job, "lane", dst, ctx, tag, b, len)
                                        : cr_isend(&job, "isend", dst, ctx, tag, b, len));
        break;
    }
    case 4:
        cr_engine_buffer_rts(&job);
        break;
    case 5:
        cr_progress(&job);
        break;
    case 6: { /* cancel a receive or a send */
        if (!ntr) break;
        tracked *t = &tr[take(s, 1) % ntr];
        if (!t->released && t->r->kind == CR_REQ_RECV) cr_cancel_recv(&job, t->r);
        if (!t->released && t->r->kind == CR_REQ_SEND) cr_cancel_send(&job, t->r);
        break;
    }
    case 7: { /* release a completed request, as the interfaces do after a wait */
        if (!ntr) break;
        tracked *t = &tr[take(s, 1) % ntr];
        if (!t->released && t->r->done) {
            cr_req_release(&job, t->r);
            t->released = 1;
        }
        break;
    }
    default: {
        uint8_t v = (uint8_t)take(s, 1);
        refuse_sends = v & 1;
        deny_get = (v >> 1) & 1;
        break;
    }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    in s = {data, size};
    job_setup((int)(take(&s, 1) & 1));
    if (!setjmp(on_fatal_jmp)) {
        for (int k = 0; k < MAXSTEPS && s.n; k++) {
            step(&s);
            check_state();
        }
    }
    job_teardown();
    return 0;
}
