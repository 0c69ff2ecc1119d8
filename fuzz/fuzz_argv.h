/* Shared by the command-line harnesses: turn a fuzz input into an argument
 * vector. The input is split on '\0' after a fixed argv[0]; an empty input gives
 * argv[0] alone. fuzz_argv_free releases what fuzz_argv_make allocated. */
#ifndef COURIER_FUZZ_ARGV_H
#define COURIER_FUZZ_ARGV_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_ARGS 256

typedef struct fuzz_argv {
    char *buf;
    int argc;
    char *argv[FUZZ_MAX_ARGS + 1];
    char *saved[FUZZ_MAX_ARGS + 1]; /* a copy, to check the callee changed nothing */
} fuzz_argv;

static inline void fuzz_argv_make(fuzz_argv *a, const char *argv0, const uint8_t *data, size_t size)
{
    a->buf = malloc(size + 1);
    if (!a->buf) abort();
    memcpy(a->buf, data, size);
    a->buf[size] = '\0';
    a->argc = 0;
    a->argv[a->argc++] = (char *)argv0;
    for (size_t i = 0; size && i <= size && a->argc < FUZZ_MAX_ARGS;) {
        a->argv[a->argc++] = a->buf + i;
        i += strlen(a->buf + i) + 1;
    }
    a->argv[a->argc] = NULL;
    memcpy(a->saved, a->argv, sizeof(char *) * (size_t)(a->argc + 1));
}

static inline int fuzz_argv_unchanged(const fuzz_argv *a)
{
    return memcmp(a->saved, a->argv, sizeof(char *) * (size_t)(a->argc + 1)) == 0;
}

static inline void fuzz_argv_free(fuzz_argv *a)
{
    free(a->buf);
}
#endif
