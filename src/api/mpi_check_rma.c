/* courier run --check=rma (docs/check.md): conflicting one-sided accesses to
 * the same target bytes within one epoch.
 *
 * Each origin records what every put, get and accumulate touches at its
 * target (one record per contiguous run of the target datatype: the bytes, the
 * call, the operation, the origin's flushes to that target so far). Where the
 * target takes part in closing the epoch, it judges the epoch's records there:
 * at MPI_Win_fence every member sends every other its records for it before
 * the fence's barrier; at MPI_Win_complete an origin sends its records to each
 * target of its access group, which takes them in MPI_Win_wait. Passive-target
 * epochs (lock, lock_all) have no such point: their records carry the
 * target's logical clock at the lock and at the unlock (a counter in the
 * target's control block, ctl_chk, that every lock and unlock of a checked
 * window advances), and are judged at MPI_Win_free, where two of them from
 * different origins overlapped in time when their clock intervals meet. Two
 * that did not, both under shared locks, conflict too when the later one's
 * origin made no synchronisation (a message received, a collective through
 * shared memory, MPI_Win_sync, an atomic read: syncs()) between the target's
 * clock value where it last saw one (q: its first access or lock after it)
 * and its access, while the earlier one completed after q.
 *
 * Two records conflict when their bytes overlap and they are not both reads
 * (MPI_Get, MPI_Get_accumulate with MPI_NO_OP), not both accumulates with the
 * same operation or MPI_NO_OP (the window's default accumulate_ops,
 * same_op_no_op) on the same predefined datatype at the same alignment (only
 * those are atomic with each other, MPI-4.1 section 12.7.1), and not ordered: one origin's accesses
 * are ordered by a flush between them, and its accumulates among themselves (the default
 * accumulate_ordering). Besides: a put's origin buffer (contiguous, not a
 * request form) must not change until the epoch closes or a flush completes
 * it (a checksum at the put and at the close); a get's (contiguous, not a
 * request form), which the checked get completes at once, must hold what the
 * get brought until then, and no other transfer's origin buffer may overlap
 * it meanwhile; and at a fence or
 * MPI_Win_wait the target's own bytes that a put alone wrote must hold what
 * it put (a checksum of the put's data against the window's memory there): a
 * difference is a local store to them in the same epoch. A store made before
 * the put's data arrived, which the put then overwrote, and a store into bytes
 * a get read, are seen against a copy of the window's memory (up to SNAP_MAX
 * bytes) taken when the fence or MPI_Win_post opened the epoch: at the close,
 * a get's bytes that it alone touched must still hold what the copy holds,
 * and a put's bytes must have held it just before the put (the origin reads
 * them first, in its call). In passive target
 * the origin reads such a put's bytes back when a flush or unlock completes
 * it and marks a difference for the target to report at MPI_Win_free, unless
 * the target called MPI_Win_sync since the put (counted in its clock word's
 * high bits: it may have seen the put and stored after it). A target that
 * locks itself (MPI_Win_lock on itself, MPI_Win_lock_all) copies its window
 * memory (up to SNAP_MAX bytes) and, at its unlock, makes a record of each
 * unit that changed meanwhile, its own store, judged at MPI_Win_free as an
 * access of its own, unless it synchronised in that epoch or a put's data
 * (or any write it cannot tell from a store) explains the change.
 *
 * Invariants: the state is the window's (w->chk, NULL while the check is off;
 * the transfers' fast paths then step aside for the full path, which records);
 * a conflict is seen, and reported in one block, by its target alone, which
 * then ends with MPI_CHECK_EXIT; the check never reports two accesses that MPI allows, and may
 * miss a conflict (docs/check.md: what it cannot see). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"
#include "mpi_win.h"

/* One access at a target (sent between members as it is). */
typedef struct rma_rec {
    uint64_t lo, hi;        /* bytes from the target's window base (dynamic: its addresses) */
    uint64_t t0, t1;        /* passive: the target's clock at the lock and the unlock */
    uint64_t dsum;          /* a put's data, checksum (0: not kept) */
    uint64_t psum;          /* active put: its bytes just before it, checksum (0: not read) */
    uint64_t q;             /* passive: the target's clock since when the origin made no
                             * synchronisation before this access */
    int32_t origin, target; /* window members */
    int32_t op;             /* accumulates: MPI_Op */
    int32_t base;           /* accumulates: the predefined datatype of its elements (its
                             * index, mpi_type.base; -1: none) */
    uint32_t esz;           /* and their size (0: no accumulate) */
    uint8_t call, rd, acc;  /* the call (calls[]); a read only; an accumulate */
    uint8_t changed;        /* passive put: its bytes differed from its data when it completed */
    uint8_t excl;           /* passive: under an exclusive lock */
    uint8_t store;          /* passive: the target's own store (self_close), not a call */
    uint8_t pad[2];
} rma_rec;

/* A put's or a get's origin buffer, compared when its epoch closes (a put's:
 * with what it held at the put; a get's: with what the get brought). */
typedef struct rma_buf {
    const void *p;
    size_t len;
    uint64_t sum, lo;
    int target;
    uint8_t call, get;
} rma_buf;

typedef struct rvec {
    rma_rec *r;
    size_t n, cap;
} rvec;

struct mpi_rmachk {
    int idx;       /* the window handle's index */
    rvec act;      /* this active-target epoch's accesses (fence, start) */
    rvec pas;      /* passive-target accesses, judged at MPI_Win_free */
    bool pas_full; /* more than PAS_MAX: the rest not recorded */
    rma_buf *b;    /* put origin buffers of open epochs */
    size_t nb, capb;
    size_t nget;    /* of them, gets' (a put's buffer is checked against those alone) */
    size_t *from;   /* per target: the first record in pas not yet completed by a flush */
    uint64_t *qt;   /* per target: its clock at this rank's first access since its last
                     * synchronisation (0: none since the window was made) */
    uint64_t *qs;   /* per target: this rank's synchronisations counted then */
    uint64_t own;   /* this rank's MPI_Win_sync calls and atomic reads on the window */
    char *snap;     /* the window's memory when its fence or exposure epoch opened */
    size_t snaplen; /* 0: none (passive, too large, dynamic) */
    char *self;     /* this rank's window memory when it locked itself (self_open) */
    size_t selflen; /* 0: no such epoch open (or too large, dynamic) */
    uint64_t self_t0, self_q, self_s; /* its clock then, its q (rma_rec), its syncs() */
    bool self_excl;
    cr_req **sreq; /* MPI_Win_complete's sends, reaped later */
    void **sbuf;
    int ns, caps;
};

