/* Fuzz harness: the tcp transport's frame decoder (tcp_decode, tcp_wire.h).
 *
 * The bytes on an authenticated connection come from another process, so every
 * one of them is hostile input. Input: bytes 0..3 pick the receiver's largest
 * payload (reduced to 0..1 MiB), the rest is the stream. The harness decodes the
 * stream frame after frame, as the transport does, from a heap block of its
 * exact size (ASan catches any read past it), and also feeds it in two pieces to
 * check that a frame is judged the same whatever the cut.
 *
 * Invariants checked (abort on violation, which libFuzzer reports as a crash):
 *  - the decoder accepts exactly the headers an independent statement of the
 *    rule accepts (op EAGER..LAST with any payload up to the maximum, or BYE with
 *    none; reserved word zero), and judges a header from its 48 bytes alone;
 *  - an accepted frame lies wholly inside the bytes given, its payload starts
 *    right after the header, and every field comes out as the bytes say;
 *  - re-encoding the decoded header gives back the same 48 bytes;
 *  - with fewer bytes than the frame, the answer is "more" (or "bad" for a bad
 *    header), never a frame. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tcp_wire.h"

static void check(int ok)
{
    if (!ok) abort();
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) return 0;
    uint32_t max = le32(data) % ((1u << 20) + 1);
    size_t n = size - 4;
    unsigned char *buf = malloc(n ? n : 1);
    check(buf != NULL);
    if (n) memcpy(buf, data + 4, n);

    size_t off = 0;
    for (;;) {
        const unsigned char *p = buf + off;
        size_t avail = n - off;
        cr_hdr h;
        const unsigned char *pl = NULL;
        uint32_t len = 0;
        long rc = tcp_decode(p, avail, max, &h, &pl, &len);
        if (avail < TCP_HDR_LEN) {
            check(rc == TCP_FRAME_MORE);
            break;
        }
        /* the rule, restated */
        uint32_t flen = le32(p);
        uint8_t op = p[4];
        int ok = flen <= max && le32(p + 12) == 0 &&
                 (op == TCP_OP_BYE ? flen == 0 : op >= CR_OP_EAGER && op <= CR_OP_LAST);
        if (!ok) {
            check(rc == TCP_FRAME_BAD);
            break;
        }
        if (avail - TCP_HDR_LEN < flen) {
            check(rc == TCP_FRAME_MORE && len == flen);
            break;
        }
        check(rc == (long)(TCP_HDR_LEN + flen));
        check(len == flen && pl == p + TCP_HDR_LEN);
        check(h.op == op && h.flags == p[5] && h.ctx == (uint16_t)(p[6] | p[7] << 8));
        check((uint32_t)h.tag == le32(p + 8));
        check(h.size == ((uint64_t)le32(p + 20) << 32 | le32(p + 16)));
        check(h.rreq == ((uint64_t)le32(p + 44) << 32 | le32(p + 40)));
        unsigned char again[TCP_HDR_LEN];
        tcp_encode(again, &h, len);
        check(memcmp(again, p, TCP_HDR_LEN) == 0);
        unsigned sum = 0;
        for (uint32_t i = 0; i < len; i++) sum += pl[i]; /* ASan: every byte is in bounds */
        (void)sum;
        /* the same frame cut short at every length the input suggests */
        size_t cut = (size_t)(p[5] * 257u + p[6]) % (size_t)rc;
        cr_hdr h2;
        const unsigned char *pl2;
        uint32_t len2;
        check(tcp_decode(p, cut, max, &h2, &pl2, &len2) == TCP_FRAME_MORE);
        off += (size_t)rc;
    }
    free(buf);
    return 0;
}
