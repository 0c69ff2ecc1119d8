/* Streams of the native interface (courier/streams.h): iWarp's logical
 * channels (seed 002) over the message engine, on context CR_CTX_STREAM.
 *
 * Wire: a stream is a chain of hops. Each hop sender names its hop with a link
 * id it draws from its own counter (iWarp's transmitter assigning a free
 * logical output channel), so (previous rank, link id) is unique at every
 * receiver; the data of the hop are engine messages of at most CHUNK words
 * whose tag is the link id, and an empty message is the end-of-stream marker.
 * The pathway header (tag TAG_HDR) travels ahead of the data along the route;
 * credits (tag TAG_CREDIT | the origin's stream id) go straight from the
 * destination back to the origin (end to end: the intermediates' buffering is
 * part of the one queue, as iWarp's linked channel queues are).
 *
 * The service (streams_bg, a background hook run by every cr_progress: the
 * progress thread's, started by cr_handlers_start so that it answers at once,
 * or a waiting call's) takes pathway headers (forwarding them, or queueing
 * them for cr_stream_accept), forwards the data of the links through this
 * rank, moves redirected words into their buffers, passes the words of a
 * spliced destination end on along its origin end (GetRow, PutRow) and absorbs
 * the credits of closed origins until their destination's final grant.
 *
 * Invariants:
 *  - all state is in job->streams and changes only under the engine lock;
 *    stream records are allocated one by one and never freed, so pointers and
 *    handles stay valid and a closed handle is recognized;
 *  - words sent but not yet granted back never exceed the destination's depth,
 *    so a data message always fits the receiver's staging buffer, and the
 *    engine never holds more than depth words of a stream anywhere;
 *  - a grant is never skipped (sent at once or queued in the engine), and one
 *    is due whenever depth/2 words were consumed, so a receiver that waits for
 *    words has granted every credit a blocked sender waits for;
 *  - a splice moves only the words its origin end has credit for, and grants
 *    upstream only what it moved, so the flow control runs end to end across
 *    it; its two ends belong to the service until it has passed end-of-stream;
 *  - a reserved stream's messages (words, end-of-stream, credits; not its
 *    header) travel in the engine's lane to their next rank (cr_isend_lane),
 *    apart from the ordinary traffic in the engine's queues and in the
 *    transport, and at an intermediate reserved links are served first;
 *    ordinary words are handed to the engine only when nothing waits in its
 *    queue to that peer (cr_send_now), else they wait in the service's own
 *    queue. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "native.h"

#define CHUNK 256 /* most words per data message */
#define TAG_HDR 0x40000000
#define TAG_CREDIT 0x20000000
#define LINK_MAX 0x1fffffff
#define DEFAULT_DEPTH 64
#define MAX_CH 65535

enum { END_SEND = 1, END_RECV = 2 };

/* The pathway header: route[0] is the rank it goes to; nvia more after it
 * before the destination, which is route[nvia]. */
typedef struct st_hdr {
    int32_t origin, ch, flags, sid, link, nvia;
    int32_t route[CR_STREAM_MAX_VIA + 1];
} st_hdr;

/* A credit message: words granted; final: the destination read end-of-stream. */
typedef struct st_credit {
    uint64_t words, final;
} st_credit;

typedef struct st_stream {
    int id;
    uint8_t end;  /* END_SEND / END_RECV */
    bool closed;  /* by the program */
    bool retired; /* origin: its final grant came (nothing of it is in flight) */
    bool reserved;
    int far;     /* the other end's rank */
    int peer;    /* the first (origin) or last (destination) hop's other rank */
    int32_t tag; /* data tag on that hop */
    int ch;
    /* origin */
    uint64_t credits;
    uint64_t window; /* --sim (sim_streams): the destination's first grant, its depth */
    cr_req *cred_rq;
    st_credit cred;
    /* destination */
    int32_t origin_sid;
    size_t depth, ungranted;
    uint64_t *stage;
    size_t stage_n, stage_pos;
    bool eof;
    cr_req *rq;     /* a posted data receive (redirection) */
    bool rq_direct; /* it lands straight in the redirect buffer */
    uint64_t *rbuf; /* redirection: target, words wanted, words there */
    size_t rn, rgot;
    bool redirecting;
    struct st_stream *splice; /* destination: the origin end its words go on along */
    bool spliced;             /* either end of a splice: the service owns it */
} st_stream;

/* A hop through this rank. */
typedef struct st_link {
    struct st_link *next;
    int in_src, out;
    int32_t in_tag, out_tag;
    bool reserved;
    cr_req *rq;
    uint64_t buf[CHUNK];
} st_link;

/* A message the service holds: an ordinary forward waiting for room, or a
 * small send the engine holds (req) whose copy must live until done. */
