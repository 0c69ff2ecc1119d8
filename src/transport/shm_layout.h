/* Layout of the shared-memory segment, shared by the launcher (which creates
 * and sizes it) and the shm transport (which uses it). See shm.c for the
 * protocol and its invariants. */
#ifndef COURIER_SHM_LAYOUT_H
#define COURIER_SHM_LAYOUT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "transport.h"

#define SHM_MAGIC 0x32726569726f6f63ULL /* "courier2" */
/* Collective areas (cr_coll_area) exist for jobs up to COLL_MAX_RANKS; each
 * rank's slot holds cr_shm_coll_slot(nranks) bytes (all-to-all needs one block
 * per rank in it: 16 KiB up to 16 ranks, 2 KiB up to 64). */
#define COLL_MAX_RANKS 64
static inline uint32_t cr_shm_coll_slot(int nranks)
{
    return nranks <= 16 ? 16384 : 2048;
}
#define CELL 64
#define INLINE_MAX 48

typedef struct shm_head {
    uint64_t magic;
    uint32_t nranks, ncells, dbytes, pad;
    uint64_t rank_off, status_off, chan_off, chan_stride, total;
    uint64_t coll_off, coll_bytes; /* CR_COLL_AREAS areas of coll_bytes each (0: none) */
} shm_head;

typedef struct shm_rank {
    _Atomic uint32_t bell;     /* bumped by whoever wakes this rank */
    _Atomic uint32_t sleepers; /* threads of this rank waiting on bell */
    _Atomic int32_t pid;
    _Atomic uint32_t gone; /* set when the rank has finalized */
    char pad[CELL - 16];
} shm_rank;

/* What a rank is blocked on, written by the rank (seqlock: seq is odd while it
 * writes) and read by the launcher's watchdog. Kept apart from shm_rank so that
 * the watchdog's reads never touch a line on the message path. */
typedef struct shm_status {
    _Atomic uint32_t seq;
    uint32_t blocked;      /* 1 while blocked in a communication call */
    uint32_t spells;       /* blocked spells so far: a change means the rank moved */
    _Atomic uint32_t busy; /* a handler is running: the rank is not stuck */
    cr_waitinfo w;
} __attribute__((aligned(CELL))) shm_status;

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
_Static_assert(sizeof(shm_rank) == CELL, "a rank record is one cache line");

typedef struct shm_chan {
    _Atomic uint32_t head_pub;  /* cells the receiver has consumed */
    _Atomic uint32_t dhead_pub; /* data-ring bytes the receiver has consumed */
    char pad[CELL - 8];
    shm_cell cells[]; /* ncells, then dbytes of data ring */
} shm_chan;

size_t cr_shm_chan_stride(uint32_t ncells, uint32_t dbytes);

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
    h->op = op;
    h->flags = c->flags;
    h->ctx = c->ctx;
    h->tag = c->tag;
    *len = n;
    if (op == CR_OP_EAGER && n <= INLINE_MAX) {
        h->size = n;
        h->addr = h->sreq = h->rreq = 0;
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
