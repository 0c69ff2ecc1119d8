/* The ranks' own watchdog when no launcher of courier's watches them (a job
 * started by srun --mpi=pmi2): src/core/pmiwatch.c says how it works. Used by
 * the job's start-up (pmi.c, job.c) and the waiting point (wait.c). */
#ifndef COURIER_PMIWATCH_H
#define COURIER_PMIWATCH_H

#include "../host/host.h"

struct cr_job;
typedef struct cr_pmiwatch cr_pmiwatch;

/* Before the PMI fence (every rank): rank 0 opens the watch's listening
 * socket and puts its address in the KVS; every rank registers the exit
 * handler that tells rank 0 how it ended (before the job's own exit handler,
 * so that it runs after it). Sets job->pmiwatch; a failure ends the rank with
 * a line that says what to do. */
void cr_pmiwatch_prepare(struct cr_job *job);

/* After the fence and the job's exit handler: every rank other than 0
 * connects to rank 0's watch (its address from the KVS) and proves it holds
 * the job's secret; each rank starts its watch thread. */
void cr_pmiwatch_start(struct cr_job *job);

/* The rank's wait, as the board shows it under courier run (NULL: no longer
 * blocked); called by the waiting point, under the engine's lock. */
void cr_pmiwatch_report(struct cr_job *job, const cr_waitinfo *w);

#endif