typedef struct st_msg {
    struct st_msg *next;
    int dst;
    int32_t tag;
    cr_req *req;
    size_t len;
    char data[];
} st_msg;

/* A header that reached its destination, waiting for cr_stream_accept. */
typedef struct st_pending {
    struct st_pending *next;
    int origin, prev, ch;
    int32_t sid, link, flags;
} st_pending;

typedef struct cr_streams {
    st_stream **s;
    int n, cap;
    int32_t next_link;
    cr_req *hdr_rq;
    st_hdr hdr;
    st_link *links;            /* through this rank */
    st_msg *fwdq, **fwdq_tail; /* ordinary forwards waiting for room, oldest first */
    st_msg *loose;             /* sends the engine holds */
    st_pending *pending, **pending_tail;
    int nclosing; /* closed origins not yet retired */
    int nredirect;
    int nsplice;             /* splices not yet at end-of-stream */
    uint32_t pass, *blocked; /* per rank: the fwdq pass that found no room */
} cr_streams;

static int streams_bg(cr_job *job, bool *pending);

/* ---- state, checks, small sends -------------------------------------------- */

static cr_streams *streams_get(cr_job *job)
{
    if (job->streams) return job->streams;
    cr_streams *t = calloc(1, sizeof *t);
    uint32_t *b = calloc((size_t)job->size, sizeof *b);
    if (!t || !b) cr_fatal(job, "courier", "out of memory for the streams' state");
    t->fwdq_tail = &t->fwdq;
    t->pending_tail = &t->pending;
    t->blocked = b;
    job->streams = t;
    cr_sel hs = {
        .src = CR_ANY_SOURCE, .ctx = CR_CTX_STREAM, .tag_mode = CR_TAG_EXACT, .tag = TAG_HDR};
    t->hdr_rq = cr_irecv(job, "stream service", &hs, &t->hdr, sizeof t->hdr);
    cr_bg_add(job, streams_bg);
    if (!job->progress_on) {
        /* started without the lock (a no-op until now); from then on every
         * call takes it, so take it as cr_native_enter would have */
        bool held = job->threaded;
        cr_handlers_start(job);
        if (!held) cr_lock(job);
    } else if (!job->handlers_on) {
        cr_handlers_start(job); /* the lock is recursive */
    }
    return t;
}

static cr_job *enter(const char *call)
{
    cr_job *job = cr_native_enter(call);
    streams_get(job);
    return job;
}

static st_stream *get(cr_job *job, const char *op, cr_stream h, int end)
{
    cr_streams *t = job->streams;
    if (h < 0 || h >= t->n) cr_fatal(job, op, "stream %d is unknown", h);
    st_stream *s = t->s[h];
    if (s->spliced)
        cr_fatal(job, op, "stream %d is spliced (cr_stream_splice): the service owns it", h);
    if (s->closed) cr_fatal(job, op, "stream %d is closed", h);
    if (s->end != end)
        cr_fatal(job, op, "stream %d is the %s end: it cannot %s", h,
                 s->end == END_SEND ? "sending" : "receiving",
                 end == END_SEND ? "send" : "receive");
    return s;
}

static void check_count(cr_job *job, const char *op, const void *buf, size_t n)
{
    if ((ssize_t)n < 0) cr_fatal(job, op, "count %zd is negative", (ssize_t)n);
    if (n > ((size_t)1 << 37)) cr_fatal(job, op, "count %zu is too large (at most 2^37 words)", n);
    if (!buf && n) cr_fatal(job, op, "buffer is NULL but count is %zu", n);
}

static void check_rank(cr_job *job, const char *op, const char *what, int r)
{
    if (r < 0 || r >= job->size)
        cr_fatal(job, op, "%s %d is out of range: ranks are 0..%d", what, r, job->size - 1);
}

static st_stream *new_stream(cr_job *job, int end)
{
    cr_streams *t = job->streams;
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        st_stream **a = realloc(t->s, (size_t)cap * sizeof *a);
        if (!a) cr_fatal(job, "courier", "out of memory for %d streams", cap);
        t->s = a;
        t->cap = cap;
    }
    st_stream *s = calloc(1, sizeof *s);
    if (!s) cr_fatal(job, "courier", "out of memory for a stream");
    s->id = t->n;
    s->end = (uint8_t)end;
    t->s[t->n++] = s;
    return s;
}

static int32_t new_link(cr_job *job)
{
    cr_streams *t = job->streams;
    if (t->next_link == LINK_MAX) cr_fatal(job, "courier", "out of stream link ids");
    return t->next_link++;
}

