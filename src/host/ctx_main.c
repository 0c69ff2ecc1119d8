/* The start-up stub linked into every program that courier-cc (or the build
 * tree) links: libcourier_main.a, with the linker's --wrap=main and
 * --wrap=exit. The program's main comes here first and goes on to libcourier
 * (contexts.h): for a plain run straight to the program's main; under courier
 * run --sim, main runs once per rank, each rank a context of this one process.
 * exit's wrapper, __wrap_exit, is libcourier's own (contexts.c), not this
 * stub's: a shared library linked with the same flags (courier-cc -shared, or
 * a build system that adds --showme:link's flags to every link) calls it
 * there, and does not pull this stub in, which would make the library define
 * __wrap_main and need the program's main.
 *
 * Invariants: the note below (".note.courier", type 1, "contexts") is what
 * tells the launcher that the program can run its ranks as contexts; it is left
 * out where contexts cannot work (a processor the switch is not written for, a
 * sanitizer build of courier: COURIER_NO_CONTEXTS, or of this stub), and the
 * launcher then starts processes. */
#include "contexts.h"

int __real_main(int argc, char **argv, char **envp);
int __wrap_main(int argc, char **argv, char **envp);

int __wrap_main(int argc, char **argv, char **envp)
{
    return cr_ctx_main(argc, argv, envp, __real_main);
}

#if defined(__x86_64__) && !defined(COURIER_NO_CONTEXTS) && !defined(__SANITIZE_ADDRESS__) &&      \
    !defined(__SANITIZE_THREAD__)
__asm__(".pushsection .note.courier,\"a\",@note\n"
        ".balign 4\n"
        ".long 8\n" /* name size: "courier" and its nul */
        ".long 4\n" /* descriptor size */
        ".long 1\n" /* type: what the program can do */
        ".asciz \"courier\"\n"
        ".balign 4\n"
        ".long 1\n" /* 1: its ranks can run as contexts */
        ".popsection\n");
#endif
