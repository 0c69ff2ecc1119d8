/* Checks for the unit tests (tests/unit), which run without a job: a failed
 * check prints the place and the condition and is counted in failures; the
 * test goes on, and its main returns non-zero when any failed. */
#ifndef COURIER_TEST_UNIT_H
#define COURIER_TEST_UNIT_H
#include <stdio.h>

static int failures;
#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);                  \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#endif
