/* The message engine's internal interface: the job context, requests, matching
 * selectors and the calls the interfaces (src/api) and collectives (src/coll) use.
 *
 * One cr_job holds the engine's per-process state, and reaches the state of
 * each interface and service (native, nx, mpl, mpi, rma, streams, modes: each
 * made and owned by its layer on first use, opaque here). No other mutable
 * state lives at file level in libcourier, except what is process-wide by
 * nature: the job itself (cr_the_job, job.c: a pointer to it); the contexts' scheduler
 * (src/host/contexts.c: one per process, the same in every rank's copy of the
 * data it swaps); libcrypto's entry points (tcp_crypto.c: one library per process); the
 * simulated clock's preload (simclock.c, not part of libcourier); and the
 * variables an interface defines for programs (NX/2's msginfo, MPL's mperrno,
 * MPI's courier_mpi_weights markers, the Fortran binding's sentinels
 * mpi_fortran_*_ of mpi_f2c.c: part of their ABI). The collective layer's
 * kept temporaries hang off the job (coll_keep), the nonblocking collectives'
 * list, user operations and the rest off MPI's state. In the contexts of the simulated mode each
 * rank's job, and what it reaches on the heap, is its own: of libcourier, only
 * the pointer to the job and those few variables are swapped at a switch.
 *
 * Every function here expects the caller to hold the engine lock (cr_lock)
 * when the job is threaded: when a progress thread exists, or when several
 * threads of the program may call at once (MPI_THREAD_MULTIPLE,
 * cr_multi_begin). */
#ifndef COURIER_ENGINE_H
#define COURIER_ENGINE_H

#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../transport/transport.h"
#include "idtable.h"
#include "trace.h"

#define CR_ANY_SOURCE (-1)

/* Contexts keep the traffic of different interfaces and of collectives apart. */
enum {
    CR_CTX_NX = 0,   /* NX/2 point-to-point */
    CR_CTX_COLL = 1, /* collectives of the job-wide group */
    CR_CTX_USER = 2, /* first context for interface groups/communicators */
    /* The native interface (src/api/native.c, rma.c, stream.c, modes.c). */
    CR_CTX_NATIVE = 0x100,    /* its collectives (cr_sync, region exchange) */
    CR_CTX_RMA = 0x101,       /* one-sided requests a target serves, and their replies */
    CR_CTX_STREAM = 0x102,    /* iWarp-style logical channels (stream.c) */
    CR_CTX_MODES = 0x103,     /* the GMD communication modes (modes.c) */
    CR_CTX_MPI_PART = 0x104,  /* MPI partitioned communication (api/mpi_part.c) */
    CR_CTX_XPEERS = 0x105,    /* closing a set of peers of another job (xpeers.c) */
    CR_CTX_MPI_DYN = 0x106,   /* MPI's leaders while they connect two jobs (api/mpi_dyn.c) */
    CR_CTX_MPI_CHECK = 0x107, /* --check's flush at MPI_Finalize (api/mpi_check.c) */
    CR_CTX_NX_HOST = 0x108    /* NX/2 nodes' ends, for the host process's waitall (api/nx.c) */
};

/* How a receive selects the type (tag) of a message. */
enum cr_tag_mode {
    CR_TAG_EXACT, /* type == value */
    CR_TAG_ANY,   /* every type */
    CR_TAG_MASK,  /* NX/2: bit t of mask selects type t (0..30) */
    CR_TAG_BELOW  /* NX: every type 0..tag-1 (type -1, which leaves out the force types) */
};

typedef struct cr_sel {
    int src; /* rank or CR_ANY_SOURCE */
    uint16_t ctx;
    uint8_t tag_mode;
    int32_t tag;   /* for CR_TAG_EXACT and CR_TAG_BELOW */
    uint32_t mask; /* for CR_TAG_MASK */
} cr_sel;

/* Does a message (src, ctx, tag) match selector s? NX/2 masks select types 0..30. */
static inline bool cr_sel_match(const cr_sel *s, int src, uint16_t ctx, int32_t tag)
{
    if (s->ctx != ctx || (s->src != CR_ANY_SOURCE && s->src != src)) return false;
    switch (s->tag_mode) {
    case CR_TAG_EXACT:
        return tag == s->tag;
    case CR_TAG_ANY:
        return true;
    case CR_TAG_BELOW:
        return tag >= 0 && tag < s->tag;
    default:
        return tag >= 0 && tag <= 30 && (s->mask >> tag & 1u);
    }
}

/* What a completed receive (or a probe) found. */
typedef struct cr_status {
    int src;
    int32_t tag;
    size_t size;  /* bytes the message had */
    size_t count; /* bytes delivered into the buffer */
    uint64_t sig; /* the check value its sender gave (cr_job's chk_sig), 0: none */
} cr_status;

enum cr_req_kind { CR_REQ_SEND = 1, CR_REQ_RECV = 2 };

/* Where a send stands on the wire. */
enum cr_stage {
    CR_STAGE_EAGER = 1, /* whole message still to send */
    CR_STAGE_RTS,       /* rendezvous request still to send */
    CR_STAGE_WAIT,      /* waiting for FIN (pulled) or CTS (push) */
    CR_STAGE_PUSH,      /* pushing DATA chunks */
    CR_STAGE_COOP       /* a receive that pulled its part, waiting for the sender's (WDONE) */
};

struct cr_req;
struct cr_job;

/* Where a receive notes a message longer than its buffer instead of ending the
 * job: the first such message's size, the buffer's and the sender's job rank
 * (set: noted). A collective layer's group names one for the interface that
 * reports it in its own words (MPI: MPI_ERR_TRUNCATE through the communicator's
 * error handler). */
