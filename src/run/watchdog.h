/* The hang watchdog of `courier run`, and its reader of the ranks' records
 * (src/run/watchdog.c). */
#ifndef COURIER_WATCHDOG_H
#define COURIER_WATCHDOG_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct cr_watchdog cr_watchdog;

/* segment: the job's shared segment (its control part at least), n ranks. */
cr_watchdog *cr_watchdog_new(const void *segment, int n);
void cr_watchdog_free(cr_watchdog *wd);
/* Look again; true when every running rank has been blocked, unchanged, for timeout_ns. */
bool cr_watchdog_check(cr_watchdog *wd, const bool *running, uint64_t now_ns, uint64_t timeout_ns);
/* Was rank r outside the job when it ended: it had left in order (finalized at
 * exit: its sends done, its record marked gone) or never joined (never attached
 * to the segment: not a courier program, or it ended before its first call)?
 * False when it ended inside the job: _exit, MPI_Abort, a fatal error. */
bool cr_watchdog_rank_outside(const cr_watchdog *wd, int r);
/* Print what each rank waits for and the wait-for cycle found. */
void cr_watchdog_report(cr_watchdog *wd, const bool *running, double timeout_s, FILE *out);
#endif
