/* The one-sided memory of a group: publishing each member's memory to the
 * others (an all-gather of addresses, lengths and shared-memory descriptors),
 * and mapping the shared memory of the members on this host. Shared by the
 * native regions (src/api/onesided.c) and MPI's windows (src/api/mpi_win.c).
 *
 * Invariants: after cr_coll_publish every member's table has the same pub[]
 * on every member; map[m] is non-NULL only for this member (its own memory)
 * and for memory really mapped here; this member's memory is exposed to the
 * one-sided service while published, and the service runs (with the progress
 * thread) as soon as some member cannot reach that memory otherwise: not
 * mapped, single copy denied (tried here once, so that no origin finds out
 * later, when the target might not serve), or atomics on memory not mapped. */
#include <stdlib.h>

#include "coll.h"

/* Can this rank reach member m's published memory without m's service?
 * (Empty memory needs no reaching, unless memory is attached to it later.) */
static bool reaches(cr_job *job, cr_group *g, const cr_rtable *t, int m, int flags)
{
    cr_rtarget at = cr_rtable_at(g, t, m, 0);
    size_t len = t->pub[m].len;
    return cr_rma_reaches(job, &at, len, flags & CR_PUB_ATOMICS) ||
           (!len && !(flags & CR_PUB_ATTACH));
}

void cr_coll_publish(cr_job *job, cr_group *g, const char *op, void *base, size_t len,
                     const cr_shared *sh, int flags, cr_rtable *out)
{
    cr_pub mine = {.addr = (uintptr_t)base, .len = len, .sh = {.fd = -1}};
    if (sh) mine.sh = *sh;
    /* Before the address goes out: a member may send a request the moment it
     * has it, and this rank may serve it while still in the collectives. */
    cr_rma_expose(job, base, len);
    out->n = g->size;
    out->me = g->me;
    out->pub = malloc((size_t)g->size * sizeof *out->pub);
    out->map = calloc((size_t)g->size, sizeof *out->map);
    if (!out->pub || !out->map)
        cr_fatal(job, op, "out of memory for the table of %d members", g->size);
    cr_coll_allgather(job, g, op, &mine, out->pub, sizeof mine);
    for (int m = 0; m < g->size; m++) {
        if (m == g->me)
            out->map[m] = base;
        else if (out->pub[m].sh.fd >= 0)
            out->map[m] = cr_shared_map(job, cr_group_rank(g, m), &out->pub[m].sh);
    }
    /* Does any member need this member's service? (An all-reduce of one byte
     * per member: mine says which of them I cannot reach otherwise.) */
    long *need = calloc((size_t)g->size * 2, sizeof *need);
    if (!need) cr_fatal(job, op, "out of memory for the table of %d members", g->size);
    for (int m = 0; m < g->size; m++) need[m] = m != g->me && !reaches(job, g, out, m, flags);
    cr_redop o = CR_OP_PREDEF(cr_op_bor_long, long);
    cr_coll_allreduce(job, g, op, need, need + g->size, (size_t)g->size, &o);
    if (need[g->size + g->me]) cr_rma_serve(job);
    free(need);
}

void cr_coll_unpublish(cr_job *job, cr_rtable *t)
{
    if (!t->pub) return;
    for (int m = 0; m < t->n; m++)
        if (m != t->me && t->map[m]) cr_shared_unmap(t->map[m], &t->pub[m].sh);
    cr_rma_hide(job, (void *)(uintptr_t)t->pub[t->me].addr);
    free(t->pub);
    free(t->map);
    t->pub = NULL;
    t->map = NULL;
    t->n = 0;
}
