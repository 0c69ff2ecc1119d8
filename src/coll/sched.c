/* Collective schedules: the steps of a collective in rounds, built once by an
 * algorithm (cr_build_* in coll.c and coll_reduce.c, or an interface) and run
 * as built (the blocking form, cr_sched_now: nothing stored), stored and run to
 * completion (cr_sched_run), started and moved on by polling (the nonblocking
 * form), or started again once done (the persistent form).
 *
 * Invariants:
 *  - round r starts only once every transfer of round r-1 has completed; its
 *    steps run in the order they were added, so a local step sees the data of
 *    the rounds before and a send after it sees its result;
 *  - nothing in a round reads what a receive of the same round brings, so the
 *    blocking runner may take a round's one receive last (after its sends),
 *    through the engine's blocking receive and its latency path; it sends an
 *    eager message with the engine's blocking send (which waits for room at
 *    the receiver while it progresses, with no request), as the hand-written
 *    loops did;
 *  - a schedule points into itself (steps, rounds, requests and temporaries
 *    start in arrays of its own): it is used where it was initialized;
 *  - the temporaries live until cr_sched_free; those of 64 KiB to 64 MiB are
 *    kept (at most KEEP of them) for the next schedules: a megabyte fresh from
 *    malloc is often fresh pages from the kernel, and faulting them in cost as
 *    much as the collective itself (a 1 MiB MPI_Iallreduce between 2 ranks:
 *    422 us, 32 page faults a call, against 205 us for MPI_Allreduce). The keep
 *    is the job's (job->coll_keep; the collectives run under the job's lock). */
#include <stdlib.h>
#include <string.h>

#include "coll.h"

#define SMALL_EXCHANGE CR_SCHED_SMALL
#define KEEP 8
#define KEEP_MIN (64u << 10)
#define KEEP_MAX (64u << 20)

struct cr_coll_keep {
    cr_stmp keep[KEEP];
};

static void *xmalloc(cr_job *job, const char *op, size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) cr_fatal(job, op, "out of memory for %zu bytes", n);
    return p;
}

/* Grow *arr (of *cap elements of sz bytes, first in the schedule's own array
 * 'in') to hold one more. */
static void *grow(cr_job *job, const char *op, void *arr, const void *in, int *cap, size_t sz)
{
    int ncap = *cap * 2;
    void *n;
    if (arr == in) {
        n = xmalloc(job, op, (size_t)ncap * sz);
        memcpy(n, arr, (size_t)*cap * sz);
    } else {
        n = realloc(arr, (size_t)ncap * sz);
        if (!n) cr_fatal(job, op, "out of memory");
    }
    *cap = ncap;
    return n;
}

void cr_sched_init(cr_sched *s, const char *op, uint16_t ctx, uint32_t tagbits, uint32_t seqmask,
                   uint32_t seq)
{
    cr_sched_base(s, op, ctx, tagbits, seqmask, seq, NULL);
    s->o = (cr_redop){0};
    s->cur = -1;
    s->nwait = 0;
    s->xfer = s->most = 0;
    s->now = false;
}

/* ---- temporaries ---------------------------------------------------------- */

/* A kept block of at least len bytes (the smallest such), else a new one. */
void *cr_coll_keep_get(cr_job *job, const char *op, size_t len)
{
    int best = -1;
    cr_stmp *k = job->coll_keep ? job->coll_keep->keep : NULL;
    if (k && len >= KEEP_MIN)
        for (int i = 0; i < KEEP; i++)
            if (k[i].p && k[i].len >= len && (best < 0 || k[i].len < k[best].len)) best = i;
    if (best < 0) return xmalloc(job, op, len);
    void *p = k[best].p;
    k[best].p = NULL;
    return p;
}

/* Kept in a free place, or in place of the smallest kept one if larger, or freed. */
void cr_coll_keep_put(cr_job *job, void *p, size_t len)
{
    if (len < KEEP_MIN || len > KEEP_MAX) {
        free(p);
        return;
    }
    if (!job->coll_keep && !(job->coll_keep = calloc(1, sizeof *job->coll_keep))) {
        free(p);
        return;
    }
    cr_stmp *k = job->coll_keep->keep;
    int slot = 0;
    for (int i = 0; i < KEEP; i++) {
        if (!k[i].p) {
            slot = i;
            break;
        }
        if (k[i].len < k[slot].len) slot = i;
    }
    if (k[slot].p && k[slot].len >= len) {
        free(p);
        return;
    }
    free(k[slot].p);
    k[slot] = (cr_stmp){p, len};
}

