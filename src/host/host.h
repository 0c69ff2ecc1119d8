/* The host segment: memory that every rank on one host shares with the others
 * and with the launcher (or, across hosts, that host's agent). It is a service
 * below the transports and the engine, not a transport:
 *  - one record per rank: its futex doorbell, pid and whether it has left;
 *  - the status board: what each rank is blocked on, read by the watchdog;
 *  - the collective areas of the whole-job groups (src/coll/coll_shm.c);
 *  - the cards: an address each rank publishes for the others (tcp wire-up);
 *  - the claim slots: per rank, words through which it and a peer agree which
 *    of them copies a part of a message (the engine's cooperative copy);
 *  - a region the shm transport lays its channels in (opaque here).
 * The launcher creates it with memfd_create (nothing is ever left in /dev/shm)
 * and every rank inherits it. Nothing here knows about messages. */
#ifndef COURIER_HOST_H
#define COURIER_HOST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#define CR_HOST_MAGIC 0x34726569726f6f63ULL /* "courier4" */
#define CR_HOST_LINE 64

/* ---- the segment's header and records ------------------------------------ */

/* The sleepers make the fence of store-then-wake for everyone (cr_host_kick):
 * set by the launcher when every rank has a CPU, so that sleeping is rare. */
#define CR_HOST_SLEEPERS_FENCE 1u

typedef struct cr_host_head {
    uint64_t magic;
    uint32_t nranks, flags; /* flags: CR_HOST_SLEEPERS_FENCE */
    uint64_t rank_off, status_off, card_off, coll_off, coll_bytes; /* coll: 0 = none */
    uint64_t region_off, region_bytes; /* the shm transport's channels */
    uint64_t total;
    uint64_t claim_off; /* the claim slots (after total: 0 in an older launcher's segment) */
} cr_host_head;

/* Whether processes other than the job's compute on this machine (core/wait.c,
 * others_run): one rank of the host looks for all of them, once a window, and
 * every rank reads its verdict, instead of each rank reading every rank's CPU
 * time (n^2 reads of /proc a window). In the head's page, after the head (an
 * older launcher's segment has zeros there, which read as "no look yet"). */
typedef struct cr_host_others {
    _Atomic uint64_t taking; /* when the rank now looking began (ns; 0: none looks) */
    _Atomic uint64_t at;     /* when the last look was taken (ns; 0: none yet) */
    _Atomic uint32_t seen;   /* its verdict: another process computes */
    uint32_t pad;
    uint64_t idle, ours; /* that look's readings, for the next window: only the looker's */
} cr_host_others;
#define CR_HOST_OTHERS_OFF 128
_Static_assert(sizeof(cr_host_head) <= CR_HOST_OTHERS_OFF, "the others' record follows the head");
/* Take the host's look at time now (ns, CLOCK_MONOTONIC): true when no look of
 * the last window_ns is known and no other rank is taking one (one begun stale_ns
 * or more ago was left by a rank that ended, and is taken over). The taker
 * writes idle and ours and ends with cr_host_look_done, which publishes seen. */
bool cr_host_look_take(cr_host_others *o, int64_t now, int64_t window_ns, int64_t stale_ns);
void cr_host_look_done(cr_host_others *o, int64_t now, bool seen);

typedef struct cr_host_rank {
    _Atomic uint32_t bell;     /* bumped by whoever wakes this rank */
    _Atomic uint32_t sleepers; /* threads of this rank waiting on bell */
    _Atomic int32_t pid;
    _Atomic uint32_t gone; /* set when the rank has finalized */
    /* A rank that sleeps in poll(2) (it has network peers too) cannot be woken
     * by a futex: it names an eventfd of its own (number + 1; 0: none), which a
     * waker duplicates with pidfd_getfd and writes. A waker that cannot sets
     * efd_failed, and the rank then naps instead of sleeping. */
    _Atomic int32_t efd;
    _Atomic uint32_t efd_failed;
    /* Set by a rank about to end because a job it spawned failed, whose own
     * launcher has said why in one line: the launcher says nothing more of
     * this rank's end (src/api/mpi_dyn.c). */
    _Atomic uint32_t said;
    /* Set by a rank that ended without a call its interface requires at the
     * end (MPI_Init's MPI_Finalize): the job ends as failed (src/run). */
    _Atomic uint32_t unfinished;
    /* Set by a rank about to end the job with status 0 by MPI_Abort(comm, 0)
     * (or mpc_stopall(0)): its end ends the job, the job's status 0 (src/run). */
    _Atomic uint32_t aborted;
    char pad[CR_HOST_LINE - 36];
} cr_host_rank;
_Static_assert(sizeof(cr_host_rank) == CR_HOST_LINE, "a rank record is one cache line");

