/* OpenSSL's libcrypto for the tcp transport, loaded on first use with dlopen
 * instead of linked: linking it made every rank relocate it at start-up, tcp or
 * not (3,500 relocations, ~3 ms of page faults per rank on this project's
 * machine: an 8-rank job on shared memory went from 53 to 77 ms). A job whose
 * peers are all on shared memory now never maps it.
 *
 * Invariants:
 *  - the table of libcrypto's functions is filled once (pthread_once) and only
 *    read after that, so every thread sees it whole; it is the process's view of
 *    a library it has loaded, like the dynamic linker's own tables, not job state;
 *  - the library is never unloaded, and its exit-time clean-up is turned off
 *    (OPENSSL_INIT_NO_ATEXIT): a closing transport still makes nonces after the
 *    job's exit handlers have started;
 *  - without the library every call fails safe: no MAC, no random bytes, no
 *    equality. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "tcp_crypto.h"

#ifndef TCP_LIBCRYPTO
#error "TCP_LIBCRYPTO (libcrypto's file name, e.g. libcrypto.so.3) comes from the build"
#endif

static struct {
    pthread_once_t once;
    int ok;
    char why[160];
    __typeof__(&HMAC) hmac;
    __typeof__(&EVP_sha256) sha256;
    __typeof__(&RAND_bytes) rand_bytes;
    __typeof__(&CRYPTO_memcmp) memcmp_ct;
} lib = {.once = PTHREAD_ONCE_INIT};

static void load(void)
{
    void *h = dlopen(TCP_LIBCRYPTO, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(lib.why, sizeof lib.why,
                 "cannot load %s (%s); install OpenSSL's libcrypto (Debian: libssl3)",
                 TCP_LIBCRYPTO, dlerror());
        return;
    }
    __typeof__(&OPENSSL_init_crypto) init = (__typeof__(init))dlsym(h, "OPENSSL_init_crypto");
    lib.hmac = (__typeof__(lib.hmac))dlsym(h, "HMAC");
    lib.sha256 = (__typeof__(lib.sha256))dlsym(h, "EVP_sha256");
    lib.rand_bytes = (__typeof__(lib.rand_bytes))dlsym(h, "RAND_bytes");
    lib.memcmp_ct = (__typeof__(lib.memcmp_ct))dlsym(h, "CRYPTO_memcmp");
    if (!init || !lib.hmac || !lib.sha256 || !lib.rand_bytes || !lib.memcmp_ct ||
        !init(OPENSSL_INIT_NO_ATEXIT, NULL)) {
        snprintf(lib.why, sizeof lib.why, "%s lacks the calls courier needs (OpenSSL 1.1 or later)",
                 TCP_LIBCRYPTO);
        return;
    }
    lib.ok = 1;
}

int tcp_crypto_load(char *err, size_t errlen)
{
    pthread_once(&lib.once, load);
    if (lib.ok) return 0;
    if (errlen) snprintf(err, errlen, "%s", lib.why);
    return -1;
}

int tcp_crypto_hmac(const void *key, size_t keylen, const void *msg, size_t len,
                    unsigned char mac[TCP_CRYPTO_MAC])
{
    unsigned int n = TCP_CRYPTO_MAC;
    if (tcp_crypto_load(NULL, 0) == 0 &&
        lib.hmac(lib.sha256(), key, (int)keylen, msg, len, mac, &n) && n == TCP_CRYPTO_MAC)
        return 0;
    memset(mac, 0, TCP_CRYPTO_MAC);
    return -1;
}

int tcp_crypto_random(void *buf, size_t n)
{
    if (tcp_crypto_load(NULL, 0) == 0 && lib.rand_bytes(buf, (int)n) == 1) return 0;
    return -1;
}

int tcp_crypto_equal(const void *a, const void *b, size_t n)
{
    return tcp_crypto_load(NULL, 0) == 0 && lib.memcmp_ct(a, b, n) == 0;
}