void *cr_sched_alloc(cr_job *job, cr_sched *s, size_t len)
{
    size_t a = (len + 15) & ~(size_t)15;
    if (a <= CR_SCHED_ARENA - s->arena_used) {
        void *p = s->arena + s->arena_used;
        s->arena_used += a;
        return p;
    }
    if (!s->tmp) {
        s->tmp = s->tmp_in;
        s->tmpcap = (int)(sizeof s->tmp_in / sizeof *s->tmp_in);
    } else if (s->ntmp == s->tmpcap) {
        s->tmp = grow(job, s->op, s->tmp, s->tmp_in, &s->tmpcap, sizeof *s->tmp);
    }
    void *p = cr_coll_keep_get(job, s->op, len);
    s->tmp[s->ntmp++] = (cr_stmp){p, len};
    return p;
}

void cr_sched_redop(cr_job *job, cr_sched *s, const cr_redop *o, size_t count)
{
    s->o = *o;
    if (!o->alias_ok) s->scratch = cr_sched_alloc(job, s, count * o->elem);
}

/* ---- building ------------------------------------------------------------- */

void cr_sched_grow(cr_job *job, cr_sched *s)
{
    s->st = grow(job, s->op, s->st, s->st_in, &s->stcap, sizeof *s->st);
}

static cr_sstep *step_add(cr_job *job, cr_sched *s, int kind)
{
    cr_sstep *p = cr_sched_step(job, s, kind);
    *p = (cr_sstep){.kind = (uint8_t)kind};
    return p;
}

void cr_sched_combine(cr_job *job, cr_sched *s, const void *lo, const void *hi, void *out,
                      size_t count)
{
    if (!count) return;
    if (s->now) {
        cr_coll_combine(job, &s->o, lo, hi, out, count, s->scratch);
        return;
    }
    cr_sstep *p = step_add(job, s, CR_S_COMBINE);
    p->a = lo;
    p->b = hi;
    p->buf = out;
    p->len = count;
}

void cr_sched_copy(cr_job *job, cr_sched *s, void *dst, const void *src, size_t len)
{
    if (!len || dst == src) return;
    if (s->now) {
        memmove(dst, src, len);
        return;
    }
    cr_sstep *p = step_add(job, s, CR_S_COPY);
    p->buf = dst;
    p->a = src;
    p->len = len;
}

void cr_sched_call(cr_job *job, cr_sched *s, void (*fn)(cr_job *job, void *arg), void *arg)
{
    if (s->now) {
        fn(job, arg);
        return;
    }
    cr_sstep *p = step_add(job, s, CR_S_CALL);
    p->fn = fn;
    p->buf = arg;
}

static void round_now(cr_job *job, cr_sched *s);

void cr_sched_round_end(cr_job *job, cr_sched *s)
{
    if (s->now) {
        round_now(job, s);
        return;
    }
    if (s->nst == (s->nr ? s->rend[s->nr - 1] : 0)) return;
    if (s->nr == s->rcap)
        s->rend = grow(job, s->op, s->rend, s->rend_in, &s->rcap, sizeof *s->rend);
    s->rend[s->nr++] = s->nst;
    if (s->xfer > s->most) s->most = s->xfer;
    s->xfer = 0;
}

/* ---- running -------------------------------------------------------------- */

static void local_step(cr_job *job, cr_sched *s, const cr_sstep *p)
{
    switch (p->kind) {
    case CR_S_COMBINE:
        cr_coll_combine(job, &s->o, p->a, p->b, p->buf, p->len, s->scratch);
        break;
    case CR_S_COPY:
        memmove(p->buf, p->a, p->len);
        break;
    default:
        p->fn(job, p->buf);
        break;
    }
}

/* Room for a request per transfer of the largest round. */
static void reqs_size(cr_job *job, cr_sched *s)
{
    int most = s->most;
    if (most <= s->reqcap) return;
    if (s->reqs != s->req_in) free(s->reqs);
    s->reqs = xmalloc(job, s->op, (size_t)most * sizeof *s->reqs);
    s->reqcap = most;
}

static void post_send(cr_job *job, cr_sched *s, const cr_sstep *p)
{
    if (!cr_send_now(job, p->peer, s->ctx, p->tag, p->buf, p->len))
        s->reqs[s->nreq++] = cr_isend(job, s->op, p->peer, s->ctx, p->tag, p->buf, p->len);
}

