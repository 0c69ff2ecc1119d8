/* The tcp transport's handshake as a pure state machine (protocol: tcp_auth.h).
 *
 * Invariants:
 *  - nothing here touches a socket, a clock or a global: the caller gives the
 *    nonce and the bytes, and sends what is left in out[];
 *  - a message is judged only once it is whole, except that its 16-byte head is
 *    judged as soon as it is in, and its first 8 bytes (magic, version, kind,
 *    zeros) byte by byte as they come: garbage is refused without waiting for more;
 *  - input is taken only up to the end of the message the state expects, so
 *    frames that follow the handshake in the same read stay with the caller;
 *  - the acceptor never sends anything but a CHALLENGE before the connector's
 *    RESPONSE is verified, and the connector sends RESPONSE only after the
 *    acceptor's MAC is verified; once an error is returned the state is FAILED
 *    and every later input is refused;
 *  - MACs are made and compared (in constant time) by libcrypto, through
 *    tcp_crypto.h. */
#define _DEFAULT_SOURCE /* explicit_bzero */
#include <string.h>

#include "tcp_auth.h"
#include "tcp_crypto.h"

_Static_assert(TCP_CRYPTO_MAC == TCP_AUTH_MAC, "the handshake's MAC is an HMAC-SHA256");

static const unsigned char magic[4] = {'c', 'o', 'u', 'r'};

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> 8 * i);
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void head(unsigned char *p, int kind, int from, int to)
{
    memcpy(p, magic, 4);
    p[4] = TCP_AUTH_VERSION;
    p[5] = (unsigned char)kind;
    p[6] = p[7] = 0;
    put32(p + 8, (uint32_t)from);
    put32(p + 12, (uint32_t)to);
}

/* The head of a message of the expected kind, from the expected sender
 * (from < 0: any rank) to us; 0 or an error code. */
static int check_head(const tcp_auth *a, const unsigned char *p, int kind, int from)
{
    if (memcmp(p, magic, 4) != 0 || p[4] != TCP_AUTH_VERSION || p[5] != kind || p[6] || p[7])
        return TCP_AUTH_EGARBAGE;
    uint32_t f = get32(p + 8), t = get32(p + 12);
    if (t != (uint32_t)a->self) return TCP_AUTH_ERANK;
    if (from >= 0) return f == (uint32_t)from ? 0 : TCP_AUTH_ERANK;
    if (f >= (uint32_t)a->size || f == (uint32_t)a->self || (a->may && !a->may[f]))
        return TCP_AUTH_ERANK;
    return 0;
}

/* HMAC-SHA256(K, role | parts...) into mac; the parts together are at most 160 bytes. */
static void mac_of(const tcp_auth *a, char role, const unsigned char *p1, size_t n1,
                   const unsigned char *p2, size_t n2, const unsigned char *p3, size_t n3,
                   unsigned char mac[TCP_AUTH_MAC])
{
    unsigned char msg[1 + TCP_AUTH_HELLO + TCP_AUTH_HEAD + TCP_AUTH_NONCE + TCP_AUTH_HEAD];
    size_t n = 0;
    msg[n++] = (unsigned char)role;
    memcpy(msg + n, p1, n1);
    n += n1;
    memcpy(msg + n, p2, n2);
    n += n2;
    if (n3) memcpy(msg + n, p3, n3);
    n += n3;
    tcp_crypto_hmac(a->key, TCP_AUTH_KEY, msg, n, mac); /* failing: zeros, which match nothing */
}

static void out_add(tcp_auth *a, const unsigned char *p, size_t n)
{
    memcpy(a->out + a->outlen, p, n);
    a->outlen += n;
}

static void start(tcp_auth *a, const unsigned char *key, int self, int size,
                  const unsigned char *nonce)
{
    memset(a, 0, sizeof *a);
    memcpy(a->key, key, TCP_AUTH_KEY);
    memcpy(a->nonce, nonce, TCP_AUTH_NONCE);
    a->self = self;
    a->size = size;
    a->peer = -1;
}

