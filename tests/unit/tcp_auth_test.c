/* Unit test of the tcp transport's handshake (src/transport/tcp_auth.c), with no
 * sockets: two state machines talk through buffers, and a third party plays the
 * stranger. It checks the good path (in one piece and byte by byte, with frames
 * after the handshake left to the caller), a wrong key on either side, a
 * RESPONSE replayed against a new CHALLENGE, a CHALLENGE replayed to a new
 * HELLO, truncated and garbled messages (every byte of every message flipped in
 * turn), wrong rank fields, and that a failed machine stays failed. Exits
 * non-zero, naming the check, when the code is wrong. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "tcp_auth.h"
#include "unit.h"

static unsigned char key[TCP_AUTH_KEY], other_key[TCP_AUTH_KEY];

static void nonce(unsigned char *n, int seed)
{
    for (int i = 0; i < TCP_AUTH_NONCE; i++) n[i] = (unsigned char)(seed * 31 + i * 7 + 1);
}

/* Move what 'from' has to send into 'to' (all at once, or in pieces of 'piece'
 * bytes); returns the last code of 'to', and *leftover the bytes it did not take. */
static int pass(tcp_auth *from, tcp_auth *to, size_t piece, size_t *taken)
{
    int rc = TCP_AUTH_MORE;
    *taken = 0;
    while (from->outoff < from->outlen) {
        size_t n = from->outlen - from->outoff;
        if (piece && n > piece) n = piece;
        size_t used;
        rc = tcp_auth_input(to, from->out + from->outoff, n, &used);
        *taken += used;
        from->outoff += n;
        if (rc < 0) break;
    }
    from->outoff = from->outlen = 0;
    return rc;
}

/* A whole handshake between connector rank c and acceptor rank a. */
static void good_path(size_t piece)
{
    tcp_auth C, A;
    unsigned char nc[32], na[32];
    nonce(nc, 1);
    nonce(na, 2);
    uint8_t may[4] = {1, 1, 0, 1};
    tcp_auth_connect(&C, key, 1, 2, 4, nc);
    tcp_auth_accept(&A, key, 2, 4, may, na);
    CHECK(C.outlen == TCP_AUTH_HELLO);
    size_t used;
    CHECK(pass(&C, &A, piece, &used) == TCP_AUTH_MORE); /* HELLO -> CHALLENGE queued */
    CHECK(A.peer == 1);
    CHECK(A.outlen == TCP_AUTH_CHALLENGE);
    CHECK(pass(&A, &C, piece, &used) == TCP_AUTH_MORE); /* CHALLENGE -> RESPONSE queued */
    CHECK(C.outlen == TCP_AUTH_RESPONSE);
    CHECK(pass(&C, &A, piece, &used) == TCP_AUTH_VERIFIED);
    CHECK(used == TCP_AUTH_RESPONSE);
    tcp_auth_welcome(&A);
    CHECK(A.state == TCP_AUTH_S_DONE && A.outlen == TCP_AUTH_WELCOME);
    /* WELCOME followed by frame bytes in the same read: only WELCOME is taken */
    unsigned char buf[TCP_AUTH_WELCOME + 10];
    memcpy(buf, A.out, TCP_AUTH_WELCOME);
    memset(buf + TCP_AUTH_WELCOME, 0x77, 10);
    A.outlen = 0;
    int rc = tcp_auth_input(&C, buf, sizeof buf, &used);
    CHECK(rc == TCP_AUTH_DONE);
    CHECK(used == TCP_AUTH_WELCOME);
    /* more input after the end is never taken */
    CHECK(tcp_auth_input(&C, buf, 5, &used) == TCP_AUTH_DONE && used == 0);
    CHECK(tcp_auth_input(&A, buf, 5, &used) == TCP_AUTH_DONE && used == 0);
    tcp_auth_clear(&C);
    tcp_auth_clear(&A);
}

/* RESPONSE bytes pipelined right behind HELLO? Impossible (it needs the
 * CHALLENGE); but frames right behind the RESPONSE must stay with the caller. */
static void response_then_frames(void)
{
    tcp_auth C, A;
    unsigned char nc[32], na[32];
    nonce(nc, 3);
    nonce(na, 4);
    tcp_auth_connect(&C, key, 0, 1, 2, nc);
    tcp_auth_accept(&A, key, 1, 2, NULL, na);
    size_t used;
    pass(&C, &A, 0, &used);
    pass(&A, &C, 0, &used);
    unsigned char buf[TCP_AUTH_RESPONSE + 7];
    memcpy(buf, C.out, TCP_AUTH_RESPONSE);
    memset(buf + TCP_AUTH_RESPONSE, 1, 7);
    CHECK(tcp_auth_input(&A, buf, sizeof buf, &used) == TCP_AUTH_VERIFIED);
    CHECK(used == TCP_AUTH_RESPONSE);
}