typedef struct cr_trunc {
    size_t size, cap;
    int src;
    bool set;
} cr_trunc;
typedef void (*cr_handler_fn)(struct cr_job *job, void (*user_fn)(void), const cr_status *st);

typedef struct cr_req {
    cr_idslot id;        /* its slot in job->reqs (idtable.h): index, generation, live */
    struct cr_req *next; /* queue link (posted, backlog, handlers due) */
    uint8_t kind;
    uint8_t done;
    uint8_t stage;    /* enum cr_stage (a receive: PUSH once DATA may name it) */
    uint8_t trunc_ok; /* receive: a longer message is cut to fit, not an error */
    int peer;
    cr_sel sel; /* receive */
    void *buf;
    size_t cap;            /* receive buffer size / send length */
    size_t got;            /* bytes arrived so far (pipelined path) */
    cr_status st;          /* filled at completion of a receive */
    const char *op;        /* interface call name, for error messages */
    cr_handler_fn handler; /* run after completion, on the progress thread */
    void (*user_fn)(void); /* the interface's user handler, for 'handler' to call */
    /* send side */
    uint16_t ctx;
    int32_t tag;
    size_t pushed; /* pipelined path: bytes copied into the segment so far */
    uint64_t rreq; /* send, pipelined path: the receiver's request id; receive in
                      CR_STAGE_COOP: the sender's */
    /* internal receives that take an unexpected long message off its sender
     * without single copy (cr_engine_buffer_rts) */
    struct cr_unexp *for_unexp; /* the entry the data will belong to, or */
    struct cr_req *chain;       /* the user receive that matched it meanwhile */
    uint8_t sync;               /* synchronous send (MPI): always rendezvous, see cr_issend */
    uint8_t blocking;           /* send: its caller waits for it at once (cr_send) */
    uint8_t lane;               /* send: in the pair's lane (cr_isend_lane) */
    uint8_t cancel;             /* send: CR_CANCEL_ASKED or CR_CANCEL_DONE (cr_cancel_send) */
    uint8_t detached;           /* send: its caller went on; buf is the engine's copy, freed
                                   with the request when the send completes (engine.c) */
    uint8_t claim;              /* receive in CR_STAGE_COOP: its claim slot + 1 (0: none) */
    uint8_t push; /* receive: a rendezvous message is pushed, not read (cr_irecv_push) */
    /* Wake-ups (several threads): a thread sleeps waiting for this request
     * alone; the call that makes it has not returned yet (no other thread can
     * be waiting for it: completing it then wakes nobody). */
    uint8_t sleeper, fresh;
    /* A blocking receive's request lives on its caller's stack and has no id
     * (id.idx CR_NOID); when the push path needs an id, a table request stands in
     * for it and completes it through fwd. */
    struct cr_req *fwd;
    uint64_t posted_at; /* receive, while tracing: when it was posted (cr_trace_now) */
    cr_trunc *trunc_to; /* receive: a longer message is cut to fit and noted here */
    uint64_t sig;       /* send: the check value it carries (job->chk_sig when it started) */
} cr_req;

#define CR_NOID UINT32_MAX

/* A message that arrived before its receive was posted. */
typedef struct cr_unexp {
    struct cr_unexp *next;
    int src;
    uint16_t ctx;
    int32_t tag;
    uint8_t op;    /* CR_OP_EAGER (data held here) or CR_OP_RTS (data still at the sender) */
    uint8_t owned; /* data was malloc'd apart from the entry */
    size_t size;
    size_t held;         /* bytes counted against unexp_limit besides the entry */
    uint64_t addr, sreq; /* RTS */
    char *data;          /* EAGER */
    cr_req *arriving;    /* RTS being pushed into 'data' (no single copy) */
    uint8_t flags;       /* RTS: its header flags (CR_HDR_SYNC: a synchronous send's, never
                            taken before a receive matches) */
    uint64_t sig;        /* the check value its sender gave (cr_status.sig) */
} cr_unexp;

/* A control message (FIN, CTS) waiting for credits. */
typedef struct cr_ctrl {
    struct cr_ctrl *next;
    cr_hdr h;
} cr_ctrl;

/* An open transport: its table and its state. base: the engine's peer p is
 * the transport's peer p - base (0 for the job's own transports; a set of
 * extra peers, xpeers.h, numbers its members in a world of its own). */
typedef struct cr_link {
    const cr_transport *ops;
    void *ctx;
    int base;
    size_t eager; /* the largest message sent eagerly to its peers (but the rank itself) */
} cr_link;
#define CR_MAX_LINKS 16             /* the job's transports (at most 4) and sets of extra peers */
#define CR_LINK_CLOSED CR_MAX_LINKS /* links[]' last: every closed set's peers (xpeers.c) */
#define CR_MAX_BG 4

/* One blocking wait of one thread (on its stack): what it waits for, as the hang
 * watchdog is told, and how long it has idled (cr_idle). */
typedef struct cr_wait {
    struct cr_wait *next; /* in job->blocked while listed */
    unsigned spins;       /* idle rounds of this spell */
    uint64_t idle_since;  /* when this spell stopped spinning */
    cr_req *until;        /* the wait ends when this request completes, and only then */
    const cr_req *req;    /* what the wait is for (watchdog), or */
    const cr_sel *sel;    /* ... the probe's selector, or */
    const char *op;       /* ... the collective (coll_shm.c) and the member */
    const int *peer;      /* it waits for (member index = job rank), or */
    uint16_t ctx;         /* ... with op: the group's context (its name for the watchdog) */
    const char *call;     /* ... the call (several requests, a nonblocking collective) */
    const int *lock_of;   /* ... with call: a lock of this rank's window, held by another */
    int peer_shown;       /* *peer as last reported (it moves on as members come) */
    bool spell_reported;  /* this blocked spell was reported (at its first sleep) */
    bool listed;          /* in job->blocked: reported blocked, not yet over */
} cr_wait;

