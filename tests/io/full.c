/* MPI-IO on a full file system (tests/io/full.sh mounts a 1 MiB tmpfs at
 * DIR): writes past the space left fail with MPI_ERR_NO_SPACE through the
 * file's handler, whose message names the call, the file and the rank, and
 * what was written before stays intact. */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../mpi/mcheck.h"

static int calls, last;
static char msg[1024], callname[128];
static void on_error(MPI_File *f, int *code, ...)
{
    (void)f;
    va_list ap;
    va_start(ap, code);
    const char *call = va_arg(ap, const char *), *m = va_arg(ap, const char *);
    va_end(ap);
    snprintf(callname, sizeof callname, "%s", call);
    snprintf(msg, sizeof msg, "%s", m);
    calls++;
    last = *code;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np, cls;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(argc >= 2, "usage: full DIR");
    char p[600];
    snprintf(p, sizeof p, "%s/full.dat", argv[1]);
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Errhandler eh;
    OK(MPI_File_create_errhandler(on_error, &eh));
    OK(MPI_File_set_errhandler(fh, eh));
    /* 64 KiB each that fits */
    enum { HEAD = 64 << 10, BIG = 4 << 20 };
    char *head = malloc(HEAD), *big = malloc(BIG), *back = malloc(HEAD);
    memset(head, 'A' + me, HEAD);
    memset(big, 'z', BIG);
    int rc =
        MPI_File_write_at_all(fh, (MPI_Offset)HEAD * me, head, HEAD, MPI_BYTE, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "the heads: error %d: %s", rc, msg);
    MPI_Barrier(MPI_COMM_WORLD); /* both heads are in before a write fills the disk */
    /* independent: 4 MiB does not fit */
    rc = MPI_File_write_at(fh, (MPI_Offset)HEAD * np + (MPI_Offset)BIG * me, big, BIG, MPI_BYTE,
                           MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_NO_SPACE, "independent write: class %d (%s)", cls, msg);
    CHECK(calls == 1 && last == rc, "the handler saw it (%d calls)", calls);
    CHECK(!strcmp(callname, "MPI_File_write_at"), "call named: %s", callname);
    CHECK(strstr(msg, "full.dat") && strstr(msg, "rank "), "message names file and rank: %s", msg);
    /* collective: the same through every rank's handler */
    rc = MPI_File_write_at_all(fh, (MPI_Offset)HEAD * np + (MPI_Offset)BIG * me, big, BIG, MPI_BYTE,
                               MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_NO_SPACE, "collective write: class %d (%s)", cls, msg);
    CHECK(calls == 2, "the handler saw the collective's (%d calls)", calls);
    rc = MPI_File_preallocate(fh, 64 << 20);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_NO_SPACE, "preallocate: class %d (%s)", cls, msg);
    /* nothing corrupted: the heads read back */
    OK(MPI_File_set_size(fh, (MPI_Offset)HEAD * np));
    for (int r = 0; r < np; r++) {
        MPI_Status st;
        OK(MPI_File_read_at(fh, (MPI_Offset)HEAD * r, back, HEAD, MPI_BYTE, &st));
        int n;
        MPI_Get_count(&st, MPI_BYTE, &n);
        CHECK(n == HEAD, "head %d: %d bytes", r, n);
        for (int i = 0; i < HEAD; i++) CHECK(back[i] == 'A' + r, "head %d byte %d", r, i);
    }
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) OK(MPI_File_delete(p, MPI_INFO_NULL));
    if (me == 0) printf("io full: %d ranks ok\n", np);
    free(head);
    free(big);
    free(back);
    MPI_Finalize();
    return 0;
}
