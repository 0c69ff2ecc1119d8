/* MPI_Alltoallw on intracommunicators: a datatype and a byte displacement per
 * peer and direction (contiguous, resized/strided, doubles), zero counts, the
 * direct path (all contiguous), MPI_IN_PLACE, sub-communicators, and the
 * errors returned under MPI_ERRORS_RETURN. Runs on any number of ranks. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "mcheck.h"

#define FILL 0x5a

static int rank, size;
static MPI_Datatype strided; /* an int every 8 bytes: not contiguous */

/* What s sends to d: cnt elements of kind (0: int, 1: double, 2: int). */
static int cnt(int s, int d)
{
    return (s + 2 * d) % 3;
}
static int kind(int s, int d)
{
    return (s + d) % 3 == 1 ? 1 : (s * d) % 2 ? 2 : 0;
}
static double val(int s, int d, int k)
{
    return 1000 * s + 100 * d + k;
}

/* The type a side uses for kind k: the sender strides kind 2, the receiver kind 0. */
static MPI_Datatype type_of(int k, int sender, int *stride)
{
    if (k == 1) {
        *stride = 8;
        return MPI_DOUBLE;
    }
    bool strid = sender ? k == 2 : k == 0;
    *stride = strid ? 8 : 4;
    return strid ? strided : MPI_INT;
}

static void put(char *at, int k, double v)
{
    if (k == 1)
        memcpy(at, &v, 8);
    else {
        int i = (int)v;
        memcpy(at, &i, 4);
    }
}
static double get(const char *at, int k)
{
    if (k == 1) {
        double v;
        memcpy(&v, at, 8);
        return v;
    }
    int i;
    memcpy(&i, at, 4);
    return i;
}

/* Mixed types; the blocks lie in reverse peer order, with gaps. */
static void mixed(MPI_Comm comm)
{
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    int sc[np], sd[np], rc[np], rd[np], sst[np], rst[np];
    MPI_Datatype stt[np], rtt[np];
    size_t at = 16;
    for (int j = np - 1; j >= 0; j--) {
        sc[j] = cnt(me, j);
        stt[j] = type_of(kind(me, j), 1, &sst[j]);
        sd[j] = (int)at;
        at += (size_t)sc[j] * (size_t)sst[j] + 8;
    }
    size_t slen = at;
    at = 8;
    for (int j = np - 1; j >= 0; j--) {
        rc[j] = cnt(j, me);
        rtt[j] = type_of(kind(j, me), 0, &rst[j]);
        rd[j] = (int)at;
        at += (size_t)rc[j] * (size_t)rst[j] + 4;
    }
    size_t rlen = at;
    char *sb = malloc(slen), *rb = malloc(rlen);
    memset(sb, FILL, slen);
    memset(rb, FILL, rlen);
    for (int j = 0; j < np; j++)
        for (int k = 0; k < sc[j]; k++) put(sb + sd[j] + k * sst[j], kind(me, j), val(me, j, k));
    OK(MPI_Alltoallw(sb, sc, sd, stt, rb, rc, rd, rtt, comm));
    /* Every byte that is not an element received must be untouched. */
    char *want = malloc(rlen);
    memset(want, FILL, rlen);
    for (int j = 0; j < np; j++)
        for (int k = 0; k < rc[j]; k++) {
            char *p = rb + rd[j] + k * rst[j];
            double v = get(p, kind(j, me));
            CHECK(v == val(j, me, k), "mixed: from %d element %d: %g, want %g", j, k, v,
                  val(j, me, k));
            memcpy(want + (p - rb), p, kind(j, me) == 1 ? 8 : 4);
        }
    CHECK(!memcmp(want, rb, rlen), "mixed: bytes outside the received elements changed");
    free(want);
    free(sb);
    free(rb);
}

