/* MPI_COMM_SPAWN and MPI_COMM_SPAWN_MULTIPLE for mpif.h and `use mpi` (and,
 * through these entry points, mpi_f08's module procedures): their arguments
 * are arrays of blank-padded strings, which C takes as NULL-terminated arrays
 * of C strings, so tools/fortran_gen.awk leaves them to this file.
 *
 * Invariants:
 *  - an ARGV array ends at its first all-blank element (MPI-4.1 11.8.2); each
 *    string loses its trailing blanks (and the command its leading ones), as
 *    every string going in does (cr_fstr_in);
 *  - MPI_ARGV_NULL and MPI_ARGVS_NULL are recognised by address: they are the
 *    common blocks /MPI_FORTRAN_ARGV_NULL/ and /MPI_FORTRAN_ARGVS_NULL/, one
 *    character each, defined here read-only (only their addresses count),
 *    aligned as gfortran may align a common block (64 bytes with
 *    -march=native: the linker warns of a smaller one);
 *    MPI_ERRCODES_IGNORE is mpif.h's sentinel (cr_fbuf's table);
 *  - the commands and arguments are read only at the root (they are
 *    significant only there, and another rank's may be anything); the C copies
 *    live for the call, and the calls are the C ones, with their checks and
 *    error handlers. */
#include <stdlib.h>

#include "fortran.h"

CR_FEXPORT _Alignas(64) const char mpi_fortran_argv_null_[1] = {' '};
CR_FEXPORT _Alignas(64) const char mpi_fortran_argvs_null_[1] = {' '};

/* A NULL-terminated array of C strings from the Fortran strings f[0],
 * f[stride], ... (each len characters), up to the first blank one; freed
 * with free_argv. NULL: out of memory (*nomem set). */
static char **argv_in(const char *f, size_t len, size_t stride, bool *nomem)
{
    size_t n = 0;
    for (;; n++) {
        const char *s = f + n * stride * len;
        size_t k = 0;
        while (k < len && s[k] == ' ') k++;
        if (k == len) break;
    }
    char **v = calloc(n + 1, sizeof *v);
    for (size_t i = 0; v && i < n; i++) {
        const char *s = f + i * stride * len;
        size_t l = len;
        while (l > 0 && s[l - 1] == ' ') l--;
        if (!(v[i] = malloc(l + 1))) {
            while (i-- > 0) free(v[i]);
            free(v);
            v = NULL;
            break;
        }
        memcpy(v[i], s, l);
        v[i][l] = '\0';
    }
    if (!v) *nomem = true;
    return v;
}

static void free_argv(char **v)
{
    for (size_t i = 0; v && v[i]; i++) free(v[i]);
    free(v);
}

static bool at_root(MPI_Fint comm, MPI_Fint root)
{
    int rank = -1;
    return PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && rank == root;
}

static int *errcodes(MPI_Fint *e)
{
    return e == mpi_fortran_errcodes_ignore_ ? MPI_ERRCODES_IGNORE : e;
}

typedef int spawn_fn(const char *, char *[], int, MPI_Info, int, MPI_Comm, MPI_Comm *, int[]);

static int spawn(spawn_fn *fn, const char *command, const char *argv, MPI_Fint maxprocs,
                 MPI_Fint info, MPI_Fint root, MPI_Fint comm, MPI_Fint *intercomm, MPI_Fint *codes,
                 size_t command_len, size_t argv_len)
{
    char *cmd = NULL, **av = NULL;
    bool nomem = false;
    if (at_root(comm, root)) {
        if (!(cmd = cr_fstr_in(command, command_len))) nomem = true;
        if (argv != mpi_fortran_argv_null_ && !nomem) av = argv_in(argv, argv_len, 1, &nomem);
    }
    int rc = nomem ? MPI_ERR_NO_MEM
                   : fn(cmd ? cmd : "", av, maxprocs, info, root, comm, intercomm, errcodes(codes));
    free(cmd);
    free_argv(av);
    return rc;
}

#define SPAWN_PAIR(pfx, PFX)                                                                       \
    CR_FEXPORT void pfx##mpi_comm_spawn_(const char *command, const char *argv,                    \
                                         MPI_Fint *maxprocs, MPI_Fint *info, MPI_Fint *root,       \
                                         MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *codes,     \
                                         MPI_Fint *ierr, size_t command_len, size_t argv_len)      \
    {                                                                                              \
        *ierr = spawn(PFX##MPI_Comm_spawn, command, argv, *maxprocs, *info, *root, *comm,          \
                      intercomm, codes, command_len, argv_len);                                    \
    }
SPAWN_PAIR(, )
SPAWN_PAIR(p, P)

typedef int spawn_multiple_fn(int, char *[], char **[], const int[], const MPI_Info[], int,
                              MPI_Comm, MPI_Comm *, int[]);

/* ARRAY_OF_ARGV(COUNT, *): command i's arguments are (i, 1), (i, 2), ...,
 * COUNT strings apart. */
static int spawn_multiple(spawn_multiple_fn *fn, MPI_Fint count, const char *commands,
                          const char *argvs, const MPI_Fint *maxprocs, const MPI_Fint *infos,
                          MPI_Fint root, MPI_Fint comm, MPI_Fint *intercomm, MPI_Fint *codes,
                          size_t commands_len, size_t argvs_len)
{
    char **cmds = NULL, ***avs = NULL;
    bool nomem = false;
    if (count > 0 && at_root(comm, root)) {
        cmds = calloc((size_t)count, sizeof *cmds);
        if (argvs != mpi_fortran_argvs_null_) avs = calloc((size_t)count, sizeof *avs);
        nomem = !cmds || (argvs != mpi_fortran_argvs_null_ && !avs);
        for (MPI_Fint i = 0; i < count && !nomem; i++) {
            if (!(cmds[i] = cr_fstr_in(commands + (size_t)i * commands_len, commands_len)))
                nomem = true;
            if (avs && !nomem)
                avs[i] = argv_in(argvs + (size_t)i * argvs_len, argvs_len, (size_t)count, &nomem);
        }
    }
    int rc = nomem ? MPI_ERR_NO_MEM
                   : fn(count, cmds, avs, maxprocs, infos, root, comm, intercomm, errcodes(codes));
    for (MPI_Fint i = 0; i < count && (cmds || avs); i++) {
        if (cmds) free(cmds[i]);
        if (avs) free_argv(avs[i]);
    }
    free(cmds);
    free(avs);
    return rc;
}

#define SPAWN_MULTIPLE_PAIR(pfx, PFX)                                                              \
    CR_FEXPORT void pfx##mpi_comm_spawn_multiple_(                                                 \
        MPI_Fint *count, const char *commands, const char *argvs, MPI_Fint *maxprocs,              \
        MPI_Fint *infos, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *intercomm, MPI_Fint *codes,     \
        MPI_Fint *ierr, size_t commands_len, size_t argvs_len)                                     \
    {                                                                                              \
        *ierr = spawn_multiple(PFX##MPI_Comm_spawn_multiple, *count, commands, argvs, maxprocs,    \
                               infos, *root, *comm, intercomm, codes, commands_len, argvs_len);    \
    }
SPAWN_MULTIPLE_PAIR(, )
SPAWN_MULTIPLE_PAIR(p, P)
