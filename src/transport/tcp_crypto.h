/* The cryptography the tcp transport's handshake needs, from OpenSSL's
 * libcrypto, which is loaded the first time a rank opens the tcp transport
 * (tcp_crypto.c says why). */
#ifndef COURIER_TCP_CRYPTO_H
#define COURIER_TCP_CRYPTO_H

#include <stddef.h>

#define TCP_CRYPTO_MAC 32 /* HMAC-SHA256 */

/* Load libcrypto if it is not yet: 0, or -1 with a one-line reason in err. */
int tcp_crypto_load(char *err, size_t errlen);
/* HMAC-SHA256(key, msg) into mac: 0, or -1 (libcrypto missing or failing; mac
 * is then all zeros, which no peer's MAC matches). */
int tcp_crypto_hmac(const void *key, size_t keylen, const void *msg, size_t len,
                    unsigned char mac[TCP_CRYPTO_MAC]);
/* n random bytes from libcrypto's generator: 0, or -1. */
int tcp_crypto_random(void *buf, size_t n);
/* Compare in time that does not depend on the contents: 1 when equal. */
int tcp_crypto_equal(const void *a, const void *b, size_t n);

#endif