/* The MACs are exactly the ones the protocol states (tcp_auth.h), computed here
 * independently: "A" | HELLO | CHALLENGE's head and nonce, and "C" | HELLO |
 * CHALLENGE's head and nonce | RESPONSE's head. */
static void known_answer(void)
{
    tcp_auth C, A;
    unsigned char nc[32], na[32];
    nonce(nc, 21);
    nonce(na, 22);
    tcp_auth_connect(&C, key, 5, 6, 8, nc);
    tcp_auth_accept(&A, key, 6, 8, NULL, na);
    unsigned char hello[TCP_AUTH_HELLO], chal[TCP_AUTH_CHALLENGE], resp[TCP_AUTH_RESPONSE];
    memcpy(hello, C.out, sizeof hello);
    size_t used;
    pass(&C, &A, 0, &used);
    memcpy(chal, A.out, sizeof chal);
    pass(&A, &C, 0, &used);
    memcpy(resp, C.out, sizeof resp);
    unsigned char msg[256], mac[32];
    unsigned int len = 32;
    size_t n = 0;
    msg[n++] = 'A';
    memcpy(msg + n, hello, sizeof hello);
    n += sizeof hello;
    memcpy(msg + n, chal, TCP_AUTH_HEAD + TCP_AUTH_NONCE);
    n += TCP_AUTH_HEAD + TCP_AUTH_NONCE;
    HMAC(EVP_sha256(), key, sizeof key, msg, n, mac, &len);
    CHECK(memcmp(mac, chal + TCP_AUTH_HEAD + TCP_AUTH_NONCE, 32) == 0);
    CHECK(memcmp(chal + TCP_AUTH_HEAD, na, 32) == 0 && memcmp(hello + TCP_AUTH_HEAD, nc, 32) == 0);
    msg[0] = 'C';
    memcpy(msg + n, resp, TCP_AUTH_HEAD);
    n += TCP_AUTH_HEAD;
    HMAC(EVP_sha256(), key, sizeof key, msg, n, mac, &len);
    CHECK(memcmp(mac, resp + TCP_AUTH_HEAD, 32) == 0);
    static const unsigned char h[16] = {'c', 'o', 'u', 'r', 1, 1, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0};
    CHECK(memcmp(hello, h, 16) == 0);
}

/* The connector holds another key: the acceptor's MAC fails at the connector. */
static void wrong_key(void)
{
    tcp_auth C, A;
    unsigned char nc[32], na[32];
    nonce(nc, 5);
    nonce(na, 6);
    tcp_auth_connect(&C, other_key, 0, 1, 2, nc);
    tcp_auth_accept(&A, key, 1, 2, NULL, na);
    size_t used;
    CHECK(pass(&C, &A, 0, &used) == TCP_AUTH_MORE);
    CHECK(pass(&A, &C, 0, &used) == TCP_AUTH_EMAC);
    CHECK(C.state == TCP_AUTH_S_FAILED && C.outlen == 0); /* it sends no RESPONSE */

    /* A stranger who forges a RESPONSE without the key: the acceptor refuses. */
    tcp_auth_connect(&C, key, 0, 1, 2, nc);
    tcp_auth_accept(&A, key, 1, 2, NULL, na);
    pass(&C, &A, 0, &used);
    /* the stranger has no key: its MAC is made up */
    unsigned char resp[TCP_AUTH_RESPONSE];
    memcpy(resp, C.hello, TCP_AUTH_HEAD); /* right head shape: from 0 to 1 */
    resp[5] = TCP_AUTH_K_RESPONSE;
    memset(resp + TCP_AUTH_HEAD, 0x5a, TCP_AUTH_MAC);
    A.outoff = A.outlen = 0;
    CHECK(tcp_auth_input(&A, resp, sizeof resp, &used) == TCP_AUTH_EMAC);
    CHECK(A.state == TCP_AUTH_S_FAILED);
    /* and a failed machine stays failed */
    CHECK(tcp_auth_input(&A, resp, sizeof resp, &used) == TCP_AUTH_ESTATE);
}

/* A RESPONSE recorded from one handshake, replayed against a new CHALLENGE
 * (same HELLO replayed too): refused, because the acceptor's nonce is new. */
