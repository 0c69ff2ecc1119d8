/* Output forwarding: the ranks' pipes read and written on a whole line at a
 * time (labelled with --label), the launcher's own lines (say) after what the
 * ranks said, and across hosts the writer thread that keeps a stalled reader
 * of the launcher's output from stopping it.
 *
 * Invariants: lines of different ranks never mix (a partial line is flushed
 * only when it grows past the buffer or at the end of the stream; ranks as
 * contexts beyond the descriptor limit share one pipe of frames, split here
 * into the same streams); nothing a
 * rank wrote is lost: drain_rank and drain_all read what the pipes hold before
 * any report line; a report line starts a line of its own, even after a
 * rank's partial line on either stream (put_report); the writer thread's queue is bounded by
 * telling the agents to hold output past OUT_HOLD bytes. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "tree.h"

#include "launch_internal.h"

/* ---- output forwarding --------------------------------------------------- */

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return; /* our own output is gone (closed pipe): drop, keep watching the job */
        }
        p += w;
        n -= (size_t)w;
    }
}

void *out_writer(void *arg)
{
    out_q *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->head && !q->stop) pthread_cond_wait(&q->cv, &q->mu);
        out_chunk *c = q->head;
        if (!c) break; /* stopped, and all is written */
        q->head = c->next;
        if (!q->head) q->tail = NULL;
        pthread_mutex_unlock(&q->mu);
        write_all(c->fd, c->data, c->len);
        pthread_mutex_lock(&q->mu);
        q->bytes -= c->len;
        free(c);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

static void out_put(out_q *q, int fd, const char *p, size_t n)
{
    out_chunk *c = malloc(sizeof *c + n);
    if (!c) return;
    c->next = NULL;
    c->fd = fd;
    c->len = n;
    memcpy(c->data, p, n);
    pthread_mutex_lock(&q->mu);
    if (q->tail)
        q->tail->next = c;
    else
        q->head = c;
    q->tail = c;
    q->bytes += n;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

size_t out_bytes(out_q *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->bytes;
    pthread_mutex_unlock(&q->mu);
    return n;
}

/* Write it all, then stop the writer. */
void out_stop(out_q *q)
{
    pthread_mutex_lock(&q->mu);
    q->stop = true;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
    pthread_join(q->th, NULL);
}

/* Bytes for the launcher's stdout or stderr: through the writer thread's queue
 * when there is one (across hosts), else at once. */
void put_out(job_spec *js, int fd, const char *p, size_t n)
{
    if (n && (fd == 1 || fd == 2)) js->mid_line[fd] = p[n - 1] != '\n';
    if (js->oq)
        out_put(js->oq, fd, p, n);
    else
        write_all(fd, p, n);
}

/* The launcher's own words on fd 2: always from the start of a line, even
 * after a rank's line it has not ended yet (a line longer than the buffer).
 * After one on fd 1 too, whether or not fds 1 and 2 are one file: a reader
 * that merges two pipes (ctest, srun, a CI log, ssh without a terminal) shows
 * them as one stream, where the report would run on in the rank's line; where
 * they stay apart, that costs an empty line on fd 2. */
void put_report(job_spec *js, const char *p, size_t n)
{
    if (js->mid_line[2] || js->mid_line[1]) put_out(js, 2, "\n", 1);
    js->mid_line[1] = false; /* ended, as a merged stream shows it */
    put_out(js, 2, p, n);
}

/* The launcher's own line, after what the ranks said. */
__attribute__((format(printf, 2, 3))) void say(job_spec *js, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof line) n = sizeof line - 1;
    put_report(js, line, (size_t)n);
}

void emit(job_spec *js, int rank, int out, const char *p, size_t n)
{
    if (js->agent) { /* the launcher labels and writes it */
        cr_tree_send(js->tree, -1, CR_F_OUT, out, rank, 0, p, n);
        return;
    }
    if (js->cmd.label) {
        char pre[32];
        int k = snprintf(pre, sizeof pre, "[%d] ", rank);
        char line[LINE_MAX_FWD + 40];
        memcpy(line, pre, (size_t)k);
        memcpy(line + k, p, n);
        put_out(js, out, line, (size_t)k + n);
    } else {
        put_out(js, out, p, n);
    }
}

/* Forward every complete line the stream's buffer holds (all of it when it is
 * one line longer than the buffer). */
static void lines(job_spec *js, int rank, stream *s)
{
    size_t start = 0;
    for (size_t i = 0; i < s->len; i++)
        if (s->buf[i] == '\n') {
            emit(js, rank, s->out, s->buf + start, i + 1 - start);
            start = i + 1;
        }
    if (start == 0 && s->len == sizeof s->buf) { /* a line longer than the buffer */
        emit(js, rank, s->out, s->buf, s->len);
        start = s->len;
    }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
}

/* The stream ended: its last line, ended for it (one piece, so that it is
 * labelled once). */