void tcp_auth_connect(tcp_auth *a, const unsigned char key[TCP_AUTH_KEY], int self, int peer,
                      int size, const unsigned char nonce[TCP_AUTH_NONCE])
{
    start(a, key, self, size, nonce);
    a->peer = peer;
    a->state = TCP_AUTH_S_CHALLENGE;
    head(a->hello, TCP_AUTH_K_HELLO, self, peer);
    memcpy(a->hello + TCP_AUTH_HEAD, nonce, TCP_AUTH_NONCE);
    out_add(a, a->hello, TCP_AUTH_HELLO);
}

void tcp_auth_accept(tcp_auth *a, const unsigned char key[TCP_AUTH_KEY], int self, int size,
                     const uint8_t *may, const unsigned char nonce[TCP_AUTH_NONCE])
{
    start(a, key, self, size, nonce);
    a->accept = 1;
    a->may = may;
    a->state = TCP_AUTH_S_HELLO;
}

static size_t expected(const tcp_auth *a)
{
    switch (a->state) {
    case TCP_AUTH_S_HELLO:
        return TCP_AUTH_HELLO;
    case TCP_AUTH_S_RESPONSE:
        return TCP_AUTH_RESPONSE;
    case TCP_AUTH_S_CHALLENGE:
        return TCP_AUTH_CHALLENGE;
    case TCP_AUTH_S_WELCOME:
        return TCP_AUTH_WELCOME;
    default:
        return 0;
    }
}

static int kind_of(const tcp_auth *a)
{
    switch (a->state) {
    case TCP_AUTH_S_HELLO:
        return TCP_AUTH_K_HELLO;
    case TCP_AUTH_S_RESPONSE:
        return TCP_AUTH_K_RESPONSE;
    case TCP_AUTH_S_CHALLENGE:
        return TCP_AUTH_K_CHALLENGE;
    default:
        return TCP_AUTH_K_WELCOME;
    }
}

/* A whole message of the expected kind is in a->in; act on it. */
static int step(tcp_auth *a)
{
    unsigned char mac[TCP_AUTH_MAC];
    switch (a->state) {
    case TCP_AUTH_S_HELLO: { /* acceptor: answer with a CHALLENGE */
        memcpy(a->hello, a->in, TCP_AUTH_HELLO);
        a->peer = (int)get32(a->in + 8);
        head(a->chal, TCP_AUTH_K_CHALLENGE, a->self, a->peer);
        memcpy(a->chal + TCP_AUTH_HEAD, a->nonce, TCP_AUTH_NONCE);
        mac_of(a, 'A', a->hello, TCP_AUTH_HELLO, a->chal, sizeof a->chal, NULL, 0, mac);
        out_add(a, a->chal, sizeof a->chal);
        out_add(a, mac, TCP_AUTH_MAC);
        a->state = TCP_AUTH_S_RESPONSE;
        return TCP_AUTH_MORE;
    }
    case TCP_AUTH_S_RESPONSE: /* acceptor: the connector's proof */
        mac_of(a, 'C', a->hello, TCP_AUTH_HELLO, a->chal, sizeof a->chal, a->in, TCP_AUTH_HEAD,
               mac);
        if (!tcp_crypto_equal(mac, a->in + TCP_AUTH_HEAD, TCP_AUTH_MAC)) return TCP_AUTH_EMAC;
        a->state = TCP_AUTH_S_VERIFIED;
        return TCP_AUTH_VERIFIED;
    case TCP_AUTH_S_CHALLENGE: { /* connector: the acceptor's proof, then ours */
        memcpy(a->chal, a->in, sizeof a->chal);
        mac_of(a, 'A', a->hello, TCP_AUTH_HELLO, a->chal, sizeof a->chal, NULL, 0, mac);
        if (!tcp_crypto_equal(mac, a->in + sizeof a->chal, TCP_AUTH_MAC)) return TCP_AUTH_EMAC;
        unsigned char resp[TCP_AUTH_RESPONSE];
        head(resp, TCP_AUTH_K_RESPONSE, a->self, a->peer);
        mac_of(a, 'C', a->hello, TCP_AUTH_HELLO, a->chal, sizeof a->chal, resp, TCP_AUTH_HEAD,
               resp + TCP_AUTH_HEAD);
        out_add(a, resp, TCP_AUTH_RESPONSE);
        a->state = TCP_AUTH_S_WELCOME;
        return TCP_AUTH_MORE;
    }
    case TCP_AUTH_S_WELCOME: /* connector: the acceptor keeps this connection */
        a->state = TCP_AUTH_S_DONE;
        return TCP_AUTH_DONE;
    default:
        return TCP_AUTH_ESTATE;
    }
}

