/* Native one-sided operations (courier.h) between every pair of ranks: puts
 * and gets of several sizes into registered and allocated regions, remote
 * events, the atomics (a counter every rank adds to, a lock taken with
 * test-and-set, compare-and-swap, swap, the network test), the broadcast put,
 * and a target that computes without calling courier while the others put,
 * get and add into its memory. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <courier/courier.h>

#include "../check.h"

#define BIG (300 * 1024) /* past the inline and eager sizes */

static unsigned char pat(int from, int to, size_t i)
{
    return (unsigned char)(from * 31 + to * 7 + i * 13 + (i >> 9));
}

/* Spin without calling courier for at most limit seconds until *w reaches want. */
static int spin_until(volatile uint64_t *w, uint64_t want, double limit)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (__atomic_load_n(w, __ATOMIC_ACQUIRE) < want) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) > limit)
            return 0;
    }
    return 1;
}

int main(void)
{
    int me = cr_rank(), n = cr_size();
    /* Registered memory: one BIG slot per peer. */
    unsigned char *mem = calloc((size_t)n * BIG + 64, 1);
    memset(mem + (size_t)n * BIG, 0xa5, 64); /* past the region: never written */
    int key = cr_region_register(mem, (size_t)n * BIG);
    int akey;
    uint64_t *words = cr_region_alloc(64 * sizeof(uint64_t), &akey);
    CHECK(words && ((uintptr_t)words % 64) == 0, "cr_region_alloc gave %p", (void *)words);
    for (int i = 0; i < 64; i++)
        CHECK(words[i] == 0, "allocated word %d is %llu", i, (unsigned long long)words[i]);
    int ev = cr_event_new();
    CHECK(ev == 0, "first event is %d", ev);

    /* Puts of several sizes to every rank (self too), each into my slot there. */
    size_t sizes[] = {1, 8, 100, 4096, 5000, BIG};
    unsigned char *src = malloc(BIG);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        for (int k = 0; k < n; k++) {
            int to = (me + k) % n;
            for (size_t i = 0; i < sizes[s]; i++) src[i] = pat(me, to, i + s);
            cr_handle h = cr_put(to, key, (size_t)me * BIG, src, sizes[s], ev);
            cr_handle_wait(h); /* src reused next round */
        }
        /* n puts came here, each setting my event once its data was in */
        for (int k = 0; k < n; k++) cr_event_wait(ev);
        for (int from = 0; from < n; from++)
            for (size_t i = 0; i < sizes[s]; i++)
                CHECK(mem[(size_t)from * BIG + i] == pat(from, me, i + s),
                      "size %zu from %d: byte %zu is %d", sizes[s], from, i,
                      mem[(size_t)from * BIG + i]);
        cr_sync(); /* everyone checked before the next size overwrites */
    }
    CHECK(!cr_event_test(ev), "event still set after taking all");

    /* Gets: read what every rank has in its slot of the last round's sender. */
    unsigned char *dst = malloc(BIG);
    for (int k = 0; k < n; k++) {
        int from = (me + k) % n;
        memset(dst, 0, BIG);
        cr_handle h = cr_get(from, key, (size_t)me * BIG, dst, BIG, CR_NO_EVENT);
        while (!cr_handle_test(h)) {
        }
        for (size_t i = 0; i < BIG; i++)
            CHECK(dst[i] == pat(me, from, i + 5), "get from %d: byte %zu is %d", from, i, dst[i]);
    }

    /* Atomics: every rank adds to a counter of every rank, 100 times. */
    for (int i = 0; i < 100; i++)
        for (int k = 0; k < n; k++) cr_fetch_add((me + k) % n, akey, 0, (uint64_t)me + 1);
    /* A lock (word 1 of rank 0) taken with test-and-set guards word 2, which
     * every rank increments with a plain get and put. */
    for (int i = 0; i < 20; i++) {
        while (cr_test_and_set(0, akey, 8)) {
        }
        uint64_t v;
        cr_handle_wait(cr_get(0, akey, 16, &v, 8, CR_NO_EVENT));
        v++;
        cr_handle_wait(cr_put(0, akey, 16, &v, 8, CR_NO_EVENT));
        CHECK(cr_swap(0, akey, 8, 0) == 1, "lock word was not 1 while held");
    }
    /* Compare-and-swap: each rank claims word 3 of rank n-1 in turn. */
    for (int turn = 0; turn < n; turn++) {
        if (turn == me) {
            uint64_t old = cr_cas(n - 1, akey, 24, (uint64_t)me, (uint64_t)me + 1);
            CHECK(old == (uint64_t)me, "cas saw %llu, expected %d", (unsigned long long)old, me);
            CHECK(cr_cas(n - 1, akey, 24, 12345, 7) == (uint64_t)me + 1, "failed cas changed it");
        }
        cr_sync();
    }
    CHECK(cr_remote_test(n - 1, akey, 24, (uint64_t)n), "remote word 3 of rank %d is not %d", n - 1,
          n);
    cr_sync();
    uint64_t want = (uint64_t)n * (n + 1) / 2 * 100;
    CHECK(words[0] == want, "counter is %llu, expected %llu", (unsigned long long)words[0],
          (unsigned long long)want);
    if (me == 0)
        CHECK(words[2] == (uint64_t)20 * n, "locked counter is %llu", (unsigned long long)words[2]);

    /* Broadcast put from the last rank to ranks 0..n-1 (word 4..). */
    uint64_t b[4] = {11, 22, 33, 44};
    if (me == n - 1) cr_put_bcast(0, n - 1, akey, 32, b, sizeof b);
    cr_sync();
    CHECK(words[4] == 11 && words[7] == 44, "broadcast put gave %llu..%llu",
          (unsigned long long)words[4], (unsigned long long)words[7]);

    /* A target that computes: rank 0 spins on its own memory without calling
     * courier while every other rank puts, gets and adds into it. */
    if (me == 0) {
        CHECK(spin_until(&words[9], (uint64_t)n - 1, 60),
              "only %llu of %d ranks got through "
              "while the target computed",
              (unsigned long long)words[9], n - 1);
        for (int from = 1; from < n; from++) {
            uint64_t v;
            memcpy(&v, mem + (size_t)from * BIG, 8);
            CHECK(words[16 + from] == 1000u + (unsigned)from && v == words[16 + from],
                  "words from %d are %llu and %llu", from, (unsigned long long)words[16 + from],
                  (unsigned long long)v);
        }
    } else {
        uint64_t v = 1000u + (unsigned)me, back = 0;
        cr_handle_wait(cr_put(0, akey, (size_t)(16 + me) * 8, &v, 8, CR_NO_EVENT));
        cr_handle_wait(cr_get(0, akey, (size_t)(16 + me) * 8, &back, 8, CR_NO_EVENT));
        CHECK(back == v, "read back %llu", (unsigned long long)back);
        cr_handle_wait(cr_put(0, key, (size_t)me * BIG, &v, 8, CR_NO_EVENT));
        cr_fetch_add(0, akey, 9 * 8, 1);
    }
    cr_sync();
    for (int i = 0; i < 64; i++)
        CHECK(mem[(size_t)n * BIG + i] == 0xa5, "byte %d past the region was written", i);
    cr_region_free(key);
    cr_region_free(akey);
    cr_event_free(ev);
    if (me == 0) printf("rma_basic: %d ranks ok\n", n);
    free(mem);
    free(src);
    free(dst);
    return 0;
}
