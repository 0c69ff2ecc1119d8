/* Constants that come back inside arrays and attribute values, for both
 * headers (tests/abi/CMakeLists.txt builds it against courier's mpi.h and
 * against the MPI-5 ABI's; the two builds must print the same lines): the
 * predefined attributes (MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_APPNUM,
 * MPI_UNIVERSE_SIZE, MPI_LASTUSEDCODE, a window's flavor and model) beside
 * the program's own attribute values, which come back untouched, the
 * MPI_BUFFER_AUTOMATIC detached, the integers and datatypes of MPI_Type_get_contents (a darray's
 * distributions and orders, a subarray's order, the predefined type under a vector),
 * MPI_Register_datarep's functions (called with the ABI's datatypes), and
 * MPI_Comm_spawn's error codes. Only what MPI says of each is printed, never
 * a value that differs between the headers. */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int me;

static void say(const char *what, int ok)
{
    if (me == 0) printf("%s: %s\n", what, ok ? "ok" : "WRONG");
}

static int *attr(MPI_Comm c, int kv)
{
    int *v = NULL, flag = 0;
    if (MPI_Comm_get_attr(c, kv, &v, &flag) != MPI_SUCCESS || !flag) return NULL;
    return v;
}

static void attributes(int np)
{
    int *tag_ub = attr(MPI_COMM_WORLD, MPI_TAG_UB), *host = attr(MPI_COMM_WORLD, MPI_HOST);
    int *io = attr(MPI_COMM_WORLD, MPI_IO), *app = attr(MPI_COMM_WORLD, MPI_APPNUM);
    int *uni = attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE);
    say("MPI_TAG_UB at least 32767", tag_ub && *tag_ub >= 32767);
    say("MPI_HOST is MPI_PROC_NULL or a rank",
        host && (*host == MPI_PROC_NULL || (*host >= 0 && *host < np)));
    say("MPI_IO is MPI_ANY_SOURCE or a rank",
        io && (*io == MPI_ANY_SOURCE || (*io >= 0 && *io < np)));
    say("MPI_APPNUM is 0", app && *app == 0);
    say("MPI_UNIVERSE_SIZE at least the job's size", uni && *uni >= np);
    int cls, code;
    MPI_Add_error_class(&cls);
    MPI_Add_error_code(cls, &code);
    int *last = attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE);
    say("MPI_LASTUSEDCODE is the code just added", last && *last == code);
    int got = -1;
    MPI_Error_class(code, &got);
    say("its class is the class just added", got == cls);

    int buf[4];
    MPI_Win w;
    MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    int *flavor = NULL, *model = NULL, flag = 0, flag2 = 0;
    MPI_Win_get_attr(w, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    MPI_Win_get_attr(w, MPI_WIN_MODEL, &model, &flag2);
    say("MPI_Win_create's flavor is MPI_WIN_FLAVOR_CREATE",
        flag && *flavor == MPI_WIN_FLAVOR_CREATE);
    say("the window's model is MPI_WIN_UNIFIED or MPI_WIN_SEPARATE",
        flag2 && (*model == MPI_WIN_UNIFIED || *model == MPI_WIN_SEPARATE));
    MPI_Win_free(&w);
    void *base;
    MPI_Win_allocate(16, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w);
    MPI_Win_get_attr(w, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    say("MPI_Win_allocate's flavor is MPI_WIN_FLAVOR_ALLOCATE",
        flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE);

    /* The program's own attributes come back as they were set, whatever they
     * hold: here a number that is no address (mpi4py's nopython keyvals) */
    void *const number = (void *)(intptr_t)123456789;
    int ck, wk, tk;
    void *cv = NULL, *wv = NULL, *tv = NULL;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ck, NULL);
    MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &wk, NULL);
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tk, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, ck, number);
    MPI_Win_set_attr(w, wk, number);
    MPI_Type_set_attr(MPI_INT, tk, number);
    int f1 = 0, f2 = 0, f3 = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, ck, &cv, &f1);
    MPI_Win_get_attr(w, wk, &wv, &f2);
    MPI_Type_get_attr(MPI_INT, tk, &tv, &f3);
    say("the program's attribute values (a number) back from a communicator, window, datatype",
        f1 && f2 && f3 && cv == number && wv == number && tv == number);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, ck);
    MPI_Type_delete_attr(MPI_INT, tk);
    MPI_Comm_free_keyval(&ck);
    MPI_Type_free_keyval(&tk);
    MPI_Win_free(&w);
    MPI_Win_free_keyval(&wk);
}

