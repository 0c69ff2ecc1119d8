/* `courier trace FILE`: reads the Chrome trace-event file that `courier run --trace` writes
 * and prints what a user reads first: where each rank's time went (compute, communication,
 * waiting), the calls that took it, the sizes and the pattern of the messages, late senders
 * and late receivers, and the hang reports; with --plot DIR, three charts drawn by gnuplot.
 *
 * Invariants: the file is read once, line by line (one event per line, as the writer
 * promises), never whole; memory grows with the pairs of ranks that exchanged messages, the
 * distinct call names, the messages sent but not yet matched, and at most TR_PEND_CAP
 * undecided top-level calls per rank. Times are integer nanoseconds (the file has 3 decimals
 * of microseconds), so sums are exact and the report is the same on every machine. Every sort
 * breaks ties by name or rank. Bad input is one line on stderr (file, line, what is wrong) and
 * exit 2, and nothing is printed on stdout until the whole file has been read. No state
 * outside the tr_ctx of one call. A parts directory (FILE.parts.PID, left by a launcher that
 * was killed before it merged it) is merged into a temporary trace first, then read the same.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace_merge.h"
#include "trace_report.h"

#define TR_MAX_LINE ((size_t)64 << 20)    /* the longest line read */
#define TR_MAX_TRAILER ((size_t)16 << 20) /* what follows the events: otherData */
#define TR_MAX_RANK (1 << 20)             /* pids and ranks read: 0 .. TR_MAX_RANK - 1 */
#define TR_PEND_CAP 1024                  /* undecided top-level calls kept per rank */
#define TR_EPS_NS 2                       /* slack for rounding when one call is inside another */
#define TR_MAX_DEPTH 64                   /* nesting of JSON values skipped */
#define TR_NBINS 33                       /* 0, 1-4, 5-16, ..., powers of 4 */
#define TR_MAX_HANGS 4096
#define TR_NCOLORS 11 /* call names with a color of their own on the timeline */
#define TR_MATRIX_MAX 16
#define TR_MATRIX_PAIRS 20

static const char tr_usage[] =
    "usage: courier trace FILE [--plot DIR] [--top N]\n"
    "Summarizes a trace written by 'courier run --trace FILE': time per rank (compute,\n"
    "communication, waiting), the top calls, message sizes, the communication matrix,\n"
    "late senders and receivers, hang reports.\n"
    "  --plot DIR  also write timeline.png, matrix.png and balance.png into DIR (made if\n"
    "              needed) with gnuplot; their data and .gp scripts stay in DIR\n"
    "  --top N     rows in the lists of top calls and late pairs (default 10)\n"
    "Exit status: 0 ok, 1 the plots failed, 2 bad arguments or input, 3 no gnuplot.\n";

/* ---- data ---------------------------------------------------------------------------- */

typedef struct tr_name {
    char *s;
    uint64_t hash;
    uint64_t top_n, top_bytes, nest_n;
    int64_t top_ns, top_wait, nest_ns;
} tr_name;

/* A top-level call not yet final: a later call of the same thread may still enclose it. */
typedef struct tr_pend {
    int64_t s, e, wait;
    uint64_t bytes;
    int32_t name, tid;
} tr_pend;

typedef struct tr_rank {
    int seen, has_run;
    int64_t first, last, run_s, run_e;
    tr_pend *pend; /* sorted by start */
    size_t npend, cappend;
    int has_cur;
    int64_t cur_s, cur_e, comm; /* union of the final top-level calls: comm + [cur_s, cur_e] */
    int64_t wait;
    int64_t ls_waited, ls_caused, lr_waited, lr_caused;
    int64_t lost;
    int part; /* otherData.lost said its part is "missing" (1) or "cut" (2) */
} tr_rank;

typedef struct tr_pair {
    uint64_t key; /* from << 32 | to */
    uint64_t msgs, bytes, ls_n, lr_n;
    int64_t ls_ns, lr_ns;
    int used;
} tr_pair;

/* One half of a message (its send "s" or its receive "f") waiting for the other half. */
typedef struct tr_flow {
    uint64_t id;
    int64_t ts, posted;
    int32_t sender, other; /* other: the destination of an s, the receiver of an f */
    uint8_t used, kind, sync, has_posted;
} tr_flow;

typedef struct tr_hang {
    int64_t rank, ts;
    char *text;
} tr_hang;

typedef struct tr_reader {
    FILE *f;
    char *buf;
    size_t cap, pos, len, scan;
    int eof;
} tr_reader;

enum {
    H_PID = 1,
    H_TID = 2,
    H_TS = 4,
    H_DUR = 8,
    H_ID = 16,
    H_TO = 32,
    H_FROM = 64,
    H_POSTED = 128,
};

/* One event as parsed; its strings point into the line (decoded in place). */
typedef struct tr_ev {
    const char *ph, *cat, *name, *how, *report;
    int64_t pid, tid, to, from;
    int64_t ts, dur, wait, posted; /* ns */
    uint64_t bytes, id;
    unsigned has;
} tr_ev;

typedef struct tr_ctx {
    const char *file, *plot;
    int top;
    tr_reader rd;
    long line;
    tr_name *names;
    size_t nnames, capnames;
    uint32_t *nidx; /* name index + 1; 0 empty */
    size_t nidxcap;
    tr_rank *ranks;
    size_t nranks, capranks;
    tr_pair *pairs;
    size_t npairs, cappairs;
    tr_flow *flows;
    size_t nflows, capflows;
    uint64_t hist_n[TR_NBINS], hist_b[TR_NBINS];
    uint64_t nev, nskipped, ncalls, nnested, nsent, nrecv, nmatched, sent_bytes;
    uint64_t ndup, nf_nofrom, nbad_to, ls_n, lr_n;
    int64_t ls_ns, lr_ns;
    int have_span;
    int64_t span_s, span_e;
    tr_hang *hangs;
    size_t nhangs, caphangs;
    uint64_t hangs_dropped;
    int has_other, has_version;
    int64_t version, od_ranks, lost_total;
    int bad_parts; /* ranks whose part otherData.lost calls "missing" or "cut" */
    char *command, *clock;
    int truncated, events_closed;
    long trunc_line;
    char *trailer;
    size_t ntrailer, captrailer;
    long trailer_line, trailer_col0; /* where the trailer starts in the file */
    size_t *tl_ends;                 /* offsets of the line ends in trailer */
    size_t ntl_ends, captl_ends;
    FILE *tl; /* timeline.dat while plotting */
    char err[512];
} tr_ctx;

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fputs("courier trace: out of memory\n", stderr);
        exit(1);
    }
    return q;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xrealloc(NULL, n), s, n);
}

static uint64_t mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

static uint64_t str_hash(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return mix64(h);
}

/* ---- reading lines ------------------------------------------------------------------- */

/* 1: a line (NUL-terminated, without its '\n'; *nl_end: it had one), 0: end of file, -1: read
 * error, -2: a line longer than TR_MAX_LINE. */
static int rd_line(tr_reader *r, char **line, size_t *n, int *nl_end)
{
    for (;;) {
        char *nl = memchr(r->buf + r->scan, '\n', r->len - r->scan);
        if (nl) {
            *nl = 0;
            *line = r->buf + r->pos;
            *n = (size_t)(nl - *line);
            r->pos = r->scan = (size_t)(nl - r->buf) + 1;
            *nl_end = 1;
            return 1;
        }
        r->scan = r->len;
        if (r->eof) {
            if (r->pos == r->len) return 0;
            r->buf[r->len] = 0; /* cap + 1 bytes are allocated */
            *line = r->buf + r->pos;
            *n = r->len - r->pos;
            r->pos = r->scan = r->len;
            *nl_end = 0;
            return 1;
        }
        if (r->pos > 0) {
            memmove(r->buf, r->buf + r->pos, r->len - r->pos);
            r->len -= r->pos;
            r->scan -= r->pos;
            r->pos = 0;
        }
        if (r->len == r->cap) {
            if (r->cap >= TR_MAX_LINE) return -2;
            r->cap *= 2;
            r->buf = xrealloc(r->buf, r->cap + 1);
        }
        size_t got = fread(r->buf + r->len, 1, r->cap - r->len, r->f);
        if (got == 0) {
            if (ferror(r->f)) return -1;
            r->eof = 1;
        }
        r->len += got;
    }
}

/* ---- JSON ---------------------------------------------------------------------------- */

typedef struct jp {
    char *p;
    const char *err;
    char *at;
} jp;

static int jfail(jp *j, const char *msg)
{
    if (!j->err) {
        j->err = *j->p ? msg : "unexpected end";
        j->at = j->p;
    }
    return -1;
}

static void jws(jp *j)
{
    while (*j->p == ' ' || *j->p == '\t' || *j->p == '\r' || *j->p == '\n') j->p++;
}

static int hex4(const char *s, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char ch = s[i];
        unsigned d;
        if (ch >= '0' && ch <= '9')
            d = (unsigned)(ch - '0');
        else if (ch >= 'a' && ch <= 'f')
            d = (unsigned)(ch - 'a' + 10);
        else if (ch >= 'A' && ch <= 'F')
            d = (unsigned)(ch - 'A' + 10);
        else
            return -1;
        *v = *v << 4 | d;
    }
    return 0;
}

static char *utf8_put(char *w, unsigned cp)
{
    if (cp < 0x80) {
        *w++ = (char)cp;
    } else if (cp < 0x800) {
        *w++ = (char)(0xc0 | cp >> 6);
        *w++ = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *w++ = (char)(0xe0 | cp >> 12);
        *w++ = (char)(0x80 | (cp >> 6 & 0x3f));
        *w++ = (char)(0x80 | (cp & 0x3f));
    } else {
        *w++ = (char)(0xf0 | cp >> 18);
        *w++ = (char)(0x80 | (cp >> 12 & 0x3f));
        *w++ = (char)(0x80 | (cp >> 6 & 0x3f));
        *w++ = (char)(0x80 | (cp & 0x3f));
    }
    return w;
}

/* A string, decoded in place (the decoded text is never longer than the escaped one, and
 * its NUL lands at the latest on the closing quote, which has been read). */
static int jstr(jp *j, char **out)
{
    static const char esc_from[] = "\"\\/bfnrt", esc_to[] = "\"\\/\b\f\n\r\t";
    if (*j->p != '"') return jfail(j, "expected a string");
    char *start = j->p + 1, *r = start;
    while (*r != '"' && *r != '\\' && (unsigned char)*r >= 0x20) r++;
    char *w = r;
    while (*r != '"') {
        unsigned char ch = (unsigned char)*r;
        if (ch == 0) {
            j->p = r;
            return jfail(j, "unterminated string");
        }
        if (ch < 0x20) {
            j->p = r;
            return jfail(j, "control character in a string");
        }
        if (ch != '\\') {
            *w++ = *r++;
            continue;
        }
        r++;
        const char *k = *r ? strchr(esc_from, *r) : NULL;
        if (k) {
            *w++ = esc_to[k - esc_from];
            r++;
            continue;
        }
        switch (*r) {
        case 'u': {
            unsigned cp, lo;
            if (hex4(r + 1, &cp)) {
                j->p = r - 1;
                return jfail(j, "bad \\u escape in a string");
            }
            r += 5;
            if (cp >= 0xd800 && cp < 0xdc00 && r[0] == '\\' && r[1] == 'u' && !hex4(r + 2, &lo) &&
                lo >= 0xdc00 && lo < 0xe000) {
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                r += 6;
            }
            if (cp >= 0xd800 && cp < 0xe000) cp = 0xfffd;
            if (cp == 0) cp = '?';
            w = utf8_put(w, cp);
            break;
        }
        default:
            j->p = r - 1;
            return jfail(j, "bad escape in a string");
        }
    }
    *w = 0;
    j->p = r + 1;
    *out = start;
    return 0;
}