/* What a rank is blocked on, for the launcher's hang watchdog. */
enum cr_wait_kind {
    CR_WAIT_RECV = 1,   /* a receive (or probe) that nothing matches */
    CR_WAIT_CREDIT = 2, /* a send with no room at the receiver */
    CR_WAIT_MATCH = 3,  /* a long send waiting for its receive */
    CR_WAIT_ARRIVE = 4, /* a collective waiting for peer to enter it (collective area) */
    CR_WAIT_LOCK = 5    /* a one-sided lock held by another rank (tag: whose window; peer -1) */
};

typedef struct cr_waitinfo {
    char call[48];  /* interface call the rank is in, e.g. "crecv", "MPI_Wait on MPI_Ibcast" */
    char op[32];    /* the call that started what it waits for ("MPI_Irecv"), when another */
    char group[40]; /* the interface's name for the context ("MPI_COMM_WORLD"), or "" */
    uint8_t coll;   /* the context is a group's collective one: its tags are internal */
    uint8_t kind;   /* enum cr_wait_kind */
    uint8_t tag_mode;
    uint8_t polls; /* not blocked in a call but polling for it in a loop (MPI_Test, iprobe) */
    uint16_t ctx;
    int32_t peer; /* the rank waited for, or -1: any */
    int32_t tag;
    uint32_t mask;
    uint64_t size;
} cr_waitinfo;

/* A waitinfo that came from a rank (or a host's agent): its strings ended. */
static inline void cr_waitinfo_sane(cr_waitinfo *w)
{
    w->call[sizeof w->call - 1] = w->op[sizeof w->op - 1] = w->group[sizeof w->group - 1] = '\0';
}

/* A rank's traffic so far and its queues, for `courier status`: written by the
 * rank alone (under its engine lock, plain stores of aligned words), read by
 * anyone at any time, so a reader may see one counter a message ahead of
 * another. Messages are engine messages (a collective's count as several). */
typedef struct cr_host_stats {
    uint64_t sent_msgs, sent_bytes; /* messages this rank started sending */
    uint64_t recv_msgs, recv_bytes; /* messages a receive of this rank matched */
    uint64_t unexp_bytes;           /* their sizes (held here, or still at a sender) */
    uint32_t posted;                /* receives posted that nothing matched yet */
    uint32_t unexpected;            /* messages arrived that no receive matched yet */
    uint32_t posted_max;            /* the most 'posted' has been (MPI_T's high-water marks) */
    uint32_t unexpected_max;        /* the most 'unexpected' has been */
    uint64_t pad[1];
} cr_host_stats;
_Static_assert(sizeof(cr_host_stats) == CR_HOST_LINE, "the counters are one cache line");

/* The status board: written by its rank (seqlock: seq is odd while it writes),
 * read by the watchdog and `courier status`. Apart from cr_host_rank so that
 * the watchdog's reads never touch a line on the message path; the counters
 * (stats) are on their own line, which only `courier status` reads. */
#define CR_HOST_SOME 2 /* (blocked) a thread waits, another runs: not blocked */
typedef struct cr_host_status {
    _Atomic uint32_t seq;
    uint32_t blocked;      /* 1 while blocked in a communication call; CR_HOST_SOME */
    uint32_t spells;       /* blocked spells so far: a change means the rank moved */
    _Atomic uint32_t busy; /* a handler runs, or a long single copy: the rank is not stuck */
    cr_waitinfo w;
    cr_host_stats stats __attribute__((aligned(CR_HOST_LINE)));
} __attribute__((aligned(CR_HOST_LINE))) cr_host_status;

