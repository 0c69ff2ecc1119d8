/* Ranks as contexts (courier run --sim): every rank of a simulated job runs as a
 * user-level context of one process, on one thread, instead of a process of
 * its own. A simulated program mostly waits for the simulator, and a rank that
 * waits hands the CPU to the next one: between contexts that is a call, not a
 * switch of processes through the kernel (docs/sim.md, "Speed").
 *
 * What makes the same program run N times in one address space: each rank has
 * its own copy of the writable data of the program and of libcourier (their
 * globals, the job struct), swapped in when it runs; its own stack, environment
 * (COURIER_RANK) and stdio streams. What stays shared is documented in
 * docs/sim.md (libc's hidden state, thread-local variables, the descriptors).
 *
 * A program takes part when it was linked with the start-up stub
 * (src/host/ctx_main.c, in libcourier_main.a: courier-cc and the build tree
 * link it): its note tells the launcher, and its main runs through
 * cr_ctx_main. It is a host service: nothing here knows about messages. */
#ifndef COURIER_CONTEXTS_H
#define COURIER_CONTEXTS_H

#include <stdbool.h>
#include <stddef.h>

typedef int cr_main_fn(int argc, char **argv, char **envp);

/* The program's start (the stub's __wrap_main): when the launcher asked for
 * contexts (COURIER_SIM_CONTEXTS), run every rank's main as a context and
 * return only at the end (the first failing rank's status, else 0); else
 * call main once. */
#define CR_CTX_EXPORT __attribute__((visibility("default"))) /* the stub's, from outside */
CR_CTX_EXPORT int cr_ctx_main(int argc, char **argv, char **envp, cr_main_fn *main_fn);
/* The program called exit: in a context, only its rank ends (its own exit
 * handlers run, as at a return from main); else the process exits. */
CR_CTX_EXPORT _Noreturn void cr_ctx_exit(int status);
/* What exit is in what the linker's --wrap=exit links (courier-cc's programs
 * and shared libraries): cr_ctx_exit. */
CR_CTX_EXPORT _Noreturn void __wrap_exit(int status);
/* Is this thread running a rank's context? */
bool cr_ctx_active(void);
/* The segments a rank inherits (the host's, the simulator's, the secret's
 * descriptor). A process maps its own and closes the descriptor; the ranks as
 * contexts share their process's one mapping of each, made at the first
 * call, and the descriptor stays open for the next rank: so map with
 * cr_ctx_map (MAP_FAILED with errno on failure; fd is let go either way),
 * unmap with cr_ctx_unmap, and let go of a descriptor not mapped with
 * cr_ctx_close_fd. */
void *cr_ctx_map(int fd, size_t len);
void cr_ctx_unmap(void *base, size_t len);
void cr_ctx_close_fd(int fd);
/* An exit handler of the running rank (the library's own: the job's, the
 * modes'): run when the rank ends, last registered first. Outside contexts,
 * atexit. */
void cr_ctx_atexit(void (*fn)(void));
/* Memory the running rank touches at each of its turns, kept elsewhere than
 * in its globals (the library's job, on the heap): while the rank before it
 * runs, the scheduler brings it into the cache, as it does the rank's copy of
 * the globals. One range per rank; a later call replaces it. Outside
 * contexts, nothing. */
void cr_ctx_warm(const void *p, size_t len);
/* The running rank waits: back to the scheduler until something wakes it (the
 * simulator queued it, vtime.h's wake queue). It returns once woken, and may
 * return early (a stale wake): the caller checks what it waits for again. */
void cr_ctx_wait(void);

#endif