static void last_line(job_spec *js, int rank, stream *s)
{
    if (s->len && s->buf[s->len - 1] != '\n' && s->len < sizeof s->buf) s->buf[s->len++] = '\n';
    if (s->len) emit(js, rank, s->out, s->buf, s->len);
    if (s->len && s->buf[s->len - 1] != '\n') emit(js, rank, s->out, "\n", 1);
    s->len = 0;
}

/* Read at most max bytes of the stream; forward every complete line. Returns the
 * bytes read, 0 at EOF (the stream is then closed), -1 when it has nothing now. */
ssize_t pump(job_spec *js, int rank, stream *s, size_t max)
{
    size_t room = sizeof s->buf - s->len;
    ssize_t r = read(s->fd, s->buf + s->len, max < room ? max : room);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) return -1;
    if (r <= 0) {
        last_line(js, rank, s);
        close(s->fd);
        s->fd = -1;
        return 0;
    }
    s->len += (size_t)r;
    lines(js, rank, s);
    return r;
}

/* Read at most max bytes of the contexts' frames (ctx_mux); hand each frame's
 * bytes to its rank's stream and forward its complete lines. Returns as pump;
 * at EOF every rank's last line is forwarded. A frame naming no rank of the
 * job is skipped. */
ssize_t mux_pump(job_spec *js, size_t max)
{
    ctx_mux *m = &js->mux;
    char buf[65536];
    ssize_t r = read(m->fd, buf, max < sizeof buf ? max : sizeof buf);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) return -1;
    if (r <= 0) {
        for (int k = 1; k < js->cmd.total; k++)
            for (int j = 0; j < 2; j++) last_line(js, k, &js->ranks[k].s[j]);
        close(m->fd);
        m->fd = -1;
        return 0;
    }
    for (size_t at = 0; at < (size_t)r;) {
        if (m->hdr_len < sizeof m->hdr) {
            size_t c = sizeof m->hdr - m->hdr_len;
            if (c > (size_t)r - at) c = (size_t)r - at;
            memcpy((char *)m->hdr + m->hdr_len, buf + at, c);
            m->hdr_len += c;
            at += c;
            if (m->hdr_len == sizeof m->hdr) m->left = m->hdr[1];
            continue;
        }
        size_t c = m->left < (size_t)r - at ? m->left : (size_t)r - at;
        int rank = (int)(m->hdr[0] / 2);
        if (rank > 0 && rank < js->cmd.total) {
            stream *s = &js->ranks[rank].s[m->hdr[0] % 2];
            for (size_t done = 0; done < c;) {
                size_t room = sizeof s->buf - s->len, n = c - done < room ? c - done : room;
                memcpy(s->buf + s->len, buf + at + done, n);
                s->len += n;
                done += n;
                lines(js, rank, s);
            }
        }
        at += c;
        if ((m->left -= c) == 0) m->hdr_len = 0;
    }
    return r;
}

/* Forward all the stream holds now, and close it at EOF. Bounded by what the
 * pipe holds when called (and one read more, which sees EOF once every writer
 * is gone), so a rank that writes without pause cannot keep us here. */
static void drain_stream(job_spec *js, int rank, stream *s)
{
    if (s->fd < 0) return;
    int avail = 0;
    if (ioctl(s->fd, FIONREAD, &avail) < 0 || avail < 0) avail = 0;
    for (size_t left = (size_t)avail; left;) {
        ssize_t r = pump(js, rank, s, left);
        if (r <= 0) break;
        left -= (size_t)r;
    }
    if (s->fd >= 0) pump(js, rank, s, sizeof s->buf);
}

/* The same for the contexts' frames (every rank's but rank 0's). */
static void drain_mux(job_spec *js)
{
    if (js->mux.fd < 0) return;
    int avail = 0;
    if (ioctl(js->mux.fd, FIONREAD, &avail) < 0 || avail < 0) avail = 0;
    for (size_t left = (size_t)avail; left;) {
        ssize_t r = mux_pump(js, left);
        if (r <= 0) break;
        left -= (size_t)r;
    }
    if (js->mux.fd >= 0) mux_pump(js, LINE_MAX_FWD);
}

void drain_rank(job_spec *js, int rank)
{
    for (int j = 0; j < 2; j++) drain_stream(js, rank, &js->ranks[rank].s[j]);
    if (rank > 0 && js->contexts) drain_mux(js);
}

/* Before the launcher says anything: forward what every rank has written (across
 * hosts: what every agent has read of them, a round trip down the tree). */
void drain_all(job_spec *js)
{
    if (js->tree && !js->agent) {
        flush_hosts(js);
        return;
    }
    for (int r = js->first; r < js->first + js->count; r++)
        for (int j = 0; j < 2; j++) drain_stream(js, r, &js->ranks[r].s[j]);
    drain_mux(js);
}
