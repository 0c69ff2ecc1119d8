/* What the launcher reads in a program's file before it starts it
 * (src/run/progfile.c). */
#ifndef COURIER_PROGFILE_H
#define COURIER_PROGFILE_H

#include <stdbool.h>
#include <stddef.h>

/* Can courier run --sim run this program's ranks as contexts of one process
 * (src/host/contexts.h)? NULL when it can; else why not, in a few words (it
 * was not linked by courier-cc, it starts threads, ...). path: the file that
 * execvp would run. */
const char *cr_progfile_contexts(const char *path);
/* Does this program load a library (besides the C, C++ and Fortran runtimes
 * and courier's) whose globals, with the ranks as contexts, would be one for
 * every rank (a profiling tool's counts, an I/O library's open files)? True
 * with the first one's name in lib. A file that cannot be read: false. */
bool cr_progfile_other_lib(const char *path, char *lib, size_t len);
/* Is this an iPSC host program: does it call the host's NX/2 calls (load,
 * setpid, getcube, waitall, killcube...: include/courier/cube.h)? */
bool cr_progfile_nx_host(const char *path);
/* Was this program linked with another MPI library (Open MPI's libmpi.so.40,
 * MPICH's libmpich.so.12, ...) and not with libcourier? Its ranks would each
 * start alone, as a job of one rank. True with that library's name in lib;
 * for a library linked in statically (found by its symbols: not in a
 * stripped program), "its own copy of one, with SYMBOL". */
bool cr_progfile_foreign_mpi(const char *path, char *lib, size_t len);

#endif