/* A receive of an exchange (the round also sends to its peer) has a long
 * message pushed (cr_irecv_push); only rounds of up to XCHG_LOOK steps are
 * looked through for the send. */
#define XCHG_LOOK 8

static bool sends_to(const cr_sstep *a, const cr_sstep *b, int peer)
{
    for (; a < b; a++)
        if (a->kind == CR_S_SEND && a->peer == peer) return true;
    return false;
}

static void post_recv(cr_job *job, cr_sched *s, const cr_sstep *p, bool xchg)
{
    cr_sel sel = {.src = p->peer, .ctx = s->ctx, .tag_mode = CR_TAG_EXACT, .tag = p->tag};
    s->reqs[s->nreq++] =
        (xchg ? cr_irecv_push : cr_irecv_note)(job, s->op, &sel, p->buf, p->len, s->trunc);
}

static void start_round(cr_job *job, cr_sched *s)
{
    int a = s->cur ? s->rend[s->cur - 1] : 0, b = s->rend[s->cur];
    for (int i = a; i < b; i++) {
        const cr_sstep *p = &s->st[i];
        if (p->kind == CR_S_SEND)
            post_send(job, s, p);
        else if (p->kind == CR_S_RECV)
            post_recv(job, s, p, b - a <= XCHG_LOOK && sends_to(s->st + a, s->st + b, p->peer));
        else
            local_step(job, s, p);
    }
}

/* ---- run as built (blocking) ---------------------------------------------
 * The receives of the round under way wait in st[0..nst) until a long send
 * (posted after them, as a stored round posts them), cr_sched_post or the
 * round's end; a
 * round's one receive among short sends is taken last with the blocking
 * receive. Sends up to the peer's eager limit go out at once with the blocking
 * send (no request); longer ones get a request, waited for at the round's end. */

static void req_add(cr_job *job, cr_sched *s, cr_req *r)
{
    if (s->nreq == s->reqcap)
        s->reqs = grow(job, s->op, s->reqs, s->req_in, &s->reqcap, sizeof *s->reqs);
    s->reqs[s->nreq++] = r;
}

/* The round's receives, posted; the one from peer (the long send about to
 * go there; -1: none) is an exchange's. */
static void post_pending(cr_job *job, cr_sched *s, int peer)
{
    for (int i = 0; i < s->nst; i++) {
        const cr_sstep *p = &s->st[i];
        cr_sel sel = {.src = p->peer, .ctx = s->ctx, .tag_mode = CR_TAG_EXACT, .tag = p->tag};
        req_add(job, s,
                (p->peer == peer ? cr_irecv_push : cr_irecv_note)(job, s->op, &sel, p->buf, p->len,
                                                                  s->trunc));
    }
    s->nst = 0;
}

void cr_sched_post(cr_job *job, cr_sched *s)
{
    if (s->now && s->nst > 1) post_pending(job, s, -1);
}

void cr_sched_xfer_now(cr_job *job, cr_sched *s, int kind, int peer, int step, const void *buf,
                       size_t len)
{
    int32_t tag = cr_sched_tag(s, step);
    if (kind == CR_S_RECV) {
        cr_sstep *p = cr_sched_step(job, s, CR_S_RECV);
        p->peer = peer;
        p->tag = tag;
        p->buf = (char *)buf;
        p->len = len;
        return;
    }
    if (len > SMALL_EXCHANGE) post_pending(job, s, peer); /* long: the receives go first */
    if (len <= cr_eager(job, peer))
        cr_send(job, s->op, peer, s->ctx, tag, buf, len);
    else if (!cr_send_now(job, peer, s->ctx, tag, buf, len))
        req_add(job, s, cr_isend(job, s->op, peer, s->ctx, tag, buf, len));
}

static void round_now(cr_job *job, cr_sched *s)
{
    if (s->nst == 1) {
        const cr_sstep *p = &s->st[0];
        cr_sel sel = {.src = p->peer, .ctx = s->ctx, .tag_mode = CR_TAG_EXACT, .tag = p->tag};
        cr_status st;
        cr_recv_note(job, s->op, &sel, p->buf, p->len, s->trunc, &st);
        s->nst = 0;
    } else if (s->nst) {
        post_pending(job, s, -1);
    }
    for (int i = 0; i < s->nreq; i++) {
        cr_req_wait(job, s->reqs[i]);
        cr_req_release(job, s->reqs[i]);
    }
    s->nreq = 0;
}