/* MPI_BUFFER_AUTOMATIC attached comes back from the detach calls as itself */
static void automatic(void)
{
    void *got = NULL, *got2 = NULL;
    int size = -1, size2 = -1;
    MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0);
    MPI_Buffer_detach(&got, &size);
    MPI_Comm_attach_buffer(MPI_COMM_WORLD, MPI_BUFFER_AUTOMATIC, 0);
    MPI_Comm_detach_buffer(MPI_COMM_WORLD, &got2, &size2);
    say("MPI_BUFFER_AUTOMATIC back from MPI_Buffer_detach and MPI_Comm_detach_buffer",
        got == MPI_BUFFER_AUTOMATIC && got2 == MPI_BUFFER_AUTOMATIC && size == 0 && size2 == 0);
}

/* A status the call leaves as the program gave it (a probe that found
 * nothing); the program's own values in its fields; MPI_PROC_NULL through
 * MPI_Group_translate_ranks */
static void statuses(void)
{
    MPI_Status st;
    st.MPI_SOURCE = 7;
    st.MPI_TAG = 8;
    st.MPI_ERROR = 9;
    int flag = 1;
    MPI_Iprobe(MPI_ANY_SOURCE, 4242, MPI_COMM_WORLD, &flag, &st);
    say("a probe that finds nothing leaves the status alone",
        !flag && st.MPI_SOURCE == 7 && st.MPI_TAG == 8 && st.MPI_ERROR == 9);
    int src = -1, tag = -1, err = -1;
    MPI_Status_set_source(&st, 11);
    MPI_Status_set_tag(&st, 22);
    MPI_Status_set_error(&st, 333);
    MPI_Status_get_source(&st, &src);
    MPI_Status_get_tag(&st, &tag);
    MPI_Status_get_error(&st, &err);
    say("the status field calls keep what they are given (an error field of 333)",
        src == 11 && tag == 22 && err == 333 && st.MPI_ERROR == 333);
    MPI_Group g;
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    int in[3] = {MPI_PROC_NULL, 0, MPI_PROC_NULL}, out[3] = {-7, -7, -7};
    MPI_Group_translate_ranks(g, 3, in, g, out);
    MPI_Group_free(&g);
    say("MPI_Group_translate_ranks gives MPI_PROC_NULL for MPI_PROC_NULL",
        out[0] == MPI_PROC_NULL && out[1] == 0 && out[2] == MPI_PROC_NULL);
}

static void contents(int np)
{
    int gs[3] = {4 * np, 6, 5},
        dist[3] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE};
    int darg[3] = {MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_DISTRIBUTE_DFLT_DARG}, ps[3] = {np, 1, 1};
    MPI_Datatype t, got[2];
    int rc = MPI_Type_create_darray(np, me, 3, gs, dist, darg, ps, MPI_ORDER_FORTRAN, MPI_INT, &t);
    say("MPI_Type_create_darray with each distribution", rc == MPI_SUCCESS);
    if (rc) return;
    int ni, na, nd, comb, ints[32];
    MPI_Aint addrs[4];
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    say("its combiner is MPI_COMBINER_DARRAY", comb == MPI_COMBINER_DARRAY && ni == 16);
    MPI_Type_get_contents(t, 32, 4, 2, ints, addrs, got);
    say("its distributions", ints[6] == MPI_DISTRIBUTE_BLOCK && ints[7] == MPI_DISTRIBUTE_CYCLIC &&
                                 ints[8] == MPI_DISTRIBUTE_NONE);
    say("its distribution arguments", ints[9] == MPI_DISTRIBUTE_DFLT_DARG && ints[10] == 2 &&
                                          ints[11] == MPI_DISTRIBUTE_DFLT_DARG);
    say("its order", ints[15] == MPI_ORDER_FORTRAN);
    say("its old type is MPI_INT", got[0] == MPI_INT);
    int size = 0;
    MPI_Type_size(t, &size);
    say("its size", size == 4 * 6 * 5 * (int)sizeof(int));
    MPI_Type_free(&t);

    int sz[2] = {8, 8}, sub[2] = {2, 3}, st[2] = {1, 1};
    MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_DOUBLE, &t);
    MPI_Type_get_contents(t, 32, 4, 2, ints, addrs, got);
    say("a subarray's order and old type", ints[7] == MPI_ORDER_C && got[0] == MPI_DOUBLE);
    MPI_Count ci, ca, cl, cd;
    MPI_Count bigs[1];
    MPI_Type_get_envelope_c(t, &ci, &ca, &cl, &cd, &comb);
    MPI_Type_get_contents_c(t, 32, 4, 1, 2, ints, addrs, bigs, got);
    say("the same through MPI_Type_get_contents_c", ints[7] == MPI_ORDER_C && got[0] == MPI_DOUBLE);
    MPI_Type_free(&t);

    /* with a size past INT_MAX the sizes are large counts (MPI-4.1 §5.1.13):
     * a subarray's order is its second integer, a darray's distributions
     * follow ndims */
    MPI_Count lsz[1] = {(MPI_Count)INT_MAX + 9}, lsub[1] = {2}, lst[1] = {1}, large[6];
    MPI_Type_create_subarray_c(1, lsz, lsub, lst, MPI_ORDER_FORTRAN, MPI_BYTE, &t);
    MPI_Type_get_contents_c(t, 32, 4, 6, 2, ints, addrs, large, got);
    say("a large subarray's order", ints[0] == 1 && ints[1] == MPI_ORDER_FORTRAN);
    MPI_Type_free(&t);
    int ldist[1] = {MPI_DISTRIBUTE_CYCLIC}, ldarg[1] = {MPI_DISTRIBUTE_DFLT_DARG}, lps[1] = {np};
    MPI_Type_create_darray_c(np, me, 1, lsz, ldist, ldarg, lps, MPI_ORDER_C, MPI_BYTE, &t);
    MPI_Type_get_contents_c(t, 32, 4, 6, 2, ints, addrs, large, got);
    say("a large darray's distribution, its argument and order",
        ints[3] == MPI_DISTRIBUTE_CYCLIC && ints[4] == MPI_DISTRIBUTE_DFLT_DARG &&
            ints[6] == MPI_ORDER_C && large[0] == lsz[0]);
    MPI_Type_free(&t);

    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_FLOAT, &pair);
    MPI_Type_vector(3, 1, 2, pair, &t);
    MPI_Type_get_contents(t, 32, 4, 2, ints, addrs, got);
    MPI_Datatype inner[2];
    MPI_Type_get_contents(got[0], 32, 4, 2, ints, addrs, inner);
    say("a vector of a contiguous type of MPI_FLOAT", inner[0] == MPI_FLOAT);
    MPI_Type_free(&got[0]);
    MPI_Type_free(&t);
    MPI_Type_free(&pair);
}

