/* Layout of the shm transport's region of the host segment, shared by the
 * launcher (which sizes and lays it out, shm_region.c) and the transport (which
 * uses it). See shm.c for the protocol and its invariants. */
#ifndef COURIER_SHM_LAYOUT_H
#define COURIER_SHM_LAYOUT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "transport.h"

#define CELL 64
#define INLINE_MAX 48
/* A small eager message whose header is carried whole (CR_HDR_WHOLE): up to
 * this many bytes inline, its rreq in the cell's last 8 bytes. */
#define INLINE_TAGGED (INLINE_MAX - 8)

/* The head of the shm region (inside the host segment): ring geometry, which
 * depends only on the number of ranks, and where the inboxes and the channels
 * start (offsets from the region's start). Then one inbox per receiver, then a
 * place for two channels per ordered pair (the ordinary ones, then the lanes). Only the head and
 * the inboxes are memory from the start; a channel's memory is taken by its sender when it first
 * sends on it (cr_host_reserve), so a job's memory grows with the pairs that
 * talk, not with N^2. */
typedef struct shm_region {
    uint32_t nranks, ncells, dbytes, pad;
    uint64_t chan_stride;
    uint64_t inbox_off, chan_off;
    char pad2[CELL - 40];
} shm_region;

/* A receiver's inbox: the senders that have opened a channel to it, in the
 * order they came. A sender takes a slot (tail, fetch-and-add; each sender
 * takes at most two, its channel and its lane, so 2 * nranks slots never run
 * out) and stores its rank + 1 in it (the top bit set for the lane) with
 * release order; the receiver reads the slots in order and stops at one
 * still 0 (taken, not yet written). The line holds the tail alone: senders
 * contend on it once per pair in the job's life. */
typedef struct shm_inbox {
    _Atomic uint32_t tail;
    char pad[CELL - 4];
} shm_inbox;

typedef struct shm_cell {
    _Atomic uint32_t seq;
    uint8_t op, flags;
    uint16_t ctx;
    int32_t tag;
    uint32_t len;
    union {
        unsigned char inl[INLINE_MAX];
        struct {
            uint32_t dpos; /* start of the payload in the data ring (running count) */
            uint32_t pad;
            uint64_t size, addr, sreq, rreq;
        } c;
    } u;
} shm_cell;

_Static_assert(sizeof(shm_cell) == CELL, "a cell is one cache line");

typedef struct shm_chan {
    _Atomic uint32_t head_pub;  /* cells the receiver has consumed */
    _Atomic uint32_t dhead_pub; /* data-ring bytes the receiver has consumed */
    char pad[CELL - 8];
    shm_cell cells[]; /* ncells, then dbytes of data ring */
} shm_chan;

/* Decode a published cell into the header, payload and length the engine is given,
 * and check it: the cell comes from another process, so nothing in it is trusted.
 * 'ring' is the channel's data ring of 'dbytes' bytes (a power of two, at least 2).
 * *dend is, on entry, the receiver's consumed position in the data ring and, on
 * return, the position once this cell is consumed. Returns 0, or -1 when the cell
 * is malformed: a payload longer than half the ring or that would run past its end.
 * A payload returned lies wholly inside the cell or inside the ring.
 *
 * Pure (no job, no atomics) so that it can be tested and fuzzed alone. Each field
 * that a check depends on is read exactly once (volatile), so a peer that rewrites
 * the cell meanwhile cannot make the checked value differ from the used one. The
 * inline case, a small message's whole path, is a few loads and one compare. */
static inline int cr_shm_decode(const shm_cell *c, const unsigned char *ring, uint32_t dbytes,
                                cr_hdr *h, const void **payload, uint32_t *len, uint32_t *dend)
{
    uint8_t op = *(const volatile uint8_t *)&c->op;
    uint32_t n = *(const volatile uint32_t *)&c->len;
    uint8_t flags = *(const volatile uint8_t *)&c->flags;
    h->op = op;
    h->flags = flags;
    h->ctx = c->ctx;
    h->tag = c->tag;
    *len = n;
    /* inline: a small eager message whose header is not carried whole */
    if ((op | (flags & CR_HDR_WHOLE)) == CR_OP_EAGER && n <= INLINE_MAX) {
        h->size = n;
        h->addr = h->sreq = h->rreq = 0;
        *payload = c->u.inl;
        return 0;
    }
    if (op == CR_OP_EAGER && n <= INLINE_TAGGED) { /* whole header: rreq in the tail */
        h->size = n;
        h->addr = h->sreq = 0;
        memcpy(&h->rreq, c->u.inl + INLINE_TAGGED, sizeof h->rreq);
        *payload = c->u.inl;
        return 0;
    }
    uint32_t pos = *(const volatile uint32_t *)&c->u.c.dpos, off = pos & (dbytes - 1);
    if (n > dbytes / 2 || off + n > dbytes) return -1; /* off < dbytes: no overflow */
    h->size = c->u.c.size;
    h->addr = c->u.c.addr;
    h->sreq = c->u.c.sreq;
    h->rreq = c->u.c.rreq;
    *payload = ring + off;
    if (n) *dend = pos + n;
    return 0;
}

#endif
