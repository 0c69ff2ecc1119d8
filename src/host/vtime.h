/* The simulated mode's segment (courier run --sim): memory that the launcher's
 * simulator and every rank share, with
 *  - one slot per rank: its virtual clock, its state as the simulator sees it
 *    (running, asking for a sync, blocked, done), the futex word the
 *    simulator wakes it on, and its time accounts;
 *  - two byte rings per rank: "out" (rank -> simulator: what it sends, with
 *    the virtual time it sent at) and "in" (simulator -> rank: what arrived,
 *    with the virtual time it arrived at, in the order of arrival).
 * It is a host service below the transports and the engine, like the host
 * segment (host.h): the engine reads its clock here, the sim transport
 * (src/transport/sim.c) moves messages through the rings, and the simulator
 * (src/run/vsim.c) drives the network model. Nothing here knows about
 * matching or about the model.
 *
 * Time is in integer picoseconds, as in the network models (src/net).
 *
 * The protocol that keeps every run of a program bit-identical (compute not
 * counted): the simulator has handled every event at or before `done`, and
 * handles events at time t only once every running rank's clock is past t, so
 * that no send can come in before an event already handled. A rank sees an
 * arrival only once its clock is past the arrival (records with t < synced,
 * where `synced` is a clock at which the rank knew its in ring complete). */
#ifndef COURIER_VTIME_H
#define COURIER_VTIME_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CR_VT_MAGIC 0x35746d6973727563ULL /* "cursimt5": changes with the layout */

typedef int64_t cr_vt_time; /* picoseconds */
#define CR_VT_NEVER INT64_MAX
#define CR_VT_SEEN UINT64_MAX

/* Classes of messages, each with its node software's costs: the job's model,
 * and the one for one-sided traffic (the CS-2's Elan DMA beside its NX/2
 * library; the job's own model on the other machines). */
enum { CR_VT_CLASS_MSG = 0, CR_VT_CLASS_ONESIDED = 1, CR_VT_CLASSES = 2 };

/* The costs one class of messages has on its sender's clock. */
typedef struct cr_vt_cost {
    int64_t o_send, copy_ps, eager_max; /* eager_max < 0: every size copies */
} cr_vt_cost;

/* A rank's state as the simulator sees it. */
enum cr_vt_state {
    CR_VT_RUN = 0, /* computing or calling: its clock is a lower bound of what it sends next */
    CR_VT_SYNC,    /* wants its in ring complete up to its clock (then RUN again) */
    CR_VT_BLOCK,   /* waits for the next arrival (then RUN, its clock past it) */
    CR_VT_DONE     /* left the job: sends nothing more */
};

typedef struct cr_vt_head {
    uint64_t magic;
    uint32_t nranks;
    uint32_t hw_bcast;   /* the model has a hardware broadcast (cr_vt_group_begin) */
    uint32_t chains;     /* the model carries a chain's messages as one (cr_vt_chain_open) */
    uint32_t hw_answers; /* the one-sided class's answers are the network interface's
                            (cr_vt_hw_answer_next) */
    uint64_t ring_bytes; /* each ring's data */
    uint64_t slot_off, ring_off, total;
    /* the node software models' costs on the sending rank's clock, by class */
    cr_vt_cost cost[CR_VT_CLASSES];
    int64_t poll_ps;           /* a test or probe that found nothing */
    int64_t timer_ps;          /* one read of a timer by the program (cr_vt_timer) */
    double cpu_factor;         /* compute: CPU time times this; 0: not counted */
    uint32_t yields;           /* a waiting rank yields this often before it sleeps
                                  (0 when the ranks outnumber the CPUs) */
    uint32_t contexts;         /* the ranks are contexts of one process (src/host/contexts.h):
                                  a rank that waits goes back to that process's scheduler,
                                  which alone takes the wake queue (cr_vt_host_idle) */
    _Atomic int64_t done;      /* every event at or before this is handled */
    _Atomic uint32_t bell;     /* the simulator sleeps on this word */
    _Atomic uint32_t sleeping; /* ... and says so here */
    _Atomic uint32_t stopped;  /* the simulator gave up (deadlock): ranks, exit */
    /* With contexts: the process of the ranks sleeps on host_bell when none
     * can run (and says so in host_sleeping); wq_lost says the wake queue was
     * full once, so every waiting rank must look again; ctx_current is the
     * rank whose context runs (-1: none), which the launcher blames when the
     * process dies. */
    _Atomic uint32_t host_bell, host_sleeping, wq_lost;
    _Atomic int32_t ctx_current;
    /* The wake queue: ranks the simulator answered while they slept, each to
     * be woken (a futex call) by whoever is idle: the simulator between its
     * passes, a rank about to sleep or just woken. The system call costs the
     * caller microseconds, so spread out over the ranks' CPUs it is no longer
     * the simulator's main cost (docs/sim.md, "Speed"). One producer (the
     * simulator), any number of consumers; wq_cap is a power of 2. */
    uint64_t wq_off;
    uint32_t wq_cap, pad3;
    _Atomic uint64_t wq_head __attribute__((aligned(64))); /* next to take */
    _Atomic uint64_t wq_tail __attribute__((aligned(64))); /* next to fill */
} cr_vt_head;

