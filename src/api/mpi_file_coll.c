/* Collective buffering for the _all accesses (two-phase I/O, as ROMIO's):
 * when the ranks' accesses interleave in the file (a read: and the ranks
 * are on more than one host), or romio_cb_read/write says "enable", the
 * span they cover is cut into one file domain per aggregator (cb_nodes of
 * them, one per host unless the hint says more; f->aggs gives the order),
 * each domain handled in rounds of cb_buffer_size bytes: in a round every
 * rank sends each other aggregator the pieces of its access that fall in
 * that aggregator's window (an all-to-all of counts, then point-to-point
 * messages of (offset, length) pairs and, for a write, of the packed data);
 * the aggregator sorts the window's pieces by offset and moves them with
 * preadv/pwritev straight from/to where they lie (its own pieces in its own
 * stream buffer, the others' in the receive buffer): no window copy. A
 * read's bytes go back to their ranks by a third exchange.
 *
 * Invariants:
 *  - every rank of the file calls mf_coll_io for every _all access, with its
 *    pieces (possibly none) in stream order; all take the same decision (from
 *    the allgathered ranges) and the same number of rounds, so the
 *    exchanges match;
 *  - an aggregator never sends to itself: its own pieces are in 'data';
 *  - domains are disjoint, so no two aggregators write the same byte; a
 *    window whose pieces leave holes is read first (under an fcntl write
 *    lock held until its write is done) and the holes written back with the
 *    pieces, in one run; a window whose holes cannot be read (a file open
 *    MPI_MODE_WRONLY) is written run by run, never over the holes;
 *  - an I/O error on an aggregator reaches every rank (an all-reduce of the
 *    error class at the end), each reporting it on its own file handle. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "mpi_file.h"

typedef struct cursor {
    size_t i;    /* piece */
    size_t in;   /* bytes of it already sent */
    size_t sofs; /* stream offset of that byte */
} cursor;

/* Stream offset of each piece's first byte. */
static size_t *stream_offsets(const mf_vec *v)
{
    size_t *s = malloc((v->n + 1) * sizeof *s), c = 0;
    if (!s) cr_fatal(cr_job_get(), "MPI-IO", "out of memory");
    for (size_t i = 0; i < v->n; i++) {
        s[i] = c;
        c += v->len[i];
    }
    s[v->n] = c;
    return s;
}

