/* The transport interface: how the engine moves bytes to a peer. Several
 * transports live at once (self, shm, tcp; later ucx and sim), each with its own
 * state; every peer is owned by exactly one of them (src/core/job.c's registry
 * picks, in order of preference, the first that reaches it).
 *
 * A transport moves "active messages": a fixed header (cr_hdr) plus at most
 * max_payload bytes, delivered in order per (source, destination) and lane
 * (CR_HDR_LANE) by calling the deliver callback it was given at open. It may offer single-copy
 * access to a peer's memory (get, put). It knows nothing about matching, requests or protocols, and
 * never calls the engine by name or touches the job: it sees only its cr_tp_env. The engine knows
 * nothing about rings or sockets.
 *
 * Layers: a transport includes this header (and the host segment's, below it),
 * never engine.h. */
#ifndef COURIER_TRANSPORT_H
#define COURIER_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "../host/host.h"
#include "../host/vtime.h"

/* Copy a message's n bytes: up to 32 in a few moves of fixed size (two that
 * may overlap), not a call to memcpy. A small message is copied once on each
 * side (into a shm cell, out of it), and the call cost as much as the rest of
 * the copy. */
static inline void cr_copy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (n > 32) {
        memcpy(d, s, n);
    } else if (n >= 16) {
        memcpy(d, s, 16);
        memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else if (n) {
        d[0] = s[0];
        if (n > 1) memcpy(d + n - 2, s + n - 2, 2);
    }
}

/* Protocol operations carried in a header (engine-defined, transport-opaque). */
enum cr_op {
    CR_OP_EAGER = 1,    /* whole message in the payload */
    CR_OP_RTS = 2,      /* rendezvous request: size, sender address, sender request */
    CR_OP_FIN = 3,      /* receiver has pulled the data: sender request completes */
    CR_OP_CTS = 4,      /* receiver matched, single copy denied: push the data */
    CR_OP_DATA = 5,     /* one chunk of a pushed message at offset addr */
    CR_OP_CTW = 6,      /* receiver matched and pulls the first part: sender, write the rest
                           straight into the receiver's buffer at addr (size bytes in all);
                           with the engine's claim flag, only if the sender wins the claim */
    CR_OP_WDONE = 7,    /* sender has written its part (flags: CR_HDR_FAILED if it could not) */
    CR_OP_CANCEL = 8,   /* sender asks its RTS sreq back (MPI_Cancel); answered only if taken */
    CR_OP_CANCELLED = 9 /* receiver took RTS sreq back unmatched: the send completes cancelled */
};
#define CR_OP_LAST CR_OP_CANCELLED

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

/* The one header flag a transport reads (the others are the engine's): the
 * message travels in its pair's lane, apart from the pair's ordinary messages.
 * Lane messages keep their order among themselves and may overtake ordinary
 * ones, which must not hold them up: a refused ordinary message stalls only
 * the ordinary traffic. A transport without lanes (one ordered connection)
 * carries it as any other message. */
#define CR_HDR_LANE 0x80
/* The other flag a transport reads: the header of this eager message carries a
 * value in rreq (the engine's check value, courier run --check), so a transport
 * that drops a small message's header fields (shm's inline cells) keeps them. */
#define CR_HDR_WHOLE 0x40

/* Returned by send_am when the peer has no room for now (no credits). */
#define CR_EAGAIN 1

/* What a transport is given at open. Everything it may ask of the job is here. */
typedef struct cr_tp_env {
    int rank, size;
    void *owner; /* passed back to every callback */
    /* A message arrived from src. Returns 0 to refuse it for now (no room): the
     * transport keeps it and delivers no later message of src of its kind (the
     * lane's or the ordinary ones) before it, and offers it again once
     * *recv_gen has changed. */
    int (*deliver)(void *owner, int src, const cr_hdr *h, const void *payload, size_t len);
    /* Where the len-byte payload of DATA message h from src belongs (NULL: hand it
     * to deliver as any other). A transport may read it straight there (a byte
     * stream's one copy instead of two) and then deliver it with that address as
     * its payload; nothing else may be written there. Optional (NULL). */
    void *(*data_dest)(void *owner, int src, const cr_hdr *h, size_t len);
    /* An error the job cannot survive: one line naming the call and what went
     * wrong (the rank is added), then the job ends. */
    void (*fatal)(void *owner, const char *call, const char *msg) __attribute__((noreturn));
    /* A problem worth one line on stderr that the job survives (a stranger
     * refused); the transport logs each kind once. */
    void (*warn)(void *owner, const char *msg);
    const uint32_t *recv_gen;    /* changes when the engine may take what it refused */
    const unsigned *pollers;     /* threads of this rank asleep on the transports'
                                    descriptors now (read in poll, under the engine's lock):
                                    while one is, poll takes nothing out of what it sleeps
                                    on, which only arm (the next sleeper's) would put back */
    cr_host *host;               /* this host's shared segment, or NULL */
    const int *host_of;          /* per rank: its host's number (equal: same host) */
    const unsigned char *secret; /* the job's secret (CR_SECRET_LEN bytes), or NULL */
    const char *net;             /* COURIER_NET: address/prefix or interface, or NULL */
    int crowding;                /* this host's ranks per CPU, rounded up (>= 1): how long a
                                    peer may go without running, in units of a time slice */
    /* Wire-up: publish my card (an address); read a peer's: 0 and *len set (on
     * entry the buffer's size), -EAGAIN when the peer has not published yet (it
     * has not made its first call: keep what is for it and ask again from poll),
     * or another -errno (the peer left: nothing will ever come). */
    int (*card_put)(void *owner, const void *card, size_t len);
    int (*card_get)(void *owner, int peer, void *card, size_t *len);
    cr_vt *vt;        /* the simulated mode's clock and rings (courier run --sim), or NULL */
    int onesided_ctx; /* the context (cr_hdr.ctx) of one-sided traffic, which the simulated
                         mode times with the machine's one-sided costs; -1: none */
    unsigned full_us; /* COURIER_TEST_SHM_FULL_US (tests): a shm send that finds the ring
                         full waits this long before it looks again, so that the
                         receiver's credits come in between */
} cr_tp_env;

