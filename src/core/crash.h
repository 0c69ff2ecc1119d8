/* A rank's last words on a fault or an abort: its rank, the signal, the MPI call it was in,
 * its stack (crash.c). */
#ifndef CR_CRASH_H
#define CR_CRASH_H

/* Install the handler for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT where their action is
 * the default (unless COURIER_BACKTRACE=0). */
void cr_crash_hook(void);

#endif