/* Under --sim, on a machine whose streams are hardware (iWarp, seed 002): true. There a
 * stream's words flow on its pathway as they come, with no header of their own once it is
 * set up, and the word-level flow control keeps the channel busy while the receiver takes
 * them; so a hop's data messages to `to` (tag), up to the end-of-stream, are one message of
 * the model that stays open between them (sim_chain, cr_vt_chain_open), and an origin sends
 * at most half its window in one (sim_most), so that the grant of one half comes back while
 * the other half flows, as the hardware's dequeue signals do word by word. */
static bool sim_streams(const cr_job *job)
{
    return job->vt.base && job->vt.hd->chains;
}

static void sim_chain(cr_job *job, int to, int32_t tag)
{
    if (sim_streams(job)) cr_vt_chain_open(&job->vt, to, CR_CTX_STREAM, tag);
}

/* Send a small message without waiting: at once, or a copy the engine queues
 * (in order behind what it holds for dst). With lane, in dst's lane (a
 * reserved stream's messages but its header). */
static void send_small(cr_job *job, int dst, int32_t tag, const void *buf, size_t len, bool lane)
{
    const char *op = "stream service";
    if (lane ? cr_send_lane_now(job, op, dst, CR_CTX_STREAM, tag, buf, len)
             : cr_send_now(job, dst, CR_CTX_STREAM, tag, buf, len))
        return;
    st_msg *m = malloc(sizeof *m + len);
    if (!m) cr_fatal(job, "courier", "out of memory for a stream message");
    if (len) memcpy(m->data, buf, len); /* buf may be NULL when len is 0 */
    m->len = len;
    m->req = lane ? cr_isend_lane(job, op, dst, CR_CTX_STREAM, tag, m->data, len)
                  : cr_isend(job, op, dst, CR_CTX_STREAM, tag, m->data, len);
    m->next = job->streams->loose;
    job->streams->loose = m;
}

static void grant(cr_job *job, st_stream *s, bool final)
{
    st_credit c = {s->ungranted, final};
    s->ungranted = 0;
    send_small(job, s->far, TAG_CREDIT | s->origin_sid, &c, sizeof c, s->reserved);
}

/* The destination consumed k words. */
static void consumed(cr_job *job, st_stream *s, size_t k)
{
    s->ungranted += k;
    if (s->ungranted >= (s->depth + 1) / 2) grant(job, s, false);
}

static void got_eof(cr_job *job, st_stream *s)
{
    s->eof = true;
    grant(job, s, true); /* the origin may retire */
}

/* Take the credits that came; true when there are some. */
static bool absorb(cr_job *job, st_stream *s)
{
    while (s->cred_rq->done) {
        if (!s->window) s->window = s->cred.words;
        s->credits += s->cred.words;
        cr_req_release(job, s->cred_rq);
        cr_sel cs = {.src = s->far,
                     .ctx = CR_CTX_STREAM,
                     .tag_mode = CR_TAG_EXACT,
                     .tag = TAG_CREDIT | s->id};
        s->cred_rq = cr_irecv(job, "stream credits", &cs, &s->cred, sizeof s->cred);
    }
    return s->credits != 0;
}

/* The most words one data message of s carries: CHUNK, or fewer where the
 * engine's eager size to the next hop is smaller (or, sim_streams, half the
 * window). */
static size_t most_words(const cr_job *job, const st_stream *s)
{
    size_t most = cr_eager(job, s->peer) / 8;
    if (most > CHUNK) most = CHUNK;
    if (sim_streams(job) && s->window / 2 && most > s->window / 2) most = s->window / 2;
    return most ? most : 1;
}

static cr_sel data_sel(const st_stream *s)
{
    return (cr_sel){.src = s->peer, .ctx = CR_CTX_STREAM, .tag_mode = CR_TAG_EXACT, .tag = s->tag};
}

/* ---- the service ----------------------------------------------------------- */

static void take_header(cr_job *job, cr_streams *t, int prev)
{
    st_hdr *h = &t->hdr;
    if (h->nvia < 0 || h->nvia > CR_STREAM_MAX_VIA || h->route[0] != job->rank)
        cr_fatal(job, "stream service", "a malformed pathway header came from rank %d", prev);
    if (h->nvia == 0) {
        st_pending *p = malloc(sizeof *p);
        if (!p) cr_fatal(job, "stream service", "out of memory");
        *p = (st_pending){NULL, h->origin, prev, h->ch, h->sid, h->link, h->flags};
        *t->pending_tail = p;
        t->pending_tail = &p->next;
        return;
    }
    st_link *l = calloc(1, sizeof *l);
    if (!l) cr_fatal(job, "stream service", "out of memory");
    l->in_src = prev;
    l->in_tag = h->link;
    l->out = h->route[1];
    l->out_tag = new_link(job);
    l->reserved = h->flags & CR_STREAM_RESERVED;
    sim_chain(job, l->out, l->out_tag);
    cr_sel ls = {.src = prev, .ctx = CR_CTX_STREAM, .tag_mode = CR_TAG_EXACT, .tag = l->in_tag};
    l->rq = cr_irecv(job, "stream service", &ls, l->buf, sizeof l->buf);
    /* reserved links first in the list */
    st_link **pp = &t->links;
    if (!l->reserved)
        while (*pp) pp = &(*pp)->next;
    l->next = *pp;
    *pp = l;
    h->link = l->out_tag;
    memmove(h->route, h->route + 1, (size_t)h->nvia * sizeof h->route[0]);
    h->nvia--;
    send_small(job, l->out, TAG_HDR, h, offsetof(st_hdr, route) + (size_t)(h->nvia + 1) * 4, false);
}