typedef struct cr_job {
    int rank, size;
    pid_t pid;           /* the rank's process (a child it forks is not the rank) */
    int npeers;          /* peers the engine addresses: the job's size ranks, then the extra
                            peers of other jobs (xpeers.h); every per-peer array has npeers */
    int appnum;          /* index of this rank's program in an MPMD job */
    int host_rank;       /* first rank of the first program */
    bool oversub;        /* more ranks on this machine than cores: spin less */
    uint32_t poll_yield; /* missed polls, counted for their yields (wait.c: poll_yield) */
    bool oversub_coll;   /* oversub, where every rank of the job sees the same (job.c) */
    bool hosts_differ;   /* the job's ranks run on more than one machine (HOST_LAYOUT) */
    bool threaded;       /* take the lock: a progress thread exists, or multi */
    bool progress_on;    /* the progress thread exists */
    bool policy_kept;    /* the user chose a scheduling policy: the thread keeps it */
    bool multi;          /* several program threads may call at once (cr_multi_begin) */

    pthread_mutex_t lock;

    /* transports (src/transport/registry.c, opened by job.c): the open ones, and per peer the
     * one that owns it; the waiting point sleeps on all of them at once */
    cr_link links[CR_MAX_LINKS + 1];
    int nlinks;
    /* Per peer, a byte or two: a job of N ranks holds N of each in every rank (a 16384-rank
     * simulated job, 268 M); the per-peer queues and counts below are pages of zeros that
     * only the peers a rank talks to make real (cr_peer_array) */
    uint8_t *link_of;     /* per peer: the index in links of the one that owns it */
    int one_link;         /* the index of the link of every peer but the rank itself, or -1
                             (then link_of says): the usual job, read without link_of */
    uint8_t *single_copy; /* per peer: its transport's get/put work (until denied) */
    cr_link *peek_link;   /* a transport a blocking receive copies straight out of */
    cr_host host;         /* this host's segment (base NULL: none, a job of one) */
    cr_vt vt;             /* courier run --sim: the virtual clock (base NULL: real time) */
    int *host_of;         /* per rank: its host's number */
    int *host_of_first;   /* the first host_of, which the transports keep, once xpeers.c
                             has replaced it with a longer one (NULL until then) */
    bool coll_area_ok;    /* every peer is on this host: the collective areas serve */
    bool use_bell;        /* some transport is woken by the host doorbell */
    int wake_fd;          /* eventfd that wakes this rank's poll(2), or -1 */
    struct pollfd *pfds;  /* the descriptors the waiting point polls */
    int npfds;
    unsigned char secret[CR_SECRET_LEN];
    bool has_secret;

    /* requests: an id table (idtable.h), so addresses stay put and an id on the
     * wire names a live request or nothing; FIFO: a slot is reused as late as
     * possible */
    cr_idt reqs;

    /* matching */
    cr_req *posted, **posted_tail;
    cr_unexp *unexp, **unexp_tail;
    size_t unexp_bytes, unexp_limit;

    /* sends waiting for credits or pushing data, in order: [peer] the ordinary
     * ones, [size + peer] the lane's */
    cr_req **backlog; /* [2 * peer + lane] */
    cr_ctrl **ctrlq;
    unsigned nbacklog, nctrl;
    unsigned sends_active; /* sends not yet complete */
    unsigned *sends_to;    /* per peer: the same, to that peer */
    size_t detached_bytes; /* copies held by detached sends (engine.c: send_wait) */
    unsigned *owed;        /* per peer: rendezvous replies (FIN, CTS, DATA) we await */
    /* cooperative copies with a claim (engine.c, start_pull): the last sequence
     * number given, and which of this rank's claim slots (host.h) are armed
     * for a copy not yet settled (bit slot) */
    uint64_t claim_seq, claim_busy;
    int8_t claim_test; /* COURIER_TEST_CLAIM read: 0 not yet, 1 none, 2 receiver, 3 sender */
    uint32_t recv_gen; /* bumped when a receive is posted or unexpected space frees */

    /* hrecv/rcvncall handlers: completed requests waiting for their handler */
    cr_req *handlers_due, **handlers_due_tail;
    pthread_mutex_t trap_lock; /* recursive: held while a handler runs */
    _Atomic int trap_masked;
    pthread_t progress_thread;
    _Atomic int stopping;

    /* waiting */
    unsigned spin_limit;   /* most idle rounds spent spinning (COURIER_SPIN) */
    unsigned spin_floor;   /* fewest: about a round trip to a running peer */
    unsigned spin_now;     /* this spell's spin, adapted between the two (cr_idle) */
    uint8_t spell_end;     /* how the last idle spell went (cr_idle) */
    bool short_slice;      /* asked the scheduler for short time slices (cr_idle) */
    uint64_t preempted_at; /* when a yield last lost a slice to a computing process (ns) */
    unsigned preempts;     /* ... and how many did within CR_SLICE_KEEP_NS of each other */
    cr_host_others others; /* the look for other work where no host segment is shared (cr_idle) */
    unsigned ceded_run;    /* spells in a row that a hand-over of the CPU ended (cr_idle) */
    uint64_t moved_at;     /* when this rank last stepped off a CPU it shared (cr_idle) */
    uint64_t yield_ns;     /* then this long yielding the core, then sleep */
    int nap_ms;            /* a sleep's longest spell: the net under a lost wake-up */
    /* A collective about to wait (coll_shm.c) names the member it waits for
     * here; the wait it enters (cr_wait_until) takes both into its cr_wait. */
    const char *wait_op;
    const int *wait_peer;
    uint16_t wait_ctx;
    /* The watchdog's board in the interface's words: the call under way (MPI
     * sets it at each call's entry), and a namer of the interface's contexts
     * (true: ctx is a group's collective context, whose tags are internal). */
    const char *in_call;
    /* What a wait of in_call is for, or NULL: "MPI_Ibcast" of the board's
     * "MPI_Wait on MPI_Ibcast" (put together only when the board shows it). */
    const char *in_call_on;
    /* The call an interface requires before the program ends, not yet made
     * ("MPI_Finalize" from MPI_Init on), or NULL: an exit without it is said,
     * and the launcher ends the job as failed (cr_job_finalize). */
    const char *must_call;
    /* Checking (courier run --check, src/api/mpi_check.c): the opaque value the
     * interface gives the message it is sending now (0: none). The engine
     * carries it to the receive's status (cr_status.sig) and never reads it. */
    uint64_t chk_sig;
    bool (*ctx_name)(struct cr_job *job, uint16_t ctx, char *buf, size_t len);
    /* The interface bumps ctx_names_gen whenever what ctx_name says may change
     * (a communicator made, renamed or dropped). The board asks ctx_name again
     * only then or for another context: the name it gave for board_ctx (0:
     * none yet) at board_names_gen is board_group, board_coll. */
    uint32_t ctx_names_gen, board_names_gen;
    uint16_t board_ctx;
    bool board_coll;
    char board_group[sizeof(((cr_waitinfo *)0)->group)];
    /* Waits reported blocked and not yet over, the latest first; the status
     * board shows the latest while the rank counts as blocked (every thread of
     * the process is in such a wait, when multi), else nothing. */
    cr_wait *blocked;
    unsigned nblocked;
    bool board_blocked; /* what the board shows now */
    bool board_some;    /* ... or a thread that waits while another runs (cr_host_report_some) */
    /* A rank that waits by polling (wait.c, cr_poll_missed): a streak is the
     * program's polls in a row that found nothing, with no other call between
     * them; it is judged by windows of its time, and the board shows it as
     * blocked once it only polls. */
    struct cr_poll {
        uint64_t misses;      /* polls of the streak (0: no streak) */
        unsigned depth;       /* calls entered during the streak and not yet left */
        bool missed;          /* the call under way found nothing */
        bool shown;           /* the board shows the streak */
        uint8_t quiet;        /* windows in a row that only polled */
        const char *calls[4]; /* the poll calls of the streak */
        uint64_t left;        /* when the last poll returned (0: not timed) */
        uint64_t win_misses;  /* misses when the window began, */
        uint32_t gaps;        /* ... and gaps of more than POLL_GAP_NS between polls since */
        uint64_t win_ns;      /* the window's start (0: not begun), and then */
        uint64_t win_cpu;     /* ... this thread's CPU time and */
        uint64_t win_others;  /* ... the other threads' */
    } poll;
    int nthreads;           /* multi: threads of the process, as last counted, */
    uint64_t board_checked; /* ... then */
    /* Threads that sleep in the waiting point. Waiters (in cr_idle) are woken
     * by another thread that does under the lock what may end their wait: a
     * waiter for one request (cr_req_wait) by its completion (r->sleeper); a
     * probe (sleep_msg) by a message queued unexpected; any other wait
     * (sleep_any: its ready() may look at anything) by both, except the
     * completion of a request whose call has not returned (r->fresh: what
     * follows from it follows from an event that woke them already). Pollers
     * share the wake-up eventfd, which only the last of them to leave poll(2)
     * reads (wake_seen: one of them saw it set), so that no poller misses a
     * wake-up another one consumed. */
    unsigned sleepers, sleep_msg, sleep_any, pollers;
    bool wake_seen;
    /* Program threads in a blocking wait (wait_loop, probe: cr_wait_enter,
     * cr_wait_leave): each moves the engine itself, so the progress thread
     * steps aside meanwhile (progress.c); wait_seq counts the waits begun, and
     * aside_seq is the one the progress thread last stepped aside for: its nap
     * beside one wait grows while that wait goes on. */
    unsigned waiting, wait_seq, aside_seq;
    bool handlers_on;   /* handler receives were posted: the thread answers at once */
    bool sim_handling;  /* simulated: this thread runs due handlers (none nest) */
    bool bg_pending;    /* some background hook has work under way: the OR of what the hooks
                           said at their last run, or set by a layer that just started some */
    bool progress_long; /* the progress thread is in a long nap (cr_bg_kick ends it) */
    long progress_nap;  /* its next nap, idle or beside a wait: us (doubles up to 100 ms) */
    /* The progress thread naps on this word of its own, which only this
     * process's cr_wake_self and cr_bg_kick change (not the doorbell peers ring). */
    _Atomic uint32_t nap_word;
    _Atomic int napping;

    /* This rank's traffic and queues as `courier status` shows them: its
     * record on the host segment's status board, or own_stats when there is
     * no segment (a job of one). Kept by the engine under the lock. */
    cr_host_stats *stats;
    cr_host_stats own_stats;
    /* Time in the engine's waits that had to wait (wait_loop), and how many:
     * counted only while time_waits (MPI_T's started handles of them,
     * src/api/mpi_tool_pvar.c) is not 0, so that no clock is read otherwise. */
    unsigned time_waits;
    uint64_t wait_ns, waits;

    /* Tracing (src/core/trace.c, courier run --trace): NULL when off. */
    struct cr_trace *trace;

    /* NX/2 information about the last message received or probed */
    cr_status last;

    /* Tests and fuzzing only: cr_fatal calls this with its message before it ends
     * the process; the hook may longjmp out instead of returning. */
    void (*on_fatal)(struct cr_job *job, const char *msg);

    /* State of the interfaces and services (NULL until first used). */
    struct cr_native *native;   /* src/api/native.c: its group */
    struct cr_nx *nx;           /* src/api/nx.c: its group, irecvx ids */
    struct cr_mpl *mpl;         /* src/api/mpl.c: its groups, message ids */
    struct cr_mpi *mpi;         /* src/api/mpi_impl.h: every MPI table and setting */
    struct cr_rma *rma;         /* src/core/rma.c: regions, transfers in flight */
    struct cr_streams *streams; /* src/api/stream.c */
    struct cr_modes *modes;     /* src/api/modes.c */

    /* src/coll/sched.c: large temporaries of finished schedules, kept for the
     * next ones (NULL until one is kept). */
    struct cr_coll_keep *coll_keep;
    int coll_forced; /* COURIER_COLL_ALG's algorithm + 1 once read (cr_coll_forced), 0 before */

    /* Started by srun --mpi=pmi2 (src/core/pmi.c): the PMI-2 client, else NULL */
    struct cr_pmi *pmi;
    struct cr_pmiwatch *pmiwatch; /* ... and the ranks' own watchdog (pmiwatch.c) */

    /* Background work of the interfaces (MPI's nonblocking collectives): every
     * cr_progress, whichever thread makes it (a waiting call, the progress
     * thread), runs each hook under the lock; a hook returns how many steps it
     * made and never waits (cr_bg_add registers one). */
    int (*bg[CR_MAX_BG])(struct cr_job *job, bool *pending);
    int nbg;
    bool in_bg; /* a hook is running: cr_progress inside it runs none */
    /* Collectives completed through shared memory (no message is counted for
     * them): with stats->recv_msgs, what --check=rma takes for this rank's
     * synchronisations (src/api/mpi_check_rma.c). */
    uint64_t coll_shm_done;

    /* cr_clock_ns's state (clock.c): where the time-stamp counter is a clock,
     * after a calibration against CLOCK_MONOTONIC it is read instead of
     * clock_gettime. The fields are written once each, before the release
     * store of the phase that publishes them. */
    struct {
        _Atomic int phase;   /* CLK_* in clock.c */
        uint64_t tick0, ns0; /* the origin: a moment in both clocks */
        struct cr_clk_line {
            uint64_t tick, ns; /* the line's anchor */
            double ns_per_tick;
        } line[4]; /* fitted at 0.1 ms, 1 ms, 100 ms, 3 s (clock.c's CLK_LINES) */
    } clk;
} cr_job;