/* A rank's card: an address it publishes for its peers (ready = length + 1 once
 * written, release order). */
#define CR_CARD_MAX 1024
typedef struct cr_host_card {
    _Atomic uint32_t ready;
    uint32_t pad;
    unsigned char data[CR_CARD_MAX];
} cr_host_card;

/* Memory that every rank of the job reads and writes directly, for the small
 * collectives of a whole-job group (src/coll/coll_shm.c). Per rank, two lines
 * (one per parity of the collective's generation), each a generation word and a
 * few bytes of inline data; then, per parity and rank, a slot of 'slot' bytes. */
typedef struct cr_coll_line {
    _Atomic uint64_t gen;
    uint64_t pad; /* data aligned for any element type */
    unsigned char data[48] __attribute__((aligned(16)));
} __attribute__((aligned(64))) cr_coll_line;

/* NX/2, MPL and MPI_COMM_WORLD each have one whole-job group; MPI's
 * communicators of the whole job in the world's order (dups, splits with one
 * color) have 4 more, one per context pair 0..3 (mpi_comm.c). */
#define CR_COLL_AREAS 7
/* Collective areas exist for jobs up to CR_COLL_MAX_RANKS; each rank's slot holds
 * cr_coll_slot(nranks) bytes (all-to-all needs one block per rank in it: 16 KiB
 * up to 16 ranks, 2 KiB up to 64). */
#define CR_COLL_MAX_RANKS 64
static inline uint32_t cr_coll_slot(int nranks)
{
    return nranks <= 16 ? 16384 : 2048;
}

typedef struct cr_coll_area {
    cr_coll_line *lines;  /* [rank * 2 + parity] */
    unsigned char *slots; /* [(parity * nranks + rank) * slot] */
    size_t slot;
} cr_coll_area;

/* Claim slots: CR_HOST_CLAIMS words per rank, each owned by that rank (the
 * receiver of a cooperative copy), which arms one and names it to a sender;
 * then both try one compare-exchange on it and the winner copies the part it
 * names (the engine's protocol: docs/engine.md, "cooperative copy"). A word is
 * seq << 2 | state; what seq and state mean is the engine's. */
#define CR_HOST_CLAIMS 64

/* ---- creation (the launcher) --------------------------------------------- */

/* Bytes of a segment for n ranks whose shm region takes region_bytes. */
size_t cr_host_segment_size(int n, size_t region_bytes);
/* Bytes before the region: what the launcher keeps mapped for the watchdog. */
size_t cr_host_control_size(int n);
/* Lay out a zeroed segment; returns the region's start (the caller lays it out). */
void *cr_host_segment_init(void *base, int n, size_t region_bytes, uint32_t flags);

/* ---- a rank's view ------------------------------------------------------- */

typedef struct cr_host {
    void *base;
    size_t len;
    int rank, size;
    const cr_host_head *hd;
    cr_host_rank *ranks;
    cr_host_status *status;
    cr_host_card *cards;
    cr_coll_area coll[CR_COLL_AREAS]; /* lines NULL: none */
    _Atomic uint64_t *claims;         /* [rank * CR_HOST_CLAIMS + slot]; NULL: none */
    void *region;
    size_t region_bytes;
    cr_host_others *others; /* this host's look for other work (never NULL once attached) */
    int *peer_efd; /* per peer: our duplicate of its eventfd + 2 (0: none yet, 1: failed) */
    bool fenced_by_sleepers; /* registered for membarrier: cr_host_kick needs no fence */
    bool sleeper_barrier;    /* the kernel has membarrier's global expedited barrier */
} cr_host;

