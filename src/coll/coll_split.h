/* The group split that MPI_Comm_split (intra- and intercommunicators) and MPL's
 * mpc_partition share: every member gives a color and a key; the members of one
 * color, ordered by key and then by their index in the group, make a new group.
 * The callers agree on contexts and make the group in their own terms. */
#ifndef COURIER_COLL_SPLIT_H
#define COURIER_COLL_SPLIT_H
#include "coll.h"

/* One member's part: what it gave (extra: anything else the caller gathers
 * with it, such as MPL's next free context) and its index in the group. */
typedef struct cr_split_entry {
    int color, key, index, extra;
} cr_split_entry;

/* Every member of g calls it: the n entries, in member order (malloc'd; the
 * caller frees them). */
cr_split_entry *cr_split_gather(cr_job *job, cr_group *g, const char *op, int color, int key,
                                int extra);
/* Keep the n entries of one color, in (key, index) order, at the front; how
 * many. */
int cr_split_pick(cr_split_entry *e, int n, int color);
/* The whole split for a member of g: the indices in g of the members that gave
 * its color, in (key, index) order (*members, malloc'd), its own place among
 * them (*me) and their count; *extra_max (unless NULL): the largest extra of
 * every member of g, whatever its color. */
int cr_split(cr_job *job, cr_group *g, const char *op, int color, int key, int extra,
             int *extra_max, int **members, int *me);
#endif