/* A data representation whose file form is the native one, byte for byte:
 * what matters is what its functions are called with. */
static int conv_calls, conv_right;
static int conv(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset pos,
                void *extra, int writing)
{
    conv_calls++;
    conv_right += dt == MPI_INT && *(int *)extra == 7;
    int n = count * (int)sizeof(int);
    (void)pos;
    if (writing)
        memcpy(filebuf, userbuf, (size_t)n);
    else
        memcpy(userbuf, filebuf, (size_t)n);
    return MPI_SUCCESS;
}
static int conv_read(void *u, MPI_Datatype dt, int count, void *f, MPI_Offset pos, void *extra)
{
    return conv(u, dt, count, f, pos, extra, 0);
}
static int conv_write(void *u, MPI_Datatype dt, int count, void *f, MPI_Offset pos, void *extra)
{
    return conv(u, dt, count, f, pos, extra, 1);
}
static int extent_calls, extent_right;
static int file_extent(MPI_Datatype dt, MPI_Aint *extent, void *extra)
{
    extent_calls++;
    extent_right += dt == MPI_INT && *(int *)extra == 7;
    *extent = sizeof(int);
    return MPI_SUCCESS;
}

static void datarep(void)
{
    static int seven = 7;
    int rc = MPI_Register_datarep("abi_consts_rep", conv_read, conv_write, file_extent, &seven);
    say("MPI_Register_datarep", rc == MPI_SUCCESS);
    if (me != 0 || rc) return;
    char path[64];
    snprintf(path, sizeof path, "/tmp/abi_consts.%d", (int)getpid());
    MPI_File f;
    rc = MPI_File_open(MPI_COMM_SELF, path,
                       MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                       &f);
    if (rc) {
        say("MPI_File_open", 0);
        return;
    }
    MPI_File_set_view(f, 0, MPI_INT, MPI_INT, "abi_consts_rep", MPI_INFO_NULL);
    int out[5] = {1, 2, 3, 4, 5}, in[5] = {0};
    MPI_File_write_at(f, 0, out, 5, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_read_at(f, 0, in, 5, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_close(&f);
    say("the datarep's data back", !memcmp(in, out, sizeof in));
    say("its conversions called with MPI_INT and the extra state",
        conv_calls > 0 && conv_right == conv_calls);
    say("its extent function, where called, with MPI_INT", extent_right == extent_calls);
}

/* A command that cannot start: the root's error codes are MPI_ERR_SPAWN. */
static void spawn_codes(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm kids = MPI_COMM_NULL;
    int codes[2] = {-5, -5};
    char *argv[] = {NULL};
    int rc = MPI_Comm_spawn("/nonexistent/abi_consts_kid", argv, 2, MPI_INFO_NULL, 0,
                            MPI_COMM_WORLD, &kids, codes);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    say("a spawn that fails: MPI_ERR_SPAWN", cls == MPI_ERR_SPAWN);
    say("its error codes at the root", codes[0] == MPI_ERR_SPAWN && codes[1] == MPI_ERR_SPAWN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    int np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    attributes(np);
    automatic();
    statuses();
    contents(np);
    datarep();
    spawn_codes();
    MPI_Finalize();
    return 0;
}
