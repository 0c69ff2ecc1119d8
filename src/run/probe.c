/* A probe courier run preloads (LD_PRELOAD) into the ranks of a job whose
 * program is a script: the launcher reads an ELF program's file for another
 * MPI library (progfile.c), but a script's own programs are only seen once
 * they start. In each process of such a rank, before main: if another MPI
 * library is loaded (one of CR_FOREIGN_MPI_SYMBOLS resolves) and libcourier
 * is not, that program would run alone as a job of one rank and end with
 * status 0; say so in one line, end the rank (its first process, named by
 * COURIER_RANK_PID, so that a script that goes on after the program cannot
 * hide it) and this process.
 *
 * Invariants: it is not part of libcourier and links nothing of courier's; a
 * process without another MPI (the shell, its commands, courier's own
 * programs) only pays a few symbol lookups; it writes nothing and changes
 * nothing otherwise. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "foreign_mpi.h"

__attribute__((constructor)) static void courier_probe(void)
{
    if (dlsym(RTLD_DEFAULT, "courier_mpi_h_needs_libcourier")) return; /* courier's */
    static const char *const names[] = {CR_FOREIGN_MPI_SYMBOLS};
    const char *found = NULL;
    Dl_info where = {0};
    for (size_t i = 0; i < sizeof names / sizeof *names && !found; i++) {
        void *p = dlsym(RTLD_DEFAULT, names[i]);
        if (p) {
            found = names[i];
            if (!dladdr(p, &where) || !where.dli_fname) where.dli_fname = "?";
        }
    }
    if (!found) return;
    char exe[PATH_MAX] = "?";
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) exe[n] = '\0';
    const char *lib = strrchr(where.dli_fname, '/');
    const char *rank = getenv("COURIER_RANK");
    fprintf(stderr,
            "courier run: rank %s: '%s' (pid %d), started by the job's script, is linked with "
            "another MPI library (%s, with %s: Open MPI's, MPICH's or another's), not with "
            "courier, so it would run alone as a job of one rank; rebuild it with courier-cc (or "
            "run it with that library's mpirun)\n",
            rank ? rank : "?", exe, (int)getpid(), lib ? lib + 1 : where.dli_fname, found);
    const char *first = getenv("COURIER_RANK_PID");
    long pid = first ? strtol(first, NULL, 10) : 0;
    if (pid > 1 && pid != getpid()) kill((pid_t)pid, SIGKILL);
    _exit(2);
}
