/* Fuzz harness: the shm transport's cell decoder (cr_shm_decode, shm_layout.h).
 *
 * A cell is written by another process, so every byte of it is hostile input.
 * Input: byte 0 picks the data ring's size (a power of two, 2 B..64 KiB, as the
 * decoder requires), bytes 1..4 the receiver's consumed position, the next 64
 * bytes are the cell (zero-padded when the input is short). The cell and the
 * ring live in heap blocks of their exact size, so ASan catches any payload that
 * the decoder lets run outside them.
 *
 * Invariants checked (abort on violation, which libFuzzer reports as a crash):
 *  - the decoder accepts exactly the cells that an independent 64-bit statement
 *    of the rule accepts: inline (EAGER, at most INLINE_MAX bytes; with
 *    CR_HDR_WHOLE at most INLINE_TAGGED, its rreq in the cell's last 8 bytes),
 *    or a payload of at most half the ring that does not run past the ring's
 *    end;
 *  - an accepted payload lies wholly inside the cell or the ring, and every one
 *    of its bytes is readable;
 *  - the header and the consumed position come out as the cell says. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shm_layout.h"

static void check(int ok)
{
    if (!ok) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint32_t dbytes = 1u << (1 + data[0] % 16);
    uint32_t dhead = 0;
    if (size >= 5) memcpy(&dhead, data + 1, 4);
    size_t skip = size >= 5 ? 5 : size;

    shm_cell *c = malloc(sizeof *c);
    unsigned char *ring = malloc(dbytes);
    check(c && ring);
    memset(c, 0, sizeof *c);
    size_t n = size - skip < sizeof *c ? size - skip : sizeof *c;
    memcpy((void *)c, data + skip, n);
    memset(ring, 0xa5, dbytes);

    cr_hdr h;
    const void *payload = NULL;
    uint32_t len = ~0u, dend = dhead;
    int rc = cr_shm_decode(c, ring, dbytes, &h, &payload, &len, &dend);

    /* The rule, restated in 64-bit arithmetic. */
    uint32_t clen, dpos;
    memcpy(&clen, &c->len, 4);
    memcpy(&dpos, &c->u.c.dpos, 4);
    int whole = (c->flags & CR_HDR_WHOLE) != 0;
    int inl = c->op == CR_OP_EAGER && clen <= (whole ? INLINE_TAGGED : INLINE_MAX);
    int fits = (uint64_t)clen <= dbytes / 2 && (uint64_t)(dpos % dbytes) + clen <= dbytes;
    check(rc == 0 ? (inl || fits) : (rc == -1 && !inl && !fits));

    if (rc == 0) {
        check(len == clen);
        check(h.op == c->op && h.flags == c->flags && h.ctx == c->ctx && h.tag == c->tag);
        const unsigned char *p = payload;
        if (inl) {
            check(p == c->u.inl && len <= INLINE_MAX && h.size == len);
            uint64_t tail;
            memcpy(&tail, c->u.inl + INLINE_TAGGED, sizeof tail);
            check(h.addr == 0 && h.sreq == 0 && h.rreq == (whole ? tail : 0) && dend == dhead);
        } else {
            check(p >= ring && (uint64_t)(p - ring) + len <= dbytes && len <= dbytes / 2);
            check(h.size == c->u.c.size && h.addr == c->u.c.addr && h.sreq == c->u.c.sreq &&
                  h.rreq == c->u.c.rreq);
            check(dend == (len ? dpos + len : dhead));
        }
        unsigned sum = 0;
        for (uint32_t i = 0; i < len; i++) sum += p[i]; /* ASan: every byte is in bounds */
        check(inl || sum == 0xa5u * len);
    }
    free(c);
    free(ring);
    return 0;
}
