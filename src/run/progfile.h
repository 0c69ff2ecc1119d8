/* What the launcher reads in a program's file before it starts it
 * (src/run/progfile.c). */
#ifndef COURIER_PROGFILE_H
#define COURIER_PROGFILE_H

#include <stddef.h>

/* Can courier run --sim run this program's ranks as contexts of one process
 * (src/host/contexts.h)? NULL when it can; else why not, in a few words (it
 * was not linked by courier-cc, it starts threads, ...). path: the file that
 * execvp would run. */
const char *cr_progfile_contexts(const char *path);

#endif