/* cr_call_enter/leave bracket every interface call (each a load and a branch
 * or two when neither is on): the trace records it (trace.h: the outermost of
 * nested ones), and in the simulated mode the rank's CPU time inside it is not
 * its compute (vtime.h: cr_vt_call_enter). Tracing hooks: cr_trace_args and
 * cr_trace_how give the call's peer, tag, size, context and protocol or
 * algorithm where its first message would not (the first that says them
 * counts; otherwise the call's first message gives them). The engine records
 * its messages. */
void cr_poll_enter(cr_job *job, const char *name);
void cr_poll_leave(cr_job *job);
static inline void cr_call_enter(cr_job *job, const char *name)
{
    if (__builtin_expect(job->trace != NULL, 0)) cr_trace_enter_on(job, name);
    if (__builtin_expect(job->vt.base != NULL, 0)) cr_vt_call_enter(&job->vt);
    if (__builtin_expect(job->poll.misses != 0, 0)) cr_poll_enter(job, name);
}
static inline void cr_call_leave(cr_job *job)
{
    if (__builtin_expect(job->poll.misses != 0, 0)) cr_poll_leave(job);
    if (__builtin_expect(job->vt.base != NULL, 0)) cr_vt_call_leave(&job->vt);
    if (__builtin_expect(job->trace != NULL, 0)) cr_trace_leave_on(job);
}
static inline void cr_trace_args(cr_job *job, int peer, int32_t tag, uint64_t bytes, uint16_t ctx)
{
    if (__builtin_expect(job->trace != NULL, 0)) cr_trace_args_on(job, peer, tag, bytes, ctx);
}
static inline void cr_trace_how(cr_job *job, const char *how)
{
    if (__builtin_expect(job->trace != NULL, 0)) cr_trace_how_on(job, how);
}

