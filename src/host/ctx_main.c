/* The start-up stub linked into every program that courier-cc (or the build
 * tree) links: libcourier_main.a, with the linker's --wrap=main and
 * --wrap=exit. The program's main and exit come here first and go on to
 * libcourier (contexts.h): for a plain run straight to the program's main and
 * to libc's exit; under courier run --sim, main runs once per rank, each rank a
 * context of this one process, and exit ends only the rank that called it.
 *
 * Invariants: the note below (".note.courier", type 1, "contexts") is what
 * tells the launcher that the program can run its ranks as contexts; it is left
 * out where contexts cannot work (a processor the switch is not written for, a
 * sanitizer build of courier: COURIER_NO_CONTEXTS, or of this stub), and the
 * launcher then starts processes. */
#include "contexts.h"

int __real_main(int argc, char **argv, char **envp);
int __wrap_main(int argc, char **argv, char **envp);
_Noreturn void __wrap_exit(int status);

int __wrap_main(int argc, char **argv, char **envp)
{
    return cr_ctx_main(argc, argv, envp, __real_main);
}

_Noreturn void __wrap_exit(int status)
{
    cr_ctx_exit(status);
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
