/* Failure modes for the launcher tests: `fail segv|exit3|hang|ok N`. Node 1
 * fails; the others block in a receive that will never be satisfied, so the
 * launcher must end them. */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "ok";
    long v = 0;
    if (!strcmp(how, "hang") || mynode() != 1) {
        crecv(99, (char *)&v, sizeof v); /* nobody sends type 99 */
        return 0;
    }
    if (!strcmp(how, "segv")) raise(SIGSEGV);
    if (!strcmp(how, "exit3")) return 3;
    return 0;
}