/* A rank's time as the summary reports it (picoseconds, and counts). */
typedef struct cr_vt_account {
    int64_t compute, send, recv, wait; /* CPU time scaled; send, receive overheads; blocked */
    uint64_t sent_msgs, sent_bytes, recv_msgs, recv_bytes;
} cr_vt_account;

typedef struct cr_vt_slot {
    _Atomic int64_t clock;       /* the rank's virtual time: it writes it while RUN; the
                                    simulator, when it answers a BLOCK (where it resumes) */
    _Atomic uint32_t state;      /* enum cr_vt_state */
    _Atomic uint32_t wake;       /* bumped by the simulator when it answers or writes */
    _Atomic int64_t held_from;   /* earliest arrival the simulator holds back (ring full) */
    _Atomic uint32_t need_room;  /* the simulator waits for room in the in ring */
    _Atomic uint32_t sleeping;   /* the rank sleeps on wake (else a wake needs no call) */
    _Atomic int64_t block_next;  /* with BLOCK: the first arrival after the clock that the rank
                                    already has (the lookahead wrote it early), or NEVER ... */
    _Atomic uint64_t block_head; /* ... when it has none: how far it had read its in ring;
                                    CR_VT_SEEN once the simulator has read these two (the rank
                                    drains its in ring again only then) */
    _Atomic int64_t look;        /* the least a message it sends next enters the network after
                                    its clock: its classes' least send overhead (the launcher
                                    sets it; the rank lowers it before its clock moves on,
                                    cr_vt_use_class) */
    _Atomic int32_t exit_status; /* with contexts: the status the rank ended with ... */
    _Atomic uint32_t exited;     /* ... once this is set (a process's the launcher reaps) */
    cr_vt_account acct;          /* written by the rank, read at the end */
} __attribute__((aligned(64))) cr_vt_slot;

/* A single-producer single-consumer byte ring. Records never wrap: one that
 * does not fit before the end is preceded by a pad record. */
typedef struct cr_vt_ring {
    _Atomic uint64_t head; /* bytes written in all (producer) */
    char pad1[56];
    _Atomic uint64_t tail; /* bytes consumed in all (consumer) */
    char pad2[56];
    unsigned char data[];
} cr_vt_ring;

enum { CR_VT_REC_PAD = 0, CR_VT_REC_MSG = 1, CR_VT_REC_MORE = 2 };
/* A message's flags: it ends its chain (cr_vt_chain_open); it is a hardware answer
 * (cr_vt_hw_answer_next), free for the processors at both ends. */
enum { CR_VT_REC_F_CHAIN_END = 1, CR_VT_REC_F_HW = 2 };

/* A message's part in a hardware broadcast (cr_vt_group_begin): its group
 * (id > 0, the root's count), the range it goes to, and its place among the
 * messages to one target (ord); the lead's (the first target's) carry the
 * broadcast, the copies only say where theirs lands. A target's answer to a
 * broadcast's message (CR_VT_GRP_ANSWER) names the root's group and range:
 * the switches combine the answers of all targets into one. */