/* Job lifetime: the first call of any interface initializes the job. */
cr_job *cr_job_init(void);
/* The one job of the process (hidden: library-internal), on the heap: made
 * zeroed at the first use of cr_the_job (the clock may run before
 * cr_job_init), never freed. Only this pointer is in libcourier's writable
 * data, so the contexts of the simulated mode swap 8 bytes of it at a switch,
 * not the whole struct; each rank's copy starts NULL and makes its own job.
 * cr_the_job names the job as the variable it was (cr_the_job.mpi). */
extern cr_job *cr_the_job_ptr;
cr_job *cr_job_make(void); /* the first use: a zeroed job */
static inline cr_job *cr_job_mem(void)
{
    cr_job *j = __atomic_load_n(&cr_the_job_ptr, __ATOMIC_ACQUIRE);
    return __builtin_expect(j != NULL, 1) ? j : cr_job_make();
}
#define cr_the_job (*cr_job_mem())
extern _Atomic int cr_job_ready; /* set once cr_job_init has run */
static inline cr_job *cr_job_get(void)
{
    if (__builtin_expect(!atomic_load_explicit(&cr_job_ready, memory_order_acquire), 0))
        return cr_job_init();
    return &cr_the_job;
}
void cr_job_finalize(cr_job *job);

static inline void cr_lock(cr_job *job)
{
    if (job->threaded) pthread_mutex_lock(&job->lock);
}
static inline void cr_unlock(cr_job *job)
{
    if (job->threaded) pthread_mutex_unlock(&job->lock);
}
/* From now on several threads of the program may call at once
 * (MPI_THREAD_MULTIPLE): every call takes the lock, and the waits of several
 * threads share the waiting point. Called by the one thread that exists yet,
 * after its cr_lock (a no-op until now); returns with the lock held once, as
 * cr_lock leaves it, so the caller's cr_unlock releases it. */
