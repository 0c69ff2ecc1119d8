/* What the launcher reads in a program's file before it starts it: whether
 * courier run --sim may run its ranks as contexts of one process
 * (src/host/contexts.h), whether it is an iPSC host program (it calls the
 * host's NX/2 calls: include/courier/cube.h), and whether it was linked with another MPI library
 * than courier's (by the libraries it needs, or, linked in statically, by
 * that library's own symbols, or in a stripped program by the names of its
 * settings). The file is an ELF executable; only its headers, notes, dynamic
 * section, symbol tables and, when it has no symbol table, its loaded data
 * are read (pread, no mapping).
 *
 * Invariants: the answer is "contexts" only when every one of these holds,
 * and a file that cannot be read or parsed says no:
 *  - it carries courier's note (src/host/ctx_main.c): the start-up stub is
 *    linked, for this processor, without a sanitizer that tracks the stack;
 *  - it calls no pthread_create itself and loads no library known to start
 *    threads or to track stacks (OpenMP's, the sanitizers'): a rank's threads
 *    would run on while another rank's globals are in place. */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "foreign_mpi.h"
#include "progfile.h"

static bool rd(int fd, void *buf, size_t len, uint64_t off)
{
    return pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

/* Section sh's bytes (malloc'd, at most 64 MiB), or NULL. */
static void *section(int fd, const Elf64_Shdr *sh)
{
    if (sh->sh_type == SHT_NOBITS || sh->sh_size == 0 || sh->sh_size > (64u << 20)) return NULL;
    void *p = malloc(sh->sh_size);
    if (p && !rd(fd, p, sh->sh_size, sh->sh_offset)) {
        free(p);
        p = NULL;
    }
    return p;
}

static bool has_note(int fd, const Elf64_Shdr *sh)
{
    unsigned char *b = section(fd, sh);
    bool found = false;
    for (size_t off = 0; b && off + sizeof(Elf64_Nhdr) <= sh->sh_size && !found;) {
        Elf64_Nhdr n;
        memcpy(&n, b + off, sizeof n);
        size_t name = off + sizeof n, desc = name + ((n.n_namesz + 3) & ~3u);
        size_t next = desc + ((n.n_descsz + 3) & ~3u);
        if (next > sh->sh_size || next <= off) break;
        uint32_t v = 0;
        if (n.n_namesz == 8 && !memcmp(b + name, "courier", 8) && n.n_type == 1 &&
            n.n_descsz == 4) {
            memcpy(&v, b + desc, 4);
            found = v == 1;
        }
        off = next;
    }
    free(b);
    return found;
}

/* Call fn(name, arg) for each library that dynamic section sh[i] names
 * (DT_NEEDED) until it returns true; whether one did. */
static bool each_needed(int fd, const Elf64_Ehdr *eh, const Elf64_Shdr *sh, int i,
                        bool (*fn)(const char *name, void *arg), void *arg)
{
    if (sh[i].sh_type != SHT_DYNAMIC || sh[i].sh_link >= eh->e_shnum) return false;
    char *str = section(fd, &sh[sh[i].sh_link]);
    Elf64_Dyn *d = section(fd, &sh[i]);
    size_t strn = sh[sh[i].sh_link].sh_size;
    bool hit = false;
    for (size_t k = 0; str && d && k < sh[i].sh_size / sizeof *d && d[k].d_tag != DT_NULL && !hit;
         k++) {
        if (d[k].d_tag != DT_NEEDED || d[k].d_un.d_val >= strn) continue;
        const char *name = str + d[k].d_un.d_val;
        if (strnlen(name, strn - d[k].d_un.d_val) < strn - d[k].d_un.d_val) hit = fn(name, arg);
    }
    free(str);
    free(d);
    return hit;
}

/* Call fn(name, sym, arg) for each named symbol of symbol table sh[i] (of
 * type 'type': SHT_DYNSYM or SHT_SYMTAB) until it returns true; whether one did. */
static bool each_symbol(int fd, const Elf64_Ehdr *eh, const Elf64_Shdr *sh, int i, uint32_t type,
                        bool (*fn)(const char *name, const Elf64_Sym *sym, void *arg), void *arg)
{
    if (sh[i].sh_type != type || sh[i].sh_link >= eh->e_shnum) return false;
    char *str = section(fd, &sh[sh[i].sh_link]);
    Elf64_Sym *sym = section(fd, &sh[i]);
    size_t strn = sh[sh[i].sh_link].sh_size;
    bool hit = false;
    for (size_t k = 0; str && sym && k < sh[i].sh_size / sizeof *sym && !hit; k++) {
        size_t at = sym[k].st_name;
        if (at < strn && strnlen(str + at, strn - at) < strn - at) hit = fn(str + at, &sym[k], arg);
    }
    free(str);
    free(sym);
    return hit;
}

static const char *const no_contexts_libs[] = {"libgomp", "libomp",    "libiomp", "libasan",
                                               "libtsan", "libhwasan", "libmsan", "libtbb"};

/* Does name begin with one of the n prefixes of list? */
static bool has_prefix(const char *name, const char *const *list, size_t n)
{
    for (size_t j = 0; j < n; j++)
        if (!strncmp(name, list[j], strlen(list[j]))) return true;
    return false;
}

static bool no_contexts_lib(const char *name, void *arg)
{
    (void)arg;
    return has_prefix(name, no_contexts_libs, sizeof no_contexts_libs / sizeof *no_contexts_libs);
}

static bool calls_pthread_create(const char *name, const Elf64_Sym *sym, void *arg)
{
    (void)arg;
    return sym->st_shndx == SHN_UNDEF && !strcmp(name, "pthread_create");
}

/* The file's ELF header and section headers (*sh, malloc'd): fd, or -1 when
 * it cannot be read or is no ELF executable of this machine (*why says). */
static int elf_open(const char *path, Elf64_Ehdr *eh, Elf64_Shdr **sh, const char **why)
{
    *sh = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *why = "its file cannot be read";
        return -1;
    }
    *why = "it is not an ELF executable of this machine";
    if (!rd(fd, eh, sizeof *eh, 0) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
        eh->e_shnum == 0 || eh->e_shnum > 4096)
        goto fail;
#if defined(__x86_64__)
    if (eh->e_machine != EM_X86_64) goto fail;
#endif
    *sh = malloc((size_t)eh->e_shnum * sizeof **sh);
    if (!*sh || !rd(fd, *sh, (size_t)eh->e_shnum * sizeof **sh, eh->e_shoff)) goto fail;
    *why = NULL;
    return fd;
fail:
    free(*sh);
    *sh = NULL;
    close(fd);
    return -1;
}