int tcp_auth_input(tcp_auth *a, const void *data, size_t len, size_t *used)
{
    const unsigned char *p = data;
    *used = 0;
    for (;;) {
        size_t want = expected(a);
        if (!want) {
            if (a->state == TCP_AUTH_S_VERIFIED) return TCP_AUTH_VERIFIED;
            if (a->state == TCP_AUTH_S_DONE) return TCP_AUTH_DONE;
            return TCP_AUTH_ESTATE;
        }
        if (*used == len) return TCP_AUTH_MORE;
        size_t n = want - a->inlen;
        if (n > len - *used) n = len - *used;
        size_t before = a->inlen;
        memcpy(a->in + a->inlen, p + *used, n);
        a->inlen += n;
        *used += n;
        if (before <
            8) { /* magic, version, kind, zeros: a stranger fails at its first wrong byte */
            const unsigned char fixed[8] = {
                magic[0], magic[1], magic[2], magic[3], TCP_AUTH_VERSION, (unsigned char)kind_of(a),
                0,        0};
            size_t upto = a->inlen < 8 ? a->inlen : 8;
            if (memcmp(a->in + before, fixed + before, upto - before) != 0) {
                a->state = TCP_AUTH_S_FAILED;
                return TCP_AUTH_EGARBAGE;
            }
        }
        if (before < TCP_AUTH_HEAD && a->inlen >= TCP_AUTH_HEAD) {
            /* the connector knows whom it called; the acceptor checks the claim */
            int rc = check_head(a, a->in, kind_of(a),
                                a->accept && a->state == TCP_AUTH_S_HELLO ? -1 : a->peer);
            if (rc) {
                a->state = TCP_AUTH_S_FAILED;
                return rc;
            }
        }
        if (a->inlen < want) return TCP_AUTH_MORE;
        a->inlen = 0;
        int rc = step(a);
        if (rc < 0) {
            a->state = TCP_AUTH_S_FAILED;
            return rc;
        }
        if (rc != TCP_AUTH_MORE) return rc;
    }
}

size_t tcp_auth_want(const tcp_auth *a)
{
    size_t want = expected(a);
    return want ? want - a->inlen : 0;
}

void tcp_auth_welcome(tcp_auth *a)
{
    if (a->state != TCP_AUTH_S_VERIFIED) return;
    unsigned char w[TCP_AUTH_WELCOME];
    head(w, TCP_AUTH_K_WELCOME, a->self, a->peer);
    out_add(a, w, sizeof w);
    a->state = TCP_AUTH_S_DONE;
}

void tcp_auth_clear(tcp_auth *a)
{
    explicit_bzero(a->key, sizeof a->key);
}

const char *tcp_auth_strerror(int rc)
{
    switch (rc) {
    case TCP_AUTH_EGARBAGE:
        return "it does not speak courier's handshake";
    case TCP_AUTH_ERANK:
        return "it named a rank that is not expected here";
    case TCP_AUTH_EMAC:
        return "it did not prove it belongs to this job";
    case TCP_AUTH_ESTATE:
        return "it broke the handshake's order";
    default:
        return "unknown";
    }
}