static int isdig(char ch)
{
    return ch >= '0' && ch <= '9';
}

/* A number: *isint when it is written as an integer of at most 18 digits (then *iv is it
 * exactly); *d always. The usual "12.345" takes the fast path, which is exact (both parts
 * are exact doubles and IEEE division rounds once), anything else strtod. */
static int jnum(jp *j, double *d, int64_t *iv, int *isint)
{
    static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    char *s = j->p, *q = s;
    int neg = 0, nd = 0, fd = 0, frac = 0, ex = 0;
    uint64_t m = 0;
    if (*q == '-') neg = 1, q++;
    if (!isdig(*q)) return jfail(j, "expected a value");
    if (*q == '0') {
        q++;
    } else {
        for (; isdig(*q); q++, nd++)
            if (nd < 19) m = m * 10 + (uint64_t)(*q - '0');
    }
    if (*q == '.') {
        frac = 1;
        q++;
        if (!isdig(*q)) {
            j->p = q;
            return jfail(j, "bad number");
        }
        for (; isdig(*q); q++, nd++)
            if (nd < 19) m = m * 10 + (uint64_t)(*q - '0'), fd++;
    }
    if (*q == 'e' || *q == 'E') {
        ex = 1;
        q++;
        if (*q == '+' || *q == '-') q++;
        if (!isdig(*q)) {
            j->p = q;
            return jfail(j, "bad number");
        }
        while (isdig(*q)) q++;
    }
    j->p = q;
    *isint = 0;
    if (!frac && !ex && nd <= 18) {
        *isint = 1;
        *iv = neg ? -(int64_t)m : (int64_t)m;
        *d = (double)*iv;
        return 0;
    }
    if (!ex && nd <= 15) {
        double v = (double)m / p10[fd];
        *d = neg ? -v : v;
        return 0;
    }
    char tmp[128];
    size_t len = (size_t)(q - s);
    if (len >= sizeof tmp) {
        j->p = s;
        return jfail(j, "number too long");
    }
    memcpy(tmp, s, len);
    tmp[len] = 0;
    *d = strtod(tmp, NULL);
    if (!isfinite(*d)) {
        j->p = s;
        return jfail(j, "number out of range");
    }
    return 0;
}

static int jlit(jp *j, const char *lit)
{
    size_t n = strlen(lit);
    if (strncmp(j->p, lit, n)) return jfail(j, "expected a value");
    j->p += n;
    return 0;
}

/* Object members: jobj_begin (1: a member follows, 0: empty), then jobj_key before each
 * member's value and jobj_next after it (1: another member, 0: the end). -1: bad JSON. */
static int jobj_begin(jp *j)
{
    jws(j);
    if (*j->p != '{') return jfail(j, "expected '{'");
    j->p++;
    jws(j);
    if (*j->p == '}') return j->p++, 0;
    return 1;
}

static int jobj_key(jp *j, char **key)
{
    jws(j);
    if (jstr(j, key)) return -1;
    jws(j);
    if (*j->p != ':') return jfail(j, "expected ':' after a key");
    j->p++;
    jws(j);
    return 0;
}

static int jobj_next(jp *j)
{
    jws(j);
    if (*j->p == ',') return j->p++, 1;
    if (*j->p == '}') return j->p++, 0;
    return jfail(j, "expected ',' or '}'");
}

static int jskip(jp *j, int depth)
{
    char *s;
    double d;
    int64_t iv;
    int isint;
    jws(j);
    switch (*j->p) {
    case '"':
        return jstr(j, &s);
    case 't':
        return jlit(j, "true");
    case 'f':
        return jlit(j, "false");
    case 'n':
        return jlit(j, "null");
    case '[':
        if (depth >= TR_MAX_DEPTH) return jfail(j, "nested too deeply");
        j->p++;
        jws(j);
        if (*j->p == ']') return j->p++, 0;
        for (;;) {
            if (jskip(j, depth + 1)) return -1;
            jws(j);
            if (*j->p == ',') {
                j->p++;
                continue;
            }
            if (*j->p == ']') return j->p++, 0;
            return jfail(j, "expected ',' or ']'");
        }
    case '{': {
        if (depth >= TR_MAX_DEPTH) return jfail(j, "nested too deeply");
        int r = jobj_begin(j);
        while (r > 0) {
            if (jobj_key(j, &s) || jskip(j, depth + 1)) return -1;
            r = jobj_next(j);
        }
        return r;
    }
    default:
        return jnum(j, &d, &iv, &isint);
    }
}

static int jget_str(jp *j, const char **out, const char *what)
{
    char *s;
    if (*j->p != '"') return jfail(j, what);
    if (jstr(j, &s)) return -1;
    *out = s;
    return 0;
}

static int jget_int(jp *j, int64_t *out, const char *what)
{
    char *at = j->p;
    double d;
    int isint;
    if (*at != '-' && !isdig(*at)) return jfail(j, what);
    if (jnum(j, &d, out, &isint)) return -1;
    if (!isint) {
        if (!(d > -9e18 && d < 9e18) || (double)(int64_t)d != d) {
            j->p = at;
            return jfail(j, what);
        }
        *out = (int64_t)d;
    }
    return 0;
}