/* The libraries contexts may share: the C, C++ and Fortran runtimes and
 * courier's own. Any other library's globals would be one for every rank
 * (only the program's and libcourier's data are copied per rank). */
static const char *const shared_ok_libs[] = {
    "libc.so",       "libm.so",      "libpthread.so",  "libdl.so",       "librt.so",
    "libgcc_s.so",   "libstdc++.so", "libgfortran.so", "libquadmath.so", "libcourier",
    "libmpi_abi.so", "ld-linux",     "libutil.so"};

typedef struct lib_name {
    char *lib;
    size_t len;
} lib_name;

static bool own_state_lib(const char *name, void *arg)
{
    if (has_prefix(name, shared_ok_libs, sizeof shared_ok_libs / sizeof *shared_ok_libs))
        return false;
    lib_name *n = arg;
    snprintf(n->lib, n->len, "%s", name);
    return true;
}

bool cr_progfile_other_lib(const char *path, char *lib, size_t len)
{
    const char *why;
    Elf64_Ehdr eh;
    Elf64_Shdr *sh;
    int fd = elf_open(path, &eh, &sh, &why);
    if (fd < 0) return false;
    lib_name n = {lib, len};
    bool hit = false;
    for (int i = 0; i < eh.e_shnum && !hit; i++)
        hit = each_needed(fd, &eh, sh, i, own_state_lib, &n);
    free(sh);
    close(fd);
    return hit;
}

const char *cr_progfile_contexts(const char *path)
{
    const char *why;
    Elf64_Ehdr eh;
    Elf64_Shdr *sh;
    int fd = elf_open(path, &eh, &sh, &why);
    if (fd < 0) return why;
    bool note = false;
    for (int i = 0; i < eh.e_shnum && !why; i++) {
        if (sh[i].sh_type == SHT_NOTE) note |= has_note(fd, &sh[i]);
        if (each_needed(fd, &eh, sh, i, no_contexts_lib, NULL))
            why = "it loads a library that starts threads or tracks stacks";
        else if (each_symbol(fd, &eh, sh, i, SHT_DYNSYM, calls_pthread_create, NULL))
            why = "it starts threads of its own (pthread_create)";
    }
    if (!why && !note) why = "it was not linked by courier-cc (no start-up stub)";
    free(sh);
    close(fd);
    return why;
}

/* Libraries of other MPI implementations: Open MPI's libmpi.so.40 and its
 * Fortran and C++ parts (libmpi_mpifh, libmpi_usempif08, libmpi_cxx), MPICH's
 * (and Intel MPI's, MVAPICH's) libmpi.so.12, libmpich, libmpicxx, libmpifort.
 * Not libmpi_abi (the MPI standard ABI's name, which courier may provide). */
static bool foreign_mpi(const char *lib)
{
    static const char *const pfx[] = {"libmpi.so", "libmpi_", "libmpich", "libmpicxx",
                                      "libmpifort"};
    if (!strncmp(lib, "libmpi_abi", 10)) return false;
    for (size_t j = 0; j < sizeof pfx / sizeof *pfx; j++)
        if (!strncmp(lib, pfx[j], strlen(pfx[j]))) return true;
    return false;
}

/* What a program's libraries say of MPI: the first other MPI's, and libcourier. */
typedef struct needs {
    char *lib;
    size_t len;
    bool courier;
} needs;

static bool note_mpi(const char *name, void *arg)
{
    needs *n = arg;
    if (!strncmp(name, "libcourier", 10)) n->courier = true;
    if (!n->lib[0] && foreign_mpi(name)) snprintf(n->lib, n->len, "%s", name);
    return false; /* every library: libcourier may come after */
}

