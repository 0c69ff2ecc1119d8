/* courier run --sim: the simulator that runs beside a job's ranks in the
 * launcher, and times their messages on a network model (src/run/vsim.c). */
#ifndef COURIER_VSIM_H
#define COURIER_VSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct cr_vsim cr_vsim;

/* Check a --sim argument ("MACHINE[,key=value...]") for n ranks (the model is
 * built to check its limits, then freed; no segment, no thread): 0, or -1 with
 * a one-line reason in err. */
int cr_vsim_check(const char *spec, int nranks, char *err, size_t errlen);
/* The machines --sim offers, their names joined by ", " and the last by conj
 * (" or ": "ipsc2, cs2, iwarp, sp2 or cluster"): the descriptors' (src/net). */
void cr_vsim_machines(char *buf, size_t len, const char *conj);
/* courier run's help for --sim MACHINE: the machines and every key, each
 * machine's own included, the lines ending with a newline. */
void cr_vsim_usage(FILE *f);
/* Build the model and the shared segment for n ranks: NULL with err set on
 * failure. The segment's descriptor (cr_vsim_fd) goes to every rank as
 * COURIER_SIM_FD. */
cr_vsim *cr_vsim_new(const char *spec, int nranks, char *err, size_t errlen);
int cr_vsim_fd(const cr_vsim *s);
/* How the ranks run (the ranks= key): processes, or contexts of one process
 * (src/host/contexts.h) where the program can (auto). */
enum { CR_VSIM_RANKS_AUTO = 0, CR_VSIM_RANKS_PROCESSES, CR_VSIM_RANKS_CONTEXTS };
int cr_vsim_ranks(const cr_vsim *s);
/* The shared= key: the least allocation of a rank's program whose pages every
 * such allocation shares (src/api/simshared.c), 0 for none. */
uint64_t cr_vsim_shared(const cr_vsim *s);
/* The ranks will be contexts of one process: call before they start. */
void cr_vsim_use_contexts(cr_vsim *s);
/* With contexts: true when rank r has ended, with its status in *status; and
 * the rank whose context ran last (-1: none). */
bool cr_vsim_rank_exit(const cr_vsim *s, int r, int *status);
int cr_vsim_ctx_current(const cr_vsim *s);
/* Start the simulator's thread (after the ranks are started); 0 or -errno. */
int cr_vsim_start(cr_vsim *s);
/* The launcher reaped rank r: it sends nothing more. Any thread. */
void cr_vsim_rank_gone(cr_vsim *s, int r);
/* The simulated program is stuck: every rank that has not left waits for a
 * message and nothing is on its way. Then clock[r] (when given) holds each
 * rank's virtual time in microseconds. */
bool cr_vsim_deadlocked(cr_vsim *s, double *clock_us);
/* The launcher ends the job for another reason (a timeout, a signal, a rank
 * that failed): the simulator stops where it is, and ranks that die on the
 * way are not taken for a deadlock. */
void cr_vsim_stop(cr_vsim *s);
/* Stop the thread (if running) and print the summary: the job's virtual time,
 * each rank's compute, send, receive and wait times, messages and bytes, and
 * the busiest links; with json, write the same to that file too. Returns 0, or
 * -1 if the file failed. */
int cr_vsim_finish(cr_vsim *s, FILE *out, const char *json, double wall_s);
void cr_vsim_free(cr_vsim *s);

#endif
