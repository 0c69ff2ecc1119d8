/* Tracing of communication (courier run --trace): every interface call and every
 * engine message of this rank, as fixed-size records in a file of its own that
 * the launcher turns into one Chrome trace (src/run/trace_merge.c).
 *
 * Off (job->trace NULL), each hook is one load and a branch not taken. On, a
 * record is a few stores into a buffer of this rank's, written to its part file
 * when full and at the end (or when the launcher ends the rank with SIGTERM):
 * nothing is formatted and nothing is shared with another rank. The part
 * file's layout (cr_trace_head, then records) is shared with the merger, which
 * is why it is defined here. */
#ifndef COURIER_TRACE_H
#define COURIER_TRACE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define CR_TRACE_MAGIC "CRTRACE1"
#define CR_TRACE_HEAD 4096    /* bytes before the first record */
#define CR_TRACE_BUF 16384u   /* records buffered between writes (768 KiB) */
#define CR_TRACE_NAMES 1024u  /* distinct call names and protocols */
#define CR_TRACE_NAME_LEN 40u /* a NAME record's text, NUL included */

enum cr_trace_kind {
    CR_TR_NAME = 1, /* text (first 40 bytes) of string id 'name' */
    CR_TR_CALL,     /* an interface call: t0..t1, wait, peer, tag, bytes, ctx, how */
    CR_TR_SEND,     /* an engine message started at t0 to peer */
    CR_TR_RECV,     /* a message from peer matched at t1 by a receive posted at t0 */
    CR_TR_RUN       /* the rank in the library: t0 its start, t1 its end (0: not yet; the
                       last RUN record of a part counts) */
};

/* Threads of a rank, as the trace shows them. */
enum { CR_TR_MAIN = 0, CR_TR_PROGRESS = 1, CR_TR_OTHER = 2, CR_TR_THREADS = 3 };

typedef struct cr_trace_rec {
    uint64_t t0, t1; /* ticks (cr_trace_now): see cr_trace_head's clock pairs */
    uint64_t bytes;
    uint64_t wait; /* CALL: nanoseconds it waited for a peer inside */
    int32_t peer, tag;
    uint16_t ctx;
    uint16_t name, how; /* string ids (NAME records); 0: none */
    uint8_t kind;       /* written last: a record of kind 0 was never finished */
    uint8_t tid;
} cr_trace_rec;
_Static_assert(sizeof(cr_trace_rec) == 48, "a trace record is 48 bytes");

typedef struct cr_trace_head {
    char magic[8];
    uint32_t rec_size, rank, size, pid;
    uint64_t nrec;  /* records in the file as of the last write */
    uint64_t lost;  /* records that could not be written */
    uint32_t ended; /* the rank closed its trace (1), or wrote it as SIGTERM ended it (2) */
    uint32_t tsc;   /* ticks are the CPU's time-stamp counter (else nanoseconds) */
    /* The same moments in ticks and in cr_clock_ns's nanoseconds: when the
     * trace opened, and at its last write; a tick is converted between them. */
    uint64_t tick0, ns0, tick1, ns1;
} cr_trace_head;

/* What one thread's current outermost call has gathered so far. */
typedef struct cr_trace_thr {
    int depth; /* interface calls nested (an interface calling itself) */
    const char *call, *how;
    uint64_t t0, waited, wait0, bytes;
    int32_t peer, tag;
    uint16_t ctx;
    bool args_set, how_set;
    bool summed; /* bytes add up the call's messages (the interface gave no size) */
} cr_trace_thr;

struct cr_job;
typedef struct cr_trace cr_trace;

/* At job start: COURIER_TRACE names the directory of the part files; open this
 * rank's (fatal when it cannot); simulated: under courier run --sim, whose
 * segment job->vt is attached after this (the trace's clock is then its
 * virtual time). At the end: finish and close it. */
void cr_trace_open(struct cr_job *job, bool simulated);
void cr_trace_close(struct cr_job *job);

/* The trace's clock, in ticks: the time-stamp counter where it is constant and
 * runs in every state (a third of clock_gettime's cost here), else
 * cr_clock_ns; under courier run --sim the virtual clock's nanoseconds. */
uint64_t cr_trace_now(struct cr_job *job);
/* Nanoseconds for the waits a call records (cr_trace_wait_on): the real clock,
 * or under courier run --sim the virtual one. */
uint64_t cr_trace_ns(struct cr_job *job);

/* Slow halves of the hooks below (tracing is on). */
void cr_trace_enter_on(struct cr_job *job, const char *call);
void cr_trace_leave_on(struct cr_job *job);
/* at: when the send began (cr_trace_now, taken before the message could be
 * seen by its receiver, so that no arrow runs backwards), 0: now. */
void cr_trace_send_on(struct cr_job *job, int dst, uint16_t ctx, int32_t tag, uint64_t bytes,
                      uint64_t at, const char *how);
void cr_trace_recv_on(struct cr_job *job, int src, uint16_t ctx, int32_t tag, uint64_t bytes,
                      uint64_t posted, const char *how);
void cr_trace_how_on(struct cr_job *job, const char *how);
void cr_trace_args_on(struct cr_job *job, int peer, int32_t tag, uint64_t bytes, uint16_t ctx);
void cr_trace_wait_on(struct cr_job *job, uint64_t ns);

#endif
