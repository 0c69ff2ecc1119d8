/* courier run --check (docs/check.md): the MPI interface's correctness checks
 * and the hooks its calls make into them (mpi_check.c, mpi_check_coll.c,
 * mpi_check_rma.c).
 *
 * Invariants: the checks' state hangs off the interface's state
 * (job->mpi->chk, NULL while checking is off), so a call pays one load and one
 * predictable branch for all of them when off; every report is one block on
 * stderr naming the call(s), rank(s) and arguments and what to do, then the
 * rank ends with status MPI_CHECK_EXIT (the launcher ends the job with it). */
#ifndef COURIER_MPI_CHECK_H
#define COURIER_MPI_CHECK_H

#include "mpi_impl.h"

/* The checks (COURIER_CHECK's words). */
enum {
    MPI_CHK_TYPES = 1,    /* point-to-point type signatures */
    MPI_CHK_COLL = 2,     /* collectives agree on kind, root, operator, signature */
    MPI_CHK_LEAKS = 4,    /* objects and requests left at MPI_Finalize */
    MPI_CHK_SYNC = 8,     /* standard sends wait for their match */
    MPI_CHK_BUFFERS = 16, /* a pending nonblocking operation's buffer changed before completion */
    MPI_CHK_RMA = 32,     /* conflicting one-sided accesses in one epoch */
    MPI_CHK_THREADS = 64  /* calls from threads the thread level does not allow */
};

/* The exit status of a rank that reports a checking error. */
#define MPI_CHECK_EXIT 98

/* A buffer of a pending nonblocking or persistent collective, watched by
 * --check=buffers: key the collective's schedule, sum taken at each start
 * (armed until its completion is compared). A receive buffer is staged: the
 * schedule writes stage (len bytes, a copy of buf taken at each start) and
 * stage goes into buf once the completion has been compared; mem: the
 * staging allocation this watch holds (the other watches of the same call
 * point into it), NULL for none. */
typedef struct mpi_chkwatch {
    const void *key;
    void *buf;
    size_t len;
    uint64_t sum;
    const char *call, *what;
    MPI_Comm comm;
    bool armed;
    char *stage, *mem;
} mpi_chkwatch;

/* --check=buffers' staging buffers that receives have given back, kept for
 * the next receives of this rank (mpi_check_stage): at most
 * MPI_CHK_STAGE_KEEP of them, MPI_CHK_STAGE_BYTES in all. */
#define MPI_CHK_STAGE_KEEP 64
#define MPI_CHK_STAGE_BYTES ((size_t)64 << 20)
typedef struct mpi_chkstage {
    char *p; /* what malloc gave: a header (its capacity), then the buffer lent */
    size_t cap;
} mpi_chkstage;

/* The checks' state (job->mpi->chk). */
typedef struct mpi_chk {
    unsigned on;     /* MPI_CHK_* asked for */
    mpi_chkwatch *w; /* the collectives' watched buffers */
    int nw, wcap;
    mpi_chkstage stage[MPI_CHK_STAGE_KEEP]; /* kept staging buffers, unordered */
    int nstage;
    size_t stage_bytes; /* their capacities, in all */
    /* --check=threads: the thread inside a call now (pthread_self, 0: none)
     * below MPI_THREAD_MULTIPLE, how deep (calls made inside calls), and its
     * outermost call */
    _Atomic unsigned long thr_owner;
    pthread_key_t own_key; /* set (non-NULL) in courier's own threads: not checked */
    _Atomic bool thr_said; /* one thread reports; another that would waits for the end */
    int thr_depth;
    const char *thr_call;
} mpi_chk;

/* " at prog.c:42 (main)": where the call whose return address is 'at' was made
 * (dladdr, then addr2line on the program's debug info, run now); " from 0x...
 * (prog+0x1234)" without it; "" for NULL. */
void mpi_where(const void *at, char *buf, size_t len);

/* The calling thread is courier's own (a file's I/O thread, which calls MPI for
 * a queued collective access whatever the thread level): --check=threads
 * leaves its calls alone. */
void mpi_check_own_thread(cr_job *job);

/* Read COURIER_CHECK (set by courier run --check) at MPI_Init: job->mpi->chk. */
void mpi_check_init(cr_job *job);

static inline bool mpi_chk_on(const cr_job *job, unsigned what)
{
    const mpi_chk *k = job->mpi->chk;
    return __builtin_expect(k != NULL, 0) && (k->on & what);
}