/* Microseconds (a number) into integer nanoseconds. */
static int jget_us(jp *j, int64_t *ns, const char *what)
{
    char *at = j->p;
    double d;
    int64_t iv;
    int isint;
    if (*at != '-' && !isdig(*at)) return jfail(j, what);
    if (jnum(j, &d, &iv, &isint)) return -1;
    if (!(d >= -9e12 && d <= 9e12)) {
        j->p = at;
        return jfail(j, "time out of range");
    }
    d *= 1000.0;
    *ns = (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
    return 0;
}

enum {
    K_OTHER,
    K_PH,
    K_CAT,
    K_NAME,
    K_PID,
    K_TID,
    K_TS,
    K_DUR,
    K_ID,
    K_ARGS,
    K_BYTES,
    K_HOW,
    K_WAIT,
    K_TO,
    K_FROM,
    K_POSTED,
    K_REPORT,
};

/* Equality of short strings, inline (the library's strcmp call costs more here). */
static int eq(const char *a, const char *b)
{
    while (*a && *a == *b) a++, b++;
    return *a == *b;
}

/* The keys read, by their first letter (a chain of strcmp was a third of the time). */
static int key_id(const char *k)
{
    switch (k[0]) {
    case 'a':
        return eq(k, "args") ? K_ARGS : K_OTHER;
    case 'b':
        return eq(k, "bytes") ? K_BYTES : K_OTHER;
    case 'c':
        return eq(k, "cat") ? K_CAT : K_OTHER;
    case 'd':
        return eq(k, "dur") ? K_DUR : K_OTHER;
    case 'f':
        return eq(k, "from") ? K_FROM : K_OTHER;
    case 'h':
        return eq(k, "how") ? K_HOW : K_OTHER;
    case 'i':
        return eq(k, "id") ? K_ID : K_OTHER;
    case 'n':
        return eq(k, "name") ? K_NAME : K_OTHER;
    case 'p':
        if (k[1] == 'h' && !k[2]) return K_PH;
        if (k[1] == 'i' && k[2] == 'd' && !k[3]) return K_PID;
        return eq(k, "posted") ? K_POSTED : K_OTHER;
    case 'r':
        return eq(k, "report") ? K_REPORT : K_OTHER;
    case 't':
        if (k[1] == 's' && !k[2]) return K_TS;
        if (k[1] == 'o' && !k[2]) return K_TO;
        return eq(k, "tid") ? K_TID : K_OTHER;
    case 'w':
        return eq(k, "wait") ? K_WAIT : K_OTHER;
    default:
        return K_OTHER;
    }
}

static int parse_args(jp *j, tr_ev *e)
{
    int r = jobj_begin(j), rc = 0;
    while (r > 0) {
        char *k;
        int64_t v;
        if (jobj_key(j, &k)) return -1;
        switch (key_id(k)) {
        case K_BYTES:
            rc = jget_int(j, &v, "\"bytes\" must be an integer");
            if (!rc && v < 0) rc = jfail(j, "negative \"bytes\"");
            e->bytes = (uint64_t)v;
            break;
        case K_HOW:
            rc = jget_str(j, &e->how, "\"how\" must be a string");
            break;
        case K_WAIT:
            rc = jget_us(j, &e->wait, "\"wait\" must be a number");
            break;
        case K_TO:
            rc = jget_int(j, &e->to, "\"to\" must be an integer");
            e->has |= H_TO;
            break;
        case K_FROM:
            rc = jget_int(j, &e->from, "\"from\" must be an integer");
            e->has |= H_FROM;
            break;
        case K_POSTED:
            rc = jget_us(j, &e->posted, "\"posted\" must be a number");
            e->has |= H_POSTED;
            break;
        case K_REPORT:
            rc = jget_str(j, &e->report, "\"report\" must be a string");
            break;
        default:
            rc = jskip(j, 2);
        }
        if (rc) return -1;
        r = jobj_next(j);
    }
    return r;
}

static int parse_event(jp *j, tr_ev *e)
{
    memset(e, 0, sizeof *e);
    int r = jobj_begin(j), rc = 0;
    while (r > 0) {
        char *k;
        if (jobj_key(j, &k)) return -1;
        switch (key_id(k)) {
        case K_PH:
            rc = jget_str(j, &e->ph, "\"ph\" must be a string");
            break;
        case K_CAT:
            rc = jget_str(j, &e->cat, "\"cat\" must be a string");
            break;
        case K_NAME:
            rc = jget_str(j, &e->name, "\"name\" must be a string");
            break;
        case K_PID:
            rc = jget_int(j, &e->pid, "\"pid\" must be an integer");
            e->has |= H_PID;
            break;
        case K_TID:
            rc = jget_int(j, &e->tid, "\"tid\" must be an integer");
            e->has |= H_TID;
            break;
        case K_TS:
            rc = jget_us(j, &e->ts, "\"ts\" must be a number");
            e->has |= H_TS;
            break;
        case K_DUR:
            rc = jget_us(j, &e->dur, "\"dur\" must be a number");
            e->has |= H_DUR;
            break;
        case K_ID:
            if (*j->p == '"') { /* Chrome allows "0x11": any string names one flow */
                const char *s;
                rc = jget_str(j, &s, "");
                if (!rc) e->id = str_hash(s);
            } else {
                int64_t v;
                rc = jget_int(j, &v, "\"id\" must be an integer or a string");
                e->id = (uint64_t)v;
            }
            e->has |= H_ID;
            break;
        case K_ARGS:
            rc = *j->p == '{' ? parse_args(j, e) : jskip(j, 1);
            break;
        default:
            rc = jskip(j, 1);
        }
        if (rc) return -1;
        r = jobj_next(j);
    }
    return r;
}

/* ---- tables -------------------------------------------------------------------------- */

static int32_t name_get(tr_ctx *c, const char *s)
{
    uint64_t h = str_hash(s);
    if ((c->nnames + 1) * 2 > c->nidxcap) {
        size_t cap = c->nidxcap ? c->nidxcap * 2 : 64;
        uint32_t *t = xrealloc(NULL, cap * sizeof *t);
        memset(t, 0, cap * sizeof *t);
        for (size_t i = 0; i < c->nnames; i++) {
            size_t k = c->names[i].hash & (cap - 1);
            while (t[k]) k = (k + 1) & (cap - 1);
            t[k] = (uint32_t)i + 1;
        }
        free(c->nidx);
        c->nidx = t;
        c->nidxcap = cap;
    }
    size_t k = h & (c->nidxcap - 1);
    for (; c->nidx[k]; k = (k + 1) & (c->nidxcap - 1)) {
        tr_name *n = &c->names[c->nidx[k] - 1];
        if (n->hash == h && eq(n->s, s)) return (int32_t)(c->nidx[k] - 1);
    }
    if (c->nnames == c->capnames) {
        c->capnames = c->capnames ? c->capnames * 2 : 32;
        c->names = xrealloc(c->names, c->capnames * sizeof *c->names);
    }
    tr_name *n = &c->names[c->nnames];
    memset(n, 0, sizeof *n);
    n->s = xstrdup(s);
    n->hash = h;
    c->nidx[k] = (uint32_t)++c->nnames;
    return (int32_t)(c->nnames - 1);
}

static tr_rank *rank_get(tr_ctx *c, int64_t r)
{
    if ((size_t)r >= c->capranks) {
        size_t cap = c->capranks ? c->capranks : 16;
        while (cap <= (size_t)r) cap *= 2;
        c->ranks = xrealloc(c->ranks, cap * sizeof *c->ranks);
        memset(c->ranks + c->capranks, 0, (cap - c->capranks) * sizeof *c->ranks);
        c->capranks = cap;
    }
    if ((size_t)r >= c->nranks) c->nranks = (size_t)r + 1;
    return &c->ranks[r];
}

static tr_pair *pair_get(tr_ctx *c, int64_t from, int64_t to)
{
    uint64_t key = (uint64_t)from << 32 | (uint64_t)(uint32_t)to;
    if ((c->npairs + 1) * 2 > c->cappairs) {
        size_t cap = c->cappairs ? c->cappairs * 2 : 64;
        tr_pair *t = xrealloc(NULL, cap * sizeof *t);
        memset(t, 0, cap * sizeof *t);
        for (size_t i = 0; i < c->cappairs; i++) {
            if (!c->pairs[i].used) continue;
            size_t k = mix64(c->pairs[i].key) & (cap - 1);
            while (t[k].used) k = (k + 1) & (cap - 1);
            t[k] = c->pairs[i];
        }
        free(c->pairs);
        c->pairs = t;
        c->cappairs = cap;
    }
    size_t k = mix64(key) & (c->cappairs - 1);
    for (; c->pairs[k].used; k = (k + 1) & (c->cappairs - 1))
        if (c->pairs[k].key == key) return &c->pairs[k];
    c->pairs[k].used = 1;
    c->pairs[k].key = key;
    c->npairs++;
    return &c->pairs[k];
}

static size_t flow_slot(size_t cap, uint64_t id, int32_t sender)
{
    return mix64(id ^ (uint64_t)(uint32_t)sender << 40 ^ (uint64_t)(uint32_t)sender) & (cap - 1);
}

/* The slot of (id, sender): in use when that half is waiting, else the free slot for it. */
static tr_flow *flow_find(tr_ctx *c, uint64_t id, int32_t sender)
{
    if ((c->nflows + 1) * 4 > c->capflows * 3) {
        size_t cap = c->capflows ? c->capflows * 2 : 1024;
        tr_flow *t = xrealloc(NULL, cap * sizeof *t);
        memset(t, 0, cap * sizeof *t);
        for (size_t i = 0; i < c->capflows; i++) {
            if (!c->flows[i].used) continue;
            size_t k = flow_slot(cap, c->flows[i].id, c->flows[i].sender);
            while (t[k].used) k = (k + 1) & (cap - 1);
            t[k] = c->flows[i];
        }
        free(c->flows);
        c->flows = t;
        c->capflows = cap;
    }
    size_t k = flow_slot(c->capflows, id, sender);
    for (; c->flows[k].used; k = (k + 1) & (c->capflows - 1))
        if (c->flows[k].id == id && c->flows[k].sender == sender) break;
    return &c->flows[k];
}

/* Removes a matched half (linear probing: the entries after it move back). */
static void flow_remove(tr_ctx *c, tr_flow *f)
{
    size_t mask = c->capflows - 1, i = (size_t)(f - c->flows), j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!c->flows[j].used) break;
        size_t k = flow_slot(c->capflows, c->flows[j].id, c->flows[j].sender);
        if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
            c->flows[i] = c->flows[j];
            i = j;
        }
    }
    c->flows[i].used = 0;
    c->nflows--;
}

/* ---- events -------------------------------------------------------------------------- */

static void touch(tr_ctx *c, tr_rank *rk, int64_t s, int64_t e)
{
    if (!rk->seen || s < rk->first) rk->first = s;
    if (!rk->seen || e > rk->last) rk->last = e;
    rk->seen = 1;
    if (!c->have_span || s < c->span_s) c->span_s = s;
    if (!c->have_span || e > c->span_e) c->span_e = e;
    c->have_span = 1;
}

/* A top-level call becomes final: into the rank's union of call intervals. The calls come
 * in start order here, except when more than TR_PEND_CAP were undecided at once; then the
 * union is approximate (a call starting before the current interval extends it). */
static void call_final(tr_ctx *c, tr_rank *rk, int64_t rank, const tr_pend *p)
{
    if (!rk->has_cur) {
        rk->has_cur = 1;
        rk->cur_s = p->s, rk->cur_e = p->e;
    } else if (p->s > rk->cur_e) {
        rk->comm += rk->cur_e - rk->cur_s;
        rk->cur_s = p->s, rk->cur_e = p->e;
    } else {
        if (p->e > rk->cur_e) rk->cur_e = p->e;
        if (p->s < rk->cur_s) rk->cur_s = p->s;
    }
    if (c->tl)
        fprintf(c->tl, "%" PRId64 " %" PRId32 " %.3f %.3f %" PRId32 "\n", rank, p->tid,
                (double)p->s / 1e3, (double)p->e / 1e3, p->name);
}

static void pend_finalize(tr_ctx *c, tr_rank *rk, int64_t rank, size_t k)
{
    for (size_t i = 0; i < k; i++) call_final(c, rk, rank, &rk->pend[i]);
    if (rk->npend > k) memmove(rk->pend, rk->pend + k, (rk->npend - k) * sizeof *rk->pend);
    rk->npend -= k;
}

static void call_nested(tr_ctx *c, const tr_pend *p)
{
    c->names[p->name].nest_n++;
    c->names[p->name].nest_ns += p->e - p->s;
    c->nnested++;
}

/* A call of one rank. Top-level calls of one thread are disjoint, and a call inside another
 * comes after it (the writer emits at the start) or before it (at the end): either way the
 * enclosing call is among the undecided ones, and a call is decided once TR_PEND_CAP others
 * came after it or at the end of the file. */
static void call_add(tr_ctx *c, tr_rank *rk, int64_t rank, const tr_pend *E)
{
    tr_pend *a = rk->pend;
    size_t n = rk->npend, lo = 0, hi = n;
    /* hi: the first undecided call starting after E (with slack) */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a[mid].s <= E->s + TR_EPS_NS)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = hi; i-- > 0;) {
        if (a[i].tid != E->tid) continue;
        if (E->e <= a[i].e + TR_EPS_NS) { /* E is inside the call before it */
            call_nested(c, E);
            return;
        }
        break;
    }
    /* the undecided calls of E's thread inside E are nested in it */
    lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a[mid].s < E->s - TR_EPS_NS)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t w = lo;
    for (size_t i = lo; i < n; i++) {
        if (a[i].tid == E->tid && a[i].s <= E->e + TR_EPS_NS && a[i].e <= E->e + TR_EPS_NS) {
            tr_name *nm = &c->names[a[i].name];
            nm->top_n--, nm->top_ns -= a[i].e - a[i].s, nm->top_wait -= a[i].wait;
            nm->top_bytes -= a[i].bytes;
            rk->wait -= a[i].wait;
            c->ncalls--;
            call_nested(c, &a[i]);
            continue;
        }
        a[w++] = a[i];
    }
    n = w;
    if (n == rk->cappend) {
        rk->cappend = rk->cappend ? rk->cappend * 2 : 16;
        rk->pend = a = xrealloc(a, rk->cappend * sizeof *a);
    }
    size_t pos = n;
    while (pos > 0 && a[pos - 1].s > E->s) pos--;
    memmove(a + pos + 1, a + pos, (n - pos) * sizeof *a);
    a[pos] = *E;
    rk->npend = n + 1;
    tr_name *nm = &c->names[E->name];
    nm->top_n++, nm->top_ns += E->e - E->s, nm->top_wait += E->wait, nm->top_bytes += E->bytes;
    rk->wait += E->wait;
    c->ncalls++;
    if (rk->npend >= TR_PEND_CAP) pend_finalize(c, rk, rank, TR_PEND_CAP / 2);
}

static int how_sync(const char *how)
{
    return how && (eq(how, "rendezvous") || eq(how, "sync"));
}

/* A message's send (sender, s_ts) and its receive (receiver, f_ts, posted) met. */
static void flow_match(tr_ctx *c, int32_t sender, int32_t receiver, int64_t s_ts, int64_t f_ts,
                       int has_posted, int64_t posted, int sync)
{
    c->nmatched++;
    if (!has_posted) return;
    if (posted < s_ts) { /* late sender: the receiver waited */
        int64_t w = (s_ts < f_ts ? s_ts : f_ts) - posted;
        if (w <= 0) return;
        tr_pair *p = pair_get(c, sender, receiver);
        p->ls_n++, p->ls_ns += w;
        rank_get(c, receiver)->ls_waited += w;
        rank_get(c, sender)->ls_caused += w;
        c->ls_n++, c->ls_ns += w;
    } else if (sync && posted > s_ts) { /* late receiver: the sender waited */
        int64_t w = posted - s_ts;
        tr_pair *p = pair_get(c, sender, receiver);
        p->lr_n++, p->lr_ns += w;
        rank_get(c, sender)->lr_waited += w;
        rank_get(c, receiver)->lr_caused += w;
        c->lr_n++, c->lr_ns += w;
    }
}

