/* What the launcher reads in a program's file before it starts it: whether
 * courier run --sim may run its ranks as contexts of one process
 * (src/host/contexts.h). The file is an ELF executable; only its headers, its
 * notes and its dynamic symbols are read (pread, no mapping).
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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static const char *const no_contexts_libs[] = {"libgomp", "libomp",    "libiomp", "libasan",
                                               "libtsan", "libhwasan", "libmsan", "libtbb"};

const char *cr_progfile_contexts(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "its file cannot be read";
    const char *why = "it is not an ELF executable of this machine";
    Elf64_Ehdr eh;
    Elf64_Shdr *sh = NULL;
    if (!rd(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
        eh.e_shnum == 0 || eh.e_shnum > 4096)
        goto out;
#if defined(__x86_64__)
    if (eh.e_machine != EM_X86_64) goto out;
#endif
    sh = malloc((size_t)eh.e_shnum * sizeof *sh);
    if (!sh || !rd(fd, sh, (size_t)eh.e_shnum * sizeof *sh, eh.e_shoff)) goto out;
    bool note = false;
    why = NULL;
    for (int i = 0; i < eh.e_shnum && !why; i++) {
        if (sh[i].sh_type == SHT_NOTE) note |= has_note(fd, &sh[i]);
        if ((sh[i].sh_type != SHT_DYNSYM && sh[i].sh_type != SHT_DYNAMIC) ||
            sh[i].sh_link >= eh.e_shnum)
            continue;
        char *str = section(fd, &sh[sh[i].sh_link]);
        void *tab = section(fd, &sh[i]);
        size_t strn = sh[sh[i].sh_link].sh_size;
        if (str && tab && sh[i].sh_type == SHT_DYNSYM) {
            Elf64_Sym *sym = tab;
            for (size_t k = 0; k < sh[i].sh_size / sizeof *sym && !why; k++)
                if (sym[k].st_shndx == SHN_UNDEF && sym[k].st_name < strn &&
                    !strcmp(str + sym[k].st_name, "pthread_create"))
                    why = "it starts threads of its own (pthread_create)";
        } else if (str && tab) {
            Elf64_Dyn *d = tab;
            for (size_t k = 0; k < sh[i].sh_size / sizeof *d && d[k].d_tag != DT_NULL && !why;
                 k++) {
                if (d[k].d_tag != DT_NEEDED || d[k].d_un.d_val >= strn) continue;
                const char *lib = str + d[k].d_un.d_val;
                for (size_t j = 0; j < sizeof no_contexts_libs / sizeof *no_contexts_libs; j++)
                    if (!strncmp(lib, no_contexts_libs[j], strlen(no_contexts_libs[j])))
                        why = "it loads a library that starts threads or tracks stacks";
            }
        }
        free(str);
        free(tab);
    }
    if (!why && !note) why = "it was not linked by courier-cc (no start-up stub)";
out:
    free(sh);
    close(fd);
    return why;
}