/* Map the segment inherited as fd (closed here); 0 or -errno. */
int cr_host_attach(cr_host *h, int fd, int rank, int size);
/* Give the len bytes of the segment at p (inside the mapping) memory now
 * (MADV_POPULATE_WRITE), so that touching them later cannot raise SIGBUS; 0, or
 * -errno (ENOMEM: the machine is out of memory). The launcher allocates the
 * segment's control part and the shm region's fixed part; the rest is taken
 * this way as used. A kernel before 5.14 lacks the call: its pages come at
 * first touch, as before. */
int cr_host_reserve(cr_host *h, const void *p, size_t len);
/* Touch every page of the len bytes at p once (writing the value that is
 * there, with write), so that the first use of each page in this process is
 * over before the traffic that needs it. A mapped page's first access from a
 * process costs about 8 us on a virtual machine that shadows the guest's page
 * tables (this project's VM: 20,000 cycles, populated or not; the second 21),
 * and a channel's ring met them one per 4 KiB of traffic, each stalling both
 * sides of an exchange. */
void cr_host_touch(const void *p, size_t len, bool write);
/* Mark this rank gone, wake every peer, unmap. */
void cr_host_detach(cr_host *h);

/* Store-then-wake: after a store a peer may wait on (a message cell, consumed
 * counts, a collective line), wake it if it sleeps. The earlier stores must be
 * ordered before the read of its sleepers count; a sleeper increments that
 * count, then looks again before it waits (cr_host_announce's protocol), so
 * either we see it and wake it, or it sees our store. The order costs a full
 * fence per store-then-wake, which waits for the store's cache line to come
 * from the peer that reads it (84 % of the time of shm's send of a short
 * message): instead the sleeper, which is the rare side, makes the fence for
 * everyone. It asks the kernel (membarrier, global expedited) to run a
 * barrier on every CPU running a rank registered for it, after it announced
 * itself and before it looks again: a registered rank's store not yet visible
 * then is ordered before its later read of the count. A rank that could not
 * register fences itself. Only where every rank has a CPU of its own
 * (CR_HOST_SLEEPERS_FENCE): with more ranks than CPUs ranks sleep at every
 * wait and the barrier would cost each of them (osu_bcast at 4 ranks on 2
 * cores 2-5x slower under load). Where the kernel lacks the call every rank
 * fences. osu_bw 8 B at 2 ranks: +20 % messages per second. */
static inline void cr_host_full_fence(void)
{
#if defined(__x86_64__)
    /* A locked add to the stack orders like mfence and costs about half as much. */
    __asm__ __volatile__("lock addl $0,-4(%%rsp)" ::: "memory", "cc");
#else
    atomic_thread_fence(memory_order_seq_cst);
#endif
}
/* Unconditional: bump the bell, futex wake, and write the peer's eventfd if it
 * named one (cr_host_sleep_on_fd). */
void cr_host_ring(cr_host *h, int peer);
/* This rank sleeps in poll(2) on fd from now on: peers' rings write to it. */
void cr_host_sleep_on_fd(cr_host *h, int fd);
/* Ask the scheduler for the shortest time slice for the calling thread
 * (shortened: EEVDF, Linux 6.12 and later; older kernels take the request and
 * ignore it), or for the default one again. A thread that sleeps and is woken
 * then preempts a process that computes at once, and a yield moves its
 * deadline by that short slice instead of handing the core over for a whole
 * one. A policy other than SCHED_OTHER (the user's choice) is left alone. */
void cr_host_short_slice(bool shortened);
/* The CPU time (ns) every thread of process pid has had, from the scheduler's
 * own count (/proc/PID/task/TID/schedstat, exact to the nanosecond); 0 when it
 * cannot be read (the process is gone, or on another host). */
uint64_t cr_host_cpu_ns(pid_t pid);
/* A clock_gettime clock in ns: CLOCK_THREAD_CPUTIME_ID this thread's CPU time,
 * CLOCK_PROCESS_CPUTIME_ID its process's, CLOCK_MONOTONIC; 0 when unreadable. */