/* Hand a message of the service on: a reserved link's at once (the engine
 * queues it if it must); an ordinary one only when nothing waits in the
 * engine's queue to dst, else into the service's own queue (flush_fwdq). */
static void pass_on(cr_job *job, cr_streams *t, int dst, int32_t tag, bool reserved,
                    const void *buf, size_t len)
{
    if (reserved) {
        send_small(job, dst, tag, buf, len, true);
        return;
    }
    bool queued = false;
    for (st_msg *m = t->fwdq; m && !queued; m = m->next) queued = m->dst == dst;
    if (!queued && cr_send_now(job, dst, CR_CTX_STREAM, tag, buf, len)) return;
    st_msg *m = malloc(sizeof *m + len);
    if (!m) cr_fatal(job, "stream service", "out of memory");
    m->next = NULL;
    m->dst = dst;
    m->tag = tag;
    m->req = NULL;
    m->len = len;
    if (len) memcpy(m->data, buf, len);
    *t->fwdq_tail = m;
    t->fwdq_tail = &m->next;
}

/* Pass a link's message on; false when it was the end-of-stream. */
static bool forward(cr_job *job, cr_streams *t, st_link *l)
{
    size_t len = l->rq->st.count;
    cr_req_release(job, l->rq);
    l->rq = NULL;
    pass_on(job, t, l->out, l->out_tag, l->reserved, l->buf, len);
    if (!len) return false;
    cr_sel ls = {
        .src = l->in_src, .ctx = CR_CTX_STREAM, .tag_mode = CR_TAG_EXACT, .tag = l->in_tag};
    l->rq = cr_irecv(job, "stream service", &ls, l->buf, sizeof l->buf);
    return true;
}

/* Ordinary forwards, oldest first, each when the engine has room for it. */
static int flush_fwdq(cr_job *job, cr_streams *t)
{
    int n = 0;
    uint32_t pass = ++t->pass;
    st_msg **pp = &t->fwdq, *last = NULL;
    while (*pp) {
        st_msg *m = *pp;
        if (t->blocked[m->dst] != pass &&
            cr_send_now(job, m->dst, CR_CTX_STREAM, m->tag, m->data, m->len)) {
            *pp = m->next;
            free(m);
            n++;
            continue;
        }
        t->blocked[m->dst] = pass; /* keep its later ones behind it */
        last = m;
        pp = &m->next;
    }
    t->fwdq_tail = last ? &last->next : &t->fwdq;
    return n;
}

/* Move staged words into the redirection buffer, and post the next receive. */
static int redirect_step(cr_job *job, st_stream *s)
{
    int n = 0;
    if (s->rq && s->rq->done) {
        size_t k = s->rq->st.count / 8;
        cr_req_release(job, s->rq);
        s->rq = NULL;
        n++;
        if (!k) {
            got_eof(job, s);
        } else if (s->rq_direct) {
            s->rgot += k;
            consumed(job, s, k);
        } else {
            s->stage_n = k;
            s->stage_pos = 0;
        }
    }
    if (s->stage_pos < s->stage_n && s->rgot < s->rn) {
        size_t k = s->stage_n - s->stage_pos;
        if (k > s->rn - s->rgot) k = s->rn - s->rgot;
        memcpy(s->rbuf + s->rgot, s->stage + s->stage_pos, k * 8);
        s->stage_pos += k;
        s->rgot += k;
        consumed(job, s, k);
        n++;
    }
    if (s->rgot < s->rn && !s->eof && !s->rq) {
        cr_sel sel = data_sel(s);
        s->rq_direct = s->rn - s->rgot >= CHUNK;
        s->rq = cr_irecv(job, "cr_stream_redirect", &sel,
                         s->rq_direct ? s->rbuf + s->rgot : s->stage, CHUNK * 8);
        n++;
    }
    return n;
}

/* A splice: pass the words of in on along its origin end as credits allow,
 * one staged message at a time, and end that stream with in's end-of-stream. */
