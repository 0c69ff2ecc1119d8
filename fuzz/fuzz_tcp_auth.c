/* Fuzz harness: the tcp transport's handshake (tcp_auth.c), both roles.
 *
 * A stranger may send anything on a connection, to either end of the handshake.
 * Input: byte 0 picks the role fed (bit 0: acceptor or connector), how the
 * input is cut into reads (bits 1..4: piece size) and, for the connector, how
 * much of a genuine CHALLENGE comes first (bits 5..7); the rest is what arrives.
 * The acceptor is rank 2 of 4 and serves ranks 0, 1 and 3; the connector is rank
 * 1 calling rank 2. A genuine peer (same key) is run alongside so that a real
 * CHALLENGE can be spliced in front of fuzzed bytes.
 *
 * Invariants checked (abort on violation):
 *  - used never exceeds what was given, and nothing is taken after the end or
 *    after an error;
 *  - without the key no input ends the handshake: the acceptor never says
 *    VERIFIED and the connector never says DONE (the fuzzer would have to
 *    forge an HMAC-SHA256);
 *  - out[] holds at most one CHALLENGE and one WELCOME, and the acceptor sends
 *    nothing but its CHALLENGE, only after a well-formed HELLO from a rank it
 *    serves;
 *  - after an error every later input is refused. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tcp_auth.h"

static void check(int ok)
{
    if (!ok) abort();
}

static const unsigned char key[TCP_AUTH_KEY] = "courier fuzzing key, 32 bytes!!";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int acceptor = data[0] & 1;
    size_t piece = ((data[0] >> 1) & 15) + 1;
    size_t genuine = (size_t)(data[0] >> 5) * 12; /* 0..84 bytes of a real CHALLENGE */
    data++;
    size--;

    unsigned char n1[TCP_AUTH_NONCE], n2[TCP_AUTH_NONCE];
    memset(n1, 0x11, sizeof n1);
    memset(n2, 0x22, sizeof n2);
    static const uint8_t may[4] = {1, 1, 0, 1};
    tcp_auth a;
    unsigned char pre[TCP_AUTH_CHALLENGE];
    size_t npre = 0;
    if (acceptor) {
        tcp_auth_accept(&a, key, 2, 4, may, n1);
    } else {
        tcp_auth_connect(&a, key, 1, 2, 4, n1);
        check(a.outlen == TCP_AUTH_HELLO);
        tcp_auth peer; /* the genuine rank 2 answers our HELLO */
        tcp_auth_accept(&peer, key, 2, 4, may, n2);
        size_t used;
        check(tcp_auth_input(&peer, a.out, a.outlen, &used) == TCP_AUTH_MORE);
        check(peer.outlen == TCP_AUTH_CHALLENGE);
        npre = genuine < TCP_AUTH_CHALLENGE ? genuine : TCP_AUTH_CHALLENGE;
        memcpy(pre, peer.out, npre);
        a.outoff = a.outlen = 0;
    }

    int last = TCP_AUTH_MORE;
    size_t total = npre + size, at = 0;
    unsigned char *all = malloc(total ? total : 1);
    check(all != NULL);
    memcpy(all, pre, npre);
    if (size) memcpy(all + npre, data, size);
    while (at < total) {
        size_t n = total - at < piece ? total - at : piece;
        unsigned char *chunk = malloc(n); /* exact size: ASan sees any overread */
        check(chunk != NULL);
        memcpy(chunk, all + at, n);
        size_t used = (size_t)-1;
        int was_failed = a.state == TCP_AUTH_S_FAILED;
        int rc = tcp_auth_input(&a, chunk, n, &used);
        free(chunk);
        check(used <= n);
        if (was_failed) check(rc == TCP_AUTH_ESTATE && used == 0);
        check(a.outlen <= sizeof a.out && a.outoff <= a.outlen);
        if (acceptor) {
            check(rc != TCP_AUTH_VERIFIED && rc != TCP_AUTH_DONE);
            check(a.outlen == 0 || a.outlen == TCP_AUTH_CHALLENGE);
            if (a.outlen) check(a.peer >= 0 && a.peer < 4 && may[a.peer]);
        } else {
            /* a genuine CHALLENGE earns a RESPONSE; WELCOME needs only the right
             * head, so DONE is possible, but only after the genuine CHALLENGE */
            if (rc == TCP_AUTH_DONE) check(npre == TCP_AUTH_CHALLENGE);
            if (a.outlen) check(npre == TCP_AUTH_CHALLENGE && a.outlen == TCP_AUTH_RESPONSE);
        }
        last = rc;
        at += used ? used : n;
        if (rc < 0 || rc == TCP_AUTH_DONE) break;
    }
    (void)last;
    free(all);
    tcp_auth_clear(&a);
    return 0;
}