void cr_multi_begin(cr_job *job);

/* Errors: one line naming the call, the rank and the reason, then the job ends. */
_Noreturn void cr_fatal(cr_job *job, const char *call, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), cold));
/* This process ends as the end of the whole job (MPI_Abort, MPI_ERRORS_ABORT,
 * mpc_stopall): its status the low byte of code (1 where that is 0 but code is
 * not); code 0 tells the launcher first, which then ends the job with 0. */
_Noreturn void cr_abort_exit(cr_job *job, int code);
_Noreturn void cr_die_errno(const char *what) __attribute__((cold));

/* Point-to-point. Blocking calls return when the buffer is reusable / filled. */
void cr_send(cr_job *job, const char *op, int dst, uint16_t ctx, int32_t tag, const void *buf,
             size_t len);
cr_req *cr_isend(cr_job *job, const char *op, int dst, uint16_t ctx, int32_t tag, const void *buf,
                 size_t len);
/* Send at once if that needs no request: eager size, nothing queued before it to
 * dst, and room at the receiver. False (nothing sent): take cr_isend/cr_send.
 * dst must be valid. */
bool cr_send_now(cr_job *job, int dst, uint16_t ctx, int32_t tag, const void *buf, size_t len);
/* The lane to dst (CR_HDR_LANE): for messages that must not wait behind the
 * ordinary traffic to dst (a reserved stream's). Lane messages keep their order
 * among themselves and may overtake ordinary ones, so a caller sends every
 * message of one (ctx, tag) on the lane or none on it. Eager only: len at most
 * cr_eager(job, dst) (else the job ends, naming op). cr_send_lane_now is
 * cr_send_now's form, cr_send_lane cr_send's. */
cr_req *cr_isend_lane(cr_job *job, const char *op, int dst, uint16_t ctx, int32_t tag,
                      const void *buf, size_t len);
bool cr_send_lane_now(cr_job *job, const char *op, int dst, uint16_t ctx, int32_t tag,
                      const void *buf, size_t len);
void cr_send_lane(cr_job *job, const char *op, int dst, uint16_t ctx, int32_t tag, const void *buf,
                  size_t len); /* cr_send's form: returns once the message is on its way */
void cr_recv(cr_job *job, const char *op, const cr_sel *sel, void *buf, size_t cap, cr_status *st);
/* cr_recv where trunc_ok cuts a longer message to fit instead of ending the job. */
void cr_recv_trunc(cr_job *job, const char *op, const cr_sel *sel, void *buf, size_t cap,
                   bool trunc_ok, cr_status *st);
cr_req *cr_irecv(cr_job *job, const char *op, const cr_sel *sel, void *buf, size_t cap);
/* A receive with options: trunc_ok cuts a longer message to fit (MPL's default)
 * instead of ending the job (the status then has size > count); with fn, its
 * completion runs fn(job, user_fn, status) on the progress thread and the request
 * is released after that (it cannot be waited for). */
cr_req *cr_irecv_call(cr_job *job, const char *op, const cr_sel *sel, void *buf, size_t cap,
                      bool trunc_ok, cr_handler_fn fn, void (*user_fn)(void));
/* cr_irecv where a longer message is cut to fit and noted in *note (the first
 * one), instead of ending the job; note NULL: cr_irecv. */
cr_req *cr_irecv_note(cr_job *job, const char *op, const cr_sel *sel, void *buf, size_t cap,
                      cr_trunc *note);
/* cr_irecv_note for one side of an exchange (the peer receives from this rank
 * in the same step): a rendezvous message is pushed through the transport, the
 * two directions streaming at once, rather than read by single copy, unless
 * ranks outnumber cores (a push needs its sender running). Each side reading
 * the other's memory cost more than both streaming (2 ranks on 2 cores, the
 * collectives' exchanges of 64 KiB-1 MiB: osu_allgather 1 MiB 342 -> 130 us). */
cr_req *cr_irecv_push(cr_job *job, const char *op, const cr_sel *sel, void *buf, size_t cap,
                      cr_trunc *note);
/* cr_recv with the same rule (the direct path never takes a longer message). */
void cr_recv_note(cr_job *job, const char *op, const cr_sel *sel, void *buf, size_t cap,
                  cr_trunc *note, cr_status *st);
/* Non-destructive look at the unexpected queue; wait=true blocks until a match. */
bool cr_probe(cr_job *job, const cr_sel *sel, bool wait, cr_status *st);
/* Matched probe (MPI_Mprobe): cr_probe that also takes the message off the
 * unexpected queue into *out, so that no receive can match it any more; only
 * cr_irecv_unexp receives it then. (A message still arriving from its sender
 * keeps arriving into the detached entry.) */
bool cr_mprobe(cr_job *job, const cr_sel *sel, bool wait, cr_status *st, cr_unexp **out);
/* Receive the message u that cr_mprobe detached (u is consumed): a receive
 * request that completes as if it had matched u. */
cr_req *cr_irecv_unexp(cr_job *job, const char *op, cr_unexp *u, void *buf, size_t cap,
                       bool trunc_ok);

/* Requests and their public ids. */
uint64_t cr_req_id(const cr_req *r);
cr_req *cr_req_from_id(cr_job *job, uint64_t id); /* NULL when unknown or stale */
void cr_req_wait(cr_job *job, cr_req *r);
/* Make progress until ready(arg); r is what the hang watchdog is told the wait
 * is for (NULL: nothing in particular). Blocks like cr_req_wait. ready is a
 * test without side effects: the loop and its waiting point call it any number
 * of times (a test that takes what it finds loses it; take after the wait). */