enum { CR_VT_GRP_COPY = 0, CR_VT_GRP_LEAD = 1, CR_VT_GRP_ANSWER = 2 };
typedef struct cr_vt_bcast {
    uint32_t id; /* 0: no broadcast's */
    int32_t lo, hi;
    uint16_t ord;
    uint8_t part; /* CR_VT_GRP_* */
    uint8_t pad;
} cr_vt_bcast;

/* One record: a message (MSG: its header and the first part of its payload)
 * or the next part of the last one (MORE). peer: the destination in an out
 * ring, the source in an in ring; t: the time it entered the network (the
 * sender's clock after its send overhead) / arrived. */
typedef struct cr_vt_rec {
    uint32_t bytes; /* the record with its payload part, rounded up to 8 */
    uint16_t kind;
    uint16_t cls; /* out ring: the message's class (CR_VT_CLASS_*) */
    int32_t peer;
    uint32_t part; /* payload bytes in this record */
    int64_t t;
    int64_t cost;          /* in ring: the receiving CPU's time for it (the node software's) */
    uint64_t total;        /* the whole payload */
    unsigned char hdr[40]; /* the transport header (cr_hdr), opaque here */
    cr_vt_bcast bc;        /* out ring: its part in a hardware broadcast */
    uint32_t chain;        /* out ring: the sender's chain it continues (0: none) */
    uint32_t flags;        /* out ring: CR_VT_REC_F_* ... */
    uint32_t ctl;          /* ... and the bytes of its payload that are a hardware
                              transaction's header, not data (cr_vt_hw_next) */
    uint32_t pad_ctl;
    unsigned char data[];
} cr_vt_rec;

/* ---- layout (the launcher) ----------------------------------------------- */

size_t cr_vt_ring_bytes(int nranks);
size_t cr_vt_segment_size(int nranks);
void cr_vt_segment_init(void *base, int nranks);

static inline cr_vt_head *cr_vt_head_of(void *base)
{
    return (cr_vt_head *)base;
}
static inline cr_vt_slot *cr_vt_slot_of(void *base, int r)
{
    return (cr_vt_slot *)((char *)base + ((cr_vt_head *)base)->slot_off) + r;
}
/* dir 0: out (rank -> simulator), 1: in (simulator -> rank) */
static inline cr_vt_ring *cr_vt_ring_of(void *base, int r, int dir)
{
    cr_vt_head *h = base;
    size_t one = sizeof(cr_vt_ring) + h->ring_bytes;
    return (cr_vt_ring *)((char *)base + h->ring_off + ((size_t)r * 2 + (size_t)dir) * one);
}

/* ---- rings (either side) ------------------------------------------------- */

/* Room for a record of `bytes` (header + part, rounded): its place, or NULL
 * when the ring has no room now. cr_vt_ring_put publishes it. */
cr_vt_rec *cr_vt_ring_reserve(cr_vt_ring *q, uint64_t cap, uint32_t bytes);
void cr_vt_ring_put(cr_vt_ring *q, cr_vt_rec *rec);
/* The next record, or NULL; cr_vt_ring_take consumes it. */
cr_vt_rec *cr_vt_ring_peek(cr_vt_ring *q, uint64_t cap);
void cr_vt_ring_take(cr_vt_ring *q, const cr_vt_rec *rec);
static inline uint32_t cr_vt_rec_size(uint64_t part)
{
    return (uint32_t)((sizeof(cr_vt_rec) + part + 7) & ~(uint64_t)7);
}
/* The largest payload part one record carries. */
static inline uint64_t cr_vt_part_max(uint64_t ring_bytes)
{
    return ring_bytes / 4 - sizeof(cr_vt_rec);
}

/* ---- the wake queue (either side) --------------------------------------- */

/* The simulator: queue rank r for a wake; false when the queue is full (then
 * wake it yourself). */