/* All MPI_INT at byte displacements: the layer works in the user buffers. */
static void contiguous(MPI_Comm comm)
{
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    int sc[np], sd[np], rc[np], rd[np];
    MPI_Datatype t[np];
    int sn = 0, rn = 0;
    for (int j = 0; j < np; j++) {
        t[j] = MPI_INT;
        sc[j] = (me + j) % 4;
        rc[j] = (j + me) % 4;
        sd[j] = sn * 4;
        rd[j] = (rn + j + 1) * 4; /* one int of gap before each */
        sn += sc[j];
        rn += rc[j];
    }
    int *sb = malloc((size_t)(sn + 1) * 4), *rb = malloc((size_t)(rn + np + 1) * 4);
    for (int i = 0; i < rn + np; i++) rb[i] = -7;
    for (int j = 0; j < np; j++)
        for (int k = 0; k < sc[j]; k++) sb[sd[j] / 4 + k] = (int)val(me, j, k);
    OK(MPI_Alltoallw(sb, sc, sd, t, rb, rc, rd, t, comm));
    int pos = 0;
    for (int j = 0; j < np; j++) {
        CHECK(rb[pos++] == -7, "contiguous: gap before block %d changed", j);
        for (int k = 0; k < rc[j]; k++, pos++)
            CHECK(rb[pos] == (int)val(j, me, k), "contiguous: from %d element %d: %d", j, k,
                  rb[pos]);
    }
    free(sb);
    free(rb);
}

/* MPI_IN_PLACE: block j of the receive buffer goes to j and is replaced by
 * j's; counts and types are symmetric (the same describe both directions). */
static void inplace(MPI_Comm comm)
{
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    int c[np], d[np], st[np], kd[np];
    MPI_Datatype t[np];
    size_t at = 4;
    for (int j = 0; j < np; j++) {
        c[j] = (me + j) % 3;
        kd[j] = (me + j) % 2;             /* 0: int, 1: double; the same on both sides */
        t[j] = type_of(kd[j], 0, &st[j]); /* ints strided */
        d[j] = (int)at;
        at += (size_t)c[j] * (size_t)st[j] + 4;
    }
    char *b = malloc(at);
    memset(b, FILL, at);
    for (int j = 0; j < np; j++)
        for (int k = 0; k < c[j]; k++) put(b + d[j] + k * st[j], kd[j], val(me, j, k));
    OK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, b, c, d, t, comm));
    for (int j = 0; j < np; j++)
        for (int k = 0; k < c[j]; k++) {
            double v = get(b + d[j] + k * st[j], kd[j]);
            CHECK(v == val(j, me, k), "in place: from %d element %d: %g, want %g", j, k, v,
                  val(j, me, k));
        }
    CHECK((unsigned char)b[0] == FILL, "in place: byte 0 changed");
    free(b);
}

/* Zero counts everywhere, with zero-size and MPI_DATATYPE_NULL types. */
static void zeros(MPI_Comm comm)
{
    int np;
    MPI_Comm_size(comm, &np);
    int c[np], d[np];
    MPI_Datatype t[np], tn[np], empty;
    OK(MPI_Type_contiguous(0, MPI_INT, &empty));
    OK(MPI_Type_commit(&empty));
    for (int j = 0; j < np; j++) {
        c[j] = 0;
        d[j] = 0;
        t[j] = MPI_INT;
        tn[j] = MPI_DATATYPE_NULL;
    }
    int sb = 1, rb = 2;
    OK(MPI_Alltoallw(&sb, c, d, t, &rb, c, d, tn, comm));
    CHECK(rb == 2, "zeros: receive buffer changed");
    /* Non-zero counts of an empty type against zero counts of MPI_INT. */
    int ce[np];
    MPI_Datatype te[np];
    for (int j = 0; j < np; j++) ce[j] = 5, te[j] = empty;
    OK(MPI_Alltoallw(&sb, ce, d, te, &rb, c, d, t, comm));
    OK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, &rb, ce, d, te, comm));
    CHECK(rb == 2, "zeros: receive buffer changed");
    OK(MPI_Type_free(&empty));
}