/* ---- type signatures (point-to-point) ------------------------------------- */

/* The bits of a check value that name the call and the type, not the hash. */
#define MPI_CHK_SIG_LOW 0xfffull
/* The check value of count instances of t sent by 'call' (0: nothing to check:
 * MPI_BYTE, MPI_PACKED). */
uint64_t mpi_check_sig(cr_job *job, const mpi_type *t, size_t count, const char *call)
    __attribute__((cold));
/* Before an engine send of count instances of t: give the message its check
 * value (after it, job->chk_sig = 0). */
static inline void mpi_chk_stamp(cr_job *job, const mpi_type *t, size_t count, const char *call)
{
    if (mpi_chk_on(job, MPI_CHK_TYPES)) job->chk_sig = mpi_check_sig(job, t, count, call);
}
/* A receive of count instances of t by 'call' on comm got the message st
 * describes: report (and end the rank) if the signatures differ. */
void mpi_check_recv(cr_job *job, const char *call, MPI_Comm comm, const mpi_type *t, size_t count,
                    const cr_status *st) __attribute__((cold));

/* ---- buffers of pending sends --------------------------------------------- */

/* A checksum of len bytes at p (64-bit, eight words at a time; one changed
 * word always changes it). */
uint64_t mpi_check_sum(const void *p, size_t len);
/* A nonblocking send's buffer (len bytes, to peer with tag on comm, started by
 * call; recv: a receive's, from peer) changed between the operation's start
 * and its completion: report, end the rank. */
_Noreturn void mpi_check_buf_changed(cr_job *job, const char *call, MPI_Comm comm, int peer,
                                     int tag, size_t len, bool recv) __attribute__((cold));

/* A nonblocking or persistent collective's buffer (a->s's; what: "send
 * buffer"), contiguous, len bytes: its checksum is taken at each start and
 * compared when a wait or test completes the collective. The hooks of
 * mpi_nbc.c: at the start, at the completion a wait or test returns, and
 * when the schedule is freed. */
void mpi_check_nbc_watch(const mpi_cargs *a, const void *buf, size_t len, const char *what)
    __attribute__((cold));
static inline void mpi_chk_nbc_buf(const mpi_cargs *a, const void *buf, int count,
                                   const mpi_type *t, const char *what)
{
    if (a->s && buf != MPI_IN_PLACE && count > 0 && t->contig && t->size &&
        mpi_chk_on(a->job, MPI_CHK_BUFFERS))
        mpi_check_nbc_watch(a, buf, (size_t)count * t->size, what);
}
/* A nonblocking or persistent collective's receive side (a->s's), contiguous:
 * n blocks of len[i] bytes at off[i] (bytes from buf, as ptrdiff_t; off NULL:
 * one block at buf) staged, each run of adjacent blocks watched: a copy of
 * buf taken at each start, which the schedule writes instead of buf, the
 * program's buffer compared at the completion a wait or test returns and then
 * given the copy. Returns where the schedule is to write in place of buf. */
char *mpi_check_nbc_stage(const mpi_cargs *a, void *buf, int n, const size_t *len,
                          const size_t *off) __attribute__((cold));
static inline char *mpi_chk_nbc_rbufv(const mpi_cargs *a, void *buf, int n, const size_t *len,
                                      const size_t *off)
{
    if (a->s && buf && buf != MPI_IN_PLACE && mpi_chk_on(a->job, MPI_CHK_BUFFERS))
        return mpi_check_nbc_stage(a, buf, n, len, off);
    return buf;
}
static inline char *mpi_chk_nbc_rbuf(const mpi_cargs *a, void *buf, size_t len)
{
    return len ? mpi_chk_nbc_rbufv(a, buf, 1, &len, NULL) : buf;
}
void mpi_check_nbc_start(cr_job *job, const void *key) __attribute__((cold));
void mpi_check_nbc_end(cr_job *job, const void *key) __attribute__((cold));
void mpi_check_nbc_drop(cr_job *job, const void *key) __attribute__((cold));
static inline void mpi_chk_nbc_start(cr_job *job, const void *key)
{
    if (mpi_chk_on(job, MPI_CHK_BUFFERS)) mpi_check_nbc_start(job, key);
}
static inline void mpi_chk_nbc_end(cr_job *job, const void *key)
{
    if (mpi_chk_on(job, MPI_CHK_BUFFERS)) mpi_check_nbc_end(job, key);
}
static inline void mpi_chk_nbc_drop(cr_job *job, const void *key)
{
    if (mpi_chk_on(job, MPI_CHK_BUFFERS)) mpi_check_nbc_drop(job, key);
}