#define PAS_MAX (1u << 18) /* passive records kept per window */
#define SCAN_MAX 256       /* overlapping records compared with one */
/* The target's clock word: its MPI_Win_sync calls count from this bit up,
 * every lock, access and completion below it. */
#define SYNC_SHIFT 40
#define READBACK_RECS 64      /* passive puts read back at one completion, at most */
#define READBACK_BYTES 65536u /* the longest run read back */
#define SNAP_MAX 65536u       /* the largest window memory copied when an epoch opens */
#define LOCK_LOOK 64          /* MPI_Win_lock_all: the most targets whose clock it reads */
#define PREREAD_RUNS 64       /* active puts' runs read before they land, at most per call */
#define SELF_RECS 256         /* a target's changed units recorded at its unlock of itself */
#define SELF_BLOCK                                                                                 \
    4096u /* bytes of them compared in one memcmp first (disp_unit 1:                              \
           * one call a byte made a self-lock of 64 KiB cost 0.7 ms) */

enum { EP_FENCE, EP_PSCW, EP_FREE };

static const char *const calls[] = {
    "MPI_Put",
    "MPI_Get",
    "MPI_Rput",
    "MPI_Rget",
    "MPI_Accumulate",
    "MPI_Raccumulate",
    "MPI_Get_accumulate",
    "MPI_Rget_accumulate",
    "MPI_Fetch_and_op",
    "MPI_Compare_and_swap",
};

static uint8_t call_idx(const char *call)
{
    for (uint8_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (!strcmp(calls[i], call)) return i;
    return 0;
}

static void *grow(cr_job *job, void *p, size_t *cap, size_t need, size_t each)
{
    if (need <= *cap) return p;
    size_t c = *cap ? *cap * 2 : 64;
    while (c < need) c *= 2;
    void *q = realloc(p, c * each);
    if (!q) cr_fatal(job, "--check=rma", "out of memory for %zu access records", c);
    *cap = c;
    return q;
}

static void push(cr_job *job, rvec *v, const rma_rec *r)
{
    v->r = grow(job, v->r, &v->cap, v->n + 1, sizeof *r);
    v->r[v->n++] = *r;
}

/* This rank's synchronisations so far, as far as the check sees them:
 * messages received (point-to-point and collectives' own), collectives
 * through shared memory, MPI_Win_sync calls and atomic reads (a flag). */
static uint64_t syncs(const cr_job *job, const mpi_rmachk *k)
{
    return job->stats->recv_msgs + job->coll_shm_done + k->own;
}

void mpi_check_rma_win(cr_job *job, mpi_win *w)
{
    mpi_rmachk *k = calloc(1, sizeof *k);
    if (k) {
        k->from = calloc((size_t)w->size, sizeof *k->from);
        k->qt = calloc((size_t)w->size, sizeof *k->qt);
        k->qs = calloc((size_t)w->size, sizeof *k->qs);
    }
    if (!k || !k->from || !k->qt || !k->qs)
        cr_fatal(job, "--check=rma", "out of memory for a window");
    for (int i = 0; i < w->size; i++) k->qs[i] = syncs(job, k);
    for (int i = 0; i < job->mpi->wins.n; i++)
        if (job->mpi->wins.w[i] == w) k->idx = i;
    w->chk = k;
}

/* ---- reports -------------------------------------------------------------------- */

static void win_words(const mpi_win *w, char *buf, size_t len)
{
    if (w->name[0])
        snprintf(buf, len, "window '%s'", w->name);
    else
        snprintf(buf, len, "window #%d", w->chk->idx);
}

static const char *epoch_words(int ep)
{
    return ep == EP_FENCE  ? "one fence epoch (MPI_Win_fence to MPI_Win_fence)"
           : ep == EP_PSCW ? "one exposure epoch (MPI_Win_post to MPI_Win_wait)"
                           : "passive-target epochs that overlapped in time (MPI_Win_lock or "
                             "MPI_Win_lock_all to the unlock)";
}

/* "bytes 8..15 (displacement 2..3 in units of 4 bytes)" */
static void range_words(const mpi_win *w, int target, uint64_t lo, uint64_t hi, char *buf,
                        size_t len)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        snprintf(buf, len, "addresses %#llx..%#llx", (unsigned long long)lo,
                 (unsigned long long)(hi - 1));
        return;
    }
    uint64_t u = (uint64_t)w->disps[target];
    snprintf(buf, len, "bytes %llu..%llu (displacement %llu..%llu in units of %llu bytes)",
             (unsigned long long)lo, (unsigned long long)(hi - 1), (unsigned long long)(lo / u),
             (unsigned long long)((hi - 1) / u), (unsigned long long)u);
}

static void access_words(const rma_rec *r, char *buf, size_t len)
{
    if (r->store) {
        snprintf(buf, len,
                 "a local store into its own window memory (bytes %llu..%llu changed while it "
                 "held a lock on itself)",
                 (unsigned long long)r->lo, (unsigned long long)(r->hi - 1));
        return;
    }
    const char *what = r->rd ? "reads" : r->acc ? "updates" : "writes";
    char op[64 + MPI_MAX_OBJECT_NAME] = "";
    if (r->acc && r->op != MPI_NO_OP) {
        char ow[40];
        mpi_check_op_words(r->op, ow, sizeof ow);
        const mpi_type *t = r->base >= 0 ? mpi_type_at(r->base) : NULL;
        snprintf(op, sizeof op, " with %s%s%s", ow, t && t->name[0] ? " on " : "",
                 t ? t->name : "");
    }
    snprintf(buf, len, "%s%s (%s bytes %llu..%llu)",
             calls[r->call % (sizeof calls / sizeof calls[0])], op, what, (unsigned long long)r->lo,
             (unsigned long long)(r->hi - 1));
}

