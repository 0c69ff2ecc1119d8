/* The group split (coll_split.h), written once for MPI_Comm_split over an
 * intracommunicator, over an intercommunicator (each side's entries, the
 * remote side's passed across by the leaders) and MPL's mpc_partition: an
 * allgather of (color, key, extra), then the entries of one color sorted by
 * key and index.
 * Invariants: every member computes the same order for a color (the sort key,
 * (key, index), is unique in a group), so the members of a new group agree on
 * its ranks without another message. */
#include <stdlib.h>

#include "coll_split.h"

cr_split_entry *cr_split_gather(cr_job *job, cr_group *g, const char *op, int color, int key,
                                int extra)
{
    cr_split_entry mine = {color, key, g->me, extra};
    cr_split_entry *all = malloc((size_t)g->size * sizeof *all);
    if (!all) cr_fatal(job, op, "out of memory for a split of %d members", g->size);
    cr_coll_allgather(job, g, op, &mine, all, sizeof mine);
    for (int i = 0; i < g->size; i++) all[i].index = i;
    return all;
}

static int entry_cmp(const void *a, const void *b)
{
    const cr_split_entry *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

int cr_split_pick(cr_split_entry *e, int n, int color)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        if (e[i].color == color) e[m++] = e[i];
    qsort(e, (size_t)m, sizeof *e, entry_cmp);
    return m;
}

int cr_split(cr_job *job, cr_group *g, const char *op, int color, int key, int extra,
             int *extra_max, int **members, int *me)
{
    cr_split_entry *all = cr_split_gather(job, g, op, color, key, extra);
    if (extra_max) {
        *extra_max = all[0].extra;
        for (int i = 1; i < g->size; i++)
            if (all[i].extra > *extra_max) *extra_max = all[i].extra;
    }
    int m = cr_split_pick(all, g->size, color);
    int *idx = malloc((size_t)(m ? m : 1) * sizeof *idx);
    if (!idx) cr_fatal(job, op, "out of memory for a split of %d members", g->size);
    *me = -1;
    for (int i = 0; i < m; i++) {
        idx[i] = all[i].index;
        if (all[i].index == g->me) *me = i;
    }
    free(all);
    *members = idx;
    return m;
}