bool cr_vt_wq_push(void *base, int r);
/* Anyone: wake up to max queued ranks; how many it woke. */
int cr_vt_wq_help(void *base, int max);
/* Wake the rank of this slot when it sleeps on its wake word. */
void cr_vt_wake_slot(cr_vt_slot *sl);
/* The ranks' process (contexts): bring into the cache what rank r reads first
 * when it runs next (its slot, the next record of its in ring). */
void cr_vt_prefetch_rank(void *base, int r);
/* How one waiter of the simulated mode (the simulator thread, the ranks'
 * process as contexts, a rank's own process) hands its core round while the
 * other side works: it yields, since the other side may share its core. A
 * yield that lost the core for a slice says that a process that computes
 * shares it: under EEVDF the yield put the waiter behind that process for its
 * whole slice, and every hand-over between the simulator and the ranks waited
 * that long (256 ranks beside 3 CPU-bound processes on 2 cores: 95-122 s for
 * 6 s of CPU). Then the waiter asks for short slices (cr_host_short_slice): a
 * yield moves its deadline only that much, and woken it preempts the
 * computing process at once. It gives them back a second after the last such
 * loss. */
typedef struct cr_vt_waiter {
    int64_t lost_at; /* when a yield last lost a slice (CLOCK_MONOTONIC ns) */
    bool short_slice;
} cr_vt_waiter;
/* Yield once, learning from how long it took (above). */
void cr_vt_yield(cr_vt_waiter *w);
/* A bell: a futex word that whoever has something for its owner bumps
 * (cr_vt_bell_ring), waking the owner when it says it sleeps on it. The owner
 * (cr_vt_bell_wait), having read the bell (seen) before it looked for work,
 * looks until ready(arg) for spin_ns, handing the CPU round (cr_vt_yield,
 * with its waiter w), then sleeps at most sleep_ns unless ready; it may
 * return with nothing ready. The simulator's bell (bell, sleeping) and that
 * of the ranks' process as contexts (host_bell, host_sleeping) are such. */
void cr_vt_bell_ring(_Atomic uint32_t *bell, _Atomic uint32_t *sleeping);
void cr_vt_bell_wait(_Atomic uint32_t *bell, _Atomic uint32_t *sleeping, uint32_t seen,
                     long spin_ns, long sleep_ns, bool (*ready)(void *), void *arg,
                     cr_vt_waiter *w);
/* With contexts (hd->contexts), the wake queue is the ranks' process's alone:
 * the simulator rings that process (cr_vt_ring_host) after it queued ranks or
 * set wq_lost; the process takes the queue (cr_vt_wq_pop: a rank, or -1 when
 * empty) and, when no rank can run, waits for the ring (cr_vt_host_idle). */
void cr_vt_ring_host(void *base);
int cr_vt_wq_pop(void *base);
void cr_vt_host_idle(void *base, cr_vt_waiter *w);

/* ---- a rank's clock ------------------------------------------------------ */

/* A hardware broadcast (the CS-2's, cr_put_bcast) while its messages are
 * sent, one per target in [lo, hi] in turn (cr_vt_group_begin). The first
 * target's messages (the lead's) cost their send overhead, on a clock of the
 * group's own (end) that the rank's moves to only at the group's end, and
 * each is stamped as usual; the k-th message to every other target is a copy
 * of the lead's k-th, stamped the same and free. The rank's clock stays at
 * `clock` meanwhile, so every stamp is still at or past it plus the look. */
#define CR_VT_GROUP_MSGS 4 /* messages per target a broadcast carries */
typedef struct cr_vt_group {
    bool on;
    int cls, lo, hi;
    int lead, cur; /* the first target (-1: none yet); the target now sent to */
    uint32_t id;   /* groups so far */
    int n, ord;    /* the lead's messages so far; the current target's */
    int64_t clock; /* the rank's clock at the start */
    int64_t end;   /* where the rank's clock goes at the end */
    int64_t t[CR_VT_GROUP_MSGS];
} cr_vt_group;