static void report_conflict(cr_job *job, const mpi_win *w, int ep, const rma_rec *a,
                            const rma_rec *b)
{
    bool apart = ep == EP_FREE && !(a->t0 <= b->t1 && b->t0 <= a->t1);
    char ww[MPI_MAX_OBJECT_NAME + 16], rw[160], aw[256], bw[256], one[160];
    if (ep == EP_FREE && a->origin == b->origin) /* one origin: its epoch, not two */
        snprintf(one, sizeof one,
                 "one passive-target epoch of rank %d (MPI_Win_lock or MPI_Win_lock_all to the "
                 "unlock) with no MPI_Win_flush between them",
                 a->origin);
    win_words(w, ww, sizeof ww);
    uint64_t lo = a->lo > b->lo ? a->lo : b->lo, hi = a->hi < b->hi ? a->hi : b->hi;
    range_words(w, w->me, lo, hi, rw, sizeof rw);
    access_words(a, aw, sizeof aw);
    access_words(b, bw, sizeof bw);
    fflush(stdout);
    fprintf(stderr,
            "courier: check: RMA conflict on %s: two accesses to %s of rank %d in %s\n"
            "  rank %d: %s\n"
            "  rank %d: %s\n"
            "  accesses to the same target bytes in one epoch conflict unless both read or both "
            "are accumulates with the same operation on the same predefined datatype, element "
            "for element (MPI-4.1 section 12.7): give them disjoint ranges, order them by a "
            "synchronization between them (MPI_Win_fence, MPI_Win_flush, an unlock), or make "
            "both accumulates with one operation and one datatype\n",
            ww, rw, w->me,
            apart ? "passive-target epochs (MPI_Win_lock or MPI_Win_lock_all to the unlock) that "
                    "no synchronisation ordered: the later access's rank received no message and "
                    "completed no collective since the earlier one was flushed"
            : ep == EP_FREE && a->origin == b->origin ? one
                                                      : epoch_words(ep),
            a->origin, aw, b->origin, bw);
    mpi_check_trace(job, "check: RMA conflict");
    mpi_check_end();
}

/* Accesses this rank issued in a fence epoch that no fence closed: at
 * MPI_Win_free (at_free), or at a fence that asserts MPI_MODE_NOPRECEDE. */
static void report_unclosed(cr_job *job, const mpi_win *w, const char *call, bool at_free)
{
    const rvec *v = &w->chk->act;
    char ww[MPI_MAX_OBJECT_NAME + 16], aw[160];
    win_words(w, ww, sizeof ww);
    access_words(&v->r[0], aw, sizeof aw);
    fflush(stdout);
    fprintf(stderr,
            "courier: check: %s on %s: rank %d issued %zu one-sided access%s since its last "
            "MPI_Win_fence that no fence has completed, the first: %s at rank %d\n"
            "  %s\n",
            call, ww, w->me, v->n, v->n == 1 ? "" : "es", aw, v->r[0].target,
            at_free
                ? "a fence epoch's accesses complete at the fence that closes it, and a window "
                  "may be freed only once the process's one-sided communication on it is "
                  "complete (MPI-4.1 section 12.2.5): call MPI_Win_fence(MPI_MODE_NOSUCCEED, "
                  "win) before MPI_Win_free"
                : "MPI_MODE_NOPRECEDE asserts that no one-sided access of this process precedes "
                  "the fence (MPI-4.1 section 12.5.5): leave it out of a fence that closes an "
                  "epoch with accesses");
    mpi_check_trace(job, "check: RMA epoch not closed");
    mpi_check_end();
}

/* The words of a report on one access a of rank w->me's window: the window,
 * the access's bytes there, the access; standard output flushed first. */
typedef struct store_words {
    char ww[MPI_MAX_OBJECT_NAME + 16], rw[160], aw[160];
} store_words;

static void store_words_of(const mpi_win *w, const rma_rec *a, store_words *x)
{
    win_words(w, x->ww, sizeof x->ww);
    range_words(w, w->me, a->lo, a->hi, x->rw, sizeof x->rw);
    access_words(a, x->aw, sizeof x->aw);
    fflush(stdout);
}

static void report_store(cr_job *job, const mpi_win *w, int ep, const rma_rec *a)
{
    store_words x;
    store_words_of(w, a, &x);
    fprintf(stderr,
            "courier: check: RMA conflict on %s: %s of rank %d changed in %s by something other "
            "than the one access to them\n"
            "  rank %d: %s\n"
            "  rank %d: a local store into its window memory (or another process's, through "
            "shared memory)\n"
            "  a target's own stores must not touch bytes a put writes in the same epoch "
            "(MPI-4.1 section 12.7): store before the epoch opens or after it closes, or into "
            "other bytes\n",
            x.ww, x.rw, w->me, epoch_words(ep), a->origin, x.aw, w->me);
    mpi_check_trace(job, "check: RMA store during a put");
    mpi_check_end();
}

/* At the close of an active-target epoch, a run that one access alone
 * touched differs from the window's memory when the epoch opened: a get's now
 * (a store while it read), a put's just before its data landed (a store the
 * put then overwrote). */
