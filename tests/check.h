/* Assertions for courier's test programs: a failed check prints the rank, the
 * place and the reason, and exits non-zero (which ends the whole job). */
#ifndef COURIER_TEST_CHECK_H
#define COURIER_TEST_CHECK_H
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

/* A byte pattern that depends on who sent it and which message it was. */
static inline unsigned char pattern(long src, long seq, size_t i)
{
    return (unsigned char)(src * 131 + seq * 31 + i * 7 + (i >> 8));
}
#endif
