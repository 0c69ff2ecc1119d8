/* The tcp transport's frame: what travels on an authenticated connection.
 *
 * A frame is a fixed 48-byte header, then len bytes of payload. Every field is
 * little-endian whatever the host (loads and stores go byte by byte, which the
 * compiler turns into plain moves on x86 and arm64):
 *
 *   0  u32 len      payload bytes that follow the header
 *   4  u8  op       CR_OP_EAGER..CR_OP_LAST, or TCP_OP_BYE (the peer leaves)
 *   5  u8  flags
 *   6  u16 ctx
 *   8  i32 tag
 *  12  u32 zero     reserved: 0
 *  16  u64 size     \
 *  24  u64 addr      | cr_hdr's fields, as the engine gave them
 *  32  u64 sreq      |
 *  40  u64 rreq     /
 *
 * The decoder is pure (no state, no allocation, no system call) so that it can
 * be fuzzed: it accepts a header only if the op is known, the reserved word is
 * zero, the payload is at most the receiver's maximum and a BYE carries
 * nothing. It judges a header as soon as its 48 bytes are there, before its
 * payload has arrived, so a hostile length is refused without reading on. */
#ifndef COURIER_TCP_WIRE_H
#define COURIER_TCP_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "transport.h"

#define TCP_HDR_LEN 48
#define TCP_OP_BYE 0x40 /* control: the sender leaves the job in order, nothing follows */

static inline uint16_t tcp_ld16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t tcp_ld32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t tcp_ld64(const unsigned char *p)
{
    return (uint64_t)tcp_ld32(p) | (uint64_t)tcp_ld32(p + 4) << 32;
}
static inline void tcp_st16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static inline void tcp_st32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> 8 * i);
}
static inline void tcp_st64(unsigned char *p, uint64_t v)
{
    tcp_st32(p, (uint32_t)v);
    tcp_st32(p + 4, (uint32_t)(v >> 32));
}

/* Write the header of a frame carrying h and len bytes of payload. */
static inline void tcp_encode(unsigned char out[TCP_HDR_LEN], const cr_hdr *h, uint32_t len)
{
    tcp_st32(out, len);
    out[4] = h->op;
    out[5] = h->flags;
    tcp_st16(out + 6, h->ctx);
    tcp_st32(out + 8, (uint32_t)h->tag);
    tcp_st32(out + 12, 0);
    tcp_st64(out + 16, h->size);
    tcp_st64(out + 24, h->addr);
    tcp_st64(out + 32, h->sreq);
    tcp_st64(out + 40, h->rreq);
}

enum {
    TCP_FRAME_MORE = 0, /* not a whole frame yet: read more */
    TCP_FRAME_BAD = -1  /* malformed: the peer is broken or hostile */
};

/* Decode the frame at the start of buf (avail bytes there). Returns the frame's
 * whole length (header and payload, > 0) when it is complete, with *h, *payload
 * (inside buf) and *len set; TCP_FRAME_MORE when more bytes are needed (*len and *h
 * are then set once the header is in, so the caller can make room for the
 * payload or read it elsewhere);
 * TCP_FRAME_BAD when the header breaks a rule. max_payload is at most
 * UINT32_MAX - TCP_HDR_LEN. */
static inline long tcp_decode(const unsigned char *buf, size_t avail, uint32_t max_payload,
                              cr_hdr *h, const unsigned char **payload, uint32_t *len)
{
    if (avail < TCP_HDR_LEN) return TCP_FRAME_MORE;
    uint32_t n = tcp_ld32(buf);
    uint8_t op = buf[4];
    if (n > max_payload || tcp_ld32(buf + 12) != 0) return TCP_FRAME_BAD;
    if (op == TCP_OP_BYE) {
        if (n != 0) return TCP_FRAME_BAD;
    } else if (op < CR_OP_EAGER || op > CR_OP_LAST)
        return TCP_FRAME_BAD;
    *len = n;
    h->op = op;
    h->flags = buf[5];
    h->ctx = tcp_ld16(buf + 6);
    h->tag = (int32_t)tcp_ld32(buf + 8);
    h->size = tcp_ld64(buf + 16);
    h->addr = tcp_ld64(buf + 24);
    h->sreq = tcp_ld64(buf + 32);
    h->rreq = tcp_ld64(buf + 40);
    if (avail - TCP_HDR_LEN < n) return TCP_FRAME_MORE;
    *payload = buf + TCP_HDR_LEN;
    return (long)(TCP_HDR_LEN + (size_t)n);
}

#endif