static int splice_step(cr_job *job, cr_streams *t, st_stream *in)
{
    st_stream *out = in->splice;
    int n = 0;
    for (;;) {
        if (in->rq && in->rq->done) {
            in->stage_n = in->rq->st.count / 8;
            in->stage_pos = 0;
            cr_req_release(job, in->rq);
            in->rq = NULL;
            n++;
            if (!in->stage_n) got_eof(job, in);
        }
        size_t k = in->stage_n - in->stage_pos;
        if (k) {
            if (!absorb(job, out)) return n; /* the service runs again when credits come */
            if (k > out->credits) k = out->credits;
            if (k > most_words(job, out)) k = most_words(job, out);
            pass_on(job, t, out->peer, out->tag, out->reserved, in->stage + in->stage_pos, k * 8);
            out->credits -= k;
            in->stage_pos += k;
            consumed(job, in, k);
            n++;
            continue;
        }
        if (!in->eof) {
            if (!in->rq) {
                cr_sel sel = data_sel(in);
                in->rq = cr_irecv(job, "stream splice", &sel, in->stage, CHUNK * 8);
                n++;
                continue; /* it may be there already */
            }
            return n;
        }
        pass_on(job, t, out->peer, out->tag, out->reserved, NULL, 0); /* end-of-stream */
        out->closed = true;
        t->nclosing++; /* its credits are absorbed until the final grant */
        in->closed = true;
        free(in->stage);
        in->stage = NULL;
        in->splice = NULL;
        t->nsplice--;
        return n + 1;
    }
}

static int streams_bg(cr_job *job, bool *pending)
{
    (void)pending; /* the thread answers messages at once (cr_handlers_start) */
    cr_streams *t = job->streams;
    if (!t) return 0;
    int n = 0;
    while (t->hdr_rq && t->hdr_rq->done) {
        int prev = t->hdr_rq->st.src;
        cr_req_release(job, t->hdr_rq);
        take_header(job, t, prev);
        cr_sel hs = {
            .src = CR_ANY_SOURCE, .ctx = CR_CTX_STREAM, .tag_mode = CR_TAG_EXACT, .tag = TAG_HDR};
        t->hdr_rq = cr_irecv(job, "stream service", &hs, &t->hdr, sizeof t->hdr);
        n++;
    }
    /* one message per link and pass: the links share this rank fairly */
    for (st_link **pp = &t->links; *pp;) {
        st_link *l = *pp;
        if (l->rq->done) {
            n++;
            if (!forward(job, t, l)) {
                *pp = l->next;
                free(l);
                continue;
            }
        }
        pp = &l->next;
    }
    if (t->fwdq) n += flush_fwdq(job, t);
    for (st_msg **pp = &t->loose; *pp;) {
        st_msg *m = *pp;
        if (m->req->done) {
            *pp = m->next;
            cr_req_release(job, m->req);
            free(m);
            continue;
        }
        pp = &m->next;
    }
    if (t->nredirect || t->nclosing || t->nsplice)
        for (int i = 0; i < t->n; i++) {
            st_stream *s = t->s[i];
            if (s->redirecting) n += redirect_step(job, s);
            if (s->splice) n += splice_step(job, t, s);
            while (s->end == END_SEND && s->closed && !s->retired && s->cred_rq->done) {
                bool final = s->cred.final;
                cr_req_release(job, s->cred_rq);
                s->cred_rq = NULL;
                n++;
                if (final) {
                    s->retired = true;
                    t->nclosing--;
                    break;
                }
                cr_sel cs = {.src = s->far,
                             .ctx = CR_CTX_STREAM,
                             .tag_mode = CR_TAG_EXACT,
                             .tag = TAG_CREDIT | s->id};
                s->cred_rq = cr_irecv(job, "stream service", &cs, &s->cred, sizeof s->cred);
            }
        }
    return n;
}

/* ---- job-wide calls -------------------------------------------------------- */

void cr_stream_init(void)
{
    cr_job *job = enter("cr_stream_init");
    cr_coll_barrier(job, &job->native->group, "cr_stream_init");
    cr_native_leave(job);
}

static bool service_idle(void *arg)
{
    cr_streams *t = arg;
    return !t->links && !t->fwdq && !t->loose && !t->nclosing && !t->nsplice;
}

void cr_stream_finalize(void)
{
    cr_job *job = enter("cr_stream_finalize");
    cr_streams *t = job->streams;
    for (int i = 0; i < t->n; i++)
        if (!t->s[i]->closed && !t->s[i]->spliced)
            cr_fatal(job, "cr_stream_finalize", "stream %d (channel %d %s rank %d) is still open",
                     i, t->s[i]->ch, t->s[i]->end == END_SEND ? "to" : "from", t->s[i]->far);
    cr_wait_until(job, "cr_stream_finalize", service_idle, t, NULL);
    cr_coll_barrier(job, &job->native->group, "cr_stream_finalize");
    cr_native_leave(job);
}

