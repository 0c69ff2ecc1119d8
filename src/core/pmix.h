/* The PMIx client (src/core/pmix.c): rank, size and the key-value space from a
 * PMIx process manager (srun --mpi=pmix, prterun), through libpmix loaded at
 * run time. Used only by pmi.c, which speaks PMI-2 or PMIx as the environment
 * says. */
#ifndef COURIER_PMIX_H
#define COURIER_PMIX_H

#include <stdbool.h>
#include <stddef.h>

struct cr_job;
typedef struct cr_pmix cr_pmix;

/* Does the environment say a PMIx server started this process? */
bool cr_pmix_here(void);
/* Load libpmix, PMIx_Init, and read rank, size and appnum. Any failure ends
 * the process with a line that says what to do. */
cr_pmix *cr_pmix_start(struct cr_job *job, int *rank, int *size, int *appnum);
/* The key-value space: 0 (PMIX_SUCCESS) or an error code. put before the
 * fence; fence commits and collects every rank's data; get after it. */
int cr_pmix_put(cr_pmix *p, const char *key, const char *value);
int cr_pmix_fence(cr_pmix *p);
int cr_pmix_get(cr_pmix *p, int rank, const char *key, char *value, size_t len);
void cr_pmix_finalize(cr_pmix *p);

#endif