static int hist_bin(uint64_t size)
{
    if (size == 0) return 0;
    int k = 1;
    for (uint64_t lim = 4; size > lim && k < TR_NBINS - 1; lim *= 4) k++;
    return k;
}

static const char *on_send(tr_ctx *c, const tr_ev *e)
{
    c->nsent++;
    c->sent_bytes += e->bytes;
    int b = hist_bin(e->bytes);
    c->hist_n[b]++, c->hist_b[b] += e->bytes;
    int64_t to = -1;
    if (e->has & H_TO) {
        if (e->to >= TR_MAX_RANK) return "\"to\" out of range";
        to = e->to;
    }
    if (to < 0) {
        c->nbad_to++;
    } else {
        rank_get(c, to);
        tr_pair *p = pair_get(c, e->pid, to);
        p->msgs++, p->bytes += e->bytes;
    }
    tr_flow *f = flow_find(c, e->id, (int32_t)e->pid);
    if (f->used && f->kind == 'f') {
        flow_match(c, (int32_t)e->pid, f->other, e->ts, f->ts, f->has_posted, f->posted,
                   how_sync(e->how) || f->sync);
        flow_remove(c, f);
        return NULL;
    }
    if (f->used)
        c->ndup++;
    else
        c->nflows++;
    *f = (tr_flow){.id = e->id,
                   .ts = e->ts,
                   .sender = (int32_t)e->pid,
                   .other = (int32_t)to,
                   .used = 1,
                   .kind = 's',
                   .sync = (uint8_t)how_sync(e->how)};
    return NULL;
}

static const char *on_recv(tr_ctx *c, const tr_ev *e)
{
    c->nrecv++;
    if (!(e->has & H_FROM) || e->from < 0) {
        c->nf_nofrom++;
        return NULL;
    }
    if (e->from >= TR_MAX_RANK) return "\"from\" out of range";
    rank_get(c, e->from);
    int has_posted = (e->has & H_POSTED) != 0;
    tr_flow *f = flow_find(c, e->id, (int32_t)e->from);
    if (f->used && f->kind == 's') {
        flow_match(c, (int32_t)e->from, (int32_t)e->pid, f->ts, e->ts, has_posted, e->posted,
                   f->sync || how_sync(e->how));
        flow_remove(c, f);
        return NULL;
    }
    if (f->used)
        c->ndup++;
    else
        c->nflows++;
    *f = (tr_flow){.id = e->id,
                   .ts = e->ts,
                   .posted = e->posted,
                   .sender = (int32_t)e->from,
                   .other = (int32_t)e->pid,
                   .used = 1,
                   .kind = 'f',
                   .sync = (uint8_t)how_sync(e->how),
                   .has_posted = (uint8_t)has_posted};
    return NULL;
}

/* One parsed event; NULL, or what is wrong with it. */
static const char *on_event(tr_ctx *c, tr_ev *e)
{
    c->nev++;
    if (!e->ph) return "event without \"ph\"";
    const char *ph = e->ph, *cat = e->cat ? e->cat : "";
    char p0 = ph[1] ? 0 : ph[0]; /* every phase read is one letter */
    if (p0 == 'M') return NULL;
    int X = p0 == 'X', S = p0 == 's', F = p0 == 'f', I = p0 == 'i' || p0 == 'I';
    if (!X && !S && !F && !I) {
        c->nskipped++;
        return NULL;
    }
    if (!(e->has & H_PID)) return "event without \"pid\"";
    if (!(e->has & H_TS)) return "event without \"ts\"";
    if (e->pid < 0 || e->pid >= TR_MAX_RANK) return "\"pid\" out of range";
    if (e->tid < 0 || e->tid > INT32_MAX) return "\"tid\" out of range";
    if (X && !(e->has & H_DUR)) return "complete event (\"ph\":\"X\") without \"dur\"";
    if (X && e->dur < 0) return "negative \"dur\"";
    if ((S || F) && eq(cat, "msg") && !(e->has & H_ID)) return "flow event without \"id\"";
    int64_t end = X ? e->ts + e->dur : e->ts;
    tr_rank *rk = rank_get(c, e->pid);
    touch(c, rk, e->ts, end);
    if (X && eq(cat, "run")) {
        if (!rk->has_run || e->ts < rk->run_s) rk->run_s = e->ts;
        if (!rk->has_run || end > rk->run_e) rk->run_e = end;
        rk->has_run = 1;
    } else if (X && eq(cat, "call")) {
        tr_pend p = {.s = e->ts,
                     .e = end,
                     .wait = e->wait,
                     .bytes = e->bytes,
                     .name = name_get(c, e->name ? e->name : "?"),
                     .tid = (int32_t)e->tid};
        call_add(c, rk, e->pid, &p);
    } else if ((S || F) && eq(cat, "msg")) {
        return S ? on_send(c, e) : on_recv(c, e);
    } else if (I && eq(cat, "hang")) {
        if (c->nhangs == TR_MAX_HANGS) {
            c->hangs_dropped++;
            return NULL;
        }
        if (c->nhangs == c->caphangs) {
            c->caphangs = c->caphangs ? c->caphangs * 2 : 8;
            c->hangs = xrealloc(c->hangs, c->caphangs * sizeof *c->hangs);
        }
        c->hangs[c->nhangs++] =
            (tr_hang){.rank = e->pid, .ts = e->ts, .text = xstrdup(e->report ? e->report : "")};
    }
    return NULL;
}

/* ---- the file ------------------------------------------------------------------------ */

/* One line on stderr about the input (line 0: no line) and the exit status 2. */
__attribute__((format(printf, 3, 4))) static int bad(tr_ctx *c, long line, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (line > 0)
        fprintf(stderr, "courier trace: %s:%ld: %s\n", c->file, line, msg);
    else
        fprintf(stderr, "courier trace: %s: %s\n", c->file, msg);
    return 2;
}

/* One line of the events: 0 read, 1 the end of the events (*rest: what follows the ']'),
 * -1 bad JSON (c->err says what; may be the cut end of a truncated file), -2 a bad event. */
static int event_line(tr_ctx *c, char *line, char *p, char **rest)
{
    jp j = {p, NULL, NULL};
    tr_ev e;
    jws(&j);
    if (!*j.p) return 0;
    if (*j.p == ']') {
        *rest = j.p + 1;
        return 1;
    }
    if (parse_event(&j, &e)) {
        snprintf(c->err, sizeof c->err, "malformed event: %s (column %ld)", j.err,
                 (long)(j.at - line) + 1);
        return -1;
    }
    jws(&j);
    if (*j.p == ',') j.p++, jws(&j);
    int end = *j.p == ']';
    if (*j.p && !end) {
        snprintf(c->err, sizeof c->err, "malformed event: text after the event (column %ld)",
                 (long)(j.p - line) + 1);
        return -1;
    }
    const char *why = on_event(c, &e);
    if (why) {
        snprintf(c->err, sizeof c->err, "%s", why);
        return -2;
    }
    if (end) *rest = j.p + 1;
    return end;
}

static void trailer_add(tr_ctx *c, const char *s, size_t n, int nl_end)
{
    if (c->ntrailer + n + 2 > c->captrailer) {
        while (c->ntrailer + n + 2 > c->captrailer)
            c->captrailer = c->captrailer ? c->captrailer * 2 : 4096;
        c->trailer = xrealloc(c->trailer, c->captrailer);
    }
    memcpy(c->trailer + c->ntrailer, s, n);
    c->ntrailer += n;
    if (nl_end) c->trailer[c->ntrailer++] = '\n';
    c->trailer[c->ntrailer] = 0;
    if (c->ntl_ends == c->captl_ends) {
        c->captl_ends = c->captl_ends ? c->captl_ends * 2 : 16;
        c->tl_ends = xrealloc(c->tl_ends, c->captl_ends * sizeof *c->tl_ends);
    }
    c->tl_ends[c->ntl_ends++] = c->ntrailer - (size_t)nl_end;
}

static int parse_other(tr_ctx *c, jp *j)
{
    int r = jobj_begin(j);
    c->has_other = 1;
    while (r > 0) {
        char *k;
        const char *s;
        if (jobj_key(j, &k)) return -1;
        if (!strcmp(k, "courier_trace")) {
            if (jget_int(j, &c->version, "\"courier_trace\" must be an integer")) return -1;
            c->has_version = 1;
        } else if (!strcmp(k, "ranks")) {
            if (jget_int(j, &c->od_ranks, "\"ranks\" must be an integer")) return -1;
            if (c->od_ranks < 0 || c->od_ranks > TR_MAX_RANK) return jfail(j, "bad \"ranks\"");
        } else if (!strcmp(k, "command")) {
            if (jget_str(j, &s, "\"command\" must be a string")) return -1;
            free(c->command);
            c->command = xstrdup(s);
        } else if (!strcmp(k, "clock")) {
            if (jget_str(j, &s, "\"clock\" must be a string")) return -1;
            free(c->clock);
            c->clock = xstrdup(s);
        } else if (!strcmp(k, "lost") && *j->p == '{') {
            int r2 = jobj_begin(j);
            while (r2 > 0) {
                char *rk;
                int64_t v = 0;
                const char *how = NULL;
                if (jobj_key(j, &rk)) return -1;
                /* a count, or what became of the rank's part: "missing", "cut" */
                if (*j->p == '"' ? jget_str(j, &how, "")
                                 : jget_int(j, &v, "a count of lost events"))
                    return -1;
                char *end;
                long rank = strtol(rk, &end, 10);
                if (how && !*end && end != rk && rank >= 0 && rank < TR_MAX_RANK) {
                    rank_get(c, rank)->part = strcmp(how, "missing") ? 2 : 1;
                    c->bad_parts++;
                }
                if (v > 0) c->lost_total += v;
                if (!*end && end != rk && rank >= 0 && rank < TR_MAX_RANK && v > 0)
                    rank_get(c, rank)->lost += v;
                r2 = jobj_next(j);
            }
            if (r2 < 0) return -1;
        } else if (jskip(j, 2)) {
            return -1;
        }
        r = jobj_next(j);
    }
    return r;
}

/* What follows the events: the rest of the top-level object. 0 ok, 1 cut short, 2 bad. */
static int parse_trailer(tr_ctx *c)
{
    if (!c->trailer) return 1;
    jp j = {c->trailer, NULL, NULL};
    for (;;) {
        char *k;
        jws(&j);
        if (*j.p == '}') {
            j.p++;
            break;
        }
        if (*j.p == ',') j.p++;
        if (jobj_key(&j, &k)) goto fail;
        if (!strcmp(k, "otherData") && *j.p == '{') {
            if (parse_other(c, &j)) goto fail;
        } else if (jskip(&j, 1)) {
            goto fail;
        }
    }
    jws(&j);
    if (!*j.p) return 0;
    jfail(&j, "text after the end of the trace");
fail:
    if (!*j.at) return 1;
    size_t off = (size_t)(j.at - c->trailer), l = 0;
    while (l < c->ntl_ends && c->tl_ends[l] < off) l++;
    size_t ls = l ? c->tl_ends[l - 1] + 1 : 0;
    long line = c->trailer_line + (long)l;
    long col = (long)(off - ls) + 1 + (l == 0 ? c->trailer_col0 : 0);
    return bad(c, line, "malformed trace: %s (column %ld)", j.err, col);
}

