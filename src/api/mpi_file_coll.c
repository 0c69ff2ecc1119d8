/* Collective buffering for the _all accesses (two-phase I/O, as ROMIO's):
 * when the ranks' accesses interleave in the file (a read: and the ranks
 * are on more than one host; a write on one host: and the pieces average
 * less than a page, MF_CB_PIECE, or MF_CB_SPREAD by single copy), or
 * romio_cb_read/write says "enable", the span they cover is cut into one
 * file domain per aggregator (cb_nodes of them, one per host unless the hint
 * says more, every rank for MF_CB_SPREAD's writes; f->aggs gives the order),
 * each domain handled in windows of cb_buffer_size bytes (MF_SPREAD_WIN at
 * most for MF_CB_SPREAD's). The data reaches the aggregator one of two ways:
 *  - single copy (coll_direct), when every rank is on this host and may
 *    copy with every other (shm's process_vm_readv/writev, through the
 *    engine's single-copy service, src/core/single_copy.h): the aggregator
 *    reads the other ranks' offsets and then, window by window, the stream
 *    bytes of their pieces straight out of their memory (a read: writes them
 *    back there); the others only wait for the final all-reduce. 2-rank
 *    strided write_all of 16 MiB each: 31-39 ms against 38-43 by messages;
 *  - messages (coll_msgs) otherwise: in a round every rank sends each other
 *    aggregator the (offset, length) pairs of its pieces in that
 *    aggregator's window (after an all-to-all of counts) and, for a write,
 *    their bytes straight from its stream buffer (one run of consecutive
 *    stream bytes per aggregator and round: nothing packed); a read's bytes
 *    come back by a third exchange, straight into the streams.
 * Either way the aggregator sorts the window's pieces by offset and moves
 * them with preadv/pwritev straight from/to where they lie (its own pieces
 * in its own stream buffer, the others' in the receive buffer): no window
 * copy.
 *
 * Invariants:
 *  - every rank of the file calls mf_coll_io for every _all access, with its
 *    pieces (possibly none) in stream order, their offsets nondecreasing, and
 *    its stream as one buffer or as the runs of its memory (packed into a
 *    scratch buffer only once collective buffering takes the access); all
 *    take the same decisions (from the allgathered ranges and single-copy
 *    flags) and the same number of rounds, so the exchanges match;
 *  - an aggregator never sends to itself or single-copies from itself: its
 *    own pieces are in 'data' (a write by single copy whose stream is the
 *    runs of its memory: copied from those runs into the window's buffer);
 *  - no rank leaves mf_coll_io (and may change its buffer) while an
 *    aggregator may still copy from or to it: the final all-reduce comes
 *    after every aggregator's last copy;
 *  - a refused single copy (single_copy.h's rule) leaves the access to be
 *    done again by messages by every rank (the final all-reduce says so):
 *    the bytes are the same, so what was written already is rewritten;
 *  - domains are disjoint, so no two aggregators write the same byte; a
 *    window whose pieces leave holes is read first (under an fcntl write
 *    lock held until its write is done) and the holes written back with the
 *    pieces, in one run; a window whose holes cannot be read (a file open
 *    MPI_MODE_WRONLY) is written run by run, never over the holes;
 *  - an I/O error on an aggregator reaches every rank (the final
 *    all-reduce of the error class), each reporting it on its own file
 *    handle. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../core/single_copy.h"
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

/* What each rank tells the others at the start of an _all access: its
 * range [lo, hi) and pieces; whether it may copy with every rank of the file
 * now; and, for single copy, where its stream and its arrays of offsets and
 * stream offsets lie. */
enum { I_LO, I_HI, I_N, I_SC, I_DATA, I_OFF, I_SOFS, I_BYTES, I_RUNS, I_NINFO };