#define CR_SECRET_LEN 32

/* Capabilities. */
enum {
    CR_CAP_GET = 1,    /* get: single-copy read of a peer's memory */
    CR_CAP_PUT = 2,    /* put: single-copy write */
    CR_CAP_ATOMIC = 4, /* remote atomics (none yet) */
    CR_CAP_FD = 8,     /* fd: readable when the transport has work (sleep with poll) */
    CR_CAP_BELL = 16,  /* peers wake us through the host segment's doorbell (futex) */
    CR_CAP_PEEK = 32   /* peek/take: a blocking receive may copy straight out */
};

typedef struct cr_transport {
    const char *name;
    unsigned caps;
    /* Open: 0 and *ctx set, or -errno (-ENODEV: not usable here, try the next). */
    int (*open)(void **ctx, const cr_tp_env *env);
    /* Can this transport reach rank peer? (The first that can owns it.) */
    bool (*reaches)(void *ctx, int peer);
    /* Peer is ours from now on (called once per owned peer, after open). */
    void (*own)(void *ctx, int peer);
    /* The engine has drained: say goodbye to every peer, free everything. */
    void (*close)(void *ctx);
    /* Send one active message; 0, or CR_EAGAIN when the peer has no room now. */
    int (*send_am)(void *ctx, int peer, const cr_hdr *h, const void *payload, size_t len);
    /* Deliver what has arrived; returns how many messages were handled. */
    int (*poll)(void *ctx);
    /* CR_CAP_GET / CR_CAP_PUT: single copy; 0 or a negative errno (then the
     * engine stops asking for this peer and pushes instead). */
    int (*get)(void *ctx, int peer, void *dst, uint64_t addr, size_t len);
    int (*put)(void *ctx, int peer, uint64_t addr, const void *src, size_t len);
    /* Optional, with get/put: n pieces at once, piece i between local[i] here
     * and remote[i] at the peer (iov_base: the peer's address), each the same
     * length on both sides; 0 or a negative errno, as get/put. */
    int (*getv)(void *ctx, int peer, const struct iovec *local, const struct iovec *remote, int n);
    int (*putv)(void *ctx, int peer, const struct iovec *local, const struct iovec *remote, int n);
    /* About to idle: publish pending credits so that peers can go on. */
    void (*flush)(void *ctx);
    /* About to sleep (after the host doorbell was announced): 1 when something is
     * pending that poll would handle or that unblocks a send, else 0. */
    int (*arm)(void *ctx);
    /* CR_CAP_FD: a descriptor that polls readable when arm would say 1. */
    int (*fd)(void *ctx);
    /* Has the peer left the job in order? Nothing more will come from it. */
    int (*peer_gone)(void *ctx, int peer);
    /* Largest payload send_am accepts for peer. */
    size_t (*max_payload)(void *ctx, int peer);
    /* CR_CAP_PEEK: the next message of some peer, not yet delivered (false: none,
     * or only refused ones); then take(ctx, src) consumes it. The engine either
     * copies it out itself or hands it to its deliver and takes it if accepted. */
    bool (*peek)(void *ctx, int *src, cr_hdr *h, const void **payload, size_t *len);
    void (*take)(void *ctx, int src);
    /* The message peek returned last (from src) is refused: deliver said 0 to it
     * outside poll. */
    void (*refused)(void *ctx, int src);
} cr_transport;

/* The transports. */
extern const cr_transport cr_transport_self;
extern const cr_transport cr_transport_shm;
extern const cr_transport cr_transport_tcp;
extern const cr_transport cr_transport_ucx;
extern const cr_transport cr_transport_sim;

/* The registry (registry.c), in order of preference: the first transport that
 * reaches a peer owns it. cr_tp_registry gives the table and its length. */
const cr_transport *const *cr_tp_registry(int *n);
/* Whether a list like COURIER_TRANSPORTS's ("tcp", "shm,tcp"; NULL or empty:
 * all) lets t open; self and sim are never left out (sim opens only in the
 * simulated mode, and then it must serve). */
bool cr_tp_allowed(const cr_transport *t, const char *list);
/* The first name in list that is no transport's: its offset, its length in
 * *len; -1 when every name is known. */
int cr_tp_unknown(const char *list, size_t *len);

/* shm's region in the host segment: sized and laid out by the launcher. Only
 * its first cr_shm_region_fixed bytes (head and inboxes) need memory from the
 * start; the rest is the place of channels, taken as pairs first talk. */
size_t cr_shm_region_size(int nranks);
size_t cr_shm_region_fixed(int nranks);
void cr_shm_region_init(void *region, int nranks);
/* The host segment of a job of n ranks (src/host/host.h), shm's region laid
 * out in it, in a new memfd (close-on-exec): the descriptor and *len its size,
 * or -1 with errno. The control part and the region's fixed part are given
 * memory at once (a job too big for this machine fails here, not with a SIGBUS
 * in a rank). flags: the head's (CR_HOST_SLEEPERS_FENCE). */
int cr_shm_segment_make(int n, uint32_t flags, size_t *len);

#endif