static void replay(void)
{
    tcp_auth C, A;
    unsigned char nc[32], na[32], na2[32];
    nonce(nc, 7);
    nonce(na, 8);
    nonce(na2, 9);
    tcp_auth_connect(&C, key, 3, 0, 4, nc);
    tcp_auth_accept(&A, key, 0, 4, NULL, na);
    unsigned char hello[TCP_AUTH_HELLO], resp[TCP_AUTH_RESPONSE];
    memcpy(hello, C.out, sizeof hello);
    size_t used;
    pass(&C, &A, 0, &used);
    pass(&A, &C, 0, &used);
    memcpy(resp, C.out, sizeof resp);
    CHECK(pass(&C, &A, 0, &used) == TCP_AUTH_VERIFIED); /* the real one is good */

    tcp_auth A2;
    tcp_auth_accept(&A2, key, 0, 4, NULL, na2);
    CHECK(tcp_auth_input(&A2, hello, sizeof hello, &used) == TCP_AUTH_MORE);
    CHECK(tcp_auth_input(&A2, resp, sizeof resp, &used) == TCP_AUTH_EMAC);

    /* the same acceptor nonce again (which RAND_bytes never gives): accepted,
     * which shows the refusal above came from the nonce alone */
    tcp_auth A3;
    tcp_auth_accept(&A3, key, 0, 4, NULL, na);
    CHECK(tcp_auth_input(&A3, hello, sizeof hello, &used) == TCP_AUTH_MORE);
    CHECK(tcp_auth_input(&A3, resp, sizeof resp, &used) == TCP_AUTH_VERIFIED);

    /* a CHALLENGE recorded for one HELLO, replayed to a connector with a new nonce */
    tcp_auth C2;
    unsigned char nc2[32];
    nonce(nc2, 10);
    tcp_auth_connect(&C2, key, 3, 0, 4, nc2);
    tcp_auth_accept(&A, key, 0, 4, NULL, na);
    CHECK(tcp_auth_input(&A, hello, sizeof hello, &used) == TCP_AUTH_MORE);
    CHECK(tcp_auth_input(&C2, A.out, A.outlen, &used) == TCP_AUTH_EMAC);
}

/* Every single-byte change of every handshake message is refused. */
static void garbled(void)
{
    unsigned char nc[32], na[32];
    nonce(nc, 11);
    nonce(na, 12);
    for (int msg = 0; msg < 4; msg++) {
        int len = msg == 0   ? TCP_AUTH_HELLO
                  : msg == 1 ? TCP_AUTH_CHALLENGE
                  : msg == 2 ? TCP_AUTH_RESPONSE
                             : TCP_AUTH_WELCOME;
        for (int i = 0; i < len; i++) {
            tcp_auth C, A;
            tcp_auth_connect(&C, key, 1, 0, 2, nc);
            tcp_auth_accept(&A, key, 0, 2, NULL, na);
            size_t used;
            tcp_auth *src[4] = {&C, &A, &C, &A}, *dst[4] = {&A, &C, &A, &C};
            int rc = 0;
            for (int m = 0; m <= msg; m++) {
                if (m == 3) {
                    CHECK(rc == TCP_AUTH_VERIFIED);
                    tcp_auth_welcome(&A);
                }
                if (m == msg) src[m]->out[src[m]->outoff + (size_t)i] ^= 0x01;
                rc = pass(src[m], dst[m], 0, &used);
            }
            /* a changed nonce in HELLO is just another nonce to the acceptor;
             * the connector then refuses the CHALLENGE, whose MAC covers it */
            if (msg == 0 && i >= TCP_AUTH_HEAD) {
                CHECK(rc == TCP_AUTH_MORE);
                rc = pass(&A, &C, 0, &used);
                CHECK(rc == TCP_AUTH_EMAC && C.outlen == 0);
            }
            if (rc >= 0) fprintf(stderr, "message %d byte %d: rc %d\n", msg, i, rc);
            CHECK(rc < 0);
        }
    }
}

