/* Single copy refused in the middle of a job, for the tests of what courier
 * does then (tests/transport/refused.c, tests/io/coll.c): from the call on,
 * a seccomp filter makes the kernel answer this process's process_vm_readv
 * and process_vm_writev with EPERM, in every thread (the progress thread
 * too). Returns NULL, or the name of the call that failed (errno says why). */
#ifndef COURIER_TEST_DENY_CMA_H
#define COURIER_TEST_DENY_CMA_H
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline const char *deny_cma(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_writev, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
    };
    struct sock_fprog prog = {.len = sizeof f / sizeof *f, .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return "prctl(PR_SET_NO_NEW_PRIVS)";
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
        return "seccomp";
    return NULL;
}
#endif