/* Whether the ranks' ranges [lo, hi) overlap one another (all: their I_NINFO each). */
static bool interleaved(const long long *all, int n)
{
    long long *r = malloc(sizeof(long long) * 2 * (size_t)n);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (all[I_NINFO * i + I_N]) {
            r[2 * k] = all[I_NINFO * i + I_LO];
            r[2 * k + 1] = all[I_NINFO * i + I_HI];
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
 * they are in memory (p; single copy: at bytes into rdata, p set once rdata
 * has grown, unless at is OWN); seq keeps the sort stable. */
#define OWN SIZE_MAX
typedef struct piece {
    long long off;
    size_t len;
    char *p;
    size_t seq, at;
} piece;

/* Single copy: another rank's pieces as an aggregator walks them, read out
 * of that rank's memory a chunk at a time (its offsets and stream offsets:
 * the same arrays mf_coll_io has on every rank); for this rank itself, its
 * own arrays. */
#define CHUNK 4096
typedef struct rsrc {
    int jr;                     /* job rank; -1: this rank */
    uint64_t data, aoff, asofs; /* its stream buffer, offsets, stream offsets */
    size_t n;                   /* its pieces */
    size_t base, cnt;           /* pieces [base, base + cnt) held in off, sofs */
    long long *off;             /* CHUNK offsets (this rank: v->off) */
    size_t *sofs;               /* CHUNK + 1 stream offsets (this rank: all of them) */
    size_t i, in;               /* cursor: piece, bytes of it taken */
    /* a write whose stream is the runs of the program's memory (nrun of
     * them, their iovecs at aiov; 0: the stream is one buffer at data):
     * runs [rbase, rbase + rcnt) held in iov (this rank: m's, all of
     * them); run ri starts at stream byte rs */
    size_t nrun;
    uint64_t aiov;
    struct iovec *iov;
    size_t rbase, rcnt, ri, rs;
} rsrc;

/* A run of a rank's stream moved into rdata in a round: by single copy (another
 * rank's), or copied out of this rank's memory runs; b.src[q]'s stream bytes
 * [s0, s0 + len). */
typedef struct rfrom {
    int q;
    size_t s0, len, at; /* at bytes into rdata */
} rfrom;

static int cmp_piece(const void *a, const void *b)
{
    const piece *x = a, *y = b;
    if (x->off != y->off) return x->off < y->off ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}
struct mf_cbufs {
    /* the file's ranks: job rank of each (single copy names peers so), and
     * whether collective buffering may go by single copy at all (every rank
     * on this host, reached by a transport that offers it: the same answer
     * on every rank); found at the first _all access */
    int *jr;
    bool direct;
    int *scnt, *sdsp, *rcnt, *rdsp; /* pairs (long longs) */
    int *sbc, *rbc, *rbd;           /* bytes */
    char **sp, **rp;                /* where each peer's elements lie (xchg) */
    long long *smeta, *rmeta;
    size_t *ssofs; /* stream offset of each sent pair */
    size_t nsmeta, capmeta;
    size_t own0, own1; /* pairs [own0, own1) of smeta: this rank's, in its own window */
    char *rdata, *win;
    size_t caprdata, capwin, capsmeta, caprmeta, capcnt;
    struct piece *pc; /* the window's pieces, sorted by offset */
    struct iovec *iov;
    size_t cappc, capiov;
    struct rsrc *src; /* single copy: the ranks whose pieces an aggregator reads */
    struct rfrom *from;
    size_t capfrom;
    struct iovec *liov, *riov; /* a single copy of another rank's memory runs */
    size_t capliov, capriov;
};

void mf_coll_free(mpi_file *f)
{
    round_buf *b = f->cb;
    if (!b) return;
    free(b->jr);
    free(b->scnt);
    free(b->sp);
    free(b->smeta);
    free(b->rmeta);
    free(b->ssofs);
    free(b->rdata);
    free(b->win);
    free(b->pc);
    free(b->iov);
    if (b->src)
        for (int p = 0; p < f->size; p++)
            if (b->src[p].jr >= 0) free(b->src[p].off), free(b->src[p].sofs), free(b->src[p].iov);
    free(b->src);
    free(b->from);
    free(b->liov);
    free(b->riov);
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

/* An all-to-all-v by point-to-point messages between the pairs that have
 * something to move (most pairs have nothing: only aggregators receive in a
 * write, send in a read); courier's MPI_Alltoallv took 3-20x a plain send of
 * the same 16 MiB here. sp[p] / rp[p]: where the sc[p] / rc[p] elements of t
 * to / from rank p lie (the data moves straight from and to the ranks'
 * stream buffers: what a rank sends one aggregator in a round is a run of
 * consecutive stream bytes). Tag: MF_XTAG, on the file's own communicator,
 * where nothing else is sent point to point. */
#define MF_XTAG 0x1f0
static void xchg(mpi_file *f, char *const *sp, const int *sc, char *const *rp, const int *rc,
                 MPI_Datatype t)
{
    int P = f->size, n = 0;
    MPI_Request *q = malloc(sizeof *q * 2 * (size_t)P);
    if (!q) cr_fatal(cr_job_get(), "MPI-IO", "out of memory");
    for (int p = 0; p < P; p++)
        if (rc[p]) PMPI_Irecv(rp[p], rc[p], t, p, MF_XTAG, f->comm, &q[n++]);
    for (int p = 0; p < P; p++)
        if (sc[p]) PMPI_Isend(sp[p], sc[p], t, p, MF_XTAG, f->comm, &q[n++]);
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

/* ---- by messages --------------------------------------------------------------- */

/* Collective buffering by messages, this rank's part: rounds of B bytes of
 * each of the naggs domains of D bytes from lo (this rank aggregator ai, or
 * -1). 0 or the errno of this rank's I/O as aggregator. */
static int coll_msgs(mpi_file *f, const mf_vec *v, char *data, const size_t *sofs, bool write,
                     long long lo, long long hi, long long D, long long B, int naggs, int ai)
{
    round_buf *bp = f->cb;
#define b (*bp)
    int P = f->size;
    size_t ni = (size_t)P;
    long long rounds = (D + B - 1) / B;
    cursor *cur = calloc((size_t)naggs, sizeof *cur);
    if (!cur) cr_fatal(cr_job_get(), "MPI-IO", "out of memory");
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
        memset(b.scnt, 0, 7 * ni * sizeof(int));
        for (int a = 0; a < naggs; a++) {
            long long dlo = lo + a * D, dhi = dlo + D < hi ? dlo + D : hi;
            long long wlo = dlo + r * B, whi = wlo + B < dhi ? wlo + B : dhi;
            int to = f->aggs[a];
            size_t first = b.nsmeta, sent = nbytes;
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
                b.own0 = first, b.own1 = b.nsmeta;
                continue;
            }
            b.sdsp[to] = (int)(2 * first);
            b.scnt[to] = (int)(2 * (b.nsmeta - first));
            b.sbc[to] = (int)(nbytes - sent);
            /* its bytes: consecutive in the stream, from the first pair's */
            b.sp[to] = b.sbc[to] && data ? data + b.ssofs[first] : NULL;
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
        b.rdata = grow(b.rdata, &b.caprdata, rbytes + 1, 1);
        char **smp = b.rp + ni, **rmp = smp + ni; /* the pairs' places */
        for (int p = 0; p < P; p++) {
            smp[p] = (char *)(b.smeta + b.sdsp[p]);
            rmp[p] = (char *)(b.rmeta + b.rdsp[p]);
            b.rp[p] = b.rdata + b.rbd[p];
        }
        xchg(f, smp, b.scnt, rmp, b.rcnt, MPI_LONG_LONG);
        if (write) xchg(f, b.sp, b.sbc, b.rp, b.rbc, MPI_BYTE);
        /* 3. the aggregator's window: the others' pieces in rdata, its own in data */
        size_t np = rm / 2 + (b.own1 - b.own0);
        if (ai >= 0 && np && !err) {
            b.pc = grow(b.pc, &b.cappc, np, sizeof *b.pc);
            size_t at = 0, k = 0;
            for (; k < rm / 2; k++) {
                b.pc[k] = (piece){b.rmeta[2 * k], (size_t)b.rmeta[2 * k + 1], b.rdata + at, k, 0};
                at += (size_t)b.rmeta[2 * k + 1];
            }
            for (size_t j = b.own0; j < b.own1; j++, k++)
                b.pc[k] =
                    (piece){b.smeta[2 * j], (size_t)b.smeta[2 * j + 1], data + b.ssofs[j], k, 0};
            err = window_io(f, bp, np, write);
        }
        if (!write) /* 4. the bytes back, straight into their ranks' streams */
            xchg(f, b.rp, b.rbc, b.sp, b.sbc, MPI_BYTE);
    }
#undef b
    free(cur);
    return err;
}

/* ---- by single copy ------------------------------------------------------------ */

/* Hold piece i of s (i < s->n) in s->off / s->sofs: false when single copy
 * was refused. */
static bool src_at(cr_job *job, rsrc *s, size_t i)
{
    if (i >= s->base && i < s->base + s->cnt) return true;
    size_t cnt = s->n - i < CHUNK ? s->n - i : CHUNK;
    if (!cr_sc_read(job, "MPI-IO collective buffering", s->jr, s->off, s->aoff + i * sizeof *s->off,
                    cnt * sizeof *s->off) ||
        !cr_sc_read(job, "MPI-IO collective buffering", s->jr, s->sofs,
                    s->asofs + i * sizeof *s->sofs, (cnt + 1) * sizeof *s->sofs))
        return false;
    s->base = i, s->cnt = cnt;
    return true;
}

/* Hold run i of s (i < s->nrun) in s->iov: false when single copy was refused. */
static bool run_at(cr_job *job, rsrc *s, size_t i)
{
    if (i >= s->rbase && i < s->rbase + s->rcnt) return true;
    size_t cnt = s->nrun - i < CHUNK ? s->nrun - i : CHUNK;
    if (!cr_sc_read(job, "MPI-IO collective buffering", s->jr, s->iov, s->aiov + i * sizeof *s->iov,
                    cnt * sizeof *s->iov))
        return false;
    s->rbase = i, s->rcnt = cnt;
    return true;
}

/* Stream bytes [s0, s0 + len) of s, a stream of memory runs, into dst: this
 * rank's copied, another's by one single copy of the pieces of its runs. s0
 * never goes back within an access (the run cursor only moves on). False: a
 * copy was refused, or the runs end before the bytes do. */
static bool runs_read(cr_job *job, round_buf *b, rsrc *s, size_t s0, size_t len, char *dst)
{
    size_t n = 0;
    while (len) {
        if (s->ri >= s->nrun || !run_at(job, s, s->ri)) return false;
        struct iovec r = s->iov[s->ri - s->rbase];
        if (s->rs + r.iov_len <= s0) {
            s->rs += r.iov_len;
            s->ri++;
            continue;
        }
        size_t in = s0 - s->rs, take = r.iov_len - in < len ? r.iov_len - in : len;
        char *from = (char *)r.iov_base + in;
        if (s->jr < 0)
            memcpy(dst, from, take);
        else {
            b->liov = grow(b->liov, &b->capliov, n + 1, sizeof *b->liov);
            b->riov = grow(b->riov, &b->capriov, n + 1, sizeof *b->riov);
            b->liov[n] = (struct iovec){dst, take};
            b->riov[n++] = (struct iovec){from, take};
        }
        dst += take, s0 += take, len -= take;
    }
    return !n || cr_sc_try(job, s->jr, false, b->liov, b->riov, (int)n);
}

/* Collective buffering by single copy, this rank's part (only an
 * aggregator has one): every rank is on this host, and the aggregator reads
 * the pieces of its domain straight out of the other ranks' memory (their
 * offsets, then, a round at a time, the stream bytes of the round's pieces:
 * one run of consecutive bytes per rank), writes the window from there, or
 * (a read) reads it there and writes each rank's run back into its stream.
 * The other ranks only wait at the end (mf_coll_io's all-reduce), their
 * buffers untouched meanwhile. 0, the errno of the window's I/O, or -1: a
 * copy was refused (nothing that counts done: every rank redoes the access
 * by messages). */
static int coll_direct(mpi_file *f, const mf_vec *v, char *data, const mf_mem *m, size_t *sofs,
                       bool write, const long long *all, long long lo, long long hi, long long D,
                       long long B, int ai)
{
    if (ai < 0) return 0;
    cr_job *job = cr_job_get();
    round_buf *bp = f->cb;
#define b (*bp)
    int P = f->size;
    long long dlo = lo + ai * D, dhi = dlo + D < hi ? dlo + D : hi;
    if (!b.src && !(b.src = calloc((size_t)P, sizeof *b.src)))
        cr_fatal(job, "MPI-IO", "out of memory");
    b.from = grow(b.from, &b.capfrom, (size_t)P, sizeof *b.from);
    int ns = 0; /* the ranks with pieces in the domain, in b.src[0..ns) */
    for (int p = 0; p < P; p++) {
        const long long *in = all + I_NINFO * p;
        if (!in[I_N] || in[I_HI] <= dlo || in[I_LO] >= dhi) continue;
        rsrc *s = &b.src[ns++];
        s->n = (size_t)in[I_N];
        s->i = s->in = 0;
        if (p == f->rank) {
            if (s->jr >= 0) /* a slot of another rank's before */
                free(s->off), free(s->sofs), free(s->iov);
            size_t nr = write && m ? m->n : 0;
            *s = (rsrc){.jr = -1,
                        .n = v->n,
                        .cnt = v->n,
                        .off = v->off,
                        .sofs = sofs,
                        .nrun = nr,
                        .iov = nr ? m->iov : NULL,
                        .rcnt = nr};
        } else {
            if (s->jr < 0) /* this rank's arrays: not ours */
                s->off = NULL, s->sofs = NULL, s->iov = NULL;
            s->jr = b.jr[p];
            s->data = (uint64_t)in[I_DATA], s->aoff = (uint64_t)in[I_OFF];
            s->asofs = (uint64_t)in[I_SOFS];
            s->base = s->cnt = 0;
            s->nrun = write ? (size_t)in[I_RUNS] : 0; /* a read's streams are staged */
            s->aiov = (uint64_t)in[I_DATA];
            s->rbase = s->rcnt = s->ri = s->rs = 0;
            if (!s->off) s->off = malloc(CHUNK * sizeof *s->off);
            if (!s->sofs) s->sofs = malloc((CHUNK + 1) * sizeof *s->sofs);
            if (!s->iov) s->iov = malloc(CHUNK * sizeof *s->iov);
            if (!s->off || !s->sofs || !s->iov) cr_fatal(job, "MPI-IO", "out of memory");
        }
        /* its cursor: the first piece that ends in the domain */
        for (; s->i < s->n; s->i++) {
            if (!src_at(job, s, s->i)) return -1;
            size_t k = s->i - s->base;
            if (s->off[k] + (long long)(s->sofs[k + 1] - s->sofs[k]) > dlo) {
                if (s->off[k] < dlo) s->in = (size_t)(dlo - s->off[k]);
                break;
            }
        }
    }
    int err = 0;
    for (long long wlo = dlo; wlo < dhi && !err; wlo += B) {
        long long whi = wlo + B < dhi ? wlo + B : dhi;
        size_t np = 0, rbytes = 0, nfrom = 0;
        for (int q = 0; q < ns; q++) {
            rsrc *s = &b.src[q];
            size_t s0 = 0, s1 = 0;
            bool any = false;
            while (s->i < s->n) {
                if (!src_at(job, s, s->i)) return -1;
                size_t k = s->i - s->base, len = s->sofs[k + 1] - s->sofs[k];
                long long off = s->off[k] + (long long)s->in;
                if (off >= whi) break;
                size_t take = len - s->in, at = s->sofs[k] + s->in;
                if (off + (long long)take > whi) take = (size_t)(whi - off);
                if (!any) s0 = at, any = true;
                s1 = at + take;
                b.pc = grow(b.pc, &b.cappc, np + 1, sizeof *b.pc);
                bool own = s->jr < 0 && !s->nrun; /* in place, in this rank's stream */
                b.pc[np] =
                    (piece){off, take, own ? data + at : NULL, np, own ? OWN : rbytes + (at - s0)};
                np++;
                s->in += take;
                if (s->in == len) s->i++, s->in = 0;
            }
            if (any && (s->jr >= 0 || s->nrun)) {
                b.from[nfrom++] = (rfrom){q, s0, s1 - s0, rbytes};
                rbytes += s1 - s0;
            }
        }
        if (!np) continue;
        b.rdata = grow(b.rdata, &b.caprdata, rbytes + 1, 1);
        for (size_t k = 0; k < np; k++)
            if (b.pc[k].at != OWN) b.pc[k].p = b.rdata + b.pc[k].at;
        for (size_t k = 0; write && k < nfrom; k++) {
            rfrom *fr = &b.from[k];
            rsrc *s = &b.src[fr->q];
            if (s->nrun ? !runs_read(job, bp, s, fr->s0, fr->len, b.rdata + fr->at)
                        : !cr_sc_read(job, "MPI-IO collective buffering", s->jr, b.rdata + fr->at,
                                      s->data + fr->s0, fr->len))
                return -1;
        }
        err = window_io(f, bp, np, write);
        for (size_t k = 0; !write && !err && k < nfrom; k++) {
            rfrom *fr = &b.from[k];
            rsrc *s = &b.src[fr->q];
            if (!cr_sc_write(job, "MPI-IO collective buffering", s->jr, s->data + fr->s0,
                             b.rdata + fr->at, fr->len))
                return -1;
        }
    }
#undef b
    return err;
}

/* The file's round buffers, and on the first call the ranks' job ranks and
 * whether single copy may serve (under the engine lock: the communicator's
 * table entry). */
static round_buf *cbufs(mpi_file *f)
{
    cr_job *job = cr_job_get();
    size_t ni = (size_t)f->size;
    if (!f->cb && !(f->cb = calloc(1, sizeof *f->cb))) cr_fatal(job, "MPI-IO", "out of memory");
    round_buf *b = f->cb;
    if (!b->jr) {
        b->jr = malloc(ni * sizeof *b->jr);
        b->scnt = calloc(7 * ni, sizeof(int));
        b->sp = calloc(4 * ni, sizeof(char *));
        if (!b->jr || !b->scnt || !b->sp) cr_fatal(job, "MPI-IO", "out of memory");
        b->sdsp = b->scnt + ni, b->rcnt = b->sdsp + ni, b->rdsp = b->rcnt + ni;
        b->sbc = b->rdsp + ni, b->rbc = b->sbc + ni, b->rbd = b->rbc + ni;
        b->rp = b->sp + ni; /* then the pairs' places, 2 * ni */
        cr_lock(job);
        const mpi_comm *c = mpi_comm_get(f->comm);
        for (int p = 0; p < f->size; p++) b->jr[p] = c ? cr_group_rank(&c->g, p) : -1;
        b->direct = c && cr_coll_direct_ok(job, &c->g);
        cr_unlock(job);
    }
    return b;
}

bool mf_coll_indep(const mpi_file *f, bool write)
{
    int mode = write ? f->h.cb_write : f->h.cb_read;
    /* automatic: when the accesses interleave; for a read, only across
     * hosts: on one host every rank reads the same page cache, and each
     * rank's own reads (sieved where the holes are small, one call a piece
     * where they are not: mf_pio) beat an exchange by messages (2-rank
     * strided read_at_all of 16 MiB each: 17-26 ms against 51-74 ms) and,
     * on a quiet machine, the aggregator's single copy too (2 ranks 4.3-4.4
     * ms against 6.9-7.6; 4 ranks 2.9 against 17.2-17.5; the same beside a
     * CPU-bound process). romio_cb_read=enable still takes the aggregator
     * (it paid under a load of 10-13: 8-20 ms against 15-25). */
    return f->size == 1 || mode == 0 || (mode == 2 && !write && f->nhosts == 1);
}

/* The stream of m's runs (from their start) to or from one buffer: len bytes. */
static void runs_copy(const mf_mem *m, char *buf, size_t len, bool to_runs)
{
    for (size_t i = 0; i < m->n && len; i++) {
        size_t take = m->iov[i].iov_len < len ? m->iov[i].iov_len : len;
        memcpy(to_runs ? m->iov[i].iov_base : buf, to_runs ? buf : m->iov[i].iov_base, take);
        buf += take;
        len -= take;
    }
}

/* Automatic collective buffering of a write on one host by one aggregator
 * (without single copy, or with a cb_nodes hint): only when the pieces
 * average less than this many bytes. The page cache
 * takes writes in any order, so each rank writing its own pieces from its
 * own memory (no exchange, no copy, every rank at work at once) costs one
 * system call a piece against, by an aggregator, a copy of every other
 * rank's byte and the other ranks idle; from a page a piece the system call
 * costs less.
 * IOR's 2-rank strided-view write_all (4 KiB pieces every 8 KiB, 16 MiB a
 * rank), 7 interleaved runs at load 20: 82 MiB/s median by the aggregator,
 * 165-174 each rank its own, Open MPI (whose ompio writes each rank's
 * pieces itself here) 147. */
#define MF_CB_PIECE 4096

/* ...but pieces of up to this many bytes (on average), when the ranks'
 * pieces interleave, single copy reaches every rank and no cb_nodes hint
 * was given, are written by every rank at once, each the aggregator of its
 * 1/P of the span, in windows of MF_SPREAD_WIN bytes (IOR's strided view of
 * 1 KiB pieces, 5 interleaved runs: 2 ranks 89 -> 324 MiB/s median against
 * one aggregator, 4 ranks 214 -> 320): ext4 takes 64 MiB in 4 KiB pwrites for
 * 55-69 ms of CPU, in 64 KiB ones for 13-16 ms (a plain C program, on this
 * project's machine), its i_rwsem lets one writer of the file in at a time,
 * and a file written 4 KiB at a time is kept in small folios that are
 * written back (and read, after IOR's collective write: 3204 -> 1357 MiB/s)
 * slower. Single copy reads the other ranks' pieces straight out of their
 * memory (a memory type of long runs unpacked: its runs); the windows stay
 * small, so the round buffer faults in few pages. */
#define MF_CB_SPREAD (64 << 10)
#define MF_SPREAD_WIN (1 << 20)

int mf_coll_io(mpi_file *f, const mf_vec *v, char *data, mf_mem *m, bool write, size_t *done,
               mf_err *e)
{
    *done = 0;
    int P = f->size;
    round_buf *b = cbufs(f);
    cr_job *job = cr_job_get();
    size_t *sofs = stream_offsets(v);
    long long mine[I_NINFO] = {v->n ? v->off[0] : LLONG_MAX,
                               LLONG_MIN,
                               (long long)v->n,
                               b->direct,
                               (long long)(uintptr_t)(m && write ? (void *)m->iov : data),
                               (long long)(uintptr_t)v->off,
                               (long long)(uintptr_t)sofs,
                               (long long)v->bytes,
                               m ? (long long)m->n : 0};
    for (size_t i = 0; i < v->n; i++) /* the end: the last piece's, unless pieces overlap */
        if (v->off[i] + (long long)v->len[i] > mine[I_HI])
            mine[I_HI] = v->off[i] + (long long)v->len[i];
    unsigned what = CR_SC_READ | (write ? 0 : CR_SC_WRITE);
    for (int p = 0; p < P && mine[I_SC]; p++)
        if (p != f->rank && !cr_sc_on(job, b->jr[p], what)) mine[I_SC] = 0;
    long long *all = malloc(sizeof(long long) * I_NINFO * (size_t)P);
    if (!all) cr_fatal(job, "MPI-IO", "out of memory");
    PMPI_Allgather(mine, I_NINFO, MPI_LONG_LONG, all, I_NINFO, MPI_LONG_LONG, f->comm);
    long long lo = LLONG_MAX, hi = LLONG_MIN, pieces = 0, bytes = 0;
    bool direct = true, runs = false;
    for (int r = 0; r < P; r++) {
        const long long *in = all + I_NINFO * r;
        direct = direct && in[I_SC];
        runs = runs || in[I_RUNS];
        pieces += in[I_N];
        bytes += in[I_BYTES];
        if (in[I_N]) {
            if (in[I_LO] < lo) lo = in[I_LO];
            if (in[I_HI] > hi) hi = in[I_HI];
        }
    }
    int mode = write ? f->h.cb_write : f->h.cb_read;
    bool big = write && f->nhosts == 1 && bytes >= MF_CB_PIECE * pieces;
    bool inter = lo < hi && interleaved(all, P);
    bool spread = write && f->nhosts == 1 && mode == 2 && !f->h.cb_nodes && direct && inter &&
                  bytes < MF_CB_SPREAD * pieces;
    bool cb = lo < hi && !mf_coll_indep(f, write) && (mode == 1 || spread || (!big && inter));
    if (!cb) {
        free(all);
        free(sofs);
        if (!data) return 0;
        return m ? mf_pio_mem(f, v, m, write, done, e) : mf_pio(f, v, data, write, done, e);
    }
    /* runs of the program's memory: a write by single copy reads them in
     * place (coll_direct); otherwise packed into one stream for the
     * exchanges, whose address single copy needs on every rank */
    char *stage = NULL;
    bool unstaged = write && direct;
    if (m && !unstaged) {
        if (!(stage = mf_scratch_get(f, v->bytes))) cr_fatal(job, "MPI-IO", "out of memory");
        if (write) runs_copy(m, stage, v->bytes, false);
        data = stage;
    }
    if (runs && direct && !unstaged) {
        long long at = (long long)(uintptr_t)data, *ats = malloc(sizeof *ats * (size_t)P);
        if (!ats) cr_fatal(job, "MPI-IO", "out of memory");
        PMPI_Allgather(&at, 1, MPI_LONG_LONG, ats, 1, MPI_LONG_LONG, f->comm);
        for (int r = 0; r < P; r++) all[I_NINFO * r + I_DATA] = ats[r];
        free(ats);
    }

    int naggs = spread ? P : f->naggs < P ? f->naggs : P, ai = -1;
    for (int a = 0; a < naggs; a++)
        if (f->aggs[a] == f->rank) ai = a;
    /* every rank's domain whole pages of the file: no page written by two */
    bool pages = spread && f->h.striping_unit <= 0;
    if (pages) lo -= lo % MF_CB_PIECE;
    long long D = (hi - lo + naggs - 1) / naggs;
    if (f->h.striping_unit > 0)
        D = (D + f->h.striping_unit - 1) / f->h.striping_unit * f->h.striping_unit;
    else if (pages)
        D = (D + MF_CB_PIECE - 1) / MF_CB_PIECE * MF_CB_PIECE;
    long long B = f->h.cb_buffer_size > 0 ? f->h.cb_buffer_size : 16 << 20;
    if (spread && B > MF_SPREAD_WIN) B = MF_SPREAD_WIN;
    /* every rank learns an aggregator's error, or a refused copy (REDO:
     * every rank does the access again by messages) */
    enum { REDO = INT_MAX };
    int err = direct ? coll_direct(f, v, data, m, sofs, write, all, lo, hi, D, B, ai)
                     : coll_msgs(f, v, data, sofs, write, lo, hi, D, B, naggs, ai);
    int me[2], worst[2];
    for (;;) {
        me[0] = err < 0 ? REDO : err ? mf_errno_class(err) : 0, me[1] = f->rank;
        PMPI_Allreduce(me, worst, 1, MPI_2INT, MPI_MAXLOC, f->comm);
        if (worst[0] != REDO) break;
        if (m && !stage) { /* by messages the stream is one buffer */
            if (!(stage = mf_scratch_get(f, v->bytes))) cr_fatal(job, "MPI-IO", "out of memory");
            runs_copy(m, stage, v->bytes, false);
            data = stage;
        }
        err = coll_msgs(f, v, data, sofs, write, lo, hi, D, B, naggs, ai);
    }
    free(all);
    free(sofs);
    int rc = 0;
    if (err)
        rc = mf_set_err(e, me[0], "collective %s of the aggregated span failed: %s",
                        write ? "write" : "read", strerror(err));
    else if (worst[0])
        rc = mf_set_err(e, worst[0], "the collective %s failed on the aggregator, rank %d",
                        write ? "write" : "read", worst[1]);
    else if (write)
        *done = v->bytes;
    else { /* a read: what lies before the end of the file */
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
        if (stage) runs_copy(m, stage, *done, true);
    }
    mf_scratch_put(f, stage);
    return rc;
}
