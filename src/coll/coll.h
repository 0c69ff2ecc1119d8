/* The collective layer: algorithms over the engine's point-to-point calls,
 * shared by every interface (NX/2 global operations now; MPL and MPI later). */
#ifndef COURIER_COLL_H
#define COURIER_COLL_H

#include "../core/engine.h"

/* A set of ranks that take part in collectives, with its own context. */
typedef struct cr_group {
    int size, me;     /* members, and this rank's index among them */
    const int *ranks; /* job rank of each member; NULL: member i is rank i */
    uint16_t ctx;     /* context of its traffic */
    uint32_t seq;     /* collectives started so far (same on every member) */
} cr_group;

/* out[i] = lo[i] op hi[i], where lo comes from the lower member; out may alias. */
typedef void (*cr_op_fn)(const void *lo, const void *hi, void *out, size_t count);

/* Predefined operations. */
void cr_op_sum_double(const void *lo, const void *hi, void *out, size_t n);
void cr_op_max_double(const void *lo, const void *hi, void *out, size_t n);
void cr_op_min_double(const void *lo, const void *hi, void *out, size_t n);
void cr_op_sum_long(const void *lo, const void *hi, void *out, size_t n);
void cr_op_max_long(const void *lo, const void *hi, void *out, size_t n);
void cr_op_min_long(const void *lo, const void *hi, void *out, size_t n);

void cr_coll_barrier(cr_job *job, cr_group *g, const char *op);
/* Combine x[0..count-1] across the group; every member ends with the result in x.
 * work holds count elements of scratch. */
void cr_coll_allreduce(cr_job *job, cr_group *g, const char *op, void *x, void *work, size_t count,
                       size_t elem, cr_op_fn fn);

#endif