static void report_early(cr_job *job, const mpi_win *w, int ep, const rma_rec *a)
{
    store_words x;
    store_words_of(w, a, &x);
    fprintf(stderr,
            "courier: check: RMA conflict on %s: %s of rank %d changed in %s %s rank %d's %s %s\n"
            "  rank %d: %s\n"
            "  rank %d: a local store into its window memory (or another process's, through "
            "shared memory)\n"
            "  a target's own stores must not touch bytes a put or get accesses in the same "
            "epoch (MPI-4.1 section 12.7): store before the epoch opens or after it closes, or "
            "into other bytes\n",
            x.ww, x.rw, w->me, epoch_words(ep), a->rd ? "while" : "before the data of", a->origin,
            calls[a->call % (sizeof calls / sizeof calls[0])],
            a->rd ? "read them" : "arrived (and overwrote the store)", a->origin, x.aw, w->me);
    mpi_check_trace(job, "check: RMA store during a put");
    mpi_check_end();
}

static void report_pstore(cr_job *job, const mpi_win *w, const rma_rec *a)
{
    store_words x;
    store_words_of(w, a, &x);
    fprintf(stderr,
            "courier: check: RMA conflict on %s: %s of rank %d changed during rank %d's "
            "passive-target epoch, between its %s and the flush or unlock that completed it, by "
            "something other than that put\n"
            "  rank %d: %s\n"
            "  rank %d: a local store into its window memory, with no MPI_Win_sync of its own "
            "since the put (or another process's store, through shared memory)\n"
            "  a target's own stores must not touch bytes a put writes until the put is complete "
            "and visible to it (MPI-4.1 section 12.7): store before the origin locks, or after its "
            "unlock or flush and a synchronization that orders the two (a message, a barrier; "
            "in the unified model MPI_Win_sync at the target once it sees the put), or into "
            "other bytes\n",
            x.ww, x.rw, w->me, a->origin, calls[a->call % (sizeof calls / sizeof calls[0])],
            a->origin, x.aw, w->me);
    mpi_check_trace(job, "check: RMA store during a put");
    mpi_check_end();
}

/* b's origin buffer changed before close completed it, or (by: another
 * call) another transfer's origin buffer overlaps it. */
static void report_buf(cr_job *job, const mpi_win *w, const rma_buf *b, const char *close,
                       const char *by)
{
    char ww[MPI_MAX_OBJECT_NAME + 16], rw[160], what[96];
    win_words(w, ww, sizeof ww);
    range_words(w, b->target, b->lo, b->lo + b->len, rw, sizeof rw);
    if (by)
        snprintf(what, sizeof what, "used (as the origin buffer of an %s) the origin buffer", by);
    else
        snprintf(what, sizeof what, "changed the origin buffer");
    fflush(stdout);
    fprintf(stderr,
            "courier: check: rank %d %s of its %s (%zu bytes %s %s of rank %d, %s) before %s "
            "completed it\n"
            "  an RMA call's origin buffer must not be %s until the epoch closes or a flush "
            "completes the call (MPI-4.1 section 12.7): use it after %s, or %s a copy\n",
            w->me, what, calls[b->call % (sizeof calls / sizeof calls[0])], b->len,
            b->get ? "from" : "to", rw, b->target, ww, by ? "the epoch's close" : close,
            b->get ? "read or written (a get writes it)" : "written",
            by ? "the epoch's close (a fence, MPI_Win_complete, a flush or an unlock)" : close,
            b->get ? "get into" : "send from");
    mpi_check_trace(job, "check: RMA origin buffer changed");
    mpi_check_end();
}

/* ---- recording ------------------------------------------------------------------ */

/* A new transfer's origin buffer [p, p+len): it must not overlap that of a get
 * still open (a put's reads it, a get's writes it), nor, for a get (rd:
 * false), that of a put still open. */
static void bufs_overlap(cr_job *job, mpi_win *w, const void *p, size_t len, bool rd,
                         const char *call)
{
    mpi_rmachk *k = w->chk;
    uintptr_t lo = (uintptr_t)p, hi = lo + len;
    if (rd && !k->nget) return; /* (a fence epoch of many puts: no pass over them each) */
    for (size_t i = 0; i < k->nb; i++) {
        const rma_buf *b = &k->b[i];
        uintptr_t blo = (uintptr_t)b->p;
        if ((b->get || !rd) && blo < hi && lo < blo + b->len) report_buf(job, w, b, NULL, call);
    }
}

/* The target's clock: one step, its value after. */
static uint64_t tick(cr_job *job, const char *call, mpi_win *w, int t)
{
    return ctl_amo(job, call, w, t, ctl_chk(w), CR_AMO_ADD, 1, 0) + 1;
}

/* An active put's target bytes [lo, lo+len) before it lands, checksum (0:
 * not read: dynamic, too long). */
static uint64_t preread(cr_job *job, const char *call, mpi_win *w, int t, uint64_t lo, size_t len)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC || len > READBACK_BYTES) return 0;
    char *buf = malloc(len);
    if (!buf) cr_fatal(job, call, "out of memory for --check=rma");
    int rank = cr_group_rank(&w->c->g, t);
    cr_rtarget at = cr_rtable_at(&w->c->g, &w->mem, t, lo);
    if (cr_rma_get(job, call, &at, buf, len, NULL)) cr_rma_flush(job, call, rank);
    uint64_t sum = mpi_check_sum(buf, len) | 1;
    free(buf);
    return sum;
}