/* --check=buffers stages every receive (mpi_p2p.c's recv_dest): a staging
 * buffer of at least len bytes, the smallest kept one that fits or else a new
 * one, and (mpi_check_unstage, when the receive has ended) back to the kept
 * ones, which drop their smallest first when full. A malloc and free per
 * receive had the kernel map, zero and unmap 1 MiB per osu_bw message (about
 * 30 % of its profile under --check=all). */
void *mpi_check_stage(cr_job *job, const char *call, size_t len) __attribute__((cold));
void mpi_check_unstage(cr_job *job, void *buf) __attribute__((cold));

/* A staged receive's message has just been copied into the program's buffer
 * (len bytes at buf): the other pending receives whose buffers overlap it
 * (osu_bw posts its window of receives into one buffer) are no longer
 * compared, so the copy is not taken for a write by the program (taking
 * their checksums anew made osu_bw's 1 MiB window quadratic: 46 MB/s). */
void mpi_check_landed(cr_job *job, const void *buf, size_t len) __attribute__((cold));
static inline void mpi_chk_landed(cr_job *job, const void *buf, size_t len)
{
    if (mpi_chk_on(job, MPI_CHK_BUFFERS)) mpi_check_landed(job, buf, len);
}

/* ---- collectives ---------------------------------------------------------- */

/* Before collective a->call on communicator a->c moves data: every member
 * agrees on the kind, root, operator and type signature (each member's record
 * to member 0 of the communicator's collective group, on an intercommunicator
 * its local group, which agrees on the kind, the operator and the root's form;
 * member 0 judges them all and sends its own to the others, which compare
 * theirs with it; the records travel as a nonblocking or persistent
 * collective's do, under the same sequence number, so a blocking call that
 * meets one of those is reported too); on a disagreement member 0 reports
 * each rank's call. root -1: none; op MPI_OP_NULL: none; ts/tr NULL: no
 * send/receive side to compare at this rank (MPI_IN_PLACE, not the root, the
 * v and w forms). */
void mpi_check_coll(const mpi_cargs *a, int root, MPI_Op op, int scount, const mpi_type *ts,
                    int rcount, const mpi_type *tr) __attribute__((cold));
static inline void mpi_chk_coll(const mpi_cargs *a, int root, MPI_Op op, int scount,
                                const mpi_type *ts, int rcount, const mpi_type *tr)
{
    if (mpi_chk_on(a->job, MPI_CHK_COLL)) mpi_check_coll(a, root, op, scount, ts, rcount, tr);
}

/* The v and w forms' per-pair type signatures (intracommunicator): which
 * members send to which (form, with root), and this rank's two sides. A side
 * is count instances of t, or per member i counts[i] of t (types[i] where
 * types is set); t and types both NULL: no such side at this rank (not the
 * root; the send side with MPI_IN_PLACE, where the all-to-all forms send what
 * they receive). */
enum { MPI_CHKV_GATHER, MPI_CHKV_SCATTER, MPI_CHKV_ALLGATHER, MPI_CHKV_ALLTOALL };
typedef struct mpi_chkside {
    int count;
    const int *counts;
    const mpi_type *t;
    mpi_type *const *types;
    const int *displs; /* a receive side's block places (NULL: not looked at): no two
                        * blocks may share a byte */
} mpi_chkside;
typedef struct mpi_chkv {
    int form, root;
    mpi_chkside s, r;
} mpi_chkv;
/* The sides: one block of n x t; counts[i] x t per member; counts[i] x ts[i]. */
#define MPI_CHK1(n, t) ((mpi_chkside){(n), NULL, (t), NULL, NULL})
#define MPI_CHKN(counts, t) ((mpi_chkside){0, (counts), (t), NULL, NULL})
#define MPI_CHKW(counts, ts) ((mpi_chkside){0, (counts), NULL, (ts), NULL})
/* A receive side with its displacements (v forms: in extents of t; w forms:
 * in bytes), whose blocks are checked not to overlap. */
#define MPI_CHKNR(counts, displs, t) ((mpi_chkside){0, (counts), (t), NULL, (displs)})
#define MPI_CHKWR(counts, displs, ts) ((mpi_chkside){0, (counts), NULL, (ts), (displs)})