static int read_trace(tr_ctx *c)
{
    static const char not_trace[] = "not a courier trace (no {\"traceEvents\":[ at the start)";
    int state = 0; /* 0 before the events, 1 the events, 2 after them */
    for (;;) {
        char *line, *rest = NULL;
        size_t n;
        int nl_end = 1;
        int r = rd_line(&c->rd, &line, &n, &nl_end);
        if (r == -1) return bad(c, c->line + 1, "cannot read: %s", strerror(errno));
        if (r == -2) return bad(c, c->line + 1, "line longer than %zu bytes", TR_MAX_LINE);
        if (r == 0) break;
        c->line++;
        if (state == 2) {
            if (c->ntrailer + n > TR_MAX_TRAILER)
                return bad(c, c->line, "too much text after the events");
            trailer_add(c, line, n, nl_end);
            continue;
        }
        int nul = memchr(line, 0, n) != NULL;
        char *p = line;
        if (state == 0) {
            jp j = {line, NULL, NULL};
            char *k;
            jws(&j);
            if (!*j.p && !nul) continue;
            if (nul || *j.p != '{') return bad(c, c->line, "%s", not_trace);
            j.p++;
            jws(&j);
            if (jstr(&j, &k) || strcmp(k, "traceEvents")) return bad(c, c->line, "%s", not_trace);
            jws(&j);
            if (*j.p != ':') return bad(c, c->line, "%s", not_trace);
            j.p++;
            jws(&j);
            if (*j.p != '[') return bad(c, c->line, "%s", not_trace);
            p = j.p + 1;
            state = 1;
        }
        int er;
        if (nul) {
            snprintf(c->err, sizeof c->err, "malformed event: a NUL byte in the line");
            er = -1;
        } else {
            er = event_line(c, line, p, &rest);
        }
        if (er == -1) {
            long at = c->line;
            char *l2;
            size_t n2;
            int nl2;
            if (rd_line(&c->rd, &l2, &n2, &nl2) == 0) { /* the last line, cut: a truncated file */
                c->truncated = 1;
                c->trunc_line = at - 1;
                break;
            }
            return bad(c, at, "%s", c->err);
        }
        if (er == -2) return bad(c, c->line, "%s", c->err);
        if (er == 1) {
            state = 2;
            c->events_closed = 1;
            c->trailer_line = c->line;
            c->trailer_col0 = (long)(rest - line);
            trailer_add(c, rest, strlen(rest), nl_end);
        }
    }
    if (state == 0)
        return bad(c, c->line, "not a courier trace (%s)", c->line ? "no events" : "empty file");
    if (!c->events_closed && !c->truncated) {
        c->truncated = 1;
        c->trunc_line = c->line;
    }
    if (c->events_closed) {
        int r = parse_trailer(c);
        if (r == 2) return 2;
        if (r == 1) {
            c->truncated = 1;
            c->trunc_line = c->line;
        }
    }
    if (c->truncated && c->nev == 0)
        return bad(c, c->trunc_line + 1, "truncated before its first event");
    if (!c->truncated && !c->has_version)
        return bad(c, c->line, "not a courier trace (no otherData.courier_trace)");
    if (c->has_version && c->version != 1)
        return bad(c, c->line, "courier trace version %" PRId64 " is not supported (this reads 1)",
                   c->version);
    return 0;
}

/* ---- the report ---------------------------------------------------------------------- */

static const char *fmt_time(char *b, size_t n, double ns)
{
    double a = ns < 0 ? -ns : ns;
    if (a < 999999.5)
        snprintf(b, n, "%.3f us", ns / 1e3);
    else if (a < 999999999.5)
        snprintf(b, n, "%.3f ms", ns / 1e6);
    else
        snprintf(b, n, "%.3f s", ns / 1e9);
    return b;
}

static const char *fmt_bytes(char *b, size_t n, uint64_t v)
{
    static const char *unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (v < 1024) {
        snprintf(b, n, "%" PRIu64 " B", v);
        return b;
    }
    double x = (double)v / 1024;
    int u = 0;
    while (x >= 1023.95 && u < 5) x /= 1024, u++;
    snprintf(b, n, "%.1f %s", x, unit[u]);
    return b;
}

static double pct(double a, double b)
{
    return b > 0 ? 100.0 * a / b : 0.0;
}

/* Text from the file, with control characters shown as '?'. */
static void put_clean(const char *s, size_t max)
{
    size_t i = 0;
    for (; s[i] && i < max; i++) putchar((unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i]);
    if (s[i]) fputs("...", stdout);
}

static int64_t rank_total(const tr_rank *rk)
{
    return rk->has_run ? rk->run_e - rk->run_s : rk->last - rk->first;
}

static void report_header(tr_ctx *c, size_t R)
{
    char t1[40], t2[40], t3[40];
    printf("Trace ");
    put_clean(c->file, 4096);
    printf("\n  command  ");
    put_clean(c->command ? c->command : "(not recorded)", 400);
    printf("\n  ranks    %zu\n  clock    ", R);
    put_clean(c->clock ? c->clock : "(not recorded)", 100);
    if (c->have_span)
        printf("\n  span     %s (from %s to %s)\n",
               fmt_time(t1, sizeof t1, (double)(c->span_e - c->span_s)),
               fmt_time(t2, sizeof t2, (double)c->span_s),
               fmt_time(t3, sizeof t3, (double)c->span_e));
    else
        printf("\n  span     (no timed events)\n");
    printf("  events   %" PRIu64 " read, %" PRId64 " lost\n", c->nev, c->lost_total);
    if (c->truncated && c->events_closed)
        printf("  warning  truncated: the file ends inside otherData (the command, the clock and "
               "the lost events may be missing)\n");
    else if (c->truncated)
        printf("  warning  truncated after line %ld (the job was killed while writing?): this "
               "report covers the %" PRIu64 " events before\n",
               c->trunc_line, c->nev);
    if (c->lost_total > 0) {
        printf("  warning  events were lost (");
        int shown = 0;
        for (size_t r = 0; r < R; r++) {
            if (c->ranks[r].lost <= 0) continue;
            if (shown == 8) {
                printf(", ...");
                break;
            }
            printf("%srank %zu: %" PRId64, shown++ ? ", " : "", r, c->ranks[r].lost);
        }
        printf("): the figures below undercount\n");
    }
    if (c->bad_parts) {
        printf("  warning  ranks whose records are incomplete (");
        int shown = 0;
        for (size_t r = 0; r < R; r++) {
            if (!c->ranks[r].part) continue;
            if (shown == 8) {
                printf(", ...");
                break;
            }
            printf("%srank %zu: %s", shown++ ? ", " : "", r,
                   c->ranks[r].part == 1 ? "its part is missing"
                                         : "it died before writing its last records");
        }
        printf("): the figures below undercount\n");
    }
    if (c->nskipped)
        printf("  note     events of other kinds (\"ph\") skipped: %" PRIu64 "\n", c->nskipped);
}

static void report_ranks(tr_ctx *c, size_t R)
{
    char b[4][40];
    int64_t st = 0, sc = 0, scomm = 0, sw = 0;
    size_t nseen = 0, most = 0, norun = 0;
    printf("\nTime per rank (communication: in top-level calls; compute: the rest; waiting: "
           "blocked in calls)\n");
    printf("  %4s  %13s  %13s %6s  %13s %6s  %13s %6s\n", "rank", "total", "compute", "%",
           "communication", "%", "waiting", "%");
    for (size_t r = 0; r < R; r++) {
        tr_rank *rk = &c->ranks[r];
        if (!rk->seen) {
            printf("  %4zu  (no events)\n", r);
            continue;
        }
        int64_t total = rank_total(rk), comm = rk->comm, comp = total - comm;
        if (comp < 0) comp = 0;
        printf("  %4zu  %13s  %13s %6.1f  %13s %6.1f  %13s %6.1f%s\n", r,
               fmt_time(b[0], 40, (double)total), fmt_time(b[1], 40, (double)comp),
               pct((double)comp, (double)total), fmt_time(b[2], 40, (double)comm),
               pct((double)comm, (double)total), fmt_time(b[3], 40, (double)rk->wait),
               pct((double)rk->wait, (double)total), rk->has_run ? "" : "  *");
        if (!rk->has_run) norun++;
        if (nseen == 0 || rk->wait > c->ranks[most].wait) most = r;
        nseen++;
        st += total, sc += comp, scomm += comm, sw += rk->wait;
    }
    if (nseen == 0) return;
    double k = (double)nseen;
    printf("  %4s  %13s  %13s %6.1f  %13s %6.1f  %13s %6.1f\n", "mean",
           fmt_time(b[0], 40, (double)st / k), fmt_time(b[1], 40, (double)sc / k),
           pct((double)sc, (double)st), fmt_time(b[2], 40, (double)scomm / k),
           pct((double)scomm, (double)st), fmt_time(b[3], 40, (double)sw / k),
           pct((double)sw, (double)st));
    if (norun)
        printf("  * no \"run\" event (its part of the trace was lost): total is from its first to "
               "its last event\n");
    tr_rank *m = &c->ranks[most];
    double mean = (double)sw / k;
    if (nseen > 1 && m->wait > 0) {
        printf("  most waiting: rank %zu, %s = %.1f%% of its time, %.2fx the mean (%s)", most,
               fmt_time(b[0], 40, (double)m->wait), pct((double)m->wait, (double)rank_total(m)),
               (double)m->wait / mean, fmt_time(b[1], 40, mean));
        if ((double)m->wait >= 1.5 * mean)
            printf(": load imbalance, it waits for ranks with more work");
        putchar('\n');
    }
}

static int cmp_top(const void *x, const void *y)
{
    const tr_name *a = *(tr_name *const *)x, *b = *(tr_name *const *)y;
    if (a->top_ns != b->top_ns) return a->top_ns > b->top_ns ? -1 : 1;
    return strcmp(a->s, b->s);
}

static int cmp_nest(const void *x, const void *y)
{
    const tr_name *a = *(tr_name *const *)x, *b = *(tr_name *const *)y;
    if (a->nest_ns != b->nest_ns) return a->nest_ns > b->nest_ns ? -1 : 1;
    return strcmp(a->s, b->s);
}

static int name_width(tr_name **v, size_t n)
{
    size_t w = 4;
    for (size_t i = 0; i < n; i++)
        if (strlen(v[i]->s) > w) w = strlen(v[i]->s);
    return w > 40 ? 40 : (int)w;
}

