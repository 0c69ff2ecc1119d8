/* Fuzz harness: the `courier netsim` options (cr_netsim_parse, tools/netsim/netsim_cli.c).
 *
 * The input is split on '\0' into the arguments after "netsim". Only the parser
 * runs: no simulation, no output.
 *
 * Invariants checked (abort on violation): the result is 0, 1 (--help) or 2; on 2
 * the message is exactly one non-empty line; the caller's argv is never changed;
 * no out-of-bounds access, undefined behaviour or leak (the sanitizers). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netsim_cli.h"

#define MAX_ARGS 256

static void check(int ok)
{
    if (!ok) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    check(buf != NULL);
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[MAX_ARGS + 1], *saved[MAX_ARGS + 1];
    int argc = 0;
    argv[argc++] = "netsim";
    for (size_t i = 0; i <= size && argc < MAX_ARGS;) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    if (size == 0) argc = 1;
    argv[argc] = NULL;
    memcpy(saved, argv, sizeof(char *) * (size_t)(argc + 1));

    char err[256];
    int rc = cr_netsim_parse(argc, argv, err, sizeof err);
    check(rc == 0 || rc == 1 || rc == 2);
    check(memcmp(saved, argv, sizeof(char *) * (size_t)(argc + 1)) == 0);
    if (rc == 2) check(err[0] != '\0' && !strchr(err, '\n') && memchr(err, '\0', sizeof err));
    free(buf);
    return 0;
}
