/* A job started by Slurm's srun (--mpi=pmi2) instead of courier run: the rank,
 * the size and the ranks' addresses come from the process manager's PMI-2
 * service, through Slurm's libpmi2, loaded when such a job starts (pmi.c says
 * why and how). Used only by the job's start-up (src/core/job.c). */
#ifndef COURIER_PMI_H
#define COURIER_PMI_H

#include <stdbool.h>
#include <stddef.h>

struct cr_job;
typedef struct cr_pmi cr_pmi; /* the PMI-2 client (pmi.c) */

/* Start-up: when the environment has no COURIER_RANK but has PMI-2's (PMI_FD,
 * PMI_RANK, PMI_SIZE, as srun --mpi=pmi2 sets), load libpmi2, join the PMI-2
 * job and set job->rank, job->size, job->appnum and job->pmi; returns true.
 * Otherwise returns false and touches nothing. Any failure ends the process with
 * a line that says what to do. */
bool cr_pmi_start(struct cr_job *job);

/* The job's secret (job->secret): rank 0 makes it and puts it in the KVS before
 * the fence; every rank has job->has_secret set (the other ranks' copy is
 * filled by cr_pmi_fence, before init returns and any connection is made). */
void cr_pmi_secret(struct cr_job *job);

/* This machine's ranks: job->host_of for every rank (the lowest rank on its
 * machine), *cpus the CPUs that they may use together (the union of their
 * masks, unless COURIER_CPUS says; *same: every rank of the machine counted
 * the same), and, where a machine runs several, one
 * host segment among them (job->host, as courier run's ranks have; the
 * sleepers' fence when they are no more than *cpus). Collective: every rank
 * calls it, before the transports open. Returns the ranks on this machine. */
int cr_pmi_host(struct cr_job *job, int *cpus, bool *same);

/* Publish this rank's card (an address, binary) in the KVS: 0 or -errno. */
int cr_pmi_card_put(struct cr_job *job, const void *card, size_t len);

/* After every rank's cards and the secret are put: one fence for the whole job,
 * then the secret is read. Called once, at the end of start-up. */
void cr_pmi_fence(struct cr_job *job);

/* Peer's card: 0 and *len set (on entry the buffer's size); -EAGAIN before the
 * fence. A card missing after the fence ends the job. */
int cr_pmi_card_get(struct cr_job *job, int peer, void *card, size_t *len);

/* The KVS for other parts of start-up (pmiwatch.c): put a string before the
 * fence; get rank's after it. 0, or -1. */
int cr_pmi_put(struct cr_job *job, const char *key, const char *value);
int cr_pmi_get(struct cr_job *job, int rank, const char *key, char *value, size_t len);

#endif