uint64_t cr_host_clock_ns(clockid_t which);
/* The machine's CPU time (ns, all its CPUs together) that went to no task:
 * idle, waiting for I/O, or taken by the hypervisor (steal); and how many CPUs
 * are online. From /proc/stat (in clock ticks); false when unreadable. */
bool cr_host_unused_ns(uint64_t *unused, unsigned *cpus);
/* The rule both waiters follow (the engine's, core/wait.c; the simulated mode's,
 * vtime.c): a yield that took longer than this lost the core to a process that
 * computes, not to one that waits, and a waiter keeps its short slices this
 * long after such a loss. */
#define CR_YIELD_SLICE_NS 200000u
#define CR_SLICE_KEEP_NS 1000000000u
/* The argument of sched_setattr(2) and sched_getattr(2), which libc does not declare. */
typedef struct cr_sched_attr {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
} cr_sched_attr;
/* The user's own directory for courier's files (the launcher's registry, the
 * key and names of jobs that connect): $XDG_RUNTIME_DIR/courier when
 * XDG_RUNTIME_DIR names a directory of the user's, else /tmp/courier-<uid>, in
 * dir. 0 when it is there and safe (made first, mode 0700, when create), 1 when
 * there is none (and !create), -1 when it cannot be used (why says so): a link,
 * not a directory, another user's, or with mode bits set that forbid refuses. */
int cr_user_dir(char *dir, size_t len, bool create, unsigned forbid, char *why, size_t wlen);

/* Could some peer not reach our eventfd? (Then poll in short naps.) */
static inline bool cr_host_fd_unreachable(const cr_host *h)
{
    return atomic_load_explicit(&h->ranks[h->rank].efd_failed, memory_order_relaxed) != 0;
}
static inline void cr_host_kick(cr_host *h, int peer)
{
    if (h->fenced_by_sleepers)
        atomic_signal_fence(memory_order_seq_cst); /* the compiler keeps the order */
    else
        cr_host_full_fence();
    if (atomic_load_explicit(&h->ranks[peer].sleepers, memory_order_relaxed)) cr_host_ring(h, peer);
}
/* The sleeping side: announce, then the caller looks once more at everything
 * it waits for; if nothing, cr_host_wait; always cr_host_unannounce after. */
uint32_t cr_host_announce(cr_host *h);
void cr_host_wait(cr_host *h, uint32_t bell, long timeout_us);
void cr_host_unannounce(cr_host *h);

/* Claim slot 'slot' of rank r (NULL: the segment has none). */
static inline _Atomic uint64_t *cr_host_claim(const cr_host *h, int r, unsigned slot)
{
    return h->claims ? &h->claims[(size_t)r * CR_HOST_CLAIMS + slot % CR_HOST_CLAIMS] : NULL;
}

static inline int cr_host_gone(const cr_host *h, int peer)
{
    return (int)atomic_load(&h->ranks[peer].gone);
}
static inline void cr_host_said(cr_host *h)
{
    atomic_store(&h->ranks[h->rank].said, 1);
}
static inline void cr_host_unfinished(cr_host *h)
{
    atomic_store(&h->ranks[h->rank].unfinished, 1);
}
static inline void cr_host_aborted(cr_host *h)
{
    atomic_store(&h->ranks[h->rank].aborted, 1);
}
static inline int32_t cr_host_pid(const cr_host *h, int peer)
{
    return atomic_load(&h->ranks[peer].pid);
}

/* The status board. */
void cr_host_report_wait(cr_host *h, const cr_waitinfo *w); /* NULL: no longer blocked */
/* A thread of the rank waits (w) while another runs: shown where a report says where the
 * ranks are (--timeout), not blocked for the hang watchdog (blocked = CR_HOST_SOME). */
void cr_host_report_some(cr_host *h, const cr_waitinfo *w);
void cr_host_report_busy(cr_host *h, int busy);

/* Cards: publish mine; read a peer's (0 and *len set, or -EAGAIN: not yet). */
int cr_host_card_put(cr_host *h, const void *card, size_t len);
int cr_host_card_get(const cr_host *h, int peer, void *card, size_t *len);

#endif
