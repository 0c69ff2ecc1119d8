/* courier run --check for the interfaces other than MPI (MPL): what they call
 * of the checker (src/api/mpi_check_coll.c), without MPI's headers.
 *
 * Invariants: the same words and exit status as MPI's checks (mpi_check.h). */
#ifndef COURIER_MPI_CHECK_MPL_H
#define COURIER_MPI_CHECK_MPL_H

#include "../coll/coll.h"

/* Is coll among the checks COURIER_CHECK asks for (courier run --check)? */
bool cr_check_coll_wanted(void);

/* Before a collective of an interface without datatypes moves data: every
 * member of g calls the same collective ('call') with the same root (-1: none)
 * and length (bytes; -1: not compared); a disagreement is reported by member 0,
 * naming each task's call, in the words of 'who' ("task") and 'group' ("group
 * 3"), and the job ends with status 98. */
void cr_check_group_agree(cr_job *job, cr_group *g, const char *call, int root, long len,
                          const char *who, const char *group) __attribute__((cold));

#endif