void mpi_check_rma_access(cr_job *job, const char *call, mpi_win *w, int target, uint64_t taddr,
                          const cr_run *runs, int nrun, int kind, MPI_Op op, int base,
                          const char *data, const void *obuf, size_t olen)
{
    mpi_rmachk *k = w->chk;
    bool passive = w->lock_all || w->lockst[target];
    if (passive && k->pas.n + (size_t)nrun > PAS_MAX) {
        k->pas_full = true;
        return;
    }
    uint8_t ci = call_idx(call);
    rma_rec r = {.origin = w->me,
                 .target = target,
                 .op = (int32_t)op,
                 .base = (int32_t)base,
                 .esz =
                     kind == MPI_CHK_RMA_ACC && base >= 0 ? (uint32_t)mpi_type_at(base)->size : 0,
                 .call = ci,
                 .t0 = passive ? tick(job, call, w, target) : 0,
                 .rd = kind == MPI_CHK_RMA_GET || (kind == MPI_CHK_RMA_ACC && op == MPI_NO_OP),
                 .acc = kind == MPI_CHK_RMA_ACC};
    uint64_t q = 0;
    if (passive) {
        r.excl = !w->lock_all && (w->lockst[target] & 2);
        uint64_t s = syncs(job, k);
        if (s != k->qs[target]) k->qt[target] = r.t0, k->qs[target] = s;
        q = k->qt[target];
    }
    size_t at = 0;
    for (int i = 0; i < nrun; at += runs[i++].len) {
        if (!runs[i].len) continue;
        r.lo = taddr + (uint64_t)runs[i].off;
        r.hi = r.lo + runs[i].len;
        r.dsum = kind == MPI_CHK_RMA_PUT && data ? mpi_check_sum(data + at, runs[i].len) | 1 : 0;
        r.q = q;
        r.psum = !passive && kind == MPI_CHK_RMA_PUT && i < PREREAD_RUNS
                     ? preread(job, call, w, target, r.lo, runs[i].len)
                     : 0;
        push(job, passive ? &k->pas : &k->act, &r);
    }
    if (ci >= call_idx("MPI_Get_accumulate")) k->own++; /* an atomic read: maybe a flag */
    if (obuf && olen && kind != MPI_CHK_RMA_GET) {
        bufs_overlap(job, w, obuf, olen, true, call);
        k->b = grow(job, k->b, &k->capb, k->nb + 1, sizeof *k->b);
        k->b[k->nb++] = (rma_buf){obuf, olen, mpi_check_sum(obuf, olen), taddr, target, ci, 0};
    }
}

void mpi_check_rma_got(cr_job *job, const char *call, mpi_win *w, int target, uint64_t taddr,
                       void *obuf, size_t olen)
{
    mpi_rmachk *k = w->chk;
    bufs_overlap(job, w, obuf, olen, false, call);
    /* complete it now (MPI allows it early), so that the close finds what it brought */
    cr_rma_flush(job, call, cr_group_rank(&w->c->g, target));
    k->b = grow(job, k->b, &k->capb, k->nb + 1, sizeof *k->b);
    k->b[k->nb++] =
        (rma_buf){obuf, olen, mpi_check_sum(obuf, olen), taddr, target, call_idx(call), 1};
    k->nget++;
}

/* The origin buffers of puts to target (-1: all) are what they were; drop them. */
static void bufs_close(cr_job *job, mpi_win *w, int target, const char *close)
{
    mpi_rmachk *k = w->chk;
    size_t keep = 0;
    for (size_t i = 0; i < k->nb; i++) {
        rma_buf *b = &k->b[i];
        if (target >= 0 && b->target != target) {
            k->b[keep++] = *b;
            continue;
        }
        k->nget -= b->get != 0;
        if (mpi_check_sum(b->p, b->len) != b->sum) report_buf(job, w, b, close, NULL);
    }
    k->nb = keep;
}

/* ---- judging -------------------------------------------------------------------- */

static int by_lo(const void *x, const void *y)
{
    const rma_rec *a = x, *b = y;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static bool conflict(const rma_rec *a, const rma_rec *b, bool passive)
{
    if (a->rd && b->rd) return false;
    if (a->acc && b->acc &&
        (a->op == b->op || a->op == (int32_t)MPI_NO_OP || b->op == (int32_t)MPI_NO_OP) &&
        a->base == b->base && (!a->esz || a->lo % a->esz == b->lo % a->esz))
        return false;
    if (a->origin == b->origin && a->acc && b->acc) return false; /* ordered */
    /* passive: did the two overlap in time at the target (each from its
     * call to the flush or unlock that completed it)? */
    if (!passive || (a->t0 <= b->t1 && b->t0 <= a->t1)) return true;
    /* two origins' shared-lock accesses one after the other: the later one's
     * origin made no synchronisation since the earlier one completed, so
     * nothing ordered them (an exclusive lock orders them itself) */
    if (a->origin == b->origin || a->excl || b->excl) return false;
    const rma_rec *x = a->t1 < b->t0 ? a : b, *y = x == a ? b : a;
    return x->t1 > y->q;
}

/* The first conflict among n records for this member (sorted here), or false;
 * *a, *b: the two. */
static bool find_conflict(rma_rec *r, size_t n, bool passive, rma_rec **a, rma_rec **b)
{
    qsort(r, n, sizeof *r, by_lo);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n && j <= i + SCAN_MAX && r[j].lo < r[i].hi; j++)
            if (conflict(&r[i], &r[j], passive)) {
                *a = &r[i];
                *b = &r[j];
                return true;
            }
    return false;
}

/* A put that alone wrote its bytes: do they hold its data? (sorted r) */
static const rma_rec *find_store(const mpi_win *w, const rma_rec *r, size_t n)
{
    uint64_t reach = 0; /* the highest end before i */
    for (size_t i = 0; i < n; i++) {
        bool alone = r[i].lo >= reach && (i + 1 == n || r[i + 1].lo >= r[i].hi);
        if (r[i].hi > reach) reach = r[i].hi;
        if (!alone || !r[i].dsum) continue;
        const char *p = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? (const char *)(uintptr_t)r[i].lo
                                                            : (const char *)w->base + r[i].lo;
        if ((mpi_check_sum(p, r[i].hi - r[i].lo) | 1) != r[i].dsum) return &r[i];
    }
    return NULL;
}

/* A get or put that alone touched its bytes, against the window's memory when
 * the epoch opened (sorted r). */
static const rma_rec *find_early(const mpi_win *w, const rma_rec *r, size_t n)
{
    const mpi_rmachk *k = w->chk;
    uint64_t reach = 0;
    for (size_t i = 0; i < n; i++) {
        bool alone = r[i].lo >= reach && (i + 1 == n || r[i + 1].lo >= r[i].hi);
        if (r[i].hi > reach) reach = r[i].hi;
        if (!alone || r[i].acc || r[i].hi > k->snaplen || (!r[i].rd && !r[i].psum)) continue;
        size_t len = r[i].hi - r[i].lo;
        uint64_t then = mpi_check_sum(k->snap + r[i].lo, len) | 1;
        uint64_t now =
            r[i].rd ? mpi_check_sum((const char *)w->base + r[i].lo, len) | 1 : r[i].psum;
        if (now != then) return &r[i];
    }
    return NULL;
}