/* The blocking v and w forms: the agreement of mpi_check_coll (root; no
 * signatures in the record), then every rank sends each member it sends data
 * to the signature of that block, and each receiver compares it with its own
 * side for that member; a mismatch is reported by the receiver, naming both
 * ranks' calls and types. On an intercommunicator: the agreement alone. */
void mpi_check_coll_v(const mpi_cargs *a, const mpi_chkv *v) __attribute__((cold));
static inline void mpi_chk_coll_v(const mpi_cargs *a, int form, int root, mpi_chkside s,
                                  mpi_chkside r)
{
    if (mpi_chk_on(a->job, MPI_CHK_COLL)) mpi_check_coll_v(a, &(mpi_chkv){form, root, s, r});
}

/* A nonblocking or persistent collective's agreement (the same record): the
 * first rounds of its schedule, before any of its own. Every member sends
 * its record to member 0 of its group (on an intercommunicator: of each
 * group), which judges them (a step of its schedule) and reports a
 * disagreement; no member blocks in the call. mpi_check_coll_rec makes the
 * record (in the schedule's memory), mpi_check_coll_round adds the rounds
 * (right after the schedule's sequence number is taken). */
typedef struct mpi_chknbc mpi_chknbc;
mpi_chknbc *mpi_check_coll_rec(cr_job *job, cr_sched *s, const mpi_comm *c, MPI_Comm comm,
                               const char *call, int root, MPI_Op op, int scount,
                               const mpi_type *ts, int rcount, const mpi_type *tr)
    __attribute__((cold));
/* The record's root, operator and sides, once the call's arguments are known. */
void mpi_check_coll_set(cr_job *job, mpi_chknbc *k, const char *call, int root, MPI_Op op,
                        int scount, const mpi_type *ts, int rcount, const mpi_type *tr)
    __attribute__((cold));
void mpi_check_coll_round(cr_job *job, cr_sched *s, const cr_group *g, mpi_chknbc *k)
    __attribute__((cold));

/* The builders' hooks (mpi_nbc.c): a->chk made at the call's start (the call
 * alone), completed as its arguments are checked (mpi_collchk.c's checks,
 * and the reductions with their operator). */
static inline void mpi_chk_nbc_begin(mpi_cargs *a, cr_sched *s)
{
    a->chk = mpi_chk_on(a->job, MPI_CHK_COLL)
                 ? mpi_check_coll_rec(a->job, s, a->c, a->comm, a->call, -1, MPI_OP_NULL, 0, NULL,
                                      0, NULL)
                 : NULL;
}
static inline void mpi_chk_nbc(const mpi_cargs *a, int root, MPI_Op op, int scount,
                               const mpi_type *ts, int rcount, const mpi_type *tr)
{
    if (a->chk) mpi_check_coll_set(a->job, a->chk, a->call, root, op, scount, ts, rcount, tr);
}
/* The nonblocking and persistent v and w forms (intracommunicator): their
 * pairs' signatures (mpi_check_coll_v's), exchanged in a round of the
 * schedule after the agreement; call before the schedule's first transfer. */
void mpi_check_coll_pairs(const mpi_cargs *a, const mpi_chkv *v) __attribute__((cold));
static inline void mpi_chk_nbc_v(const mpi_cargs *a, int form, int root, mpi_chkside s,
                                 mpi_chkside r)
{
    if (a->chk) mpi_check_coll_pairs(a, &(mpi_chkv){form, root, s, r});
}

/* A message left unreceived on a collective's context at MPI_Finalize: when
 * it is a nonblocking collective's agreement record, true and (call, len
 * not 0) "MPI_Igather (root 0)", the call its sender made. */
bool mpi_check_coll_left(const cr_unexp *u, char *call, size_t len) __attribute__((cold));

/* A communicator as the reports name it: its name, or "communicator #N". */
void mpi_check_comm_words(MPI_Comm comm, char *buf, size_t len);
/* "4 x MPI_INT (16 bytes)": bytes of the predefined type a check value names. */
void mpi_check_data_words(uint64_t sig, size_t bytes, char *buf, size_t len);
/* "MPI_SUM", or "a user operation (0x...)". */
void mpi_check_op_words(int32_t op, char *buf, size_t len);
/* With --trace too: a mark named what (a string that lives as long as the
 * program: its first 39 characters) in this rank's trace, written out now. */
