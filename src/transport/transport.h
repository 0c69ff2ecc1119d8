/* The transport interface: a small table of functions the engine calls to move
 * bytes, one table per kind of link (self, shm; later tcp and sim).
 *
 * A transport moves "active messages": a fixed header (cr_hdr) plus at most
 * eager_limit bytes of payload, delivered in order per (source, destination)
 * by calling cr_engine_deliver on the receiving side. It may also offer a
 * single-copy read of a peer's memory (get). It knows nothing about matching,
 * requests or protocols; the engine knows nothing about rings or sockets. */
#ifndef COURIER_TRANSPORT_H
#define COURIER_TRANSPORT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cr_job;
struct cr_sel;
struct cr_status;

/* Protocol operations carried in a header (engine-defined, transport-opaque). */
enum cr_op {
    CR_OP_EAGER = 1,    /* whole message in the payload */
    CR_OP_RTS = 2,      /* rendezvous request: size, sender address, sender request */
    CR_OP_FIN = 3,      /* receiver has pulled the data: sender request completes */
    CR_OP_CTS = 4,      /* receiver matched, single copy denied: push the data */
    CR_OP_DATA = 5,     /* one chunk of a pushed message at offset addr */
    CR_OP_CTW = 6,      /* receiver matched and pulls the first part: sender, write the rest
                           straight into the receiver's buffer at addr (size bytes in all) */
    CR_OP_WDONE = 7,    /* sender has written its part (flags: CR_HDR_FAILED if it could not) */
    CR_OP_CANCEL = 8,   /* sender asks its RTS sreq back (MPI_Cancel); answered only if taken */
    CR_OP_CANCELLED = 9 /* receiver took RTS sreq back unmatched: the send completes cancelled */
};

typedef struct cr_hdr {
    uint8_t op;
    uint8_t flags;
    uint16_t ctx;
    int32_t tag;
    uint64_t size; /* whole message size */
    uint64_t addr; /* RTS: sender buffer address; DATA: offset */
    uint64_t sreq; /* sender's request id */
    uint64_t rreq; /* receiver's request id */
} cr_hdr;

/* What a rank is blocked on, for the launcher's hang watchdog. */
enum cr_wait_kind {
    CR_WAIT_RECV = 1,   /* a receive (or probe) that nothing matches */
    CR_WAIT_CREDIT = 2, /* a send with no room at the receiver */
    CR_WAIT_MATCH = 3,  /* a long send waiting for its receive */
    CR_WAIT_ARRIVE = 4  /* a collective waiting for peer to enter it (collective area) */
};

typedef struct cr_waitinfo {
    char call[16]; /* interface call, e.g. "crecv" */
    uint8_t kind;  /* enum cr_wait_kind */
    uint8_t tag_mode;
    uint16_t ctx;
    int32_t peer; /* the rank waited for, or -1: any */
    int32_t tag;
    uint32_t mask;
    uint64_t size;
} cr_waitinfo;

/* Memory that every rank of the job reads and writes directly, for the small
 * collectives of a whole-job group (src/coll/coll_shm.c). Per rank, two lines
 * (one per parity of the collective's generation), each a generation word and a
 * few bytes of inline data; then, per parity and rank, a slot of 'slot' bytes. */
typedef struct cr_coll_line {
    _Atomic uint64_t gen;
    uint64_t pad; /* data aligned for any element type */
    unsigned char data[48] __attribute__((aligned(16)));
} __attribute__((aligned(64))) cr_coll_line;

#define CR_COLL_AREAS 3 /* NX/2, MPL and MPI each have one whole-job group */

typedef struct cr_coll_area {
    cr_coll_line *lines;  /* [rank * 2 + parity] */
    unsigned char *slots; /* [(parity * nranks + rank) * slot] */
    size_t slot;
} cr_coll_area;

/* Returned by send_am when the peer has no room for now (no credits). */
#define CR_EAGAIN 1

typedef struct cr_transport {
    const char *name;
    /* Send one active message; 0, or CR_EAGAIN when out of credits. */
    int (*send_am)(struct cr_job *job, int peer, const cr_hdr *h, const void *payload, size_t len);
    /* Deliver what has arrived; returns how many messages were handled. */
    int (*poll)(struct cr_job *job);
    /* Copy len bytes at the peer's address into dst; 0 or a negative errno. */
    int (*get)(struct cr_job *job, int peer, void *dst, uint64_t addr, size_t len);
    /* Optional: copy len bytes from src to the peer's address; 0 or a negative errno. */
    int (*put)(struct cr_job *job, int peer, uint64_t addr, const void *src, size_t len);
    /* About to idle: publish pending credits so that peers can go on. */
    void (*flush)(struct cr_job *job);
    /* Sleep until a peer may have sent something or nudged us (or timeout_ms
     * passes); called with the engine lock held, which it releases while it
     * sleeps. ready(arg), when given, is the condition the caller waits for: it
     * is checked once more after the sleep is announced to peers, so that a
     * nudge cannot be lost. */
    void (*sleep)(struct cr_job *job, int timeout_ms, bool (*ready)(void *), void *arg);
    /* Wake the threads of rank 'peer' that sleep in this transport (may be self). */
    void (*wake)(struct cr_job *job, int peer);
    /* Wake rank 'peer' if it sleeps; no system call when it does not. Used
     * after a store to memory the peer waits on (a collective area). */
    void (*nudge)(struct cr_job *job, int peer);
    /* Has the peer finished (left the job)? Nothing more will be read from it. */
    int (*peer_gone)(struct cr_job *job, int peer);
    /* Tell the runtime what this rank is blocked on (NULL: no longer blocked). */
    void (*report_wait)(struct cr_job *job, const cr_waitinfo *w);
    /* Tell the runtime that a handler is running (busy 1) or has returned (0). */
    void (*report_busy)(struct cr_job *job, int busy);
    /* Largest payload send_am accepts. */
    size_t (*max_payload)(struct cr_job *job);
    /* Optional (NULL: not offered). A blocking receive with nothing posted ahead
     * of it polls with this: when the next message from some peer is eager, fits
     * in cap bytes and matches sel, it is copied straight into buf, *st is filled
     * and 1 is returned; it never reaches the engine's queues. Otherwise the next
     * message of one peer is delivered to the engine as poll would (-1; the
     * caller looks at its unexpected queue again), or nothing arrived (0). */
    int (*recv_direct)(struct cr_job *job, const struct cr_sel *sel, void *buf, size_t cap,
                       struct cr_status *st);
    /* Optional: collective area k (0..CR_COLL_AREAS-1), or NULL when there is none. */
    const cr_coll_area *(*coll_area)(struct cr_job *job, int k);
} cr_transport;

extern const cr_transport cr_transport_self;
extern const cr_transport cr_transport_shm;

/* shm setup, used by the launcher (segment creation) and by each rank. */
size_t cr_shm_segment_size(int nranks);
size_t cr_shm_control_size(int nranks); /* the part the launcher keeps mapped */
void cr_shm_segment_init(void *base, int nranks);
int cr_shm_attach(struct cr_job *job, int fd); /* 0, or -errno */
void cr_shm_detach(struct cr_job *job);

#endif