/* The window's memory as the epoch opens (at most SNAP_MAX bytes; else none). */
static void snap_take(cr_job *job, mpi_win *w, const char *call)
{
    mpi_rmachk *k = w->chk;
    size_t len = w->flavor == MPI_WIN_FLAVOR_DYNAMIC || w->wsize <= 0 ? 0 : (size_t)w->wsize;
    if (len > SNAP_MAX) len = 0;
    if (len && !k->snap) k->snap = malloc(SNAP_MAX);
    if (len && !k->snap) cr_fatal(job, call, "out of memory for --check=rma");
    if (len) memcpy(k->snap, w->base, len);
    k->snaplen = len;
}

static int rec_tag(const mpi_win *w, int ep)
{
    return 1 + w->chk->idx * 4 + ep;
}

/* The records of v for member t, into a fresh buffer (*n of them). */
static rma_rec *for_target(cr_job *job, const char *call, const rvec *v, int t, size_t *n)
{
    rma_rec *out = malloc((v->n ? v->n : 1) * sizeof *out);
    if (!out) cr_fatal(job, call, "out of memory for --check=rma");
    *n = 0;
    for (size_t i = 0; i < v->n; i++)
        if (v->r[i].target == t) out[(*n)++] = v->r[i];
    return out;
}

/* Take the records member m sent (tag), appended to all. */
static void take_from(cr_job *job, const char *call, mpi_win *w, int m, int tag, rvec *all)
{
    cr_sel s = {.src = cr_group_rank(&w->c->g, m),
                .ctx = CR_CTX_MPI_CHECK,
                .tag_mode = CR_TAG_EXACT,
                .tag = tag};
    cr_status st;
    cr_probe(job, &s, true, &st);
    size_t n = st.size / sizeof(rma_rec);
    all->r = grow(job, all->r, &all->cap, all->n + n + 1, sizeof(rma_rec));
    cr_recv(job, call, &s, all->r + all->n, n * sizeof(rma_rec), &st);
    all->n += n;
}

/* The target's own stores (self_close's records) that an access may have
 * made instead: a run that any write overlaps is kept only where one put
 * alone wrote exactly those bytes and they hold something else than its data
 * (a store after it); else (a put's data, accumulates, several writes) it is
 * dropped, as are all where too many records would have to be compared. The
 * kept ones conflict with the other accesses as any access does. Returns the
 * records left (r: n of them, in place). */
#define STORE_LOOK (1u << 24) /* store runs x records compared, at most */
static size_t drop_explained(rma_rec *r, size_t n)
{
    size_t ns = 0;
    for (size_t i = 0; i < n; i++) ns += r[i].store;
    if (!ns) return n;
    bool look = ns * n <= STORE_LOOK;
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        bool keep = true;
        if (r[i].store && !look) keep = false;
        if (r[i].store && look) {
            size_t writes = 0, same = 0;
            for (size_t j = 0; j < n; j++) {
                const rma_rec *o = &r[j];
                if (o->store || o->rd || o->hi <= r[i].lo || o->lo >= r[i].hi) continue;
                writes++;
                same += !o->acc && o->dsum && o->lo == r[i].lo && o->hi == r[i].hi &&
                        o->dsum != r[i].dsum;
            }
            keep = writes == 0 || (writes == 1 && same == 1);
        }
        if (keep) r[out++] = r[i];
    }
    return out;
}

/* Exchange v's records among all members (each gets those for it) and judge
 * them: a conflict is seen by its target alone, which reports it. ep: the
 * epoch kind (EP_FREE: passive, clock intervals). */
static void exchange_all(cr_job *job, mpi_win *w, const char *call, rvec *v, int ep)
{
    int n = w->size, tag = rec_tag(w, ep);
    cr_req **rq = malloc((size_t)n * sizeof *rq);
    rma_rec **bufs = calloc((size_t)n, sizeof *bufs);
    if (!rq || !bufs) cr_fatal(job, call, "out of memory for --check=rma");
    rvec all = {0};
    int ns = 0;
    for (int m = 0; m < n; m++) {
        size_t cnt;
        bufs[m] = for_target(job, call, v, m, &cnt);
        if (m == w->me) {
            all.r = grow(job, all.r, &all.cap, all.n + cnt + 1, sizeof(rma_rec));
            memcpy(all.r + all.n, bufs[m], cnt * sizeof(rma_rec));
            all.n += cnt;
        } else {
            rq[ns++] = cr_isend(job, call, cr_group_rank(&w->c->g, m), CR_CTX_MPI_CHECK, tag,
                                bufs[m], cnt * sizeof(rma_rec));
        }
    }
    for (int m = 0; m < n; m++)
        if (m != w->me) take_from(job, call, w, m, tag, &all);
    for (int i = 0; i < ns; i++) {
        cr_req_wait(job, rq[i]);
        cr_req_release(job, rq[i]);
    }
    for (int m = 0; m < n; m++) free(bufs[m]);
    free(bufs);
    free(rq);
    v->n = 0;
    if (ep == EP_FREE) all.n = drop_explained(all.r, all.n);
    rma_rec *a = NULL, *b = NULL;
    const rma_rec *s = NULL;
    bool found = find_conflict(all.r, all.n, ep == EP_FREE, &a, &b);
    if (!found && ep != EP_FREE) s = find_store(w, all.r, all.n);
    if (found) report_conflict(job, w, ep, a, b);
    if (s) report_store(job, w, ep, s);
    if (ep != EP_FREE) s = find_early(w, all.r, all.n);
    if (s) report_early(job, w, ep, s);
    for (size_t i = 0; ep == EP_FREE && i < all.n; i++)
        if (all.r[i].changed) report_pstore(job, w, &all.r[i]);
    free(all.r);
}