/* ---- opening --------------------------------------------------------------- */

cr_stream cr_stream_open(int dst, int ch, const int *via, int nvia, int flags)
{
    const char *op = "cr_stream_open";
    cr_job *job = enter("cr_stream_open");
    cr_streams *t = job->streams;
    check_rank(job, op, "destination rank", dst);
    if (ch < 0 || ch > MAX_CH) cr_fatal(job, op, "channel %d is out of range 0..%d", ch, MAX_CH);
    if (nvia < 0 || nvia > CR_STREAM_MAX_VIA)
        cr_fatal(job, op, "%d intermediate ranks: a pathway has 0..%d", nvia, CR_STREAM_MAX_VIA);
    if (nvia && !via) cr_fatal(job, op, "via is NULL but nvia is %d", nvia);
    if (flags & ~CR_STREAM_RESERVED) cr_fatal(job, op, "flags 0x%x are unknown", flags);
    for (int i = 0; i < nvia; i++) {
        check_rank(job, op, "intermediate rank", via[i]);
        if (via[i] == job->rank)
            cr_fatal(job, op, "the pathway passes through rank %d itself (via[%d])", via[i], i);
        if (via[i] == dst)
            cr_fatal(job, op, "the pathway passes through its destination %d (via[%d])", dst, i);
    }
    for (int i = 0; i < t->n; i++) {
        st_stream *o = t->s[i];
        if (o->end == END_SEND && !o->closed && o->far == dst && o->ch == ch)
            cr_fatal(job, op, "channel %d to rank %d is already open (stream %d)", ch, dst, i);
    }
    st_stream *s = new_stream(job, END_SEND);
    s->far = dst;
    s->ch = ch;
    s->peer = nvia ? via[0] : dst;
    s->tag = new_link(job);
    s->reserved = flags & CR_STREAM_RESERVED;
    sim_chain(job, s->peer, s->tag);
    cr_sel cs = {
        .src = dst, .ctx = CR_CTX_STREAM, .tag_mode = CR_TAG_EXACT, .tag = TAG_CREDIT | s->id};
    s->cred_rq = cr_irecv(job, op, &cs, &s->cred, sizeof s->cred);
    st_hdr h = {
        .origin = job->rank, .ch = ch, .flags = flags, .sid = s->id, .link = s->tag, .nvia = nvia};
    for (int i = 0; i < nvia; i++) h.route[i] = via[i];
    h.route[nvia] = dst;
    send_small(job, s->peer, TAG_HDR, &h, offsetof(st_hdr, route) + (size_t)(nvia + 1) * 4, false);
    cr_native_leave(job);
    return s->id;
}

typedef struct accept_arg {
    cr_streams *t;
    int src, ch;
} accept_arg;

static bool header_here(void *arg)
{
    accept_arg *a = arg;
    for (st_pending *p = a->t->pending; p; p = p->next)
        if (p->origin == a->src && p->ch == a->ch) return true;
    return false;
}

cr_stream cr_stream_accept(int src, int ch, int depth)
{
    const char *op = "cr_stream_accept";
    cr_job *job = enter("cr_stream_accept");
    cr_streams *t = job->streams;
    check_rank(job, op, "source rank", src);
    if (ch < 0 || ch > MAX_CH) cr_fatal(job, op, "channel %d is out of range 0..%d", ch, MAX_CH);
    if (depth < 0 || depth > CR_STREAM_MAX_DEPTH)
        cr_fatal(job, op, "depth %d is out of range 0..%d words", depth, CR_STREAM_MAX_DEPTH);
    for (int i = 0; i < t->n; i++) {
        st_stream *o = t->s[i];
        if (o->end == END_RECV && !o->closed && o->far == src && o->ch == ch)
            cr_fatal(job, op, "channel %d from rank %d is already open (stream %d)", ch, src, i);
    }
    accept_arg a = {t, src, ch};
    cr_wait_until(job, op, header_here, &a, NULL);
    st_pending **pp = &t->pending;
    while (!((*pp)->origin == src && (*pp)->ch == ch)) pp = &(*pp)->next;
    st_pending *p = *pp;
    *pp = p->next;
    if (t->pending_tail == &p->next) t->pending_tail = pp;
    st_stream *s = new_stream(job, END_RECV);
    s->far = src;
    s->ch = ch;
    s->peer = p->prev;
    s->tag = p->link;
    s->origin_sid = p->sid;
    s->reserved = p->flags & CR_STREAM_RESERVED;
    s->depth = depth ? (size_t)depth : DEFAULT_DEPTH;
    free(p);
    s->stage = malloc(CHUNK * 8);
    if (!s->stage) cr_fatal(job, op, "out of memory");
    s->ungranted = s->depth;
    grant(job, s, false); /* the origin's first credits */
    cr_native_leave(job);
    return s->id;
}