typedef struct cr_vt {
    void *base;
    size_t len;
    cr_vt_head *hd;
    cr_vt_slot *me;
    int rank, size;
    pthread_t owner;     /* the thread that attached: its CPU time is the rank's compute */
    int64_t cpu_last;    /* thread CPU time (ns) when compute was last counted */
    int64_t wall_last;   /* the monotonic clock (ns) just after that reading */
    int in_call;         /* interface calls under way (nested): no compute inside */
    int64_t synced;      /* the in ring was complete for arrivals before this time */
    int64_t floor;       /* no message enters the network before this (cr_vt_use_class) */
    cr_vt_waiter waiter; /* its yields while it waits for an answer (not as a context) */
    /* The sim transport's: empty the in ring into its own queue (while the
     * rank waits, so that the simulator can write on); and the time of the
     * first arrival it holds at or after `from` (CR_VT_NEVER: none). */
    void (*drain)(void *arg);
    int64_t (*next_arrival)(void *arg, int64_t from);
    void *drain_arg;
    cr_vt_group grp;            /* a hardware broadcast being sent */
    struct cr_vt_chain *chains; /* open chains (cr_vt_chain_open), nchains of them */
    int nchains, capchains;
    uint32_t chain_ids; /* chains opened so far */
    bool unrung;        /* records put since the last ring (cr_vt_ring_soon) */
    struct {            /* a hardware transaction about to be sent (cr_vt_hw_next) */
        bool on, answer;
        int peer;
        uint32_t ctl;
        size_t len;
    } hw;
    struct { /* the answer to a broadcast's message, about to be sent */
        bool on;
        int root;
        cr_vt_bcast bc;
    } answer;
} cr_vt;

/* Is the segment inherited as fd this build's, for nranks ranks? 0 with its
 * size in *total, or -errno (-EPROTO: another build's layout). fd stays open. */
int cr_vt_probe(int fd, int nranks, size_t *total);
/* Map the segment inherited as fd (closed here); 0 or -errno (-EPROTO: a
 * launcher of another build made it, with another layout). */
int cr_vt_attach(cr_vt *v, int fd, int rank, int size);
void cr_vt_detach(cr_vt *v);
/* Count the compute since the last call (CPU time times cpu_factor) and
 * return the clock. Every entry into the engine's time-taking paths calls it. */
int64_t cr_vt_now(cr_vt *v);
/* An interface call begins and ends (engine.h's cr_call_enter/leave, in the
 * rank's own thread): the CPU time up to its start is compute, the library's
 * own inside it is not (the software model has its costs); nested calls
 * count once. What a node computes inside a call (a reduction's arithmetic,
 * a message handler) is compute again between cr_vt_compute_begin and _end. */
void cr_vt_call_enter(cr_vt *v);
void cr_vt_call_leave(cr_vt *v);
int cr_vt_compute_begin(cr_vt *v);
void cr_vt_compute_end(cr_vt *v, int saved);
/* The clock, read from any thread (only the owner's calls count compute). */
int64_t cr_vt_read(cr_vt *v);
/* The same for the program's timers (MPI_Wtime, dclock, clock_gettime...): in
 * the rank's own thread a read costs timer_ps after it, as on a real node, so
 * that a loop waiting for the timer to pass a time ends even when compute is
 * not counted. */
int64_t cr_vt_timer(cr_vt *v);
/* The rank is about to send messages of class cls (call it before stamping
 * one). When their send overhead is below the rank's lookahead, the lookahead
 * comes down to it, from now on; the simulator may have handled events up to
 * the old lookahead past the clock, so nothing the rank sends enters the
 * network before that (v->floor). Early, before such traffic starts (when a
 * region is registered), the floor is passed before it matters. */
void cr_vt_use_class(cr_vt *v, int cls);
/* The messages of class cls that the rank sends to ranks lo..hi, one target
 * after the other, until cr_vt_group_end, are one hardware broadcast, where
 * the model has one (hd->hw_bcast: the CS-2's); elsewhere they stay messages
 * of their own. The sim transport stamps them (cr_vt_group_stamp). */