/* Long blocks (past any eager limit), strided at odd receivers. */
static void large(MPI_Comm comm)
{
    int me, np, n = 40000;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    int sc[np], sd[np], rc[np], rd[np];
    MPI_Datatype st[np], rt[np];
    int *sb = malloc((size_t)np * (size_t)n * 4), *rb = malloc((size_t)np * (size_t)n * 8);
    for (int j = 0; j < np; j++) {
        sc[j] = rc[j] = n;
        sd[j] = j * n * 4;
        st[j] = MPI_INT;
        rt[j] = me % 2 ? strided : MPI_INT;
        rd[j] = j * n * (me % 2 ? 8 : 4);
        for (int i = 0; i < n; i++) sb[j * n + i] = me * 1000000 + j * 100000 + i;
    }
    OK(MPI_Alltoallw(sb, sc, sd, st, rb, rc, rd, rt, comm));
    for (int j = 0; j < np; j++)
        for (int i = 0; i < n; i += 499) {
            int v = rb[rd[j] / 4 + (me % 2 ? 2 * i : i)];
            CHECK(v == j * 1000000 + me * 100000 + i, "large: from %d [%d] = %d", j, i, v);
        }
    free(sb);
    free(rb);
}

static void errors(void)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    int c[size], cneg[size], d[size], cls;
    MPI_Datatype t[size], bad[size];
    for (int j = 0; j < size; j++) {
        c[j] = 1;
        cneg[j] = j == size - 1 ? -1 : 1;
        d[j] = 4 * j;
        t[j] = MPI_INT;
        bad[j] = j == 0 ? MPI_DATATYPE_NULL : MPI_INT;
    }
    int *sb = calloc((size_t)size, 4), *rb = calloc((size_t)size, 4);
    int rc = MPI_Alltoallw(sb, cneg, d, t, rb, c, d, t, comm);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "negative count: class %d", cls);
    rc = MPI_Alltoallw(sb, c, d, t, rb, NULL, d, t, comm);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "NULL recvcounts: class %d", cls);
    rc = MPI_Alltoallw(sb, c, d, bad, rb, c, d, t, comm);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "MPI_DATATYPE_NULL with a count: class %d", cls);
    rc = MPI_Alltoallw(sb, c, d, t, rb, c, d, t, MPI_COMM_NULL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "MPI_COMM_NULL: class %d", cls);
    /* The block to itself: 1 int sent, 2 expected. */
    int c2[size];
    for (int j = 0; j < size; j++) c2[j] = j == rank ? 2 : 1;
    int *rb2 = calloc((size_t)size + 1, 4);
    rc = MPI_Alltoallw(sb, c, d, t, rb2, c2, d, t, comm);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "own block sizes differ: class %d", cls);
    rc = MPI_Alltoallw(sb, c, d, t, sb, c, d, t, comm);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "same send and receive buffer: class %d", cls);
    /* Nothing was sent by the failed calls: a real one still works. */
    for (int j = 0; j < size; j++) sb[j] = 10 * rank + j;
    OK(MPI_Alltoallw(sb, c, d, t, rb, c, d, t, comm));
    for (int j = 0; j < size; j++) CHECK(rb[j] == 10 * j + rank, "after errors: %d", rb[j]);
    free(sb);
    free(rb);
    free(rb2);
    OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    OK(MPI_Type_create_resized(MPI_INT, 0, 8, &strided));
    OK(MPI_Type_commit(&strided));
    for (int rep = 0; rep < 2; rep++) {
        mixed(MPI_COMM_WORLD);
        contiguous(MPI_COMM_WORLD);
        inplace(MPI_COMM_WORLD);
        zeros(MPI_COMM_WORLD);
        large(MPI_COMM_WORLD);
    }
    /* A sub-communicator in reverse order, and the odd ranks alone. */
    MPI_Comm rev, odd;
    OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &odd));
    mixed(rev);
    inplace(rev);
    mixed(odd);
    contiguous(odd);
    OK(MPI_Comm_free(&rev));
    OK(MPI_Comm_free(&odd));
    errors();
    OK(MPI_Type_free(&strided));
    OK(MPI_Finalize());
    if (rank == 0) printf("coll_alltoallw: %d ranks OK\n", size);
    return 0;
}