/* ---- sending --------------------------------------------------------------- */

static bool credit_came(void *arg)
{
    return ((st_stream *)arg)->cred_rq->done;
}

/* Send one data message (or, empty, the end-of-stream) of origin end s and
 * wait until it is on its way. */
static void send_msg(cr_job *job, const char *op, st_stream *s, const void *buf, size_t len)
{
    if (s->reserved)
        cr_send_lane(job, op, s->peer, CR_CTX_STREAM, s->tag, buf, len);
    else
        cr_send(job, op, s->peer, CR_CTX_STREAM, s->tag, buf, len);
}

/* Send up to n words; with block, all of them. Returns the words sent. */
static size_t send_words(cr_job *job, const char *op, st_stream *s, const uint64_t *w, size_t n,
                         bool block)
{
    size_t sent = 0;
    while (sent < n) {
        if (!absorb(job, s)) {
            if (!block) {
                cr_progress(job);
                if (!absorb(job, s)) break;
            } else {
                cr_wait_until(job, op, credit_came, s, s->cred_rq);
                continue;
            }
        }
        size_t k = n - sent;
        if (k > s->credits) k = s->credits;
        if (k > most_words(job, s)) k = most_words(job, s);
        if (block)
            send_msg(job, op, s, w + sent, k * 8);
        else
            send_small(job, s->peer, s->tag, w + sent, k * 8, s->reserved);
        s->credits -= k;
        sent += k;
    }
    return sent;
}

void cr_stream_send(cr_stream h, uint64_t w)
{
    cr_job *job = enter("cr_stream_send");
    st_stream *s = get(job, "cr_stream_send", h, END_SEND);
    send_words(job, "cr_stream_send", s, &w, 1, true);
    cr_native_leave(job);
}

int cr_stream_trysend(cr_stream h, uint64_t w)
{
    cr_job *job = enter("cr_stream_trysend");
    st_stream *s = get(job, "cr_stream_trysend", h, END_SEND);
    int n = (int)send_words(job, "cr_stream_trysend", s, &w, 1, false);
    cr_native_leave(job);
    return n;
}

void cr_stream_write(cr_stream h, const uint64_t *w, size_t n)
{
    cr_job *job = enter("cr_stream_write");
    st_stream *s = get(job, "cr_stream_write", h, END_SEND);
    check_count(job, "cr_stream_write", w, n);
    send_words(job, "cr_stream_write", s, w, n, true);
    cr_native_leave(job);
}

/* ---- receiving ------------------------------------------------------------- */

/* Words in the stage, or end-of-stream: true; else, with block, wait for the
 * next message. */
static bool fill(cr_job *job, const char *op, st_stream *s, bool block)
{
    if (s->redirecting)
        cr_fatal(job, op, "stream %d has a redirection pending: wait for it first", s->id);
    if (s->stage_pos < s->stage_n || s->eof) return true;
    cr_sel sel = data_sel(s);
    cr_status st;
    if (!block) {
        if (!cr_probe(job, &sel, false, &st)) return false;
    }
    cr_recv(job, op, &sel, s->stage, CHUNK * 8, &st);
    s->stage_pos = 0;
    s->stage_n = st.count / 8;
    if (!s->stage_n) got_eof(job, s);
    return true;
}

static uint64_t take(cr_job *job, st_stream *s)
{
    uint64_t w = s->stage[s->stage_pos++];
    consumed(job, s, 1);
    return w;
}

int cr_stream_recv(cr_stream h, uint64_t *w)
{
    cr_job *job = enter("cr_stream_recv");
    st_stream *s = get(job, "cr_stream_recv", h, END_RECV);
    check_count(job, "cr_stream_recv", w, 1);
    fill(job, "cr_stream_recv", s, true);
    int r = 0;
    if (!s->eof || s->stage_pos < s->stage_n) {
        *w = take(job, s);
        r = 1;
    }
    cr_native_leave(job);
    return r;
}

int cr_stream_tryrecv(cr_stream h, uint64_t *w)
{
    cr_job *job = enter("cr_stream_tryrecv");
    st_stream *s = get(job, "cr_stream_tryrecv", h, END_RECV);
    check_count(job, "cr_stream_tryrecv", w, 1);
    int r = 0;
    if (fill(job, "cr_stream_tryrecv", s, false)) {
        if (s->stage_pos < s->stage_n) {
            *w = take(job, s);
            r = 1;
        } else {
            r = -1;
        }
    }
    cr_native_leave(job);
    return r;
}