void cr_vt_group_begin(cr_vt *v, int cls, int lo, int hi);
void cr_vt_group_end(cr_vt *v);
/* The next message of class CR_VT_CLASS_ONESIDED to root answers the
 * message of root's broadcast group id (range lo..hi) that this rank was
 * sent: the model combines the answers of all its targets into one, as the
 * Elite switch combined their acknowledgements. The sim transport marks it
 * (cr_vt_answer_mark). */
void cr_vt_answer_next(cr_vt *v, int root, uint32_t id, int lo, int hi);
void cr_vt_answer_mark(cr_vt *v, int cls, int peer, cr_vt_bcast *bc);
/* Where the model's one-sided operations are the network interface's (hd->hw_answers: the
 * CS-2's Elan, which moves the data of a put or a get by DMA, sets the remote event and
 * acknowledges without the node's processor): the next message of class
 * CR_VT_CLASS_ONESIDED to peer is a transaction of it, whose first ctl bytes are the
 * transaction's header (remote address, length, event), which the model does not time as
 * data; an answer (the Elan acknowledging a DMA, or serving a read) moreover costs the
 * processors at both ends nothing, and still enters the network no earlier than the clock
 * plus the class's send overhead (the simulator's lookahead). The sim transport asks
 * (cr_vt_hw_mark: false when the message is no such transaction). The mark names the
 * message's length too, so that an earlier message the engine held for peer does not take
 * it. */
void cr_vt_hw_next(cr_vt *v, int peer, size_t len, uint32_t ctl, bool answer);
bool cr_vt_hw_mark(cr_vt *v, int cls, int peer, size_t len, uint32_t *ctl, bool *answer);
/* For the sim transport: a message of class cls to peer that costs `cost`:
 * when it belongs to the open group, its stamp and the record's group fields
 * (rec), and true; else false (send it as any other). */
bool cr_vt_group_stamp(cr_vt *v, int cls, int peer, int64_t cost, int64_t *t, cr_vt_bcast *bc);
/* A chain: the messages this rank sends to peer on context ctx with tag tag,
 * from now up to and including the first empty one, are one message of the
 * model that stays open between them (a stream's words over one hop: iWarp's
 * pathway, seed 002, which carries them with no header of their own and
 * closes with the end marker). The stream layer opens one per hop it sends
 * on; the sim transport marks the chain's messages (cr_vt_chain_mark: the
 * chain's id, or 0 for a message of none, and *end for the empty one, which
 * closes it). Models without such channels carry them as any messages. */
typedef struct cr_vt_chain {
    int peer, ctx;
    int32_t tag;
    uint32_t id;
} cr_vt_chain;
void cr_vt_chain_open(cr_vt *v, int peer, int ctx, int32_t tag);
uint32_t cr_vt_chain_mark(cr_vt *v, int peer, int ctx, int32_t tag, size_t len, uint32_t *end);
/* Add dt of the modelled node's own time (a send's overhead). */
void cr_vt_spend(cr_vt *v, int64_t dt, int64_t *account);
/* Leave compute uncounted from here (the library's own CPU time). */
void cr_vt_mark(cr_vt *v);
/* Make the in ring complete for arrivals before the clock (asks the
 * simulator when it is not yet); v->drain empties the in ring meanwhile. */
void cr_vt_sync(cr_vt *v);
/* The same when the in ring is known complete up to the clock already (no
 * need to ask): true, else false and nothing done. */
bool cr_vt_try_sync(cr_vt *v);
/* Wait for the first arrival after the last sync (and then for the in ring to
 * be complete up to the clock, when that arrival came before it); the clock
 * moves to the later of its own and just past that arrival. When the rank
 * already has that arrival and knows its in ring complete up to there, the
 * clock moves without asking the simulator. */
void cr_vt_block(cr_vt *v);
/* Tell the simulator something changed (a record, a state). */
void cr_vt_ring_sim(cr_vt *v);
/* ... a record in the out ring, with ranks as contexts by the time this rank
 * waits (or ends, or waits for room in its out ring), with one ring for all
 * its records:
 * the simulator cannot answer a rank that is not running before that anyway. */
void cr_vt_ring_soon(cr_vt *v);
/* The rank leaves: the simulator counts it out. */
void cr_vt_done(cr_vt *v);

#endif