/* ---- the epochs ----------------------------------------------------------------- */

void mpi_check_rma_fence(cr_job *job, mpi_win *w, const char *call, int mode)
{
    mpi_rmachk *k = w->chk;
    if ((mode & MPI_MODE_NOPRECEDE) && k->act.n) report_unclosed(job, w, call, false);
    if (!(mode & MPI_MODE_NOPRECEDE)) { /* given by all */
        bufs_close(job, w, -1, call);
        exchange_all(job, w, call, &k->act, EP_FENCE);
    }
    if (mode & MPI_MODE_NOSUCCEED)
        k->snaplen = 0;
    else
        snap_take(job, w, call);
}

void mpi_check_rma_post(cr_job *job, mpi_win *w, const char *call)
{
    snap_take(job, w, call);
}

/* Reap MPI_Win_complete's sends that have gone (all: wait for every one). */
static void reap(cr_job *job, mpi_rmachk *k, bool all)
{
    int keep = 0;
    for (int i = 0; i < k->ns; i++) {
        if (all) cr_req_wait(job, k->sreq[i]);
        if (all || __atomic_load_n(&k->sreq[i]->done, __ATOMIC_ACQUIRE)) {
            cr_req_release(job, k->sreq[i]);
            free(k->sbuf[i]);
        } else {
            k->sreq[keep] = k->sreq[i];
            k->sbuf[keep++] = k->sbuf[i];
        }
    }
    k->ns = keep;
}

void mpi_check_rma_complete(cr_job *job, mpi_win *w, const char *call)
{
    mpi_rmachk *k = w->chk;
    bufs_close(job, w, -1, call);
    reap(job, k, false);
    for (int i = 0; i < w->nacc; i++) {
        int t = w->access[i];
        size_t cnt;
        rma_rec *buf = for_target(job, call, &k->act, t, &cnt);
        if (k->ns == k->caps) {
            size_t c = (size_t)k->caps, c2 = c;
            k->sreq = grow(job, k->sreq, &c, c + 1, sizeof *k->sreq);
            k->sbuf = grow(job, k->sbuf, &c2, c2 + 1, sizeof *k->sbuf);
            k->caps = (int)c;
        }
        k->sbuf[k->ns] = buf;
        k->sreq[k->ns++] = cr_isend(job, call, cr_group_rank(&w->c->g, t), CR_CTX_MPI_CHECK,
                                    rec_tag(w, EP_PSCW), buf, cnt * sizeof(rma_rec));
    }
    k->act.n = 0;
}

void mpi_check_rma_wait(cr_job *job, mpi_win *w, const char *call)
{
    rvec all = {0};
    for (int i = 0; i < w->nexp; i++)
        take_from(job, call, w, w->expose[i], rec_tag(w, EP_PSCW), &all);
    rma_rec *a = NULL, *b = NULL;
    if (find_conflict(all.r, all.n, false, &a, &b)) report_conflict(job, w, EP_PSCW, a, b);
    const rma_rec *s = find_store(w, all.r, all.n);
    if (s) report_store(job, w, EP_PSCW, s);
    s = find_early(w, all.r, all.n);
    if (s) report_early(job, w, EP_PSCW, s);
    w->chk->snaplen = 0;
    free(all.r);
}

/* The passive puts to t completed now (records from.. not yet completed; now:
 * t's clock): one that alone wrote its bytes among them must find them as it
 * put them, unless t called MPI_Win_sync since the put (it may have seen the
 * put and stored after it, as the unified model allows); a difference is
 * marked, for t to judge at MPI_Win_free (where a conflict with another
 * origin's access, which would change them too, is reported instead). */
static void readback(cr_job *job, mpi_win *w, const char *call, int t, size_t from, uint64_t now)
{
    rvec *v = &w->chk->pas;
    size_t n = 0;
    for (size_t i = from; i < v->n; i++) n += v->r[i].target == t && !v->r[i].t1;
    if (n > READBACK_RECS) return;
    for (size_t i = from; i < v->n; i++) {
        rma_rec *r = &v->r[i];
        size_t len = r->hi - r->lo;
        if (r->target != t || r->t1 || !r->dsum || len > READBACK_BYTES ||
            r->t0 >> SYNC_SHIFT != now >> SYNC_SHIFT)
            continue;
        bool alone = true;
        for (size_t j = from; j < v->n && alone; j++) {
            const rma_rec *o = &v->r[j];
            alone = j == i || o->target != t || o->t1 || o->hi <= r->lo || o->lo >= r->hi;
        }
        char *buf = alone ? malloc(len) : NULL;
        if (!alone) continue;
        if (!buf) cr_fatal(job, call, "out of memory for --check=rma");
        int rank = cr_group_rank(&w->c->g, t);
        cr_rtarget at = w->flavor == MPI_WIN_FLAVOR_DYNAMIC
                            ? (cr_rtarget){rank, r->lo, NULL}
                            : cr_rtable_at(&w->c->g, &w->mem, t, r->lo);
        if (cr_rma_get(job, call, &at, buf, len, NULL)) cr_rma_flush(job, call, rank);
        if ((mpi_check_sum(buf, len) | 1) != r->dsum) r->changed = 1;
        free(buf);
    }
}

/* Passive-target accesses to t (-1: all) are complete at their target: their
 * interval ends at its clock now; the puts among them are read back. */
static void complete_at(cr_job *job, mpi_win *w, const char *call, int target)
{
    mpi_rmachk *k = w->chk;
    for (int t = 0; t < w->size; t++) {
        if (target >= 0 && t != target) continue;
        uint64_t end = 0;
        for (size_t i = k->from[t]; i < k->pas.n && !end; i++)
            if (k->pas.r[i].target == t && !k->pas.r[i].t1) end = tick(job, call, w, t);
        if (end) readback(job, w, call, t, k->from[t], end);
        for (size_t i = k->from[t]; end && i < k->pas.n; i++)
            if (k->pas.r[i].target == t && !k->pas.r[i].t1) k->pas.r[i].t1 = end;
        k->from[t] = k->pas.n;
    }
}