static void put_name(const char *s, int w)
{
    size_t n = strlen(s);
    put_clean(s, (size_t)w);
    for (size_t i = n < (size_t)w ? n : (size_t)w; i < (size_t)w; i++) putchar(' ');
}

/* Sorts the names by top-level time (for the list and the timeline's colors). */
static tr_name **names_sorted(tr_ctx *c, int (*cmp)(const void *, const void *))
{
    tr_name **v = xrealloc(NULL, c->nnames * sizeof *v);
    for (size_t i = 0; i < c->nnames; i++) v[i] = &c->names[i];
    qsort(v, c->nnames, sizeof *v, cmp);
    return v;
}

static void report_calls(tr_ctx *c)
{
    char b[4][40];
    int64_t all = 0;
    size_t ntop = 0, nnest = 0;
    for (size_t i = 0; i < c->nnames; i++) {
        all += c->names[i].top_ns;
        ntop += c->names[i].top_n > 0;
        nnest += c->names[i].nest_n > 0;
    }
    printf("\nTop calls by time (top-level calls: %" PRIu64 ", %s in all ranks)\n", c->ncalls,
           fmt_time(b[0], 40, (double)all));
    if (!ntop) {
        printf("  no calls\n");
    } else {
        tr_name **v = names_sorted(c, cmp_top);
        size_t n = ntop < (size_t)c->top ? ntop : (size_t)c->top;
        int w = name_width(v, n);
        printf("  %-*s  %9s  %13s  %13s  %6s  %13s  %10s\n", w, "call", "count", "total", "mean",
               "% comm", "wait", "bytes");
        for (size_t i = 0; i < n; i++) {
            printf("  ");
            put_name(v[i]->s, w);
            printf("  %9" PRIu64 "  %13s  %13s  %6.1f  %13s  %10s\n", v[i]->top_n,
                   fmt_time(b[0], 40, (double)v[i]->top_ns),
                   fmt_time(b[1], 40, (double)v[i]->top_ns / (double)v[i]->top_n),
                   pct((double)v[i]->top_ns, (double)all),
                   fmt_time(b[2], 40, (double)v[i]->top_wait),
                   fmt_bytes(b[3], 40, v[i]->top_bytes));
        }
        if (ntop > n) printf("  (calls not shown: %zu; --top N shows more)\n", ntop - n);
        free(v);
    }
    if (!nnest) return;
    tr_name **v = names_sorted(c, cmp_nest);
    size_t n = nnest < (size_t)c->top ? nnest : (size_t)c->top;
    int w = name_width(v, n);
    printf("\nNested calls (%" PRIu64 " made inside another call of the same rank and thread; "
           "not counted above)\n",
           c->nnested);
    printf("  %-*s  %9s  %13s\n", w, "call", "count", "total");
    for (size_t i = 0; i < n; i++) {
        printf("  ");
        put_name(v[i]->s, w);
        printf("  %9" PRIu64 "  %13s\n", v[i]->nest_n, fmt_time(b[0], 40, (double)v[i]->nest_ns));
    }
    if (nnest > n) printf("  (calls not shown: %zu)\n", nnest - n);
    free(v);
}

static void report_sizes(tr_ctx *c)
{
    char b[3][64];
    printf("\nMessage sizes (engine messages sent: %" PRIu64 ", %s)\n", c->nsent,
           fmt_bytes(b[0], 64, c->sent_bytes));
    if (!c->nsent) {
        printf("  no messages\n");
        return;
    }
    int lo = 0, hi = TR_NBINS - 1;
    uint64_t max = 0;
    while (!c->hist_n[lo]) lo++;
    while (!c->hist_n[hi]) hi--;
    for (int k = lo; k <= hi; k++)
        if (c->hist_n[k] > max) max = c->hist_n[k];
    printf("  %-24s  %10s  %6s  %10s  %6s\n", "bytes", "messages", "%", "bytes", "%");
    for (int k = lo; k <= hi; k++) {
        if (k == 0)
            snprintf(b[0], 64, "0");
        else if (k == 1)
            snprintf(b[0], 64, "1 - 4");
        else if (k == TR_NBINS - 1)
            snprintf(b[0], 64, "%" PRIu64 " -", ((uint64_t)1 << 62) + 1);
        else
            snprintf(b[0], 64, "%" PRIu64 " - %" PRIu64, ((uint64_t)1 << (2 * k - 2)) + 1,
                     (uint64_t)1 << (2 * k));
        printf("  %-24s  %10" PRIu64 "  %6.1f  %10s  %6.1f", b[0], c->hist_n[k],
               pct((double)c->hist_n[k], (double)c->nsent), fmt_bytes(b[1], 64, c->hist_b[k]),
               pct((double)c->hist_b[k], (double)c->sent_bytes));
        uint64_t bar = c->hist_n[k] ? (c->hist_n[k] * 30 + max - 1) / max : 0;
        if (bar) fputs("  ", stdout);
        for (uint64_t i = 0; i < bar; i++) putchar('#');
        putchar('\n');
    }
}

