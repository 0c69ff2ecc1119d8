/* The tcp transport's handshake: how the two ends of a new connection prove to
 * each other that both belong to this job, before any byte reaches the engine.
 *
 * K is the job's secret (CR_SECRET_LEN bytes, from the launcher). The connector
 * C wants to talk to rank A; the acceptor is A's listening socket.
 *
 *   C -> A  HELLO      head(from C, to A) | nonce_c (32 random bytes)
 *   A -> C  CHALLENGE  head(from A, to C) | nonce_a | HMAC-SHA256(K, "A" | HELLO | head | nonce_a)
 *   C -> A  RESPONSE   head(from C, to A) | HMAC-SHA256(K, "C" | HELLO | CHALLENGE's head | nonce_a
 * | head) A -> C  WELCOME    head(from A, to C)        (A keeps this connection; or A closes it)
 *
 * head is 16 bytes: "cour", version 1, the message's kind, two zero bytes, the
 * sender's rank and the rank it talks to (u32, little-endian). A's MAC covers
 * C's fresh nonce (C knows A is live and holds K); C's covers A's fresh nonce, so a
 * recorded RESPONSE is worth nothing against a new CHALLENGE; "A" and "C" keep a
 * MAC made by one role from being reflected as the other's. Every message has a
 * fixed length, the ranks are checked (C: the rank it asked for answered; A:
 * the claimed rank is one it serves), MACs are compared in constant time.
 *
 * The state machine is pure: it is given its nonce, fed the bytes that arrive
 * and leaves what to send in out[]; it never touches a socket, so it can be
 * tested and fuzzed. It uses OpenSSL's libcrypto for HMAC (tcp_crypto.h). */
#ifndef COURIER_TCP_AUTH_H
#define COURIER_TCP_AUTH_H

#include <stddef.h>
#include <stdint.h>

#define TCP_AUTH_NONCE 32
#define TCP_AUTH_MAC 32
#define TCP_AUTH_KEY 32 /* == CR_SECRET_LEN */
#define TCP_AUTH_HEAD 16
#define TCP_AUTH_HELLO (TCP_AUTH_HEAD + TCP_AUTH_NONCE)                    /* 48 */
#define TCP_AUTH_CHALLENGE (TCP_AUTH_HEAD + TCP_AUTH_NONCE + TCP_AUTH_MAC) /* 80 */
#define TCP_AUTH_RESPONSE (TCP_AUTH_HEAD + TCP_AUTH_MAC)                   /* 48 */
#define TCP_AUTH_WELCOME TCP_AUTH_HEAD                                     /* 16 */
#define TCP_AUTH_VERSION 1

enum tcp_auth_kind {
    TCP_AUTH_K_HELLO = 1,
    TCP_AUTH_K_CHALLENGE,
    TCP_AUTH_K_RESPONSE,
    TCP_AUTH_K_WELCOME
};

/* What tcp_auth_input returns. */
enum {
    TCP_AUTH_MORE = 0,      /* go on: send out[] if anything is there, feed more input */
    TCP_AUTH_VERIFIED = 1,  /* acceptor: the connector proved itself; the caller now
                               keeps the connection (tcp_auth_welcome) or closes it */
    TCP_AUTH_DONE = 2,      /* both ends are proven (connector: welcomed; acceptor: after
                               tcp_auth_welcome); the bytes after 'used' are frames */
    TCP_AUTH_EGARBAGE = -1, /* not courier's handshake (bad magic, version, kind, zeros) */
    TCP_AUTH_ERANK = -2,    /* the ranks named are not the ones expected */
    TCP_AUTH_EMAC = -3,     /* a MAC is wrong: it does not hold the job's secret */
    TCP_AUTH_ESTATE = -4    /* input after the handshake ended, or after an error */
};

enum tcp_auth_state {
    TCP_AUTH_S_HELLO = 1, /* acceptor: waiting for HELLO */
    TCP_AUTH_S_RESPONSE,  /* acceptor: CHALLENGE sent, waiting for RESPONSE */
    TCP_AUTH_S_VERIFIED,  /* acceptor: RESPONSE good, the caller decides */
    TCP_AUTH_S_CHALLENGE, /* connector: HELLO sent, waiting for CHALLENGE */
    TCP_AUTH_S_WELCOME,   /* connector: RESPONSE sent, waiting for WELCOME */
    TCP_AUTH_S_DONE,
    TCP_AUTH_S_FAILED
};

typedef struct tcp_auth {
    uint8_t state;  /* enum tcp_auth_state */
    uint8_t accept; /* 1: acceptor, 0: connector */
    int self,
        peer; /* peer: the rank asked for (connector) or claimed in HELLO (acceptor, -1 before) */
    int size;
    const uint8_t *may; /* acceptor: may[r] != 0 when rank r may connect (NULL: all but self) */
    unsigned char key[TCP_AUTH_KEY];
    unsigned char nonce[TCP_AUTH_NONCE]; /* mine */
    unsigned char hello[TCP_AUTH_HELLO];
    unsigned char chal[TCP_AUTH_HEAD + TCP_AUTH_NONCE]; /* CHALLENGE without its MAC */
    unsigned char in[TCP_AUTH_CHALLENGE];               /* the message being received */
    size_t inlen;
    unsigned char out[TCP_AUTH_CHALLENGE + TCP_AUTH_WELCOME]; /* to send, from outoff */
    size_t outlen, outoff;
} tcp_auth;

/* Start a connection to rank peer as rank self: HELLO goes into out[]. */
void tcp_auth_connect(tcp_auth *a, const unsigned char key[TCP_AUTH_KEY], int self, int peer,
                      int size, const unsigned char nonce[TCP_AUTH_NONCE]);
/* Start the accepting end as rank self; may: see tcp_auth. */
void tcp_auth_accept(tcp_auth *a, const unsigned char key[TCP_AUTH_KEY], int self, int size,
                     const uint8_t *may, const unsigned char nonce[TCP_AUTH_NONCE]);
/* Feed len bytes that arrived; *used says how many were taken (never past the
 * handshake's last message). Returns one of the codes above; after an error
 * (negative) the connection must be closed. */
int tcp_auth_input(tcp_auth *a, const void *data, size_t len, size_t *used);
/* How many more bytes the message now expected needs (0: none is expected), so
 * that a caller can read exactly that much and leave what follows unread. */
size_t tcp_auth_want(const tcp_auth *a);
/* Acceptor, after TCP_AUTH_VERIFIED: keep the connection. WELCOME goes into
 * out[]; the handshake is done. */
void tcp_auth_welcome(tcp_auth *a);
/* Forget the key (the caller frees or reuses the struct). */
void tcp_auth_clear(tcp_auth *a);
/* What an error code means, for a log line ("it did not prove it belongs to this job"). */
const char *tcp_auth_strerror(int rc);

#endif