/* Symbols only another MPI's own code defines or refers to (foreign_mpi.h). A
 * program linked with such a library statically has no library to name, but
 * keeps these in its symbol table unless it was stripped. */
static const char *foreign_symbol(const char *name)
{
    static const char *const sym[] = {CR_FOREIGN_MPI_SYMBOLS};
    for (size_t j = 0; j < sizeof sym / sizeof *sym; j++)
        if (!strcmp(name, sym[j])) return sym[j];
    return NULL;
}

/* A symbol of foreign_symbol's names: "its own copy of one, with NAME" into
 * the needs' lib. */
static bool note_symbol(const char *name, const Elf64_Sym *sym, void *arg)
{
    (void)sym;
    needs *n = arg;
    const char *f = foreign_symbol(name);
    if (f) snprintf(n->lib, n->len, "its own copy of one, with %s", f);
    return f != NULL;
}

/* A stripped program keeps no symbols, but another MPI linked into it keeps the
 * names of its settings among its read-only data: Open MPI's OMPI_MCA_...,
 * MPICH's (and those built on it) MPIR_CVAR_...; libcourier's own names
 * (COURIER_...) say the program is courier's whatever else it holds. Reads the
 * file's loaded data sections (not its code) in pieces that overlap by a
 * marker's length. */
static void scan_strings(int fd, const Elf64_Ehdr *eh, const Elf64_Shdr *sh, needs *n)
{
    static const char *const foreign[] = {"OMPI_MCA_", "MPIR_CVAR_"};
    static const char mine[] = "COURIER_UNEXPECTED_LIMIT";
    enum { PIECE = 1 << 20, OVERLAP = sizeof mine };
    char *buf = malloc(PIECE + OVERLAP);
    if (!buf) return;
    const char *found = NULL;
    for (int i = 0; i < eh->e_shnum && !n->courier; i++) {
        if (sh[i].sh_type != SHT_PROGBITS || !(sh[i].sh_flags & SHF_ALLOC) ||
            (sh[i].sh_flags & SHF_EXECINSTR))
            continue;
        for (uint64_t at = 0; at < sh[i].sh_size && !n->courier; at += PIECE) {
            size_t want = sh[i].sh_size - at > PIECE + OVERLAP ? PIECE + OVERLAP
                                                               : (size_t)(sh[i].sh_size - at);
            if (!rd(fd, buf, want, sh[i].sh_offset + at)) break;
            if (memmem(buf, want, mine, sizeof mine - 1)) n->courier = true;
            for (size_t j = 0; j < sizeof foreign / sizeof *foreign && !found; j++)
                if (memmem(buf, want, foreign[j], strlen(foreign[j]))) found = foreign[j];
        }
    }
    free(buf);
    if (found && !n->courier)
        snprintf(n->lib, n->len, "its own copy of one, stripped, naming %s settings", found);
}

bool cr_progfile_foreign_mpi(const char *path, char *lib, size_t len)
{
    const char *why;
    Elf64_Ehdr eh;
    Elf64_Shdr *sh;
    int fd = elf_open(path, &eh, &sh, &why);
    if (fd < 0) return false;
    needs n = {.lib = lib, .len = len};
    lib[0] = '\0';
    for (int i = 0; i < eh.e_shnum; i++) each_needed(fd, &eh, sh, i, note_mpi, &n);
    bool symtab = false;
    for (int i = 0; i < eh.e_shnum && !lib[0] && !n.courier; i++) {
        symtab |= sh[i].sh_type == SHT_SYMTAB;
        if (!each_symbol(fd, &eh, sh, i, SHT_SYMTAB, note_symbol, &n))
            each_symbol(fd, &eh, sh, i, SHT_DYNSYM, note_symbol, &n);
    }
    if (!lib[0] && !n.courier && !symtab) scan_strings(fd, &eh, sh, &n);
    bool foreign = lib[0] && !n.courier;
    free(sh);
    close(fd);
    return foreign;
}

/* The calls only an iPSC host program makes (cube.h), C's and Fortran's names. */
static bool host_call(const char *name, const Elf64_Sym *sym, void *arg)
{
    (void)arg;
    static const char *const calls[] = {
        "load",  "setpid",  "getcube",  "relcube",  "attachcube",  "waitall",  "killcube",
        "load_", "setpid_", "getcube_", "relcube_", "attachcube_", "waitall_", "killcube_"};
    if (sym->st_shndx != SHN_UNDEF) return false;
    for (size_t j = 0; j < sizeof calls / sizeof *calls; j++)
        if (!strcmp(name, calls[j])) return true;
    return false;
}

bool cr_progfile_nx_host(const char *path)
{
    const char *why;
    Elf64_Ehdr eh;
    Elf64_Shdr *sh;
    int fd = elf_open(path, &eh, &sh, &why);
    if (fd < 0) return false;
    bool host = false;
    for (int i = 0; i < eh.e_shnum && !host; i++)
        host = each_symbol(fd, &eh, sh, i, SHT_DYNSYM, host_call, NULL);
    free(sh);
    close(fd);
    return host;
}