size_t cr_stream_read(cr_stream h, uint64_t *w, size_t n)
{
    cr_job *job = enter("cr_stream_read");
    st_stream *s = get(job, "cr_stream_read", h, END_RECV);
    check_count(job, "cr_stream_read", w, n);
    size_t got = 0;
    while (got < n) {
        fill(job, "cr_stream_read", s, true);
        size_t k = s->stage_n - s->stage_pos;
        if (!k) break; /* end-of-stream */
        if (k > n - got) k = n - got;
        memcpy(w + got, s->stage + s->stage_pos, k * 8);
        s->stage_pos += k;
        got += k;
        consumed(job, s, k);
    }
    cr_native_leave(job);
    return got;
}

void cr_stream_redirect(cr_stream h, uint64_t *buf, size_t n)
{
    cr_job *job = enter("cr_stream_redirect");
    st_stream *s = get(job, "cr_stream_redirect", h, END_RECV);
    check_count(job, "cr_stream_redirect", buf, n);
    if (s->redirecting)
        cr_fatal(job, "cr_stream_redirect", "stream %d has a redirection pending already", h);
    s->rbuf = buf;
    s->rn = n;
    s->rgot = 0;
    s->redirecting = true;
    job->streams->nredirect++;
    redirect_step(job, s); /* what is here already; the service moves the rest */
    cr_native_leave(job);
}

static bool redirect_done(void *arg)
{
    st_stream *s = arg;
    return s->rgot == s->rn || (s->eof && s->stage_pos == s->stage_n && !s->rq);
}

static size_t redirect_end(cr_job *job, st_stream *s)
{
    s->redirecting = false;
    job->streams->nredirect--;
    return s->rgot;
}

size_t cr_stream_redirect_wait(cr_stream h)
{
    cr_job *job = enter("cr_stream_redirect_wait");
    st_stream *s = get(job, "cr_stream_redirect_wait", h, END_RECV);
    if (!s->redirecting)
        cr_fatal(job, "cr_stream_redirect_wait", "stream %d has no redirection pending", h);
    cr_wait_until(job, "cr_stream_redirect_wait", redirect_done, s, s->rq);
    size_t n = redirect_end(job, s);
    cr_native_leave(job);
    return n;
}

size_t cr_stream_redirect_test(cr_stream h)
{
    cr_job *job = enter("cr_stream_redirect_test");
    st_stream *s = get(job, "cr_stream_redirect_test", h, END_RECV);
    if (!s->redirecting)
        cr_fatal(job, "cr_stream_redirect_test", "stream %d has no redirection pending", h);
    cr_progress(job);
    size_t n = redirect_done(s) ? redirect_end(job, s) : (size_t)-1;
    cr_native_leave(job);
    return n;
}

/* ---- splicing (GetRow, PutRow) --------------------------------------------- */

void cr_stream_splice(cr_stream hin, cr_stream hout)
{
    const char *op = "cr_stream_splice";
    cr_job *job = enter(op);
    st_stream *in = get(job, op, hin, END_RECV);
    st_stream *out = get(job, op, hout, END_SEND);
    if (in->redirecting)
        cr_fatal(job, op, "stream %d has a redirection pending: wait for it first", hin);
    in->splice = out;
    in->spliced = out->spliced = true;
    job->streams->nsplice++;
    splice_step(job, job->streams, in); /* what is here already; the service moves the rest */
    cr_native_leave(job);
}

/* ---- closing --------------------------------------------------------------- */

void cr_stream_close(cr_stream h)
{
    const char *op = "cr_stream_close";
    cr_job *job = enter("cr_stream_close");
    cr_streams *t = job->streams;
    if (h < 0 || h >= t->n) cr_fatal(job, op, "stream %d is unknown", h);
    st_stream *s = t->s[h];
    if (s->closed && !s->spliced) cr_fatal(job, op, "stream %d is closed already", h);
    if (s->spliced)
        cr_fatal(job, op, "stream %d is spliced (cr_stream_splice): the service closes it", h);
    if (s->end == END_SEND) {
        send_msg(job, op, s, NULL, 0); /* end-of-stream */
        s->closed = true;
        t->nclosing++; /* the service takes its credits until the final grant */
    } else {
        if (s->redirecting)
            cr_fatal(job, op, "stream %d has a redirection pending: wait for it first", h);
        while (!s->eof) { /* discard up to end-of-stream, granting as it goes */
            fill(job, op, s, true);
            consumed(job, s, s->stage_n - s->stage_pos);
            s->stage_pos = s->stage_n;
        }
        s->closed = true;
        free(s->stage);
        s->stage = NULL;
    }
    cr_native_leave(job);
}