size_t mpi_check_rma_mark(const mpi_win *w)
{
    return w->chk->pas.n;
}

void mpi_check_rma_done(cr_job *job, mpi_win *w, const char *call, int target, size_t from,
                        size_t to)
{
    mpi_rmachk *k = w->chk;
    uint64_t end = 0;
    for (size_t i = from; i < to && i < k->pas.n; i++)
        if (k->pas.r[i].target == target && !k->pas.r[i].t1) {
            if (!end) end = tick(job, call, w, target);
            k->pas.r[i].t1 = end;
        }
}

/* This rank locks its own window (MPI_Win_lock on itself, MPI_Win_lock_all):
 * a copy of its window memory (up to SNAP_MAX bytes; none for a dynamic
 * window), its clock, its quiet stretch (as an access's q) and its syncs(). */
static void self_open(cr_job *job, mpi_win *w, const char *call, bool excl)
{
    mpi_rmachk *k = w->chk;
    size_t len = w->flavor == MPI_WIN_FLAVOR_DYNAMIC || w->wsize <= 0 ? 0 : (size_t)w->wsize;
    k->selflen = 0;
    if (!len || len > SNAP_MAX) return;
    if (!k->self) k->self = malloc(SNAP_MAX);
    if (!k->self) cr_fatal(job, call, "out of memory for --check=rma");
    k->self_t0 = tick(job, call, w, w->me);
    uint64_t s = syncs(job, k);
    if (s != k->qs[w->me]) k->qt[w->me] = k->self_t0, k->qs[w->me] = s;
    k->self_q = k->qt[w->me];
    k->self_s = s;
    k->self_excl = excl;
    memcpy(k->self, w->base, len);
    k->selflen = len;
}

/* Its unlock: the units (of its disp_unit; bytes where that does not divide
 * the window) that changed since self_open, each a store record (its data's
 * checksum in dsum; at most SELF_RECS) for MPI_Win_free to judge with the
 * other origins' accesses (drop_explained: a put's data is not a store).
 * None where this rank synchronised meanwhile (a message, a collective,
 * MPI_Win_sync, an atomic read): it may have seen a put complete and stored
 * after it, as the unified model allows. */
static void self_close(cr_job *job, mpi_win *w, const char *call)
{
    mpi_rmachk *k = w->chk;
    size_t len = k->selflen, u = w->disps[w->me] > 0 ? (size_t)w->disps[w->me] : 1, n = 0;
    k->selflen = 0;
    if (syncs(job, k) != k->self_s) return;
    if (len % u) u = 1;
    uint64_t t1 = tick(job, call, w, w->me);
    const char *now = w->base, *then = k->self;
    size_t blk = SELF_BLOCK > u ? SELF_BLOCK / u * u : u; /* units, compared at once */
    for (size_t i = 0; i < len && n < SELF_RECS; i += u) {
        if (i % blk == 0 && i + blk <= len && !memcmp(now + i, then + i, blk)) {
            i += blk - u; /* the whole block is as it was */
            continue;
        }
        if (!memcmp(now + i, then + i, u)) continue;
        if (k->pas.n >= PAS_MAX) {
            k->pas_full = true;
            return;
        }
        rma_rec r = {.lo = i,
                     .hi = i + u,
                     .t0 = k->self_t0,
                     .t1 = t1,
                     .dsum = mpi_check_sum(now + i, u) | 1,
                     .q = k->self_q,
                     .origin = w->me,
                     .target = w->me,
                     .op = (int32_t)MPI_OP_NULL,
                     .excl = k->self_excl,
                     .store = 1};
        push(job, &k->pas, &r);
        n++;
    }
}

/* A passive-target epoch opens: where this rank synchronised since it last
 * looked at a target's clock, the clock now (one step; MPI_Win_lock_all: of
 * up to LOCK_LOOK targets) is the start of its quiet stretch there, so that a
 * synchronisation before the lock counts from the lock. */
void mpi_check_rma_lock(cr_job *job, mpi_win *w, const char *call, int target)
{
    mpi_rmachk *k = w->chk;
    if (target < 0 || target == w->me)
        self_open(job, w, call, target >= 0 && w->lockst[target] & 2);
    uint64_t s = syncs(job, k);
    if (target < 0 && w->size > LOCK_LOOK) return;
    for (int t = target < 0 ? 0 : target; t < (target < 0 ? w->size : target + 1); t++)
        if (s != k->qs[t]) k->qt[t] = tick(job, call, w, t), k->qs[t] = s;
}

void mpi_check_rma_sync(cr_job *job, mpi_win *w, const char *call)
{
    ctl_amo(job, call, w, w->me, ctl_chk(w), CR_AMO_ADD, 1ull << SYNC_SHIFT, 0);
    w->chk->own++;
}

void mpi_check_rma_flush(cr_job *job, mpi_win *w, const char *call, int target, bool remote)
{
    bufs_close(job, w, target, call);
    if (!remote) return;
    complete_at(job, w, call, target);
    if (w->chk->selflen && (target < 0 || target == w->me) && !strncmp(call, "MPI_Win_unlock", 14))
        self_close(job, w, call);
}

void mpi_check_rma_free(cr_job *job, mpi_win *w, const char *call)
{
    mpi_rmachk *k = w->chk;
    if (k->act.n) report_unclosed(job, w, call, true);
    reap(job, k, true);
    exchange_all(job, w, call, &k->pas, EP_FREE);
    free(k->act.r);
    free(k->pas.r);
    free(k->snap);
    free(k->self);
    free(k->b);
    free(k->from);
    free(k->qt);
    free(k->qs);
    free(k->sreq);
    free(k->sbuf);
    free(k);
    w->chk = NULL;
}
