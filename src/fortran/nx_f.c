/* NX/2 for Fortran: the iPSC/2 and Paragon calls as Fortran programs call them
 * (CALL CSEND(TYPE, BUF, COUNT, NODE, PID), MID = IRECV(...), X = DCLOCK()),
 * with gfortran's names (csend_) and every argument by reference; fnx.h
 * declares the functions' types. Each entry calls the C call of nx.h, so its
 * checks, error messages (naming the call and the node) and semantics are
 * those of docs/nx.md.
 *
 * Invariants:
 *  - INTEGERs are Fortran's default (4 bytes) and C's are long: a scalar is
 *    widened on the way in and narrowed on the way out (message ids and
 *    counts fit: courier's ids are small, counts are below 2 GiB);
 *  - the integer global operations (GISUM, GIHIGH, ...) combine the INTEGER
 *    array through a long copy of it, so a product or sum wraps as INTEGER
 *    arithmetic does in Fortran, on the low 32 bits;
 *  - GOPF's function gets its length by reference as well (Fortran's
 *    convention, not C gopf's), so GOPF folds gathered values here;
 *  - calls whose C form keeps a pointer to a long array past the call
 *    (IRECVX, ISENDX, whose info is written at completion) and HRECV (its
 *    handler takes its arguments by value) are not offered: see docs/fortran.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "courier/cube.h"
#include "fortran.h"

typedef int fint; /* the default INTEGER */

CR_FEXPORT void csend_(fint *type, char *buf, fint *count, fint *node, fint *pid)
{
    csend(*type, buf, *count, *node, *pid);
}

CR_FEXPORT void crecv_(fint *typesel, char *buf, fint *count)
{
    crecv(*typesel, buf, *count);
}

CR_FEXPORT void cprobe_(fint *typesel)
{
    cprobe(*typesel);
}

CR_FEXPORT fint isend_(fint *type, char *buf, fint *count, fint *node, fint *pid)
{
    return (fint)isend(*type, buf, *count, *node, *pid);
}

CR_FEXPORT fint irecv_(fint *typesel, char *buf, fint *count)
{
    return (fint)irecv(*typesel, buf, *count);
}

CR_FEXPORT void msgwait_(fint *mid)
{
    msgwait(*mid);
}

CR_FEXPORT fint msgdone_(fint *mid)
{
    return (fint)msgdone(*mid);
}

CR_FEXPORT fint iprobe_(fint *typesel)
{
    return (fint)iprobe(*typesel);
}

CR_FEXPORT fint masktrap_(fint *state)
{
    return (fint)masktrap(*state);
}

static void info_out(fint *info, const long *l)
{
    for (int i = 0; i < 4; i++) info[i] = (fint)l[i];
}

CR_FEXPORT void crecvx_(fint *typesel, char *buf, fint *count, fint *nodesel, fint *ptypesel,
                        fint *info)
{
    long l[8] = {0};
    crecvx(*typesel, buf, *count, *nodesel, *ptypesel, l);
    info_out(info, l);
}

CR_FEXPORT void cprobex_(fint *typesel, fint *nodesel, fint *ptypesel, fint *info)
{
    long l[8] = {0};
    cprobex(*typesel, *nodesel, *ptypesel, l);
    info_out(info, l);
}

CR_FEXPORT fint iprobex_(fint *typesel, fint *nodesel, fint *ptypesel, fint *info)
{
    long l[8] = {0};
    long r = iprobex(*typesel, *nodesel, *ptypesel, l);
    if (r) info_out(info, l);
    return (fint)r;
}

CR_FEXPORT void csendx_(fint *type, char *buf, fint *count, fint *node, fint *ptype, fint *info)
{
    long l[8] = {0};
    csendx(*type, buf, *count, *node, *ptype, l);
    info_out(info, l);
}

#define INFO(name)                                                                                 \
    CR_FEXPORT fint name##_(void)                                                                  \
    {                                                                                              \
        return (fint)name();                                                                       \
    }
INFO(infocount)
INFO(infonode)
INFO(infopid)
INFO(infotype)
INFO(mynode)
INFO(mypid)
INFO(numnodes)
INFO(nodedim)
INFO(myhost)
INFO(mclock)

CR_FEXPORT double dclock_(void)
{
    return dclock();
}

CR_FEXPORT void flick_(void)
{
    flick();
}

CR_FEXPORT void gsync_(void)
{
    gsync();
}

#define GD(name)                                                                                   \
    CR_FEXPORT void name##_(double *x, fint *n, double *work)                                      \
    {                                                                                              \
        name(x, *n, work);                                                                         \
    }
GD(gdsum)
GD(gdhigh)
GD(gdlow)
GD(gdprod)

#define GS(name)                                                                                   \
    CR_FEXPORT void name##_(float *x, fint *n, float *work)                                        \
    {                                                                                              \
        name(x, *n, work);                                                                         \
    }
GS(gssum)
GS(gshigh)
GS(gslow)
GS(gsprod)

