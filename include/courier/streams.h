/* Streams: logical channels of 64-bit words between ranks, after iWarp (seed
 * 002; docs/streams.md).
 *
 * A stream is a one-way channel from an origin rank to a destination rank,
 * optionally along a pathway through intermediate ranks, which forward its
 * words on their progress thread without the program's involvement. It is
 * opened by a matched pair of calls, as iWarp opens a pathway: the origin's
 * cr_stream_open sends the pathway header along the route and returns at once;
 * the destination's cr_stream_accept waits for that header (matched by origin
 * and channel number) and grants the origin its first credits. The
 * destination's queue holds at most `depth` words: the origin holds one credit
 * per free slot, spends one per word sent and gets them back as the
 * destination consumes words, so a sender without credit blocks (or the try
 * form returns 0). Words arrive in the order sent. Closing the origin's end
 * sends end-of-stream; the destination reads it as 0 (cr_stream_recv) or -1
 * (cr_stream_tryrecv).
 *
 * Every rank that is an end or an intermediate of a stream must have called
 * cr_stream_init (collective: every rank calls it, which starts each rank's
 * forwarding service); cr_stream_finalize (collective) waits until every
 * pathway through this rank has forwarded its end-of-stream, so that no
 * intermediate leaves while words still pass through it.
 *
 * Several streams share one link fairly: each message carries at most 256
 * words, and an intermediate forwards one message per stream in turn. A
 * reserved pathway (CR_STREAM_RESERVED) is forwarded ahead of every other
 * stream at each intermediate, and the other streams' words never wait in the
 * engine's queues ahead of it there. */
#ifndef COURIER_STREAMS_H
#define COURIER_STREAMS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility push(default)
#endif

typedef int cr_stream; /* a stream end of this rank; never reused after close */

#define CR_STREAM_RESERVED 0x1    /* cr_stream_open: a reserved pathway */
#define CR_STREAM_MAX_VIA 64      /* most intermediate ranks of a pathway */
#define CR_STREAM_MAX_DEPTH 65536 /* largest queue, in words */

/* Collective: start this rank's stream service (forwarding for pathways that
 * pass through it); every rank of the job calls it once. */
void cr_stream_init(void);
/* Collective: every stream end of this rank is closed; waits until every
 * pathway through this rank has passed its end-of-stream on. */
void cr_stream_finalize(void);

/* Origin: open channel ch (0..65535) to dst through the nvia intermediate
 * ranks via[0..nvia-1] (in order; NULL when nvia is 0). Returns at once. */
cr_stream cr_stream_open(int dst, int ch, const int *via, int nvia, int flags);
/* Destination: wait for channel ch from src to be opened; its queue holds
 * depth words (1..CR_STREAM_MAX_DEPTH; 0: 64). */
cr_stream cr_stream_accept(int src, int ch, int depth);

/* Origin: send one word, blocking while there is no credit. */
void cr_stream_send(cr_stream s, uint64_t w);
/* Origin: send one word if there is credit (1), else 0 at once. */
int cr_stream_trysend(cr_stream s, uint64_t w);
/* Origin: send n words (blocking as cr_stream_send; up to 256 per message). */
void cr_stream_write(cr_stream s, const uint64_t *w, size_t n);

/* Destination: the next word into *w: 1, or 0 at end-of-stream. */
int cr_stream_recv(cr_stream s, uint64_t *w);
/* Destination: 1 (a word), 0 (none yet) or -1 (end-of-stream), at once. */
int cr_stream_tryrecv(cr_stream s, uint64_t *w);
/* Destination: read n words; returns n, or fewer at end-of-stream. */
size_t cr_stream_read(cr_stream s, uint64_t *w, size_t n);

/* Destination: the next n words of the stream go to buf, without a call per
 * word (spooling, as iWarp's memory agent does): they land there as they
 * arrive, moved by the progress thread. Returns at once; no word may be read
 * from s until the redirection is waited for. */
void cr_stream_redirect(cr_stream s, uint64_t *buf, size_t n);
/* Wait until the redirected words are all in buf; returns how many came (fewer
 * than n only at end-of-stream). cr_stream_redirect_test: the same, or
 * (size_t)-1 at once when they are not all there yet. */
size_t cr_stream_redirect_wait(cr_stream s);
size_t cr_stream_redirect_test(cr_stream s);

/* Splice (iWarp's redirection at a joint cell): from now on every word that
 * reaches the destination end `in` goes on along the origin end `out` of this
 * rank, moved by the service without a call per word, and in's end-of-stream
 * ends out. Both ends are closed by the service; the program uses neither
 * again. Words already sent on out go first, words already queued on in are
 * passed on first. GetRow: read your part of in, then splice the rest on to
 * the next rank; PutRow: write your part on out, then splice in behind it. */
void cr_stream_splice(cr_stream in, cr_stream out);

/* Close this end. The origin sends end-of-stream (words already sent are still
 * delivered); the destination discards what remains up to end-of-stream. */
void cr_stream_close(cr_stream s);

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif

#endif
