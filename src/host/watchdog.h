/* The hang watchdog of `courier run`, and its reader of the ranks' records
 * (src/host/watchdog.c). */
#ifndef COURIER_WATCHDOG_H
#define COURIER_WATCHDOG_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../host/host.h"

typedef struct cr_watchdog cr_watchdog;

/* segment: the job's shared segment (its control part at least), n ranks. NULL:
 * a watchdog that only reports what it is told (cr_watchdog_put), for the
 * launcher of a job across hosts, whose ranks' records are on other hosts. */
cr_watchdog *cr_watchdog_new(const void *segment, int n);
/* Ranks first..first+count-1 are this host's (an agent of a job across hosts;
 * by default all are): a rank outside them runs, for all this watchdog knows,
 * so a wait for it is never one for a rank that has finished. */
void cr_watchdog_set_here(cr_watchdog *wd, int first, int count);
/* What rank r waits for, as last read (from its record, or put). */
const cr_waitinfo *cr_watchdog_get(const cr_watchdog *wd, int r);
void cr_watchdog_put(cr_watchdog *wd, int r, const cr_waitinfo *w);
void cr_watchdog_free(cr_watchdog *wd);
/* Look again; true when every running rank has been blocked, unchanged, for
 * timeout_ns. A rank that is stopped (a signal, a debugger) is not blocked: it
 * will move once continued; the time starts again after it runs. */
bool cr_watchdog_check(cr_watchdog *wd, const bool *running, uint64_t now_ns, uint64_t timeout_ns);
/* After cr_watchdog_check: have the running ranks all been blocked, unchanged,
 * long enough for one to see what reached it last (0.3 s), none of them
 * runnable? An agent says so to the launcher, which alone sees every host's
 * ranks: it then asks what each waits for, and ends the job at once when they
 * all wait for ranks that have finished (cr_watchdog_wait_for_finished). */
bool cr_watchdog_quiet(const cr_watchdog *wd, const bool *running, uint64_t now_ns);
/* Does every running rank wait, directly or through others that wait in turn,
 * for a rank that has finished (by what was read or put last)? */
bool cr_watchdog_wait_for_finished(const cr_watchdog *wd, const bool *running);
/* A rank found stopped since the last call, as one line to say ("courier: rank 1
 * (pid P) is stopped (traced by pid T, gdb); ..."); false when there is none. */
bool cr_watchdog_note(cr_watchdog *wd, char *buf, size_t len);
/* Was rank r outside the job when it ended: it had left in order (finalized at
 * exit: its sends done, its record marked gone) or never joined (never attached
 * to the segment: not a courier program, or it ended before its first call)?
 * False when it ended inside the job: _exit, MPI_Abort, a fatal error. */
bool cr_watchdog_rank_outside(const cr_watchdog *wd, int r);
/* Has rank r said (cr_host_said) that its end was reported already, by the
 * launcher of a job it spawned? */
bool cr_watchdog_rank_said(const cr_watchdog *wd, int r);
/* Did rank r end without a call its interface requires (cr_host_unfinished)? */
bool cr_watchdog_rank_unfinished(const cr_watchdog *wd, int r);
/* Did rank r end the job on purpose with status 0 (cr_host_aborted)? */
bool cr_watchdog_rank_aborted(const cr_watchdog *wd, int r);
/* Copy rank record s consistently (seqlock reader): its spell count, whether it
 * is blocked (and not running a handler), what it waits for. A record rewritten
 * all the time reads as not blocked. Also for `courier status` (src/run/jobs.c). */
void cr_watchdog_read_status(const cr_host_status *s, uint32_t *spells, unsigned char *blocked,
                             cr_waitinfo *w);
/* What a blocked rank waits for, in the words of the interface that made the
 * call, as the deadlock report says it after "rank R ": "waits for any rank in
 * crecv(type 5, 8 bytes)". */
void cr_watchdog_describe_wait(char *buf, size_t len, const cr_waitinfo *w);
/* Print what each rank waits for and the wait-for cycle found. */
void cr_watchdog_report(cr_watchdog *wd, const bool *running, double timeout_s, FILE *out);
/* The same for a deadlock the simulator found (courier run --sim): what each
 * rank waits for, read from the board now, with its virtual time. */
void cr_watchdog_report_sim(cr_watchdog *wd, const bool *running, const double *vclock_us,
                            FILE *out);
/* Where the ranks still running are, read from the board now (a job ended by
 * --timeout): what each one blocked waits for, or that it runs outside a
 * communication call. At most CR_WATCHDOG_WHERE_MAX lines, then a count;
 * nothing for ranks on other hosts. */
#define CR_WATCHDOG_WHERE_MAX 32
/* ctx_running: with the ranks as contexts of one process (simulated mode), the
 * rank whose context runs, which holds the process (the others that are not
 * blocked wait for their turn); -1 otherwise. */
void cr_watchdog_report_where(cr_watchdog *wd, const bool *running, int ctx_running, FILE *out);
#endif
