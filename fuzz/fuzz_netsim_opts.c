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

#include "fuzz_argv.h"
#include "netsim_cli.h"

static void check(int ok)
{
    if (!ok) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_argv a;
    fuzz_argv_make(&a, "netsim", data, size);
    int argc = a.argc;
    char **argv = a.argv;

    char err[256];
    int rc = cr_netsim_parse(argc, argv, err, sizeof err);
    check(rc == 0 || rc == 1 || rc == 2);
    check(fuzz_argv_unchanged(&a));
    if (rc == 2) check(err[0] != '\0' && !strchr(err, '\n') && memchr(err, '\0', sizeof err));
    fuzz_argv_free(&a);
    return 0;
}
