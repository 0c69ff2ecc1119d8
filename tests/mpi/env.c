/* Environment calls that benchmark harnesses (the OSU micro-benchmarks among
 * them) make around their measurements: version strings before and after
 * MPI_Init, MPI_Alloc_mem/MPI_Free_mem, the thread level, and the window
 * constructors' argument checks (under MPI_ERRORS_RETURN here; errors.c
 * checks a fatal one-sided error's one-line message). */
#include <stdint.h>
#include <string.h>

#include "mcheck.h"

#define EXPECT(code, call)                                                                         \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        CHECK(rc_ == (code), "%s returned %d, want %s", #call, rc_, #code);                        \
    } while (0)

static void versions(void)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = -1, v = 0, sv = -1;
    OK(MPI_Get_library_version(lib, &len));
    CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && (size_t)len == strlen(lib),
          "library version length %d for \"%s\"", len, lib);
    CHECK(strstr(lib, "courier") != NULL, "library version \"%s\"", lib);
    OK(MPI_Get_version(&v, &sv));
    CHECK(v == 5 && sv == 0, "version %d.%d", v, sv);
}

static void alloc_mem(int me, int np)
{
    /* Memory from MPI_Alloc_mem is ordinary memory: usable as a send and a
     * receive buffer, and a zero-byte request still returns a pointer. */
    enum { N = 100000 };
    int *a = NULL, *b = NULL;
    OK(MPI_Alloc_mem((MPI_Aint)(N * sizeof(int)), MPI_INFO_NULL, &a));
    OK(MPI_Alloc_mem((MPI_Aint)(N * sizeof(int)), MPI_INFO_NULL, &b));
    CHECK(a && b && a != b, "Alloc_mem returned %p and %p", (void *)a, (void *)b);
    for (int i = 0; i < N; i++) a[i] = me * N + i;
    int to = (me + 1) % np, from = (me + np - 1) % np;
    OK(MPI_Sendrecv(a, N, MPI_INT, to, 7, b, N, MPI_INT, from, 7, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++) CHECK(b[i] == from * N + i, "b[%d] = %d", i, b[i]);
    OK(MPI_Free_mem(a));
    OK(MPI_Free_mem(b));
    void *z = NULL;
    OK(MPI_Alloc_mem(0, MPI_INFO_NULL, &z));
    CHECK(z != NULL, "zero-byte Alloc_mem gave NULL");
    OK(MPI_Free_mem(z));

    /* 0x1c000001 is no info object: MPI_ERR_INFO; a failed call leaves the
     * pointer alone. */
    void *keep = &z;
    EXPECT(MPI_ERR_INFO, MPI_Alloc_mem(64, (MPI_Info)0x1c000001, &keep));
    CHECK(keep == (void *)&z, "a failed Alloc_mem changed the pointer");
    EXPECT(MPI_ERR_ARG, MPI_Alloc_mem(-1, MPI_INFO_NULL, &keep));
    CHECK(keep == (void *)&z, "a failed Alloc_mem changed the pointer");
}

static void windows(void)
{
    char buf[64];
    void *base = NULL;
    MPI_Win w = (MPI_Win)12345;
    EXPECT(MPI_ERR_SIZE, MPI_Win_create(buf, -1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    EXPECT(MPI_ERR_DISP, MPI_Win_create(buf, sizeof buf, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    EXPECT(MPI_ERR_COMM, MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_NULL, &w));
    EXPECT(MPI_ERR_ARG, MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, NULL, &w));
    CHECK(w == (MPI_Win)12345, "a failed constructor changed the handle to %d", w);
    EXPECT(MPI_ERR_WIN, MPI_Win_free(&w));
    w = MPI_WIN_NULL;
    EXPECT(MPI_ERR_WIN, MPI_Win_fence(0, w));
    /* a window made and freed, with an info object */
    MPI_Info info;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "no_locks", "true"));
    OK(MPI_Win_allocate(64, 8, info, MPI_COMM_WORLD, &base, &w));
    CHECK(base != NULL && w != MPI_WIN_NULL, "Win_allocate gave %p, %d", base, w);
    OK(MPI_Info_free(&info));
    MPI_Errhandler eh;
    OK(MPI_Win_get_errhandler(w, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "a window's handler is not fatal by default");
    OK(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN));
    EXPECT(MPI_ERR_RMA_FLAVOR, MPI_Win_attach(w, buf, sizeof buf));
    OK(MPI_Win_free(&w));
    CHECK(w == MPI_WIN_NULL, "Win_free left %d", w);
    int len = 0;
    char s[MPI_MAX_ERROR_STRING];
    OK(MPI_Error_string(MPI_ERR_RMA_SYNC, s, &len));
    CHECK(len > 0 && strstr(s, "epoch"), "error string \"%s\"", s);
}

int main(int argc, char **argv)
{
    int flag = 1;
    versions(); /* allowed before MPI_Init */
    OK(MPI_Initialized(&flag));
    CHECK(!flag, "initialized before MPI_Init");
    int provided = -1;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
    CHECK(provided == MPI_THREAD_FUNNELED, "provided %d", provided);
    int q = -1;
    OK(MPI_Query_thread(&q));
    CHECK(q == provided, "Query_thread %d, Init_thread provided %d", q, provided);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int me, np;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
    versions();
    alloc_mem(me, np);
    windows();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Finalize());
    versions(); /* and after MPI_Finalize */
    return 0;
}