static int cmp_pair_bytes(const void *x, const void *y)
{
    const tr_pair *a = *(tr_pair *const *)x, *b = *(tr_pair *const *)y;
    if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
    if (a->msgs != b->msgs) return a->msgs > b->msgs ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

static int cmp_pair_ls(const void *x, const void *y)
{
    const tr_pair *a = *(tr_pair *const *)x, *b = *(tr_pair *const *)y;
    if (a->ls_ns != b->ls_ns) return a->ls_ns > b->ls_ns ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

static int cmp_pair_lr(const void *x, const void *y)
{
    const tr_pair *a = *(tr_pair *const *)x, *b = *(tr_pair *const *)y;
    if (a->lr_ns != b->lr_ns) return a->lr_ns > b->lr_ns ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* The pairs that pass keep, sorted by cmp; *n their number. */
static tr_pair **pairs_sorted(tr_ctx *c, int (*keep)(const tr_pair *),
                              int (*cmp)(const void *, const void *), size_t *n)
{
    tr_pair **v = xrealloc(NULL, (c->npairs ? c->npairs : 1) * sizeof *v);
    *n = 0;
    for (size_t i = 0; i < c->cappairs; i++)
        if (c->pairs[i].used && keep(&c->pairs[i])) v[(*n)++] = &c->pairs[i];
    qsort(v, *n, sizeof *v, cmp);
    return v;
}

static int has_msgs(const tr_pair *p)
{
    return p->msgs > 0;
}

static int has_ls(const tr_pair *p)
{
    return p->ls_n > 0;
}

static int has_lr(const tr_pair *p)
{
    return p->lr_n > 0;
}

static const tr_pair *pair_peek(tr_ctx *c, uint64_t from, uint64_t to)
{
    if (!c->cappairs) return NULL;
    uint64_t key = from << 32 | to;
    for (size_t k = mix64(key) & (c->cappairs - 1); c->pairs[k].used;
         k = (k + 1) & (c->cappairs - 1))
        if (c->pairs[k].key == key) return &c->pairs[k];
    return NULL;
}

static void report_matrix(tr_ctx *c, size_t R)
{
    char b[40];
    size_t n;
    tr_pair **v = pairs_sorted(c, has_msgs, cmp_pair_bytes, &n);
    printf("\nCommunication matrix (engine messages from rank to rank)\n");
    if (c->nbad_to)
        printf("  messages without a destination (\"to\"), not in it: %" PRIu64 "\n", c->nbad_to);
    if (!n) {
        printf("  no messages\n");
    } else if (R <= TR_MATRIX_MAX) {
        for (int pass = 0; pass < 2; pass++) {
            int w = 4;
            for (size_t i = 0; i < n; i++) {
                int l = pass ? (int)strlen(fmt_bytes(b, 40, v[i]->bytes))
                             : snprintf(b, 40, "%" PRIu64, v[i]->msgs);
                if (l > w) w = l;
            }
            printf("  %s: from (row) to (column)\n  %7s", pass ? "bytes" : "messages", "from\\to");
            for (size_t t = 0; t < R; t++) printf("  %*zu", w, t);
            putchar('\n');
            for (size_t f = 0; f < R; f++) {
                printf("  %7zu", f);
                for (size_t t = 0; t < R; t++) {
                    const tr_pair *p = pair_peek(c, f, t);
                    if (!p || !p->msgs)
                        printf("  %*s", w, ".");
                    else if (pass)
                        printf("  %*s", w, fmt_bytes(b, 40, p->bytes));
                    else
                        printf("  %*" PRIu64, w, p->msgs);
                }
                putchar('\n');
            }
        }
    } else {
        size_t k = n < TR_MATRIX_PAIRS ? n : TR_MATRIX_PAIRS;
        printf("  the %zu pairs with the most bytes, of %zu\n", k, n);
        printf("  %8s    %-8s  %10s  %10s\n", "from", "to", "messages", "bytes");
        for (size_t i = 0; i < k; i++)
            printf("  %8" PRIu64 " -> %-8" PRIu64 "  %10" PRIu64 "  %10s\n", v[i]->key >> 32,
                   v[i]->key & 0xffffffffu, v[i]->msgs, fmt_bytes(b, 40, v[i]->bytes));
    }
    free(v);
}

/* One of the two late tables: per rank (waited, caused) and the top pairs. */
static void report_late(tr_ctx *c, size_t R, int recv)
{
    char b[3][40];
    uint64_t total_n = recv ? c->lr_n : c->ls_n;
    int64_t total = recv ? c->lr_ns : c->ls_ns;
    if (!recv)
        printf("\nLate senders (a receive was posted before its message was sent: the receiver "
               "waited)\n");
    else
        printf("\nLate receivers (a rendezvous or synchronous message was sent before its "
               "receive was posted: the sender waited)\n");
    if (!total_n) {
        printf("  none\n");
        return;
    }
    printf("  %" PRIu64 " messages, %s in all\n", total_n, fmt_time(b[0], 40, (double)total));
    size_t rows = 0;
    for (size_t r = 0; r < R; r++) {
        tr_rank *rk = &c->ranks[r];
        rows += (recv ? rk->lr_waited || rk->lr_caused : rk->ls_waited || rk->ls_caused) != 0;
    }
    size_t *order = xrealloc(NULL, (rows ? rows : 1) * sizeof *order), k = 0;
    for (size_t r = 0; r < R; r++) {
        tr_rank *rk = &c->ranks[r];
        if (recv ? rk->lr_waited || rk->lr_caused : rk->ls_waited || rk->ls_caused) order[k++] = r;
    }
    size_t shown = rows;
    if (rows > TR_MATRIX_MAX) { /* the ranks that waited most, in rank order within ties */
        for (size_t i = 1; i < rows; i++) {
            size_t x = order[i], j = i;
            int64_t wx = recv ? c->ranks[x].lr_waited : c->ranks[x].ls_waited;
            while (j > 0) {
                int64_t wp =
                    recv ? c->ranks[order[j - 1]].lr_waited : c->ranks[order[j - 1]].ls_waited;
                if (wp >= wx) break;
                order[j] = order[j - 1];
                j--;
            }
            order[j] = x;
        }
        shown = (size_t)c->top < rows ? (size_t)c->top : rows;
        printf("  the %zu ranks that waited most, of %zu\n", shown, rows);
    }
    printf("  %4s  %24s  %24s\n", "rank", recv ? "waited for receivers" : "waited for senders",
           recv ? "kept senders waiting" : "kept receivers waiting");
    for (size_t i = 0; i < shown; i++) {
        tr_rank *rk = &c->ranks[order[i]];
        printf("  %4zu  %24s  %24s\n", order[i],
               fmt_time(b[0], 40, (double)(recv ? rk->lr_waited : rk->ls_waited)),
               fmt_time(b[1], 40, (double)(recv ? rk->lr_caused : rk->ls_caused)));
    }
    free(order);
    size_t n;
    tr_pair **v = pairs_sorted(c, recv ? has_lr : has_ls, recv ? cmp_pair_lr : cmp_pair_ls, &n);
    size_t m = n < (size_t)c->top ? n : (size_t)c->top;
    printf("  %8s    %-8s  %10s  %13s\n", "sender", "receiver", "messages", "wait");
    for (size_t i = 0; i < m; i++)
        printf("  %8" PRIu64 " -> %-8" PRIu64 "  %10" PRIu64 "  %13s\n", v[i]->key >> 32,
               v[i]->key & 0xffffffffu, recv ? v[i]->lr_n : v[i]->ls_n,
               fmt_time(b[0], 40, (double)(recv ? v[i]->lr_ns : v[i]->ls_ns)));
    if (n > m) printf("  (pairs not shown: %zu)\n", n - m);
    free(v);
}

static int cmp_hang(const void *x, const void *y)
{
    const tr_hang *a = x, *b = y;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    return strcmp(a->text, b->text);
}

static void report_flows(tr_ctx *c)
{
    uint64_t s_open = 0, f_open = 0;
    for (size_t i = 0; i < c->capflows; i++) {
        if (!c->flows[i].used) continue;
        if (c->flows[i].kind == 's')
            s_open++;
        else
            f_open++;
    }
    printf("\nMatching by message id: %" PRIu64 " sent, %" PRIu64 " received, %" PRIu64
           " matched; unmatched: %" PRIu64 " sent, %" PRIu64 " received\n",
           c->nsent, c->nrecv, c->nmatched, s_open, f_open + c->nf_nofrom);
    if (c->ndup) printf("  message ids seen twice (the later one counts): %" PRIu64 "\n", c->ndup);
}

static void report_hangs(tr_ctx *c)
{
    char b[40];
    if (!c->nhangs) return;
    qsort(c->hangs, c->nhangs, sizeof *c->hangs, cmp_hang);
    printf("\nHang reports (the launcher's watchdog found the job hung)\n");
    for (size_t i = 0; i < c->nhangs; i++) {
        printf("  rank %" PRId64 " at %s: ", c->hangs[i].rank,
               fmt_time(b, 40, (double)c->hangs[i].ts));
        put_clean(c->hangs[i].text, 2000);
        putchar('\n');
    }
    if (c->hangs_dropped) printf("  (reports not shown: %" PRIu64 ")\n", c->hangs_dropped);
}

/* ---- plots --------------------------------------------------------------------------- */

static char *path_join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = xrealloc(NULL, a + b + 2);
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

/* mkdir -p */
static int make_dir(const char *dir)
{
    char *p = xstrdup(dir);
    int rc = 0;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s) continue;
        char ch = *s;
        *s = 0;
        if (mkdir(p, 0777) && errno != EEXIST) rc = -1;
        *s = ch;
        if (!ch || rc) break;
    }
    struct stat st;
    if (!rc && (stat(p, &st) || !S_ISDIR(st.st_mode))) rc = -1, errno = ENOTDIR;
    free(p);
    return rc;
}

static FILE *open_in(tr_ctx *c, const char *name)
{
    char *p = path_join(c->plot, name);
    FILE *f = fopen(p, "w");
    if (!f) fprintf(stderr, "courier trace: cannot write %s: %s\n", p, strerror(errno));
    free(p);
    return f;
}

static int close_in(tr_ctx *c, FILE *f, const char *name)
{
    int bad_w = ferror(f);
    if (fclose(f) || bad_w) {
        fprintf(stderr, "courier trace: cannot write %s/%s\n", c->plot, name);
        return -1;
    }
    return 0;
}

static const char gp_term[] = "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
                              "    set terminal pngcairo size %d,%d noenhanced font ',10'\n"
                              "} else {\n"
                              "    set terminal png size %d,%d noenhanced\n"
                              "}\n";

/* Call names on the plots: from the file, so only harmless characters. */
static void gp_name(FILE *f, const char *s)
{
    for (size_t i = 0; s[i] && i < 40; i++) {
        char ch = s[i];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || isdig(ch) ||
                 strchr("_-.:+/()[] ,", ch);
        fputc(ok ? ch : '_', f);
    }
}

/* Writes the data and scripts; 0, or -1 (message printed). */
static int plot_write(tr_ctx *c, size_t R)
{
    static const unsigned colors[TR_NCOLORS] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728,
                                                0x9467bd, 0x8c564b, 0xe377c2, 0x17becf,
                                                0xbcbd22, 0x7f7f7f, 0x393b79};
    double span = c->have_span ? (double)(c->span_e - c->span_s) : 0;
    const char *unit = span < 1e7 ? "us" : span < 1e10 ? "ms" : "s";
    double div = span < 1e7 ? 1 : span < 1e10 ? 1e3 : 1e6; /* from us */
    int h = 160 + (int)(R < 40 ? R : 40) * 30;
    FILE *f;
    int rc = 0;

    /* ranks.dat: rank, life start, life end (us); balance.dat: rank, compute, communication
     * not waiting, waiting (in the unit of the timeline) */
    if (!(f = open_in(c, "ranks.dat"))) return -1;
    fprintf(f, "# rank start_us end_us\n");
    for (size_t r = 0; r < R; r++) {
        tr_rank *rk = &c->ranks[r];
        if (!rk->seen) continue;
        int64_t s = rk->has_run ? rk->run_s : rk->first, e = rk->has_run ? rk->run_e : rk->last;
        fprintf(f, "%zu %.3f %.3f\n", r, (double)s / 1e3, (double)e / 1e3);
    }
    rc |= close_in(c, f, "ranks.dat");
    if (!(f = open_in(c, "balance.dat"))) return -1;
    fprintf(f, "# rank compute communication_not_waiting waiting (%s)\n", unit);
    for (size_t r = 0; r < R; r++) {
        tr_rank *rk = &c->ranks[r];
        int64_t total = rk->seen ? rank_total(rk) : 0, comp = total - rk->comm;
        int64_t busy = rk->comm - rk->wait;
        fprintf(f, "%zu %.6f %.6f %.6f\n", r, (double)(comp > 0 ? comp : 0) / 1e3 / div,
                (double)(busy > 0 ? busy : 0) / 1e3 / div, (double)rk->wait / 1e3 / div);
    }
    rc |= close_in(c, f, "balance.dat");
    if (!(f = open_in(c, "matrix.dat"))) return -1;
    fprintf(f, "# from to bytes messages\n");
    uint64_t maxb = 0;
    for (size_t i = 0; i < c->cappairs; i++) {
        tr_pair *p = &c->pairs[i];
        if (!p->used || !p->msgs) continue;
        fprintf(f, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", p->key >> 32,
                p->key & 0xffffffffu, p->bytes, p->msgs);
        if (p->bytes > maxb) maxb = p->bytes;
    }
    rc |= close_in(c, f, "matrix.dat");
    if (rc) return -1;

    /* timeline.gp: timeline.dat is rank, tid, start, end (us), call name index */
    if (!(f = open_in(c, "timeline.gp"))) return -1;
    fprintf(f, gp_term, 1400, h, 1400, h);
    fprintf(f,
            "set output 'timeline.png'\nset title 'top-level calls over time (blank: "
            "compute)'\nset xlabel 'time (%s)'\nset ylabel 'rank'\n",
            unit);
    fprintf(f, "set yrange [%f:-0.6]\nset xrange [%f:%f]\n", (double)R - 0.4,
            c->have_span ? (double)c->span_s / 1e3 / div : 0.0,
            c->have_span && span > 0 ? (double)c->span_e / 1e3 / div : 1.0);
    if (R <= 40) fprintf(f, "set ytics 1\n");
    fprintf(f, "set key outside right top\nset style fill solid 1.0 noborder\n");
    tr_name **v = names_sorted(c, cmp_top);
    /* the TR_NCOLORS calls with the most time get a color each, the others gray */
    size_t *colored = xrealloc(NULL, TR_NCOLORS * sizeof *colored), ncol = 0, other = 0;
    for (size_t i = 0; i < c->nnames; i++) {
        if (!v[i]->top_n) continue;
        if (ncol < TR_NCOLORS)
            colored[ncol++] = i;
        else
            other = 1;
    }
    fprintf(f, "c(i) = ");
    for (size_t i = 0; i < ncol; i++)
        fprintf(f, "i == %ld ? %u : ", (long)(v[colored[i]] - c->names), colors[i]);
    fprintf(f, "0xbbbbbb\n");
    if (!c->ncalls) fprintf(f, "set label 1 'no calls' at graph 0.5, graph 0.5 center\n");
    fprintf(f,
            "plot 'ranks.dat' using (($2+$3)/2/%g):1:(($3-$2)/2/%g):(0.03) with boxxyerror "
            "lc rgb '#999999' notitle",
            div, div);
    if (c->ncalls)
        fprintf(f,
                ", \\\n     'timeline.dat' using (($3+$4)/2/%g):($1 + ($2 > 0 ? 0.22 : 0)):"
                "(($4-$3)/2/%g):($2 > 0 ? 0.12 : 0.35):(c($5)) with boxxyerror lc rgb variable "
                "notitle",
                div, div);
    for (size_t i = 0; i < ncol; i++) {
        fprintf(f, ", \\\n     NaN with boxes lc rgb '#%06x' title '", colors[i]);
        gp_name(f, v[colored[i]]->s);
        fprintf(f, "'");
    }
    if (other) fprintf(f, ", \\\n     NaN with boxes lc rgb '#bbbbbb' title 'other calls'");
    free(colored);
    fprintf(f, "\n");
    free(v);
    rc |= close_in(c, f, "timeline.gp");

    if (!(f = open_in(c, "matrix.gp"))) return -1;
    int side = R <= 16 ? 700 : R <= 64 ? 900 : 1100;
    fprintf(f, gp_term, side + 150, side, side + 150, side);
    fprintf(f, "set output 'matrix.png'\nset title 'bytes sent from rank (row) to rank "
               "(column)'\nset xlabel 'to rank'\nset ylabel 'from rank'\nset size ratio -1\n");
    fprintf(f, "set xrange [-0.5:%f]\nset yrange [%f:-0.5]\n", (double)R - 0.5, (double)R - 0.5);
    if (R <= 32) fprintf(f, "set xtics 1\nset ytics 1\n");
    fprintf(f, "set palette defined (0 '#fff5b0', 1 '#fd8d3c', 2 '#bd0026', 3 '#4d0013')\n");
    fprintf(f,
            "set cbrange [0:%" PRIu64 "]\nset cblabel 'bytes'\nset style fill solid 1.0 "
            "noborder\n",
            maxb ? maxb : 1);
    if (maxb)
        fprintf(f, "plot 'matrix.dat' using 2:1:(0.5):(0.5):3 with boxxyerror lc palette "
                   "notitle\n");
    else
        fprintf(f, "set label 1 'no messages' at graph 0.5, graph 0.5 center\nplot NaN notitle\n");
    rc |= close_in(c, f, "matrix.gp");

    if (!(f = open_in(c, "balance.gp"))) return -1;
    int wid = 300 + (int)(R < 64 ? R : 64) * 30;
    fprintf(f, gp_term, wid < 700 ? 700 : wid, 500, wid < 700 ? 700 : wid, 500);
    fprintf(f,
            "set output 'balance.png'\nset title 'time per rank'\nset xlabel 'rank'\n"
            "set ylabel 'time (%s)'\nset yrange [0:*]\nset key outside right top\n"
            "set style data histograms\nset style histogram rowstacked\n"
            "set style fill solid 1.0 border -1\nset boxwidth 0.8\n",
            unit);
    size_t every = R <= 32 ? 1 : (R + 31) / 32;
    fprintf(f,
            "plot 'balance.dat' using 2:xtic(int($1) %% %zu == 0 ? stringcolumn(1) : '') "
            "title 'compute' lc rgb '#9ecae1', \\\n"
            "     '' using 3 title 'communication' lc rgb '#3182bd', \\\n"
            "     '' using 4 title 'waiting' lc rgb '#e6550d'\n",
            every);
    rc |= close_in(c, f, "balance.gp");
    return rc ? -1 : 0;
}

