/* Attribute caching (MPI-3.1 section 6.7), one algorithm for the three kinds of
 * object that carry attributes: communicators, datatypes and windows. Here: the
 * one table of keyvals (job->mpi->keys), and what is done to an object's list of
 * attributes (set, delete, copy on dup, delete all on free). mpi_comm.c,
 * mpi_type_more.c and mpi_win.c check their calls' arguments, report their
 * errors and call these.
 *
 * Invariants:
 *  - a keyval handle is K_KEYVAL | index; its entry says which kind of object it
 *    is for, and a keyval of another kind is no keyval to a call of this kind;
 *    the predefined keyvals (MPI_TAG_UB, MPI_WIN_BASE, ...) have bit 22 set
 *    and no entry;
 *  - a keyval lives while its handle does (used) or attributes still hold it
 *    (refs): freeing it again meanwhile is harmless (MPI-1 programs free keyvals
 *    from their delete callbacks), and values set with it keep their callbacks;
 *    entries are never reused;
 *  - an object's attributes stay in the order they were set; all of them are
 *    deleted the last set first (MPI-3.1 8.7.1 asks this of MPI_COMM_SELF);
 *  - a value a Fortran program set is boxed (mpi_attr_box): val points to
 *    an MPI_Aint holding it, which is what C's get_attr gives (MPI-3.1
 *    17.2.7: a pointer to the value); Fortran's get and Fortran callbacks
 *    see the value itself; the box is the attribute's, freed with it;
 *  - a keyval's callbacks are C's or, where the Fortran binding made it
 *    (mpi_keyval_set_lang), Fortran procedures: mpi_f2c.c calls those;
 *  - callbacks run without the engine lock: the object is looked up again by
 *    its handle after each one (the program may free it, or another thread grow
 *    the tables, meanwhile). */
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

#define KEYVAL_MAX 0x400000 /* bit 22 and above: the predefined keyvals */

static mpi_keyval *entry(int kv, mpi_obj_kind kind, bool any)
{
    if (!h_is(kv, K_KEYVAL)) return NULL;
    int i = h_idx(kv);
    const mpi_state *m = mpi_st();
    if (i >= m->nkeys) return NULL;
    mpi_keyval *k = &m->keys[i];
    return k->kind == kind && (any || k->used) ? k : NULL;
}

int mpi_keyval_create(cr_job *job, const char *call, mpi_obj_kind kind, mpi_attr_copy_fn *copy,
                      mpi_attr_del_fn *del, void *extra)
{
    if (job->mpi->nkeys >= KEYVAL_MAX) cr_fatal(job, call, "more than %d keyvals", KEYVAL_MAX);
    mpi_keyval *k = realloc(job->mpi->keys, (size_t)(job->mpi->nkeys + 1) * sizeof *k);
    if (!k) cr_fatal(job, call, "out of memory");
    job->mpi->keys = k;
    job->mpi->keys[job->mpi->nkeys] = (mpi_keyval){kind, true, 0, copy, del, extra, MPI_ATTR_C};
    return (int)(K_KEYVAL | (unsigned)job->mpi->nkeys++);
}

bool mpi_keyval_free(int *kv, mpi_obj_kind kind)
{
    mpi_keyval *k = kv ? entry(*kv, kind, true) : NULL;
    if (!k || (!k->used && !k->refs)) return false;
    k->used = false; /* attributes already set keep working until deleted */
    *kv = MPI_KEYVAL_INVALID;
    return true;
}

bool mpi_keyval_live(int kv, mpi_obj_kind kind)
{
    return entry(kv, kind, false) != NULL;
}

bool mpi_keyval_set_lang(int kv, mpi_attr_lang lang)
{
    mpi_keyval *k = NULL;
    for (int kind = MPI_OBJ_COMM; !k && kind <= MPI_OBJ_WIN; kind++)
        k = entry(kv, (mpi_obj_kind)kind, false);
    if (k) k->lang = lang;
    return k != NULL;
}

/* The object's attribute list (NULL: the handle is not live). */
static mpi_attrs *attrs_of(mpi_obj_kind kind, int h)
{
    switch (kind) {
    case MPI_OBJ_COMM: {
        mpi_comm *c = mpi_comm_get(h);
        return c ? &c->attrs : NULL;
    }
    case MPI_OBJ_TYPE: {
        mpi_type *t = mpi_type_get(h);
        return t ? &t->attrs : NULL;
    }
    default:
        return mpi_win_attrs(h);
    }
}

static mpi_attr *find_in(mpi_attrs *l, int kv)
{
    for (int i = 0; l && i < l->n; i++)
        if (l->a[i].keyval == kv) return &l->a[i];
    return NULL;
}

mpi_attr *mpi_attr_find(mpi_obj_kind kind, int h, int kv)
{
    return find_in(attrs_of(kind, h), kv);
}

static void put(cr_job *job, mpi_obj_kind kind, int h, int kv, void *val)
{
    mpi_attrs *l = attrs_of(kind, h);
    if (!l) return;
    mpi_attr *a = find_in(l, kv);
    if (!a) {
        a = realloc(l->a, (size_t)(l->n + 1) * sizeof *a);
        if (!a) cr_fatal(job, "MPI attributes", "out of memory");
        l->a = a;
        a = &l->a[l->n++];
        a->keyval = kv;
        a->boxed = false;
        entry(kv, kind, true)->refs++;
    }
    if (a->boxed) free(a->val);
    a->val = val;
    a->boxed = false;
}

