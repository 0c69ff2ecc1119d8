/* courier run --check=leaks: what a program leaves at MPI_Finalize, and the
 * correct twin. Two ranks; argv[1] says which:
 *   bad  rank 0 leaves a receive pending, a communicator, a group, a
 *        datatype, an info object and an error handler allocated, and sends
 *        rank 1 a message nobody receives; the report names each (rank 1's:
 *        the message, with the sender's call; the handler with where it
 *        was made); unchecked it runs to its end and says so;
 *   bad_info  an info object made and never freed, not even after
 *        MPI_Finalize (MPI-4 allows that): reported at the end of the rank;
 *   bad_op  a user operation made by MPI_Op_create and never freed;
 *   bad_keyval an attribute key made by MPI_Comm_create_keyval and never
 *           freed (another one made and freed);
 *   bad_igather  rank 1 starts an MPI_Igather with root 0 and completes it,
 *        rank 0 never calls it: its agreement record (with coll) or its data
 *        stays unreceived at rank 0;
 *   bad_freed  rank 0 sends on a duplicate of MPI_COMM_WORLD that rank 1
 *        frees without receiving: the report names that communicator;
 *   ok_freesend  rank 0's MPI_Isend request freed while active (MPI allows
 *        it), received by rank 1: complete at MPI_Finalize, not a leak, also
 *        under sync (where it completes after the free);
 *   ok   the same objects (and a window, a persistent request, an info from
 *        MPI_Comm_get_info) made, used and freed; prints "check leaks ok". */
#include <stdbool.h>
#include <string.h>

#include "../mpi/mcheck.h"

static void on_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
}

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

int main(int argc, char **argv)
{
    int me, x[8] = {0}, y[8];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    bool bad = argc > 1 && !strcmp(argv[1], "bad");
    if (argc > 1 && !strcmp(argv[1], "bad_info")) {
        MPI_Info lost;
        OK(MPI_Info_create(&lost));
        OK(MPI_Info_set(lost, "courier_check", "1"));
        MPI_Finalize();
        if (me == 0) printf("check leaks: bad_info ran without a report\n");
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "bad_op")) {
        MPI_Op op;
        OK(MPI_Op_create(sum_fn, 1, &op));
        OK(MPI_Allreduce(&me, y, 1, MPI_INT, op, MPI_COMM_WORLD));
        MPI_Finalize();
        if (me == 0) printf("check leaks: bad_op ran without a report\n");
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "bad_keyval")) {
        int kv, kw;
        OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kw, NULL));
        OK(MPI_Comm_free_keyval(&kw)); /* freed: not a leak */
        OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kv, NULL));
        MPI_Finalize();
        if (me == 0) printf("check leaks: bad_keyval ran without a report\n");
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "bad_igather")) {
        MPI_Request q;
        if (me == 1) {
            OK(MPI_Igather(&me, 1, MPI_INT, y, 1, MPI_INT, 0, MPI_COMM_WORLD, &q));
            OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        }
        MPI_Finalize();
        if (me == 0) printf("check leaks: bad_igather ran without a report\n");
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "ok_freesend")) {
        /* a send's request freed while active (MPI allows it): under sync the
         * send completes only when rank 1's receive matches it, after the
         * free; it is complete by MPI_Finalize, so no leak */
        MPI_Request q;
        if (me == 0) {
            OK(MPI_Isend(x, 2, MPI_INT, 1, 3, MPI_COMM_WORLD, &q));
            OK(MPI_Request_free(&q));
        } else {
            OK(MPI_Recv(y, 2, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_Finalize();
        if (me == 0) printf("check leaks ok_freesend ok\n");
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "bad_freed")) {
        MPI_Comm d;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        if (me == 0) OK(MPI_Send(x, 2, MPI_INT, 1, 9, d));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        OK(MPI_Comm_free(&d));
        MPI_Finalize();
        if (me == 0) printf("check leaks: bad_freed ran without a report\n");
        return 0;
    }
    MPI_Comm dup;
    MPI_Group g, g1;
    MPI_Datatype vec;
    MPI_Request r;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    OK(MPI_Comm_group(MPI_COMM_WORLD, &g));
    int zero = 0;
    OK(MPI_Group_incl(g, 1, &zero, &g1));
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    MPI_Info info;
    MPI_Errhandler eh;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "courier_check", "1"));
    OK(MPI_Comm_create_errhandler(on_error, &eh));
    if (bad) {
        if (me == 0) {
            OK(MPI_Irecv(y, 1, MPI_INT, 1, 77, MPI_COMM_WORLD, &r));
            OK(MPI_Send(x, 2, MPI_INT, 1, 9, MPI_COMM_WORLD));
        } else {
            OK(MPI_Comm_free(&dup));
            OK(MPI_Group_free(&g1));
            OK(MPI_Type_free(&vec));
            OK(MPI_Info_free(&info));
            OK(MPI_Errhandler_free(&eh));
        }
        OK(MPI_Group_free(&g));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (me == 0) printf("check leaks: bad ran without a report\n");
    } else {
        MPI_Win w;
        OK(MPI_Win_create(x, sizeof x, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w));
        OK(MPI_Win_fence(0, w));
        OK(MPI_Win_fence(0, w));
        OK(MPI_Win_free(&w));
        MPI_Request p;
        if (me == 0)
            OK(MPI_Send_init(x, 1, vec, 1, 5, dup, &p));
        else
            OK(MPI_Recv_init(y, 2, MPI_INT, 0, 5, dup, &p));
        for (int k = 0; k < 3; k++) {
            OK(MPI_Start(&p));
            OK(MPI_Wait(&p, MPI_STATUS_IGNORE));
        }
        OK(MPI_Request_free(&p));
        MPI_Op op;
        OK(MPI_Op_create(sum_fn, 1, &op));
        OK(MPI_Iallreduce(&me, y, 1, MPI_INT, op, MPI_COMM_WORLD, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Op_free(&op));
        OK(MPI_Igather(&me, 1, MPI_INT, y, 1, MPI_INT, 0, MPI_COMM_WORLD, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Irecv(y, 1, MPI_INT, 1 - me, 6, MPI_COMM_WORLD, &r));
        OK(MPI_Send(x, 1, MPI_INT, 1 - me, 6, MPI_COMM_WORLD));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Comm_free(&dup));
        OK(MPI_Group_free(&g1));
        OK(MPI_Group_free(&g));
        OK(MPI_Type_free(&vec));
        OK(MPI_Info_free(&info));
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
        OK(MPI_Errhandler_free(&eh));
        MPI_Info used;
        OK(MPI_Comm_get_info(MPI_COMM_WORLD, &used));
        OK(MPI_Info_free(&used));
        if (me == 0) printf("check leaks ok\n");
    }
    MPI_Finalize();
    return 0;
}