void cr_sched_run_stored(cr_job *job, cr_sched *s)
{
    if (s->now) {
        round_now(job, s);
        s->done = true;
        return;
    }
    if (s->nst != (s->nr ? s->rend[s->nr - 1] : 0))
        cr_sched_round(job, s); /* steps added after the last round's end make one more */
    if (s->most > s->reqcap) reqs_size(job, s);
    for (int r = 0, from = 0; r < s->nr; from = s->rend[r++]) {
        int to = s->rend[r], nrecv = 0, last = -1;
        size_t most = 0;
        for (int i = from; i < to; i++) {
            if (s->st[i].kind == CR_S_RECV) nrecv++, last = i;
            if (s->st[i].kind == CR_S_SEND && s->st[i].len > most) most = s->st[i].len;
        }
        bool defer = nrecv == 1 && most <= SMALL_EXCHANGE;
        for (int i = from; i < to; i++) {
            const cr_sstep *p = &s->st[i];
            if (p->kind == CR_S_SEND && p->len <= cr_eager(job, p->peer))
                cr_send(job, s->op, p->peer, s->ctx, p->tag, p->buf, p->len); /* no request */
            else if (p->kind == CR_S_SEND)
                post_send(job, s, p);
            else if (p->kind == CR_S_RECV) {
                if (!defer)
                    post_recv(job, s, p,
                              to - from <= XCHG_LOOK &&
                                  sends_to(s->st + from, s->st + to, p->peer));
            } else
                local_step(job, s, p);
        }
        if (defer) {
            const cr_sstep *p = &s->st[last];
            cr_sel sel = {.src = p->peer, .ctx = s->ctx, .tag_mode = CR_TAG_EXACT, .tag = p->tag};
            cr_status st;
            cr_recv_note(job, s->op, &sel, p->buf, p->len, s->trunc, &st);
        }
        if (!s->nreq) continue;
        for (int i = 0; i < s->nreq; i++) {
            cr_req_wait(job, s->reqs[i]);
            cr_req_release(job, s->reqs[i]);
        }
        s->nreq = 0;
    }
    s->cur = s->nr;
    s->done = true;
}

void cr_sched_start(cr_job *job, cr_sched *s)
{
    cr_sched_round(job, s);
    reqs_size(job, s);
    s->nreq = s->nwait = 0;
    s->done = false;
    s->cur = 0;
    if (!s->nr) {
        s->done = true;
        return;
    }
    start_round(job, s);
}

int cr_sched_advance(cr_job *job, cr_sched *s)
{
    int made = 0;
    while (!s->done) {
        for (; s->nwait < s->nreq; s->nwait++)
            if (!s->reqs[s->nwait]->done) return made;
        for (int i = 0; i < s->nreq; i++) cr_req_release(job, s->reqs[i]);
        s->nreq = s->nwait = 0;
        made++;
        if (++s->cur == s->nr)
            s->done = true;
        else
            start_round(job, s);
    }
    return made;
}

void cr_sched_release(cr_job *job, cr_sched *s)
{
    if (!s->done) /* transfers still posted are the engine's to finish; drop the complete ones */
        for (int i = 0; i < s->nreq; i++)
            if (s->reqs[i]->done) cr_req_release(job, s->reqs[i]);
    s->nreq = s->nwait = 0;
    s->scratch = NULL;
    if (!s->tmp && s->st == s->st_in && s->rend == s->rend_in && s->reqs == s->req_in)
        return; /* a blocking collective's: nothing on the heap */
    for (int i = 0; i < s->ntmp; i++) cr_coll_keep_put(job, s->tmp[i].p, s->tmp[i].len);
    if (s->tmp != s->tmp_in) free(s->tmp);
    s->tmp = NULL;
    s->ntmp = s->tmpcap = 0;
    if (s->st != s->st_in) free(s->st);
    if (s->rend != s->rend_in) free(s->rend);
    if (s->reqs != s->req_in) free(s->reqs);
    s->st = s->st_in;
    s->rend = s->rend_in;
    s->reqs = s->req_in;
    s->nst = s->nr = s->xfer = s->most = 0;
    s->stcap = CR_SCHED_STEPS;
    s->rcap = CR_SCHED_ROUNDS;
    s->reqcap = CR_SCHED_REQS;
}