/* Truncated messages never complete; random bytes are refused at the head. */
static void truncated_and_random(void)
{
    unsigned char nc[32], na[32];
    nonce(nc, 13);
    nonce(na, 14);
    tcp_auth C, A;
    tcp_auth_connect(&C, key, 1, 0, 2, nc);
    tcp_auth_accept(&A, key, 0, 2, NULL, na);
    size_t used;
    CHECK(tcp_auth_input(&A, C.out, TCP_AUTH_HELLO - 1, &used) == TCP_AUTH_MORE);
    CHECK(used == TCP_AUTH_HELLO - 1 && A.outlen == 0); /* no CHALLENGE for half a HELLO */
    CHECK(tcp_auth_input(&A, C.out + TCP_AUTH_HELLO - 1, 1, &used) == TCP_AUTH_MORE);
    CHECK(A.outlen == TCP_AUTH_CHALLENGE);
    /* half a CHALLENGE: no RESPONSE */
    CHECK(tcp_auth_input(&C, A.out, 40, &used) == TCP_AUTH_MORE && C.outlen == TCP_AUTH_HELLO);

    /* an HTTP request: refused once the head is in, without waiting for a whole HELLO */
    const char *http = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    tcp_auth_accept(&A, key, 0, 2, NULL, na);
    CHECK(tcp_auth_input(&A, http, strlen(http), &used) == TCP_AUTH_EGARBAGE);
    CHECK(used <= TCP_AUTH_HELLO);
    /* the first bytes of a TLS ClientHello: refused at the first, nothing sent */
    tcp_auth_accept(&A, key, 0, 2, NULL, na);
    CHECK(tcp_auth_input(&A, "\x16\x03\x01", 3, &used) == TCP_AUTH_EGARBAGE && A.outlen == 0);
    /* the start of a real HELLO, in pieces: still waiting, nothing sent */
    tcp_auth_accept(&A, key, 0, 2, NULL, na);
    CHECK(tcp_auth_input(&A, "co", 2, &used) == TCP_AUTH_MORE && A.outlen == 0);
    CHECK(tcp_auth_input(&A, "ur\x01\x01", 4, &used) == TCP_AUTH_MORE && A.outlen == 0);
    /* ... refused when a later byte of the fixed part goes wrong (the kind: WELCOME) */
    tcp_auth_accept(&A, key, 0, 2, NULL, na);
    CHECK(tcp_auth_input(&A, "cour\x01", 5, &used) == TCP_AUTH_MORE);
    CHECK(tcp_auth_input(&A, "\x04", 1, &used) == TCP_AUTH_EGARBAGE && A.outlen == 0);
    srand(1);
    int refused = 0;
    for (int t = 0; t < 1000; t++) {
        unsigned char junk[TCP_AUTH_CHALLENGE];
        for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)rand();
        tcp_auth_accept(&A, key, 0, 2, NULL, na);
        refused += tcp_auth_input(&A, junk, sizeof junk, &used) < 0;
    }
    CHECK(refused == 1000);
}

/* Wrong rank fields: the claimed sender not served here, out of range, myself;
 * a HELLO for another rank; a CHALLENGE from a rank other than the one called. */
static void wrong_ranks(void)
{
    unsigned char nc[32], na[32];
    nonce(nc, 15);
    nonce(na, 16);
    uint8_t may[4] = {1, 0, 1, 1}; /* rank 1 is not ours to serve */
    struct {
        int from, to, want;
    } cases[] = {{1, 2, TCP_AUTH_ERANK},  {4, 2, TCP_AUTH_ERANK}, {2, 2, TCP_AUTH_ERANK},
                 {-1, 2, TCP_AUTH_ERANK}, {0, 3, TCP_AUTH_ERANK}, {3, 2, TCP_AUTH_MORE}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tcp_auth C, A;
        tcp_auth_connect(&C, key, cases[k].from, cases[k].to, 4, nc);
        tcp_auth_accept(&A, key, 2, 4, may, na);
        size_t used;
        int rc = pass(&C, &A, 0, &used);
        if (rc != cases[k].want) fprintf(stderr, "ranks case %zu: rc %d\n", k, rc);
        CHECK(rc == cases[k].want);
        CHECK(rc == TCP_AUTH_MORE ? A.outlen == TCP_AUTH_CHALLENGE : A.outlen == 0);
    }
    /* connector 0 calls rank 1, but rank 3 answers (with the right key) */
    tcp_auth C, A;
    tcp_auth_connect(&C, key, 0, 1, 4, nc);
    tcp_auth_accept(&A, key, 3, 4, NULL, na);
    /* rank 3's acceptor is called "to 1": it refuses the HELLO itself */
    size_t used;
    CHECK(pass(&C, &A, 0, &used) == TCP_AUTH_ERANK);
    /* make rank 3 answer as if asked: the connector refuses the CHALLENGE's sender */
    tcp_auth_connect(&C, key, 0, 1, 4, nc);
    tcp_auth D;
    tcp_auth_connect(&D, key, 0, 3, 4, nc); /* the HELLO rank 3 would accept */
    tcp_auth_accept(&A, key, 3, 4, NULL, na);
    pass(&D, &A, 0, &used);
    CHECK(tcp_auth_input(&C, A.out, A.outlen, &used) == TCP_AUTH_ERANK);
}

int main(void)
{
    for (int i = 0; i < TCP_AUTH_KEY; i++) {
        key[i] = (unsigned char)(i * 13 + 5);
        other_key[i] = key[i];
    }
    other_key[31] ^= 0x80; /* one bit apart */
    good_path(0);
    good_path(1);
    good_path(7);
    response_then_frames();
    known_answer();
    wrong_key();
    replay();
    garbled();
    truncated_and_random();
    wrong_ranks();
    if (failures) {
        fprintf(stderr, "tcp_auth_test: %d checks failed\n", failures);
        return 1;
    }
    printf("tcp_auth_test: all checks passed\n");
    return 0;
}