void cr_wait_until(cr_job *job, const char *op, bool (*ready)(void *), void *arg, const cr_req *r);
void cr_req_release(cr_job *job, cr_req *r);

/* Start the progress thread (once; called without the engine lock, or with it
 * held once when multi). cr_handlers_start: for handler receives (hrecv,
 * rcvncall), which must run as soon as their message comes, so the thread
 * sleeps where senders ring it. cr_progress_start: for background work
 * (nonblocking collectives' schedules, job->bg_pending), which the thread
 * moves only while some is pending; otherwise it naps where no sender rings it
 * and cr_bg_kick wakes it. Either way it steps aside while a program thread
 * waits in a call (job->waiting). */
void cr_handlers_start(cr_job *job);
/* Simulated (no progress thread): run the handlers that are due, in this thread;
 * true if any ran. The engine calls it where a rank waits or polls. */
bool cr_sim_handlers(cr_job *job);
void cr_progress_start(cr_job *job);
/* Background work was started (job->bg_pending set), or a wait is over: make
 * sure the progress thread is not in a long nap. Cheap when it is not. */
void cr_bg_kick(cr_job *job);
/* A program thread begins and ends a blocking wait (job->waiting), under the
 * lock. The end of the last one ends the progress thread's long nap beside it
 * when that thread has work to move while the program computes (a wait that
 * ends within the first, short nap costs no wake-up). */
static inline void cr_wait_enter(cr_job *job)
{
    job->waiting++;
    job->wait_seq++;
}
static inline void cr_wait_leave(cr_job *job)
{
    if (!--job->waiting && __builtin_expect(job->progress_long, 0) &&
        (job->handlers_on || job->bg_pending))
        cr_bg_kick(job);
}
int cr_handlers_mask(cr_job *job, int masked);

/* Progress: poll the transports once, then run the background hooks; returns
 * the number of events handled (and steps the hooks made). What a test or
 * nonblocking probe calls: in the simulated mode it first makes every arrival
 * before the rank's clock visible, and one that finds nothing costs the
 * modelled node a poll's time (so that a loop of tests moves on in virtual
 * time). cr_progress_poll: the same without either, for waiting loops. */
int cr_progress(cr_job *job);
int cr_progress_poll(cr_job *job);
/* Register a background hook (job->bg); registering one twice is a no-op. */
void cr_bg_add(cr_job *job, int (*fn)(cr_job *job, bool *pending));
/* Tell the runtime that wait w is (blocked) or is no longer blocked. The rank
 * shows as blocked while some wait is reported and, when multi, every thread
 * of the process is in one (a thread that computes may yet send what another
 * waits for: that is no hang). */
void cr_wait_report(cr_job *job, cr_wait *w, bool blocked);
/* Multi: bring the board up to date with the threads there are now (a thread
 * that started or ended changes whether the rank counts as blocked); counts
 * them at most every 50 ms. */
void cr_board_check(cr_job *job);
/* A poll of the program found nothing: call (MPI_Test, MPI_Iprobe, msgdone,
 * iprobe, mpc_status, ...) looked for what (its request: req; a probe: sel;
 * several requests or a nonblocking collective: call) and it is not there.
 * Only where the program waits for another rank: not for what it completes
 * itself (a generalized request) or what completes locally. A rank whose
 * polls only miss, in a loop that does nothing else, shows on the board as
 * blocked (wait.c), so that the watchdog sees a deadlock of polling ranks. */
void cr_poll_missed(cr_job *job, const char *call, const cr_wait *what);
/* The same for a poll of what other ranks may deliver without a message (the
 * words of a post/start epoch, events their puts set, partitions read by
 * single copy), named by the call alone: simulated (--sim) it is not taken
 * for a wait on the rank's next arrival, which may never come (wait.c). */
void cr_poll_missed_direct(cr_job *job, const char *call);
/* A call a loop may spin on while another rank writes what it reads
 * (MPI_Win_flush, MPI_Win_sync, MPI_Win_unlock: one-sided memory polled for a
 * flag) returned at once: with more ranks than cores it gives the core up every few calls, as a
 * missed poll does (wait.c: poll_yield). locked: the caller holds the job's
 * lock (an owned fast path does not). */
void cr_poll_spun(cr_job *job, bool locked);
/* Simulated (--sim): the rank's program read the clock (MPI_Wtime, dclock,
 * clock_gettime) between its polls: its loop may end by time, not by what it
 * polls for, so the streak ends (wait.c: sim_poll). */
void cr_poll_clock(cr_job *job);
static inline void cr_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Shared memory for the collectives of whole-job group k, when every rank is on
 * this host (src/coll/coll_shm.c), and the wake-up of a peer that may wait on it. */
static inline const cr_coll_area *cr_coll_area_get(cr_job *job, int k)
{
    return job->coll_area_ok && job->host.coll[k].lines ? &job->host.coll[k] : NULL;
}
static inline void cr_nudge(cr_job *job, int peer)
{
    cr_host_kick(&job->host, peer);
}

/* The transport that owns peer p, and the calls the engine makes through it. */
static inline const cr_link *cr_via(const cr_job *job, int p)
{
    return &job->links[job->one_link >= 0 && p != job->rank ? job->one_link : job->link_of[p]];
}
/* The largest message to peer p that goes eagerly (no rendezvous). */
static inline size_t cr_eager(const cr_job *job, int p)
{
    return p == job->rank ? SIZE_MAX : cr_via(job, p)->eager;
}
/* n zeroed entries of each bytes for a per-peer array, whose pages cost nothing until
 * written (old: the first oldn entries to keep, then unmapped; NULL: none). */
