/* One program for both headers: built against courier's mpi.h (linked with
 * libcourier) and against the MPI-5 ABI's (include/abi/mpi.h, linked with
 * libmpi_abi.so), it must print the same lines. A ring of messages, an
 * all-reduce, a derived datatype, the fields of a status (from a message and
 * from MPI_PROC_NULL), MPI_ERRORS_RETURN's error classes, a nonblocking
 * exchange completed by MPI_Waitall, a split communicator, a large-count user
 * operation, the Fortran status conversions; rank 0 prints what
 * every rank found. What differs between the headers (the handles' and
 * constants' values) is never printed: only what MPI says of them. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, np;

/* A user operation: the larger absolute value, for MPI_INT only. */
static int op_saw_int;
static void absmax(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    op_saw_int = *dt == MPI_INT;
    const int *a = in;
    int *b = inout;
    for (int i = 0; op_saw_int && i < *len; i++)
        if (abs(a[i]) > abs(b[i])) b[i] = a[i];
}

/* A large-count user operation: the sum, for MPI_LONG_LONG only. */
static int op_c_saw_ll;
static MPI_Count op_c_len;
static void sum_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    op_c_saw_ll = *dt == MPI_LONG_LONG;
    op_c_len = *len;
    const long long *a = in;
    long long *b = inout;
    for (MPI_Count i = 0; op_c_saw_ll && i < *len; i++) b[i] += a[i];
}

/* An attribute's copy and delete functions: what they were called with. */
static int copies, deletes, copy_comm_right;
static MPI_Comm copy_from;
static int copy_attr(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)keyval;
    copies++;
    copy_comm_right = comm == copy_from && *(int *)extra == 5;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}