/* The value of a as a Fortran procedure sees it. */
static void *fvalue(const mpi_attr *a)
{
    return a->boxed ? (void *)*(MPI_Aint *)a->val : a->val;
}

bool mpi_attr_box(cr_job *job, mpi_obj_kind kind, int h, int kv)
{
    mpi_attr *a = mpi_attr_find(kind, h, kv);
    if (a && !a->boxed) {
        MPI_Aint *box = malloc(sizeof *box);
        if (!box) cr_fatal(job, "MPI attributes", "out of memory");
        *box = (MPI_Aint)a->val;
        a->val = box;
        a->boxed = true;
    }
    return a != NULL;
}

bool mpi_attr_boxed(mpi_obj_kind kind, int h, int kv)
{
    const mpi_attr *a = mpi_attr_find(kind, h, kv);
    return a && a->boxed;
}

int mpi_attr_delete(cr_job *job, mpi_obj_kind kind, int h, int kv)
{
    mpi_attr *a = mpi_attr_find(kind, h, kv);
    mpi_keyval *k = entry(kv, kind, true);
    if (!a || !k) return MPI_SUCCESS;
    if (k->del) {
        mpi_attr_del_fn *del = k->del; /* read under the lock */
        mpi_attr_lang lang = k->lang;
        void *val = lang == MPI_ATTR_C ? a->val : fvalue(a), *extra = k->extra;
        cr_unlock(job);
        int rc = lang == MPI_ATTR_C ? del(h, kv, val, extra)
                                    : mpi_attr_call_del(lang, del, h, kv, val, extra);
        cr_lock(job);
        if (rc != MPI_SUCCESS) return rc;
        a = mpi_attr_find(kind, h, kv);
    }
    mpi_attrs *l = attrs_of(kind, h);
    if (a && l) {
        if (a->boxed) free(a->val);
        memmove(a, a + 1, (size_t)(l->a + l->n - (a + 1)) * sizeof *a);
        l->n--;
        entry(kv, kind, true)->refs--;
    }
    return MPI_SUCCESS;
}

int mpi_attr_set(cr_job *job, mpi_obj_kind kind, int h, int kv, void *val)
{
    if (mpi_attr_find(kind, h, kv)) { /* the old value is deleted first (its callback runs) */
        int rc = mpi_attr_delete(job, kind, h, kv);
        if (rc != MPI_SUCCESS) return rc;
    }
    put(job, kind, h, kv, val);
    return MPI_SUCCESS;
}

int mpi_attrs_copy(cr_job *job, mpi_obj_kind kind, int oldh, int newh, int *kv_out)
{
    mpi_attrs *o = attrs_of(kind, oldh);
    for (int i = 0; o && i < o->n; i++) {
        int kv = o->a[i].keyval;
        mpi_keyval *k = entry(kv, kind, true);
        if (!k->copy) continue;
        mpi_attr_copy_fn *copy = k->copy; /* read under the lock */
        mpi_attr_lang lang = k->lang;
        bool boxed = o->a[i].boxed;
        void *out = NULL, *in = lang == MPI_ATTR_C ? o->a[i].val : fvalue(&o->a[i]);
        void *extra = k->extra;
        int flag = 0;
        cr_unlock(job);
        int rc = lang == MPI_ATTR_C
                     ? copy(oldh, kv, extra, in, &out, &flag)
                     : mpi_attr_call_copy(lang, copy, oldh, kv, extra, in, &out, &flag);
        cr_lock(job);
        o = attrs_of(kind, oldh);
        if (rc != MPI_SUCCESS) {
            *kv_out = kv;
            return rc;
        }
        if (!flag) continue;
        if (lang != MPI_ATTR_C || (boxed && out == in)) {
            /* a Fortran value, or C's copy of the box: the new object's own box */
            if (lang == MPI_ATTR_C) out = (void *)*(MPI_Aint *)in;
            put(job, kind, newh, kv, out);
            mpi_attr_box(job, kind, newh, kv);
        } else
            put(job, kind, newh, kv, out);
    }
    return MPI_SUCCESS;
}

int mpi_attrs_delete(cr_job *job, mpi_obj_kind kind, int h, int *kv_out)
{
    mpi_attrs *l;
    while ((l = attrs_of(kind, h)) && l->n > 0) {
        int kv = l->a[l->n - 1].keyval;
        int rc = mpi_attr_delete(job, kind, h, kv);
        if (rc != MPI_SUCCESS) {
            *kv_out = kv;
            return rc;
        }
    }
    return MPI_SUCCESS;
}

void mpi_attrs_forget(mpi_attrs *l, mpi_obj_kind kind)
{
    for (int i = 0; i < l->n; i++) {
        mpi_keyval *k = entry(l->a[i].keyval, kind, true);
        if (k) k->refs--;
        if (l->a[i].boxed) free(l->a[i].val);
    }
    free(l->a);
    *l = (mpi_attrs){0};
}

int mpi_attr_cb_class(int rc)
{
    return mpi_err_known(rc) ? rc : MPI_ERR_OTHER;
}
