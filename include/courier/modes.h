/* The GMD communication modes (seed 004, §5-9): three ways to send one message,
 * each a different promise about when the sender may go on, and one receive
 * that takes a message sent in any of them (docs/modes.md).
 *
 *  - synchronous (cr_send_sync): returns once the receiver has the message
 *    (end-to-end significance). Every size takes the rendezvous: the sender
 *    announces the message, and the receiver, once its receive matches, pulls
 *    the data into its buffer (the receiver drives the high-volume transfer).
 *  - single-buffer asynchronous (cr_send_single): returns at once, the message
 *    held in the one buffer this rank keeps for the destination; the next
 *    single-buffer send to that destination waits until the receiver has
 *    consumed (received) the previous one.
 *  - no-wait (cr_send_nowait): returns at once, the message copied; the
 *    progress thread (the GMD "server" process) delivers it. Unbounded
 *    buffering, paid only by the programs that use it.
 *
 * Messages of one sender to one receiver are received in the order sent,
 * whatever their modes (a synchronous or single-buffer send first hands every
 * earlier no-wait message to the engine). Types are 0..2^31-1; a receive names
 * a type or CR_MODE_ANY, and a source rank or CR_MODE_ANY. */
#ifndef COURIER_MODES_H
#define COURIER_MODES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility push(default)
#endif

#define CR_MODE_ANY (-1) /* any source rank / any type, in cr_recv_mode */

/* What cr_recv_mode received. */
typedef struct cr_mode_status {
    int src;     /* the sender's rank */
    int type;    /* the message's type */
    size_t size; /* its length in bytes */
} cr_mode_status;

/* Synchronous send: returns when the receiver has the message (buf is then
 * reusable). */
void cr_send_sync(int dst, int type, const void *buf, size_t len);
/* Single-buffer asynchronous send: waits until the previous single-buffer
 * message to dst was received, copies buf into the buffer and returns. */
void cr_send_single(int dst, int type, const void *buf, size_t len);
/* No-wait send: copies buf and returns; the progress thread delivers it. */
void cr_send_nowait(int dst, int type, const void *buf, size_t len);
/* Receive a message of any mode from src (or CR_MODE_ANY) with the given type
 * (or CR_MODE_ANY) into buf (at most cap bytes; a longer message ends the job);
 * returns its length; st (may be NULL) gets source, type and length. */
size_t cr_recv_mode(int src, int type, void *buf, size_t cap, cr_mode_status *st);
/* Non-blocking look: 1 and *st filled if such a message waits, else 0. */
int cr_probe_mode(int src, int type, cr_mode_status *st);
/* Wait until every single-buffer message of this rank was received and every
 * no-wait message was delivered (its copy freed). */
void cr_modes_flush(void);

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif

#endif