void mpi_check_trace(cr_job *job, const char *what) __attribute__((cold));
/* End this rank after a report (MPI_CHECK_EXIT). */
_Noreturn void mpi_check_end(void);
/* A rank that leaves a report to another: keep the transports moving until
 * the launcher ends the job (the reporting rank's exit does). */
_Noreturn void mpi_check_wait_end(cr_job *job);

/* ---- RMA (mpi_check_rma.c): the hooks of the window calls, each only where
 * w->chk is set (the window was made with --check=rma on) ---------------- */

struct mpi_win;
enum { MPI_CHK_RMA_PUT, MPI_CHK_RMA_GET, MPI_CHK_RMA_ACC };
/* At the window's creation (collective): w->chk. */
void mpi_check_rma_win(cr_job *job, struct mpi_win *w);
/* A transfer's checked arguments: kind MPI_CHK_RMA_*, the target's runs from
 * taddr, op and base (accumulates: the index of the predefined type every
 * target element has, mpi_type.base; -1 for the others), data: a put's packed
 * data (NULL: not kept), obuf and olen: a put's or an accumulate's contiguous
 * origin buffer to watch until the epoch closes (NULL: none, a request form). */
void mpi_check_rma_access(cr_job *job, const char *call, struct mpi_win *w, int target,
                          uint64_t taddr, const cr_run *runs, int nrun, int kind, MPI_Op op,
                          int base, const char *data, const void *obuf, size_t olen)
    __attribute__((cold));
/* After a checked MPI_Get moved (not a request form) into its contiguous
 * origin buffer obuf (olen bytes, from taddr at target): completes it and
 * watches obuf until the epoch closes. */
void mpi_check_rma_got(cr_job *job, const char *call, struct mpi_win *w, int target, uint64_t taddr,
                       void *obuf, size_t olen) __attribute__((cold));
/* How many passive-target records this rank has made on w: the marks before
 * and after a request-based get's mpi_check_rma_access, for mpi_check_rma_done. */
size_t mpi_check_rma_mark(const struct mpi_win *w) __attribute__((cold));
/* A request-based get or get-accumulate (passive records from..to-1, to
 * target) completed at a wait or test: its data came back, so it is complete
 * at the target too, as a flush would have made it. */
void mpi_check_rma_done(cr_job *job, struct mpi_win *w, const char *call, int target, size_t from,
                        size_t to) __attribute__((cold));
/* MPI_Win_fence, after its flush and before its barrier (collective). */
void mpi_check_rma_fence(cr_job *job, struct mpi_win *w, const char *call, int mode)
    __attribute__((cold));
/* MPI_Win_lock (target) or MPI_Win_lock_all (-1), once taken. */
void mpi_check_rma_lock(cr_job *job, struct mpi_win *w, const char *call, int target)
    __attribute__((cold));
/* MPI_Win_post, before it lets the origins in. */
void mpi_check_rma_post(cr_job *job, struct mpi_win *w, const char *call) __attribute__((cold));
/* MPI_Win_complete after its flush; MPI_Win_wait (or a successful
 * MPI_Win_test) once every origin has completed. */
void mpi_check_rma_complete(cr_job *job, struct mpi_win *w, const char *call) __attribute__((cold));
void mpi_check_rma_wait(cr_job *job, struct mpi_win *w, const char *call) __attribute__((cold));
/* A flush or an unlock to target (-1: all) after its engine flush; remote:
 * the accesses are complete at the target (not MPI_Win_flush_local). */
void mpi_check_rma_flush(cr_job *job, struct mpi_win *w, const char *call, int target, bool remote)
    __attribute__((cold));
/* MPI_Win_sync: the target may have seen the puts into its memory (their
 * read-back at the origin's completion then allows a change). */
void mpi_check_rma_sync(cr_job *job, struct mpi_win *w, const char *call) __attribute__((cold));
/* MPI_Win_free, before its barrier (collective): judge the passive-target
 * accesses, free w->chk. */
void mpi_check_rma_free(cr_job *job, struct mpi_win *w, const char *call) __attribute__((cold));

/* ---- leaks ------------------------------------------------------------------ */

/* At MPI_Finalize: report what the program left allocated (a warning block, the
 * job goes on: leaks are reported, not fatal). */
void mpi_check_finalize(cr_job *job) __attribute__((cold));

#endif
