/* The simulated mode's ranks as contexts of one process (src/host/contexts.h):
 * what each rank must keep to itself, and how a rank's end is reported. The
 * same program runs as processes too (--sim M,ranks=processes), and must
 * behave the same.
 *
 *   contexts globals   every rank keeps its own globals (.data and .bss), its
 *                      environment (COURIER_RANK), its arguments and stdio
 *                      streams through a ring of messages that switches ranks
 *                      many times; rank 0 prints "globals ok N"
 *   contexts output    every rank writes 3 lines to stdout and 1 to stderr,
 *                      between messages (the launcher's --label checks whose),
 *                      then a last one to stdout without its newline
 *   contexts crash     rank 1 dies of SIGSEGV while rank 0 waits for it
 *   contexts spin      rank 1 computes for ever while rank 0 waits for it:
 *                      only --timeout ends it, and says that rank 1 holds the
 *                      process and rank 2 waits for its turn
 *   contexts exit S    rank 1 calls exit(S) in the middle: the others go on;
 *                      rank 0 prints "exit done" at the end
 *   contexts thread    rank 0 starts a thread the launcher cannot see (found with
 *                      dlsym), which waits in crecv: as contexts, one line saying
 *                      to run the ranks as processes, exit status 1 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <courier/nx.h>

static int mine = -1;          /* .bss */
static long counted = 1000;    /* .data */
static char name[32] = "none"; /* .data, written */

/* Pass a token round the ring `laps` times: every pass switches ranks. */
static void ring(int me, int np, int laps)
{
    long tok = 0;
    for (int l = 0; l < laps; l++) {
        if (me == 0) {
            csend(1, (char *)&tok, sizeof tok, (me + 1) % np, 0);
            crecv(1, (char *)&tok, sizeof tok);
        } else {
            crecv(1, (char *)&tok, sizeof tok);
            tok++;
            csend(1, (char *)&tok, sizeof tok, (me + 1) % np, 0);
        }
        counted += me; /* each rank's own count */
    }
}

static void *waiter(void *arg)
{
    long x;
    (void)arg;
    crecv(9, (char *)&x, sizeof x); /* sent after this thread is done */
    return NULL;
}

static int fail(int me, const char *what)
{
    fprintf(stderr, "contexts: rank %d: %s\n", me, what);
    return 1;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "globals";
    int me = (int)mynode(), np = (int)numnodes();
    if (np < 2) return fail(me, "needs 2 ranks or more");
    if (!strcmp(mode, "globals")) {
        mine = me;
        snprintf(name, sizeof name, "rank-%d", me);
        argv[1] = name; /* a rank's arguments are its own */
        FILE *before = stdout;
        ring(me, np, 20);
        char want[32];
        snprintf(want, sizeof want, "rank-%d", me);
        const char *env = getenv("COURIER_RANK");
        if (mine != me) return fail(me, "its .bss global changed");
        if (counted != 1000 + 20L * me) return fail(me, "its .data global changed");
        if (strcmp(name, want) || strcmp(argv[1], want)) return fail(me, "its name changed");
        if (!env || atoi(env) != me) return fail(me, "COURIER_RANK is not its own");
        if (stdout != before) return fail(me, "its stdout changed");
        long ok = 1, all = 0;
        for (int r = 1; r < np; r++) {
            if (me == 0) {
                crecv(2, (char *)&ok, sizeof ok);
                all += ok;
            } else if (me == r) {
                csend(2, (char *)&ok, sizeof ok, 0, 0);
            }
        }
        if (me == 0) printf("globals ok %ld\n", all + 1);
        return 0;
    }
    if (!strcmp(mode, "output")) {
        for (int i = 0; i < 3; i++) {
            printf("out %d of rank %d\n", i, me);
            ring(me, np, 1);
        }
        fprintf(stderr, "err of rank %d\n", me);
        printf("tail of rank %d", me); /* no newline: the launcher ends the line */
        return 0;
    }
    if (!strcmp(mode, "crash")) {
        long x = 0;
        if (me == 1) {
            csend(3, (char *)&x, sizeof x, 0, 0);
            raise(SIGSEGV);
        } else if (me == 0) {
            crecv(3, (char *)&x, sizeof x);
            crecv(4, (char *)&x, sizeof x); /* never sent */
        }
        return 0;
    }
    if (!strcmp(mode, "spin")) {
        long x = 0;
        if (me == 1)
            for (volatile long i = 0;; i++) {
            }
        if (me == 0) crecv(3, (char *)&x, sizeof x); /* never sent */
        return 0;
    }
    if (!strcmp(mode, "exit") && argc > 2) {
        long x = 0;
        if (me == 1) {
            csend(3, (char *)&x, sizeof x, 0, 0);
            exit(atoi(argv[2]));
        }
        if (me == 0) {
            crecv(3, (char *)&x, sizeof x);
            ring(0, 1, 0);
            printf("exit done\n");
        }
        return 0;
    }
    if (!strcmp(mode, "thread")) {
        long x = 0;
        if (me == 0) { /* found at run time: the program names no pthread_create */
            int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
                (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(
                    RTLD_DEFAULT, "pthread_create");
            int (*join)(pthread_t, void **) =
                (int (*)(pthread_t, void **))dlsym(RTLD_DEFAULT, "pthread_join");
            pthread_t t;
            if (!create || !join || create(&t, NULL, waiter, NULL)) return fail(me, "no thread");
            join(t, NULL);
        } else if (me == 1) {
            csend(9, (char *)&x, sizeof x, 0, 0);
        }
        return 0;
    }
    return fail(me, "usage: contexts globals|output|crash|exit S|thread");
}