CR_FEXPORT void msgcancel_(fint *mid)
{
    msgcancel(*mid);
}

/* An INTEGER global operation through a long copy of x (and of work). */
static void gi_call(void (*op)(long *, long, long *), fint *x, fint n, fint *work)
{
    if (n <= 0 || !x || !work) { /* the C call reports it, naming itself */
        op((long *)x, n, (long *)work);
        return;
    }
    long *l = malloc(2 * (size_t)n * sizeof *l);
    if (!l) {
        fprintf(stderr,
                "courier: rank %ld: an INTEGER global operation of %d elements: "
                "out of memory for its long copy\n",
                mynode(), n);
        abort();
    }
    for (fint i = 0; i < n; i++) l[i] = x[i];
    op(l, n, l + n);
    for (fint i = 0; i < n; i++) x[i] = (fint)l[i];
    free(l);
}

#define GI(name)                                                                                   \
    CR_FEXPORT void name##_(fint *x, fint *n, fint *work)                                          \
    {                                                                                              \
        gi_call(name, x, *n, work);                                                                \
    }
GI(gisum)
GI(gihigh)
GI(gilow)
GI(giprod)
GI(giand)
GI(gior)
GI(gixor)

CR_FEXPORT void gcol_(char *x, fint *xlen, char *y, fint *ylen, fint *ncnt)
{
    long n = 0;
    gcol(x, *xlen, y, *ylen, &n);
    *ncnt = (fint)n;
}

CR_FEXPORT void gcolx_(char *x, fint *xlens, char *y)
{
    long nn = numnodes();
    long *l = malloc((size_t)nn * sizeof *l);
    if (!l) {
        fprintf(stderr, "courier: rank %ld: gcolx: out of memory for %ld lengths\n", mynode(), nn);
        abort();
    }
    for (long i = 0; i < nn; i++) l[i] = xlens[i];
    gcolx(x, l, y);
    free(l);
}

/* A Fortran FUNCTION F(A, B[, L]) takes every argument by reference, its
 * length too, where C's gopf passes the length by value: the values of every
 * node are gathered (GCOL) and each node folds them in node order, F(A, WORK,
 * L) with A the result so far and WORK the next node's value: the same
 * operands in the same order on every node, so every node gets the same
 * result. A length that is not positive, or no function, goes to C's gopf,
 * whose checks report it (it calls no function then). */
typedef long (*gopf_fortran_fn)(void *a, void *b, fint *len);

CR_FEXPORT void gopf_(char *x, fint *xlen, char *work, nx_gopf_fn function)
{
    if (*xlen <= 0 || !function) {
        gopf(x, *xlen, work, function);
        return;
    }
    long n = numnodes(), len = *xlen, got = 0;
    char *all = malloc((size_t)n * (size_t)len);
    if (!all) {
        fprintf(stderr, "courier: rank %ld: GOPF: out of memory for %ld values of %ld bytes\n",
                mynode(), n, len);
        abort();
    }
    gcol(x, len, all, n * len, &got);
    gopf_fortran_fn fn = (gopf_fortran_fn)function;
    memcpy(x, all, (size_t)len);
    for (long i = 1; i < n; i++) {
        memcpy(work, all + i * len, (size_t)len);
        fint l = *xlen;
        fn(x, work, &l);
    }
    free(all);
}

/* The iPSC host program's calls (cube.h), as subroutines: CALL LOAD('node',
 * -1, 0), CALL SETPID(0), CALL WAITALL(-1, -1), CALL KILLCUBE(-1, -1). The
 * names are Fortran strings (trailing blanks dropped); a name that cannot be
 * copied is given as empty, which LOAD reports. */
static void with_name(const char *f, size_t len, long (*call)(char *))
{
    char *c = cr_fstr_in(f, len);
    call(c ? c : "");
    free(c);
}

CR_FEXPORT void load_(char *filename, fint *node, fint *pid, size_t len)
{
    char *c = cr_fstr_in(filename, len);
    load(c ? c : "", *node, *pid);
    free(c);
}

CR_FEXPORT void setpid_(fint *pid)
{
    setpid(*pid);
}

CR_FEXPORT void waitall_(fint *node, fint *pid)
{
    waitall(*node, *pid);
}

CR_FEXPORT void killcube_(fint *node, fint *pid)
{
    killcube(*node, *pid);
}

CR_FEXPORT void getcube_(char *cubename, char *cubetype, char *srmname, fint *keep, size_t l1,
                         size_t l2, size_t l3)
{
    (void)cubename, (void)cubetype, (void)srmname, (void)l1, (void)l2, (void)l3;
    getcube(NULL, NULL, NULL, *keep);
}

CR_FEXPORT void attachcube_(char *cubename, size_t len)
{
    with_name(cubename, len, attachcube);
}

CR_FEXPORT void relcube_(char *cubename, size_t len)
{
    with_name(cubename, len, relcube);
}