/* Runs gnuplot on one script in DIR: 0 ok, 1 it failed (message printed), 3 no gnuplot.
 * No shell: the script's name is fixed and gnuplot runs in DIR. */
static int gnuplot_run(tr_ctx *c, const char *script)
{
    int pfd[2], msg[2] = {0, 0};
    if (pipe(pfd)) {
        fprintf(stderr, "courier trace: pipe: %s\n", strerror(errno));
        return 1;
    }
    fcntl(pfd[1], F_SETFD, FD_CLOEXEC);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "courier trace: fork: %s\n", strerror(errno));
        close(pfd[0]);
        close(pfd[1]);
        return 1;
    }
    if (pid == 0) {
        char *av[] = {"gnuplot", (char *)script, NULL};
        close(pfd[0]);
        if (chdir(c->plot)) {
            msg[0] = 1, msg[1] = errno;
        } else {
            int fd = open("/dev/null", O_RDONLY);
            if (fd > 0) dup2(fd, 0), close(fd);
            execvp("gnuplot", av);
            msg[0] = 2, msg[1] = errno;
        }
        ssize_t wr = write(pfd[1], msg, sizeof msg);
        (void)wr;
        _exit(127);
    }
    close(pfd[1]);
    ssize_t n;
    do n = read(pfd[0], msg, sizeof msg);
    while (n < 0 && errno == EINTR);
    close(pfd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (n == (ssize_t)sizeof msg) {
        if (msg[0] == 2 && msg[1] == ENOENT) return 3;
        fprintf(stderr, "courier trace: cannot run gnuplot in %s: %s\n", c->plot, strerror(msg[1]));
        return 1;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st)) {
        fprintf(stderr, "courier trace: gnuplot failed on %s/%s\n", c->plot, script);
        return 1;
    }
    return 0;
}

static int plot_run(tr_ctx *c, size_t R)
{
    static const char *const what[3] = {"timeline", "matrix", "balance"};
    if (plot_write(c, R)) return 1;
    for (int i = 0; i < 3; i++) {
        char gp[32], png[32];
        snprintf(gp, sizeof gp, "%s.gp", what[i]);
        snprintf(png, sizeof png, "%s.png", what[i]);
        int rc = gnuplot_run(c, gp);
        if (rc == 3) {
            fprintf(stderr,
                    "courier trace: --plot needs gnuplot (apt-get install gnuplot-nox); its data "
                    "and scripts are in %s\n",
                    c->plot);
            return 3;
        }
        if (rc) return rc;
        char *p = path_join(c->plot, png);
        struct stat st;
        int ok = !stat(p, &st) && S_ISREG(st.st_mode) && st.st_size > 0;
        if (!ok) fprintf(stderr, "courier trace: gnuplot wrote no %s\n", p);
        free(p);
        if (!ok) return 1;
    }
    return 0;
}

/* ---- main ---------------------------------------------------------------------------- */

static void ctx_free(tr_ctx *c)
{
    for (size_t i = 0; i < c->nnames; i++) free(c->names[i].s);
    for (size_t i = 0; i < c->capranks; i++) free(c->ranks[i].pend);
    for (size_t i = 0; i < c->nhangs; i++) free(c->hangs[i].text);
    free(c->names);
    free(c->nidx);
    free(c->ranks);
    free(c->pairs);
    free(c->flows);
    free(c->hangs);
    free(c->command);
    free(c->clock);
    free(c->trailer);
    free(c->tl_ends);
    free(c->rd.buf);
}

static int parse_opts(tr_ctx *c, int argc, char **argv)
{
    c->top = 10;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(tr_usage, stdout);
            return 1;
        }
        if (!strcmp(a, "--plot") || !strncmp(a, "--plot=", 7)) {
            const char *v = a[6] ? a + 7 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v || !*v) return fprintf(stderr, "courier trace: --plot needs a directory\n"), 2;
            c->plot = v;
        } else if (!strcmp(a, "--top") || !strncmp(a, "--top=", 6)) {
            const char *v = a[5] ? a + 6 : (i + 1 < argc ? argv[++i] : NULL);
            char *end;
            long n = v ? strtol(v, &end, 10) : 0;
            if (!v || !*v || *end || n < 1 || n > 1000000)
                return fprintf(stderr, "courier trace: --top needs a number from 1 to 1000000\n"),
                       2;
            c->top = (int)n;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "courier trace: unknown option '%s'\n%s", a, tr_usage);
            return 2;
        } else if (c->file) {
            fprintf(stderr, "courier trace: one trace file only ('%s' and '%s')\n", c->file, a);
            return 2;
        } else {
            c->file = a;
        }
    }
    if (!c->file) {
        fprintf(stderr, "courier trace: which trace file?\n%s", tr_usage);
        return 2;
    }
    return 0;
}

/* courier trace DIR, DIR the ranks' parts (rank-R files) that a launcher killed by SIGKILL
 * left unmerged: merge them as the launcher would have into a temporary file, say so, and
 * read that. NULL after saying why not. */
static FILE *open_parts(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return NULL;
    int nranks = 0, r;
    char end;
    for (struct dirent *e; (e = readdir(d));)
        if (sscanf(e->d_name, "rank-%d%c", &r, &end) == 1 && r >= 0 && r < (1 << 24) &&
            r + 1 > nranks)
            nranks = r + 1;
    closedir(d);
    if (!nranks) {
        fprintf(stderr,
                "courier trace: %s is a directory without ranks' parts (rank-N files): give the "
                "trace file courier run --trace wrote, or its FILE.parts.PID directory\n",
                dir);
        return NULL;
    }
    char tmp[] = "/tmp/courier-trace-XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0) {
        fprintf(stderr, "courier trace: cannot make a temporary file: %s\n", strerror(errno));
        return NULL;
    }
    close(fd);
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "(unknown: merged by courier trace from %s)", dir);
    cr_trace_job tj = {.dir = dir, .out = tmp, .nranks = nranks, .command = cmd};
    int events = cr_trace_merge(&tj, stderr);
    FILE *f = events >= 0 ? fopen(tmp, "r") : NULL;
    unlink(tmp);
    if (f)
        fprintf(stderr,
                "courier trace: %s is a parts directory that its launcher did not merge: merged "
                "%d ranks' parts, %d events (the clock is taken as real time)\n",
                dir, nranks, events);
    return f;
}

int cr_trace_main(int argc, char **argv)
{
    tr_ctx c;
    memset(&c, 0, sizeof c);
    int rc = parse_opts(&c, argc, argv);
    if (rc) return rc == 1 ? 0 : rc;
    struct stat st;
    if (strcmp(c.file, "-") && stat(c.file, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (!(c.rd.f = open_parts(c.file))) return 2;
    } else {
        c.rd.f = strcmp(c.file, "-") ? fopen(c.file, "r") : stdin;
    }
    if (!c.rd.f) {
        fprintf(stderr, "courier trace: %s: cannot open: %s\n", c.file, strerror(errno));
        return 2;
    }
    c.rd.cap = (size_t)1 << 20;
    c.rd.buf = xrealloc(NULL, c.rd.cap + 1);
    if (c.plot) {
        if (make_dir(c.plot)) {
            fprintf(stderr, "courier trace: cannot make the directory %s: %s\n", c.plot,
                    strerror(errno));
            rc = 2;
            goto out;
        }
        if (!(c.tl = open_in(&c, "timeline.dat"))) {
            rc = 1;
            goto out;
        }
        fprintf(c.tl, "# rank tid start_us end_us call (index; timeline.gp names the colors)\n");
    }
    rc = read_trace(&c);
    if (rc) goto out;
    if (c.has_other && c.od_ranks > 0) rank_get(&c, c.od_ranks - 1);
    size_t R = c.nranks;
    for (size_t r = 0; r < R; r++) {
        tr_rank *rk = &c.ranks[r];
        pend_finalize(&c, rk, (int64_t)r, rk->npend);
        if (rk->has_cur) rk->comm += rk->cur_e - rk->cur_s, rk->has_cur = 0;
    }
    if (c.tl) {
        FILE *tl = c.tl;
        c.tl = NULL;
        if (close_in(&c, tl, "timeline.dat")) {
            rc = 1;
            goto out;
        }
    }
    if (c.truncated && c.events_closed)
        fprintf(stderr,
                "courier trace: warning: %s is truncated (in otherData); the report covers "
                "what was read\n",
                c.file);
    else if (c.truncated)
        fprintf(stderr,
                "courier trace: warning: %s is truncated (after line %ld); the report "
                "covers what was read\n",
                c.file, c.trunc_line);
    report_header(&c, R);
    report_ranks(&c, R);
    report_calls(&c);
    report_sizes(&c);
    report_matrix(&c, R);
    report_flows(&c);
    report_late(&c, R, 0);
    report_late(&c, R, 1);
    report_hangs(&c);
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "courier trace: cannot write the report: %s\n", strerror(errno));
        rc = 1;
        goto out;
    }
    if (c.plot) rc = plot_run(&c, R);
out:
    if (c.tl) fclose(c.tl);
    if (c.rd.f != stdin) fclose(c.rd.f);
    ctx_free(&c);
    return rc;
}