void *cr_peer_array(cr_job *job, void *old, size_t oldn, size_t n, size_t each);
static inline int cr_tp_send(cr_job *job, int p, const cr_hdr *h, const void *payload, size_t len)
{
    const cr_link *l = cr_via(job, p);
    return l->ops->send_am(l->ctx, p - l->base, h, payload, len);
}
static inline int cr_tp_gone(cr_job *job, int p)
{
    const cr_link *l = cr_via(job, p);
    return l->ops->peer_gone(l->ctx, p - l->base);
}
/* Every transport: publish pending credits (about to idle). */
void cr_tp_flush(cr_job *job);
/* Wake this rank's sleeping threads (the progress thread, waiters). */
void cr_wake_self(cr_job *job);
/* End the progress thread's nap only (not a waiter's sleep): under the lock. */
void cr_nap_end(cr_job *job);

/* Waiting: call in a loop while nothing happens; w->spins counts idle rounds
 * (zero it when something happened); ready(arg), when given, is what the
 * caller waits for (see the transport's sleep). */
void cr_idle(cr_job *job, cr_wait *w, bool (*ready)(void *), void *arg);
/* The one waiting point (wait.c): sleep until woken or timeout_ms pass; with
 * the engine lock held, released while asleep. w: the waiter (NULL: the
 * progress thread). */
void cr_wait_point(cr_job *job, int timeout_ms, bool (*ready)(void *), void *arg, cr_wait *w);
/* CLOCK_MONOTONIC in nanoseconds, read by the system (clock.c): waiting
 * measures real time off the CPU with it. */
uint64_t cr_mono_ns(void);
/* Nanoseconds on the job's clock (monotonic; only differences mean anything):
 * what the interfaces' timers return (through cr_timer_ns). CLOCK_MONOTONIC, read through the
 * time-stamp counter where that is a clock (cr_tsc_ok) once the job's first
 * millisecond has given its rate (clock.c); any thread, no lock. */
uint64_t cr_clock_ns(void);
/* The same for the program's timers (MPI_Wtime, dclock, mclock, cr_time, the
 * simulated mode's clock_gettime): under courier run --sim a read costs the
 * rank a little virtual time (vtime.h, cr_vt_timer). */
uint64_t cr_timer_ns(void);
/* Is the CPU's time-stamp counter a clock: the same rate always, in every
 * power state, on every core (the invariant TSC of CPUID 0x80000007)? */
bool cr_tsc_ok(void);

/* About to idle: take unexpected long messages off their senders (NX/2 semantics). */
void cr_engine_buffer_rts(cr_job *job);

/* Before the process leaves: complete every send a live peer may still need. */
void cr_engine_drain(cr_job *job);

/* Transport up-call (through cr_tp_env.deliver): a message arrived. Returns 0
 * to refuse it for now. */
int cr_engine_deliver(cr_job *job, int src, const cr_hdr *h, const void *payload, size_t len);
/* Where DATA message h's len bytes go in the receive it names (NULL: the part
 * the receive has no room for is dropped, so deliver must copy). */
void *cr_engine_data_dest(cr_job *job, int src, const cr_hdr *h, size_t len);

/* ---- synchronous sends, cancelling, request sets --------------------------- */

/* Header flag of an RTS sent by cr_issend. */
#define CR_HDR_SYNC 0x1
/* Header flag of an RTS whose sender waits for it: it will answer a CTW at once. */
#define CR_HDR_WAITS 0x2
/* Header flag of a WDONE: the sender could not write its part. */
#define CR_HDR_FAILED 0x4
/* Header flag of a CTW: the sender writes its part only if it wins the claim
 * slot the CTW names (ctx and tag carry the claim's sequence number). */
#define CR_HDR_CLAIM 0x8

/* A synchronous send: it completes only once a receive has matched it (end-to-end
 * significance, MPI_Ssend). It always takes the rendezvous path, whatever its
 * size, and its RTS is flagged so that an idle receiver never takes the data
 * ahead of a matching receive (cr_engine_buffer_rts skips it). */
cr_req *cr_issend(cr_job *job, const char *op, int dst, uint16_t ctx, int32_t tag, const void *buf,
                  size_t len);
/* The blocking form: returns once matched and the buffer is reusable. */
void cr_ssend(cr_job *job, const char *op, int dst, uint16_t ctx, int32_t tag, const void *buf,
              size_t len);
/* Cancel a receive that nothing has matched yet: it leaves the posted queue and
 * is marked done. Returns false (and changes nothing) when a message already
 * matched it; the receive then completes normally. */
bool cr_cancel_recv(cr_job *job, cr_req *r);
/* Is a receive posted, or does a message wait unreceived, on a context in
 * lo..hi? (An interface asks before it reuses contexts it gave up.) */
bool cr_ctx_in_use(const cr_job *job, uint16_t lo, uint16_t hi);
/* Ask that send r be cancelled (MPI_Cancel). It then completes either cancelled
 * (r->cancel == CR_CANCEL_DONE; nothing of it reaches the receiver) or as usual.
 * A send still queued for credits is cancelled at once; a rendezvous send whose
 * RTS is out sends CANCEL, and its receiver answers CANCELLED only if it takes
 * the RTS back, i.e. no receive has matched it and its data has not been taken
 * in advance (cr_engine_buffer_rts); otherwise the reply the send waits for
 * (FIN, CTS or CTW) is already on its way. An eager message on the wire, a send
 * whose data is moving, a blocking send and a completed one are not cancelled. */
enum { CR_CANCEL_ASKED = 1, CR_CANCEL_DONE = 2 };
void cr_cancel_send(cr_job *job, cr_req *r);
/* cr_wait_until's readiness test over a set of requests: true when at least one
 * of n (NULL entries ignored) is done; *which is its index. */
typedef struct cr_req_set {
    cr_req *const *reqs;
    int n;
    int which;
} cr_req_set;
bool cr_req_any_done(void *set);

#endif
