/* Assertions for courier's test programs: a failed check prints the rank, the
 * place and the reason, and exits non-zero (which ends the whole job). */
#ifndef COURIER_TEST_CHECK_H
#define COURIER_TEST_CHECK_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <courier/nx.h>

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL node %ld %s:%d: %s: ", mynode(), __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* Compute for a while without calling courier (n steps of floating point):
 * what a rank does while its progress thread is meant to serve others. */
static inline void test_compute(long n)
{
    double x = 0;
    for (long i = 0; i < n; i++) x += (double)i * 1e-9;
    __asm__ volatile("" : : "g"(x)); /* the sum is used: the loop stays */
}

/* A small deterministic generator (a 64-bit LCG) for the traffic tests. */
static inline uint32_t test_rand(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*state >> 33);
}

/* A message size for stress traffic: mostly small, some up to 8 KiB, a few past
 * the eager limit; min..max-1 bytes. */
static inline long test_msg_size(uint64_t *state, long min, long max)
{
    uint32_t r = test_rand(state) % 1000;
    if (r < 700) return min + test_rand(state) % 64;
    if (r < 970) return min + test_rand(state) % 8192;
    return min + (long)(test_rand(state) % (uint32_t)(max - min));
}

/* A byte pattern that depends on who sent it and which message it was. */
static inline unsigned char pattern(long src, long seq, size_t i)
{
    return (unsigned char)(src * 131 + seq * 31 + i * 7 + (i >> 8));
}
#endif