static int cmp_pair(const void *a, const void *b)
{
    const long long *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Whether the ranks' ranges [lo, hi) overlap one another. */
static bool interleaved(const long long *all, int n)
{
    long long *r = malloc(sizeof(long long) * 2 * (size_t)n);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (all[3 * i + 2]) {
            r[2 * k] = all[3 * i];
            r[2 * k + 1] = all[3 * i + 1];
            k++;
        }
    qsort(r, (size_t)k, 2 * sizeof(long long), cmp_pair);
    bool x = false;
    for (int i = 1; i < k && !x; i++) x = r[2 * i] < r[2 * i - 1];
    free(r);
    return x;
}

/* The buffers of the rounds: kept in the file (f->cb) from call to call, so
 * that a program's sequence of _all accesses does not fault in fresh pages
 * for every call (4-5x the copy itself on this project's machine). */
typedef struct mf_cbufs round_buf;

/* A piece of an aggregator's window: file bytes [off, off + len) and where
 * they are in memory; seq keeps the sort stable. */
typedef struct piece {
    long long off;
    size_t len;
    char *p;
    size_t seq;
} piece;

static int cmp_piece(const void *a, const void *b)
{
    const piece *x = a, *y = b;
    if (x->off != y->off) return x->off < y->off ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}
struct mf_cbufs {
    int *scnt, *sdsp, *rcnt, *rdsp; /* pairs (long longs) */
    int *sbc, *sbd, *rbc, *rbd;     /* bytes */
    long long *smeta, *rmeta;
    size_t *ssofs; /* stream offset of each sent pair */
    size_t nsmeta, capmeta;
    size_t own0, own1; /* pairs [own0, own1) of smeta: this rank's, in its own window */
    char *sdata, *rdata, *win;
    size_t caprdata, capwin, capsmeta, capsdata, caprmeta, capcnt;
    struct piece *pc; /* the window's pieces, sorted by offset */
    struct iovec *iov;
    size_t cappc, capiov;
};

void mf_coll_free(mpi_file *f)
{
    round_buf *b = f->cb;
    if (!b) return;
    free(b->scnt);
    free(b->smeta);
    free(b->rmeta);
    free(b->ssofs);
    free(b->sdata);
    free(b->rdata);
    free(b->win);
    free(b->pc);
    free(b->iov);
    free(b);
    f->cb = NULL;
}

static void *grow(void *p, size_t *cap, size_t want, size_t each)
{
    if (want <= *cap) return p;
    size_t c = *cap ? *cap : 64;
    while (c < want) c *= 2;
    void *q = realloc(p, c * each);
    if (!q) cr_fatal(cr_job_get(), "MPI-IO", "out of memory for collective buffering");
    *cap = c;
    return q;
}

/* An all-to-all-v of bytes by point-to-point messages between the pairs that
 * have something to move (most pairs have nothing: only aggregators receive
 * in a write, send in a read); courier's MPI_Alltoallv took 3-20x a plain
 * send of the same 16 MiB here. Tag: MF_XTAG, on the file's own
 * communicator, where nothing else is sent point to point. */
#define MF_XTAG 0x1f0
static void xchg(mpi_file *f, const char *sb, const int *sc, const int *sd, char *rb, const int *rc,
                 const int *rd, MPI_Datatype t, int tsz)
{
    int P = f->size, n = 0;
    MPI_Request *q = malloc(sizeof *q * 2 * (size_t)P);
    if (!q) cr_fatal(cr_job_get(), "MPI-IO", "out of memory");
    for (int p = 0; p < P; p++)
        if (rc[p])
            PMPI_Irecv(rb + (size_t)rd[p] * (size_t)tsz, rc[p], t, p, MF_XTAG, f->comm, &q[n++]);
    for (int p = 0; p < P; p++)
        if (sc[p])
            PMPI_Isend(sb + (size_t)sd[p] * (size_t)tsz, sc[p], t, p, MF_XTAG, f->comm, &q[n++]);
    PMPI_Waitall(n, q, MPI_STATUSES_IGNORE);
    free(q);
}

/* One preadv/pwritev of cnt iovecs at off, over short transfers and EINTR
 * (the iovecs are consumed). A read that meets the end of the file zeroes
 * the rest. 0 or an errno (ENOSPC for a write of nothing). */
static int vio(int fd, struct iovec *iov, int cnt, long long off, bool write)
{
    int i = 0;
    while (i < cnt) {
        ssize_t r = write ? pwritev(fd, iov + i, cnt - i, off) : preadv(fd, iov + i, cnt - i, off);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return errno;
        if (r == 0) {
            if (write) return ENOSPC;
            for (; i < cnt; i++) memset(iov[i].iov_base, 0, iov[i].iov_len);
            return 0;
        }
        off += r;
        while (i < cnt && (size_t)r >= iov[i].iov_len) r -= (ssize_t)iov[i++].iov_len;
        if (i < cnt) {
            iov[i].iov_base = (char *)iov[i].iov_base + r;
            iov[i].iov_len -= (size_t)r;
        }
    }
    return 0;
}

/* The sorted pieces pc[0..n) as runs of preadv/pwritev: a gap of up to 'fill'
 * bytes between two pieces joins them, its bytes coming from (write) gap +
 * (its offset - org) or going to (read) gap's start, a scratch the size of
 * the longest gap; a longer gap or an overlap starts a new run. 0 or an
 * errno. */
static int runs_io(int fd, round_buf *b, const piece *pc, size_t n, bool write, size_t fill,
                   char *gap, long long org)
{
    int cnt = 0, err = 0;
    long long roff = 0, reach = 0;
    for (size_t k = 0; k < n && !err; k++) {
        long long g = pc[k].off - reach;
        bool join = cnt > 0 && g >= 0 && (size_t)g <= fill && cnt + 2 <= IOV_MAX;
        if (cnt && !join) {
            err = vio(fd, b->iov, cnt, roff, write);
            cnt = 0;
        }
        if (err) break;
        b->iov = grow(b->iov, &b->capiov, (size_t)cnt + 2, sizeof *b->iov);
        if (!cnt)
            roff = pc[k].off;
        else if (g > 0)
            b->iov[cnt++] = (struct iovec){write ? gap + (reach - org) : gap, (size_t)g};
        b->iov[cnt++] = (struct iovec){pc[k].p, pc[k].len};
        reach = pc[k].off + (long long)pc[k].len;
    }
    if (cnt && !err) err = vio(fd, b->iov, cnt, roff, write);
    return err;
}

/* The aggregator's part of a round: its window's np pieces (sorted here)
 * read or written. 0 or an errno. */
static int window_io(mpi_file *f, round_buf *b, size_t np, bool write)
{
    piece *pc = b->pc;
    qsort(pc, np, sizeof *pc, cmp_piece);
    long long slo = pc[0].off, shi = slo, maxgap = 0;
    for (size_t k = 0; k < np; k++) {
        if (pc[k].off - shi > maxgap) maxgap = pc[k].off - shi;
        if (pc[k].off + (long long)pc[k].len > shi) shi = pc[k].off + (long long)pc[k].len;
    }
    bool locked = false;
    int err = 0;
    if (write) {
        bool holes = maxgap > 0, unreadable = false;
        if (holes || f->atomic) locked = mf_lock(f, f->fd, true, slo, shi) == 0;
        if (holes) { /* read the span: its holes are written back with the pieces */
            size_t span = (size_t)(shi - slo);
            b->win = grow(b->win, &b->capwin, span, 1);
            ssize_t g = mf_pread(f->fd, b->win, span, slo);
            if (g < 0 && errno != EBADF) err = errno;
            unreadable = g < 0; /* a write-only file: its holes cannot be read */
            if (g < 0) g = 0;
            memset(b->win + g, 0, span - (size_t)g);
        }
        if (!err) err = runs_io(f->fd, b, pc, np, true, unreadable ? 0 : SIZE_MAX, b->win, slo);
    } else {
        if (f->atomic) locked = mf_lock(f, f->fd, false, slo, shi) == 0;
        /* gaps of up to 4 MiB are read through (one system call), longer ones skipped */
        size_t fill = (size_t)(maxgap < (4 << 20) ? maxgap : (4 << 20));
        b->win = grow(b->win, &b->capwin, fill + 1, 1);
        err = runs_io(f->fd, b, pc, np, false, fill, b->win, 0);
    }
    if (locked) mf_unlock(f, f->fd, slo, shi);
    return err;
}

int mf_coll_io(mpi_file *f, const mf_vec *v, char *data, bool write, size_t *done, mf_err *e)
{
    *done = 0;
    int P = f->size;
    long long mine[3] = {v->n ? v->off[0] : LLONG_MAX, LLONG_MIN, (long long)v->n};
    for (size_t i = 0; i < v->n; i++) /* the end: the last piece's, unless pieces overlap */
        if (v->off[i] + (long long)v->len[i] > mine[1]) mine[1] = v->off[i] + (long long)v->len[i];
    long long *all = malloc(sizeof(long long) * 3 * (size_t)P);
    if (!all) cr_fatal(cr_job_get(), "MPI-IO", "out of memory");
    PMPI_Allgather(mine, 3, MPI_LONG_LONG, all, 3, MPI_LONG_LONG, f->comm);
    long long lo = LLONG_MAX, hi = LLONG_MIN;
    for (int r = 0; r < P; r++)
        if (all[3 * r + 2]) {
            if (all[3 * r] < lo) lo = all[3 * r];
            if (all[3 * r + 1] > hi) hi = all[3 * r + 1];
        }
    int mode = write ? f->h.cb_write : f->h.cb_read;
    /* automatic: when the accesses interleave; for a read, only across hosts:
     * on one host every rank reads the same page cache, and each rank's own
     * sieved reads (one copy out of the cache, one to pick its pieces) beat
     * the exchange (2-rank strided read_at_all of 16 MiB each: 17-26 ms
     * sieved, 51-74 ms through an aggregator) */
    bool cb = lo < hi && P > 1 && mode != 0 &&
              (mode == 1 || ((write || f->nhosts > 1) && interleaved(all, P)));
    free(all);
    if (!cb) {
        int rc = data ? mf_pio(f, v, data, write, done, e) : 0;
        return rc;
    }

    int naggs = f->naggs < P ? f->naggs : P, ai = -1;
    for (int a = 0; a < naggs; a++)
        if (f->aggs[a] == f->rank) ai = a;
    long long D = (hi - lo + naggs - 1) / naggs;
    if (f->h.striping_unit > 0)
        D = (D + f->h.striping_unit - 1) / f->h.striping_unit * f->h.striping_unit;
    long long B = f->h.cb_buffer_size > 0 ? f->h.cb_buffer_size : 16 << 20;
    long long rounds = (D + B - 1) / B;

    size_t *sofs = stream_offsets(v);
    cursor *cur = calloc((size_t)naggs, sizeof *cur);
    if (!f->cb && !(f->cb = calloc(1, sizeof *f->cb)))
        cr_fatal(cr_job_get(), "MPI-IO", "out of memory");
    round_buf *bp = f->cb;
    size_t ni = (size_t)P;
    if (bp->capcnt < ni) {
        free(bp->scnt);
        bp->scnt = calloc(8 * ni, sizeof(int));
        bp->capcnt = ni;
    }
    if (!cur || !bp->scnt) cr_fatal(cr_job_get(), "MPI-IO", "out of memory");
#define b (*bp)
    b.sdsp = b.scnt + ni, b.rcnt = b.sdsp + ni, b.rdsp = b.rcnt + ni;
    b.sbc = b.rdsp + ni, b.sbd = b.sbc + ni, b.rbc = b.sbd + ni, b.rbd = b.rbc + ni;
    /* each aggregator's cursor starts at the first piece ending in its domain */
    for (int a = 0; a < naggs; a++) {
        long long dlo = lo + a * D;
        size_t i = 0;
        while (i < v->n && v->off[i] + (long long)v->len[i] <= dlo) i++;
        cur[a].i = i;
        cur[a].in = i < v->n && v->off[i] < dlo ? (size_t)(dlo - v->off[i]) : 0;
    }
    int err = 0; /* errno of this rank's I/O as aggregator */
    for (long long r = 0; r < rounds; r++) {
        /* 1. what goes to each aggregator this round */
        b.nsmeta = b.own0 = b.own1 = 0;
        size_t nbytes = 0;
        memset(b.scnt, 0, 8 * ni * sizeof(int));
        for (int a = 0; a < naggs; a++) {
            long long dlo = lo + a * D, dhi = dlo + D < hi ? dlo + D : hi;
            long long wlo = dlo + r * B, whi = wlo + B < dhi ? wlo + B : dhi;
            int to = f->aggs[a];
            b.sdsp[to] = (int)(2 * b.nsmeta);
            b.sbd[to] = (int)nbytes;
            cursor *c = &cur[a];
            while (wlo < whi && c->i < v->n) {
                long long off = v->off[c->i] + (long long)c->in;
                if (off >= whi) break;
                size_t take = v->len[c->i] - c->in;
                if (off + (long long)take > whi) take = (size_t)(whi - off);
                b.smeta = grow(b.smeta, &b.capsmeta, 2 * (b.nsmeta + 1), sizeof *b.smeta);
                b.ssofs = grow(b.ssofs, &b.capmeta, b.nsmeta + 1, sizeof *b.ssofs);
                b.smeta[2 * b.nsmeta] = off;
                b.smeta[2 * b.nsmeta + 1] = (long long)take;
                b.ssofs[b.nsmeta++] = sofs[c->i] + c->in;
                nbytes += take;
                c->in += take;
                if (c->in == v->len[c->i]) {
                    c->i++;
                    c->in = 0;
                }
            }
            if (to == f->rank) { /* this rank's own window: nothing is sent */
                b.own0 = (size_t)b.sdsp[to] / 2, b.own1 = b.nsmeta;
                nbytes = (size_t)b.sbd[to];
                continue;
            }
            b.scnt[to] = (int)(2 * b.nsmeta) - b.sdsp[to];
            b.sbc[to] = (int)nbytes - b.sbd[to];
        }
        if (write && data) {
            b.sdata = grow(b.sdata, &b.capsdata, nbytes + 1, 1);
            size_t at = 0;
            for (size_t k = 0; k < b.nsmeta; k++) {
                if (k == b.own0) k = b.own1;
                if (k == b.nsmeta) break;
                memcpy(b.sdata + at, data + b.ssofs[k], (size_t)b.smeta[2 * k + 1]);
                at += (size_t)b.smeta[2 * k + 1];
            }
        }
        /* 2. counts, then the pairs */
        int sc[2 * P], rc2[2 * P];
        for (int p = 0; p < P; p++) sc[2 * p] = b.scnt[p], sc[2 * p + 1] = b.sbc[p];
        PMPI_Alltoall(sc, 2, MPI_INT, rc2, 2, MPI_INT, f->comm);
        size_t rm = 0, rbytes = 0;
        for (int p = 0; p < P; p++) {
            b.rcnt[p] = rc2[2 * p];
            b.rbc[p] = rc2[2 * p + 1];
            b.rdsp[p] = (int)rm;
            b.rbd[p] = (int)rbytes;
            rm += (size_t)b.rcnt[p];
            rbytes += (size_t)b.rbc[p];
        }
        b.rmeta = grow(b.rmeta, &b.caprmeta, rm + 2, sizeof *b.rmeta);
        xchg(f, (const char *)b.smeta, b.scnt, b.sdsp, (char *)b.rmeta, b.rcnt, b.rdsp,
             MPI_LONG_LONG, (int)sizeof(long long));
        if (write) {
            b.rdata = grow(b.rdata, &b.caprdata, rbytes + 1, 1);
            xchg(f, b.sdata, b.sbc, b.sbd, b.rdata, b.rbc, b.rbd, MPI_BYTE, 1);
        }
        /* 3. the aggregator's window: the others' pieces in rdata, its own in data */
        size_t np = rm / 2 + (b.own1 - b.own0);
        if (!write) b.rdata = grow(b.rdata, &b.caprdata, rbytes + 1, 1);
        if (ai >= 0 && np && !err) {
            b.pc = grow(b.pc, &b.cappc, np, sizeof *b.pc);
            size_t at = 0, k = 0;
            for (; k < rm / 2; k++) {
                b.pc[k] = (piece){b.rmeta[2 * k], (size_t)b.rmeta[2 * k + 1], b.rdata + at, k};
                at += (size_t)b.rmeta[2 * k + 1];
            }
            for (size_t j = b.own0; j < b.own1; j++, k++)
                b.pc[k] = (piece){b.smeta[2 * j], (size_t)b.smeta[2 * j + 1], data + b.ssofs[j], k};
            err = window_io(f, bp, np, write);
        }
        if (!write) { /* 4. the bytes back to their ranks */
            b.sdata = grow(b.sdata, &b.capsdata, nbytes + 1, 1);
            xchg(f, b.rdata, b.rbc, b.rbd, b.sdata, b.sbc, b.sbd, MPI_BYTE, 1);
            size_t from = 0;
            for (size_t k = 0; data && k < b.nsmeta; k++) {
                if (k == b.own0) k = b.own1;
                if (k == b.nsmeta) break;
                memcpy(data + b.ssofs[k], b.sdata + from, (size_t)b.smeta[2 * k + 1]);
                from += (size_t)b.smeta[2 * k + 1];
            }
        }
    }
    /* 5. every rank learns an aggregator's error */
    int me[2] = {err ? mf_errno_class(err) : 0, f->rank}, worst[2];
    PMPI_Allreduce(me, worst, 1, MPI_2INT, MPI_MAXLOC, f->comm);
#undef b
    free(sofs);
    free(cur);
    if (err)
        return mf_set_err(e, me[0], "collective %s of the aggregated span failed: %s",
                          write ? "write" : "read", strerror(err));
    if (worst[0])
        return mf_set_err(e, worst[0], "the collective %s failed on the aggregator, rank %d",
                          write ? "write" : "read", worst[1]);
    if (write) {
        *done = v->bytes;
        return 0;
    }
    /* a read: what lies before the end of the file */
    struct stat sb;
    MPI_Offset size = fstat(f->fd, &sb) == 0 ? sb.st_size : 0;
    for (size_t i = 0; i < v->n; i++) {
        MPI_Offset end = v->off[i] + (MPI_Offset)v->len[i];
        if (end <= size) {
            *done += v->len[i];
            continue;
        }
        if (v->off[i] < size) *done += (size_t)(size - v->off[i]);
        break;
    }
    return 0;
}
