/* The MPI-5 ABI's slots of the program's functions that courier calls (user
 * operations, error handlers): which function each trampoline of a kind
 * (abi_cb_wrap.c) calls; and the cell MPI_LASTUSEDCODE's ABI value is read
 * from. The table lives in the job's MPI state (job->mpi->abi_cbs), made at
 * the first use.
 *
 * Invariants: a slot, once given, holds its function until the process ends
 * (a function made into several operations or handlers takes one slot), and
 * is written under the engine lock before its number is returned, so that a
 * trampoline reads it without the lock. */
#include <stdlib.h>

#include "../api/mpi_impl.h"
#include "abi.h"

struct mpi_abi_cbs {
    abi_fn fn[ABI_CB_KINDS][ABI_CB_SLOTS];
    int n[ABI_CB_KINDS];
    int last_code; /* MPI_LASTUSEDCODE's value as the ABI's (abi_attr_out) */
};

static struct mpi_abi_cbs *cbs(mpi_state *m)
{
    if (!m->abi_cbs) m->abi_cbs = calloc(1, sizeof *m->abi_cbs);
    return m->abi_cbs;
}

int *abi_last_code_cell(void)
{
    cr_job *job = cr_job_get();
    cr_lock(job);
    struct mpi_abi_cbs *t = cbs(mpi_state_get(job));
    cr_unlock(job);
    return t ? &t->last_code : NULL;
}

int abi_cb_add(int kind, abi_fn fn)
{
    cr_job *job = cr_job_get();
    cr_lock(job);
    struct mpi_abi_cbs *t = cbs(mpi_state_get(job));
    int slot = -1;
    for (int i = 0; t && i < t->n[kind] && slot < 0; i++)
        if (t->fn[kind][i] == fn) slot = i;
    if (t && slot < 0 && t->n[kind] < ABI_CB_SLOTS) {
        slot = t->n[kind]++;
        t->fn[kind][slot] = fn;
    }
    cr_unlock(job);
    return slot;
}

abi_fn abi_cb_get(int kind, int slot)
{
    return cr_job_get()->mpi->abi_cbs->fn[kind][slot];
}