static int delete_attr(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm, (void)keyval, (void)val, (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

/* A generalized request that is complete at once. */
static int gq_query(void *extra, MPI_Status *st)
{
    (void)extra;
    MPI_Status_set_elements(st, MPI_INT, 3);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int gq_free(void *extra)
{
    *(int *)extra = 1;
    return MPI_SUCCESS;
}
static int gq_cancel(void *extra, int complete)
{
    (void)extra, (void)complete;
    return MPI_SUCCESS;
}

/* An error handler: what it was called with. */
static MPI_Comm eh_comm_seen;
static int eh_class = -1;
static void handler(MPI_Comm *comm, int *code, ...)
{
    eh_comm_seen = *comm;
    MPI_Error_class(*code, &eh_class);
}

static void fail(const char *what)
{
    fprintf(stderr, "rank %d: %s\n", me, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    char line[16][160];
    int nl = 0;

    /* a ring: each rank adds its rank to the token */
    int token = 0, right = (me + 1) % np, left = (me + np - 1) % np;
    MPI_Status st;
    if (me == 0) {
        MPI_Send(&token, 1, MPI_INT, right, 7, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    } else {
        MPI_Recv(&token, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &st);
        token += me;
        MPI_Send(&token, 1, MPI_INT, right, 7, MPI_COMM_WORLD);
    }
    int count;
    MPI_Get_count(&st, MPI_INT, &count);
    snprintf(line[nl++], sizeof line[0], "ring: token %d, status source %d tag %d count %d", token,
             st.MPI_SOURCE, st.MPI_TAG, count);

    /* an all-reduce of doubles and a max-location of pairs */
    double v[3] = {me, 2.0 * me, 1.0}, sum[3];
    MPI_Allreduce(v, sum, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    struct {
        double val;
        int rank;
    } in = {(double)((me * 7) % np), me}, out;
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    int inplace = me + 1;
    MPI_Allreduce(MPI_IN_PLACE, &inplace, 1, MPI_INT, MPI_PROD, MPI_COMM_WORLD);
    snprintf(line[nl++], sizeof line[0], "allreduce: %g %g %g, maxloc %g at %d, in place %d",
             sum[0], sum[1], sum[2], out.val, out.rank, inplace);

    /* a derived type: every other int of 10, sent to the right */
    MPI_Datatype vec;
    MPI_Type_vector(5, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int src[10], dst[5] = {0};
    for (int i = 0; i < 10; i++) src[i] = 100 * me + i;
    MPI_Sendrecv(src, 1, vec, right, 3, dst, 5, MPI_INT, left, 3, MPI_COMM_WORLD, &st);
    int size;
    MPI_Aint lb, extent;
    MPI_Type_size(vec, &size);
    MPI_Type_get_extent(vec, &lb, &extent);
    MPI_Get_count(&st, MPI_INT, &count);
    int ok = 1;
    for (int i = 0; i < 5; i++) ok &= dst[i] == 100 * left + 2 * i;
    MPI_Type_free(&vec);
    snprintf(line[nl++], sizeof line[0],
             "vector: size %d extent %ld, received %d ints %s, type freed %s", size, (long)extent,
             count, ok ? "right" : "WRONG", vec == MPI_DATATYPE_NULL ? "null" : "not null");

    /* the status of a receive from MPI_PROC_NULL */
    MPI_Recv(dst, 1, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    snprintf(line[nl++], sizeof line[0], "proc null: source %s, tag %s, count %d",
             st.MPI_SOURCE == MPI_PROC_NULL ? "MPI_PROC_NULL" : "other",
             st.MPI_TAG == MPI_ANY_TAG ? "MPI_ANY_TAG" : "other", count);
    /* MPI-4.1's status accessors and value-index pairs, through the ABI too */
    int gsrc = 0, gtag = 0, gerr = 0;
    MPI_Status_get_source(&st, &gsrc);
    MPI_Status_get_tag(&st, &gtag);
    MPI_Status_set_error(&st, MPI_ERR_TRUNCATE);
    MPI_Status_get_error(&st, &gerr);
    MPI_Datatype pair = MPI_DATATYPE_NULL, nopair = MPI_INT;
    MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &pair);
    MPI_Type_get_value_index(MPI_CHAR, MPI_INT, &nopair);
    snprintf(line[nl++], sizeof line[0], "accessors: source %s, tag %s, error %s; pairs %s and %s",
             gsrc == MPI_PROC_NULL ? "MPI_PROC_NULL" : "other",
             gtag == MPI_ANY_TAG ? "MPI_ANY_TAG" : "other",
             gerr == MPI_ERR_TRUNCATE && st.MPI_ERROR == MPI_ERR_TRUNCATE ? "MPI_ERR_TRUNCATE"
                                                                          : "other",
             pair == MPI_DOUBLE_INT ? "MPI_DOUBLE_INT" : "other",
             nopair == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "other");

    /* errors returned, by class */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Send(src, 1, MPI_INT, np + 5, 0, MPI_COMM_WORLD), cls = -1;
    MPI_Error_class(rc, &cls);
    int rc2 = MPI_Send(src, -1, MPI_INT, right, 0, MPI_COMM_WORLD), cls2 = -1;
    MPI_Error_class(rc2, &cls2);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(cls, msg, &len);
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    snprintf(line[nl++], sizeof line[0],
             "errors: bad rank %s, bad count %s, a string %s, handler %s",
             cls == MPI_ERR_RANK ? "MPI_ERR_RANK" : "other",
             cls2 == MPI_ERR_COUNT ? "MPI_ERR_COUNT" : "other", len > 0 ? "given" : "missing",
             eh == MPI_ERRORS_RETURN ? "MPI_ERRORS_RETURN" : "other");
    MPI_Errhandler_free(&eh);

    /* nonblocking both ways, completed together */
    int a = me, b = -1, c = -1;
    MPI_Request rq[3];
    MPI_Status sts[3];
    MPI_Irecv(&b, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &rq[0]);
    MPI_Irecv(&c, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &rq[1]);
    MPI_Isend(&a, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &rq[2]);
    MPI_Request extra;
    MPI_Isend(&a, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &extra);
    MPI_Waitall(3, rq, sts);
    MPI_Wait(&extra, MPI_STATUS_IGNORE);
    int nulls = (rq[0] == MPI_REQUEST_NULL) + (rq[1] == MPI_REQUEST_NULL) +
                (rq[2] == MPI_REQUEST_NULL) + (extra == MPI_REQUEST_NULL);
    snprintf(line[nl++], sizeof line[0], "waitall: %s, sources %s, %d requests null",
             b == left && c == right ? "right" : "WRONG",
             sts[0].MPI_SOURCE == left && sts[1].MPI_SOURCE == right ? "right" : "WRONG", nulls);

    /* a split communicator and a comparison */
    MPI_Comm half, dup;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &half);
    int hr, hs, cmp;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    snprintf(line[nl++], sizeof line[0], "split: rank %d of %d, dup %s, freed %s", hr, hs,
             cmp == MPI_CONGRUENT ? "MPI_CONGRUENT" : "other",
             half == MPI_COMM_NULL && dup == MPI_COMM_NULL ? "null" : "not null");

    /* a user operation and a user error handler */
    MPI_Op op;
    MPI_Op_create(absmax, 1, &op);
    int x[2] = {me % 2 ? -10 * me : me, 3}, y[2];
    MPI_Allreduce(x, y, 2, MPI_INT, op, MPI_COMM_WORLD);
    MPI_Op_free(&op);
    MPI_Comm other;
    MPI_Errhandler mine;
    MPI_Comm_dup(MPI_COMM_WORLD, &other);
    MPI_Comm_create_errhandler(handler, &mine);
    MPI_Comm_set_errhandler(other, mine);
    MPI_Errhandler_free(&mine);
    rc = MPI_Send(src, 1, MPI_INT, -7, 0, other);
    MPI_Error_class(rc, &cls);
    snprintf(line[nl++], sizeof line[0],
             "callbacks: op %d %d (saw MPI_INT %s), op freed %s; handler saw %s on %s, call "
             "returned %s",
             y[0], y[1], op_saw_int ? "yes" : "no", op == MPI_OP_NULL ? "null" : "not null",
             eh_class == MPI_ERR_RANK ? "MPI_ERR_RANK" : "other",
             eh_comm_seen == other ? "its communicator" : "another",
             cls == MPI_ERR_RANK ? "MPI_ERR_RANK" : "other");
    MPI_Comm_free(&other);

    /* an attribute with the program's copy and delete functions, and one
     * copied by MPI_COMM_DUP_FN */
    int kv, kv2, five = 5, val = 42, *got = NULL, flag = 0, *got2 = NULL, flag2 = 0;
    MPI_Comm_create_keyval(copy_attr, delete_attr, &kv, &five);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kv2, NULL);
    MPI_Comm_dup(MPI_COMM_WORLD, &copy_from);
    MPI_Comm_set_attr(copy_from, kv, &val);
    MPI_Comm_set_attr(copy_from, kv2, &val);
    MPI_Comm_dup(copy_from, &other);
    MPI_Comm_get_attr(other, kv, &got, &flag);
    MPI_Comm_get_attr(other, kv2, &got2, &flag2);
    MPI_Comm_free(&other);
    MPI_Comm_free(&copy_from);
    MPI_Comm_free_keyval(&kv);
    MPI_Comm_free_keyval(&kv2);
    int ub_flag = 0, *ub = NULL;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &ub_flag);
    snprintf(line[nl++], sizeof line[0],
             "attributes: copied %d (%s), value %d and %d on the dup, deleted %d, keyvals %s, "
             "tag bound %s",
             copies, copy_comm_right ? "from its communicator" : "WRONG", flag ? *got : -1,
             flag2 ? *got2 : -1, deletes,
             kv == MPI_KEYVAL_INVALID && kv2 == MPI_KEYVAL_INVALID ? "invalid" : "not invalid",
             ub_flag && *ub >= 32767 ? "given" : "missing");

    /* a generalized request */
    int freed = 0, elems = -1;
    MPI_Request gr;
    MPI_Grequest_start(gq_query, gq_free, gq_cancel, &freed, &gr);
    MPI_Grequest_complete(gr);
    MPI_Wait(&gr, &st);
    MPI_Get_elements(&st, MPI_INT, &elems);
    snprintf(line[nl++], sizeof line[0], "generalized request: %d elements, freed %d, request %s",
             elems, freed, gr == MPI_REQUEST_NULL ? "null" : "not null");

    /* a neighbourhood exchange with a type per neighbour, on a periodic ring */
    MPI_Comm ring;
    int dims[1] = {np}, periods[1] = {1}, nb_out[2] = {me, me}, nb_in[2] = {-1, -1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    int ones[2] = {1, 1};
    MPI_Aint nb_displs[2] = {0, sizeof(int)};
    MPI_Datatype nb_types[2] = {MPI_INT, MPI_INT};
    MPI_Neighbor_alltoallw(nb_out, ones, nb_displs, nb_types, nb_in, ones, nb_displs, nb_types,
                           ring);
    int src_nb, dst_nb;
    MPI_Cart_shift(ring, 0, 1, &src_nb, &dst_nb);
    MPI_Comm_free(&ring);
    snprintf(line[nl++], sizeof line[0], "neighbours: got %d and %d, shift %d -> %d", nb_in[0],
             nb_in[1], src_nb, dst_nb);

    /* MPI_Comm_idup's new communicator, which comes when the request completes */
    MPI_Comm idup = MPI_COMM_NULL, idupi = MPI_COMM_NULL;
    MPI_Request dreq[2];
    MPI_Comm_idup(MPI_COMM_WORLD, &idup, &dreq[0]);
    MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &idupi, &dreq[1]);
    /* a handle that is no communicator until then, which a program may test
     * (mpi4py does): MPI_COMM_NULL, or already the new one */
    MPI_Comm pending = idup;
    MPI_Waitall(2, dreq, MPI_STATUSES_IGNORE);
    int pending_ok = pending == MPI_COMM_NULL || pending == idup;
    int dcmp = -1, dcmpi = -1, dsum = 0;
    MPI_Comm_compare(MPI_COMM_WORLD, idup, &dcmp);
    MPI_Comm_compare(MPI_COMM_WORLD, idupi, &dcmpi);
    MPI_Allreduce(&me, &dsum, 1, MPI_INT, MPI_SUM, idup);
    MPI_Comm_free(&idup);
    MPI_Comm_free(&idupi);
    snprintf(line[nl++], sizeof line[0], "idup: %s, %s, with info: %s, sum over it %d",
             pending_ok ? "null or new while pending" : "WRONG",
             dcmp == MPI_CONGRUENT ? "congruent" : "WRONG",
             dcmpi == MPI_CONGRUENT ? "congruent" : "WRONG", dsum);

    /* the nonblocking and persistent forms, where a rank has more neighbours
     * than the communicator has ranks (a periodic ring of one: itself twice) */
    MPI_Comm self_ring;
    int one[1] = {1}, self_in[2] = {-1, -1}, self_in2[2] = {-1, -1};
    MPI_Cart_create(MPI_COMM_SELF, 1, one, periods, 0, &self_ring);
    MPI_Request nbr[2];
    MPI_Ineighbor_alltoallw(nb_out, ones, nb_displs, nb_types, self_in, ones, nb_displs, nb_types,
                            self_ring, &nbr[0]);
    MPI_Neighbor_alltoallw_init(nb_out, ones, nb_displs, nb_types, self_in2, ones, nb_displs,
                                nb_types, self_ring, MPI_INFO_NULL, &nbr[1]);
    MPI_Start(&nbr[1]);
    MPI_Waitall(2, nbr, MPI_STATUSES_IGNORE);
    MPI_Request_free(&nbr[1]);
    MPI_Comm_free(&self_ring);
    snprintf(line[nl++], sizeof line[0], "neighbours of a ring of one: %s",
             self_in[0] == me && self_in[1] == me && self_in2[0] == me && self_in2[1] == me
                 ? "itself twice, both forms"
                 : "WRONG");

    /* a large-count user operation (MPI_Op_create_c) */
    MPI_Op op_c;
    MPI_Op_create_c(sum_c, 1, &op_c);
    long long lx[3] = {me, 1, 1LL << 40}, ly[3] = {0, 0, 0};
    MPI_Allreduce_c(lx, ly, 3, MPI_LONG_LONG, op_c, MPI_COMM_WORLD);
    MPI_Op_free(&op_c);
    snprintf(line[nl++], sizeof line[0],
             "large-count op: %lld %lld %s (saw MPI_LONG_LONG %s, length %lld), freed %s", ly[0],
             ly[1], ly[2] == np * (1LL << 40) ? "2^40 each" : "WRONG", op_c_saw_ll ? "yes" : "no",
             (long long)op_c_len, op_c == MPI_OP_NULL ? "null" : "not null");

    /* the Fortran statuses: a received message's status through each form and
     * back, MPI_PROC_NULL's, and the ignore sentinels refused */
    int fval = me, fgot = -1, fcount = -1, fcount08 = -1, fcount_f = -1;
    MPI_Sendrecv(&fval, 1, MPI_INT, right, 21, &fgot, 1, MPI_INT, left, 21, MPI_COMM_WORLD, &st);
    MPI_Fint fst[MPI_F_STATUS_SIZE], fst2[MPI_F_STATUS_SIZE];
    MPI_F08_status f08, f08b;
    MPI_Status back, back08, backf;
    int frc = MPI_Status_c2f(&st, fst);
    frc |= MPI_Status_f2c(fst, &back);
    frc |= MPI_Status_c2f08(&st, &f08);
    frc |= MPI_Status_f082c(&f08, &back08);
    frc |= MPI_Status_f2f08(fst, &f08b);
    frc |= MPI_Status_f082f(&f08b, fst2);
    frc |= MPI_Status_f2c(fst2, &backf);
    MPI_Get_count(&back, MPI_INT, &fcount);
    MPI_Get_count(&back08, MPI_INT, &fcount08);
    MPI_Get_count(&backf, MPI_INT, &fcount_f);
    int fields = fst[MPI_F_SOURCE] == left && fst[MPI_F_TAG] == 21 &&
                 fst[MPI_F_ERROR] == st.MPI_ERROR && f08.MPI_SOURCE == left && f08.MPI_TAG == 21 &&
                 f08b.MPI_SOURCE == left && back.MPI_SOURCE == left && back08.MPI_TAG == 21 &&
                 backf.MPI_SOURCE == left && backf.MPI_TAG == 21;
    MPI_Recv(&fgot, 1, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st);
    MPI_Status_c2f(&st, fst);
    MPI_Status_f2c(fst, &back);
    int e1 = MPI_Status_c2f(&st, MPI_F_STATUS_IGNORE), c1 = -1;
    int e2 = MPI_Status_f2c(MPI_F_STATUS_IGNORE, &back08), c2 = -1;
    int e3 = MPI_Status_c2f08(&st, MPI_F08_STATUS_IGNORE), c3 = -1;
    MPI_Error_class(e1, &c1);
    MPI_Error_class(e2, &c2);
    MPI_Error_class(e3, &c3);
    snprintf(line[nl++], sizeof line[0],
             "fortran status: %s, fields %s, counts %d %d %d; proc null %s; ignored %s",
             frc == MPI_SUCCESS ? "converted" : "FAILED", fields ? "right" : "WRONG", fcount,
             fcount08, fcount_f,
             back.MPI_SOURCE == MPI_PROC_NULL && back.MPI_TAG == MPI_ANY_TAG ? "kept" : "WRONG",
             c1 == MPI_ERR_ARG && c2 == MPI_ERR_ARG && c3 == MPI_ERR_ARG ? "MPI_ERR_ARG" : "other");

    /* rank 0 prints every rank's lines, in rank order */
    for (int r = 0; r < np; r++) {
        for (int i = 0; i < nl; i++) {
            char got[160];
            if (r == 0 && me == 0) memcpy(got, line[i], sizeof got);
            if (r > 0 && me == r) MPI_Send(line[i], 160, MPI_CHAR, 0, 11, MPI_COMM_WORLD);
            if (r > 0 && me == 0)
                MPI_Recv(got, 160, MPI_CHAR, r, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (me == 0) printf("%d %s\n", r, got);
        }
    }
    if (token != np * (np - 1) / 2 && me == 0) fail("the ring's token is wrong");
    MPI_Finalize();
    if (me == 0) printf("abi basics: %d ranks done\n", np);
    return 0;
}
