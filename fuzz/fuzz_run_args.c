/* Fuzz harness: the `courier run` command line (cr_run_parse, src/run/parse.c).
 *
 * The input is split on '\0' into the arguments after "run" (so "-n\0" "2\0" "prog"
 * is `courier run -n 2 prog`). The program lookup is faked: a name starting with
 * 'x' is "not found", so that error path is reached without the filesystem.
 *
 * Invariants checked (abort on violation):
 *  - the result is 0 or 2; on 2 the message is one non-empty line and the spec
 *    is empty; on 0 (not --help) there are 1..CR_RUN_MAX_RANKS ranks in all
 *    (CR_RUN_MAX_SIM_RANKS with --sim), each program
 *    has a count of at least 1 and a NULL-terminated argument list whose first
 *    word is an input argument other than ":";
 *  - the caller's argv is never changed;
 *  - nothing leaks (LeakSanitizer, after cr_run_spec_free). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_argv.h"
#include "launcher.h"

static void check(int ok)
{
    if (!ok) abort();
}

static bool fake_find(const char *prog, void *arg)
{
    (void)arg;
    return prog[0] != 'x';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_argv a;
    fuzz_argv_make(&a, "run", data, size);
    int argc = a.argc;
    char **argv = a.argv;
    const char *buf = a.buf;

    cr_run_spec spec;
    char err[256];
    int rc = cr_run_parse(argc, argv, &spec, fake_find, NULL, err, sizeof err);
    check(fuzz_argv_unchanged(&a));
    if (rc == 2) {
        check(err[0] != '\0' && strchr(err, '\n') == NULL && memchr(err, '\0', sizeof err));
        check(spec.apps == NULL && spec.args == NULL && spec.napps == 0);
    } else {
        check(rc == 0);
        if (!spec.help) {
            int total = 0;
            check(spec.napps >= 1 && spec.total >= 1 &&
                  spec.total <= (spec.sim ? CR_RUN_MAX_SIM_RANKS : CR_RUN_MAX_RANKS));
            for (int a = 0; a < spec.napps; a++) {
                const cr_run_app *ap = &spec.apps[a];
                check(ap->n >= 1);
                total += ap->n;
                check(ap->argv[0] && strcmp(ap->argv[0], ":") && ap->argv[0][0] != 'x');
                int k = 0;
                while (ap->argv[k]) {
                    check(ap->argv[k] >= buf && ap->argv[k] <= buf + size);
                    k++;
                }
            }
            check(total == spec.total);
            check(spec.timeout >= 0 && spec.hang_timeout >= 0);
        }
    }
    cr_run_spec_free(&spec);
    fuzz_argv_free(&a);
    return 0;
}
