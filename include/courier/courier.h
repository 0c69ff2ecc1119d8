/* courier's native interface: what the seeds' machines offered beyond message
 * passing, for programs written against courier itself.
 *
 *  - one-sided operations after the Meiko CS-2's Elan (seed 001): registered
 *    memory regions, remote put and get, remote events, atomics on 64-bit
 *    words, a broadcast put to a range of ranks (docs/native.md);
 *  - logical channels and pathways after iWarp (seed 002): courier/streams.h;
 *  - the GMD communication modes (seed 004): courier/modes.h.
 *
 * Every call may be the first courier call of the process (the job starts then,
 * as for NX/2 programs); nothing needs finalizing: the job ends at exit. Ranks
 * are the job's ranks, 0..cr_size()-1. A bad argument ends the job with one line
 * naming the call, the rank and what is wrong. Calls are for the program's one
 * thread (or one thread at a time). */
#ifndef COURIER_COURIER_H
#define COURIER_COURIER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility push(default) /* libcourier exports only its interfaces */
#endif

/* ---- the job ---------------------------------------------------------------- */

int cr_rank(void);    /* this rank */
int cr_size(void);    /* ranks in the job */
void cr_sync(void);   /* barrier of every rank of the job */
double cr_time(void); /* seconds on the job's clock (only differences mean anything) */
/* Under courier run --sim: the virtual time in ns (what cr_time and MPI_Wtime read); -1
 * when this process is not a simulated rank, or not yet one (it starts with the first
 * call into courier). The timer shim the simulated mode preloads reads it. */
long long cr_virtual_ns(void);

/* ---- one-sided: regions ------------------------------------------------------ */

/* Register len bytes at base as a region every rank may read and write (base
 * may be NULL when len is 0). Collective: every rank calls it, in the same
 * order as its other collective calls, each with its own memory; the key it
 * returns is the same on every rank and names the region of each rank. */
int cr_region_register(void *base, size_t len);
/* The same for memory courier allocates (len bytes, zeroed, 64-byte aligned):
 * ranks on this host reach it with plain loads and stores, so puts, gets and
 * atomics into it involve no system call and no CPU of the target (not under
 * courier run --sim, where each rank is a node of its own: docs/sim.md). *key gets
 * the key; returns the memory. */
void *cr_region_alloc(size_t len, int *key);
/* Collective: the region is gone on every rank (every operation on it must be
 * complete: cr_quiet, then this). cr_region_alloc's memory is freed. */
void cr_region_free(int key);

/* ---- one-sided: transfers and events ---------------------------------------- */

/* A transfer in flight. Wait for it (or test it until it says done) exactly once. */
typedef uint64_t cr_handle;
#define CR_NO_EVENT (-1)

/* Write len bytes from src into rank's region key at offset off. The handle is
 * done when src may be reused and the data is in the target's memory. The
 * target's event remote_event (CR_NO_EVENT: none) is set once the data is
 * there. */
cr_handle cr_put(int rank, int key, size_t off, const void *src, size_t len, int remote_event);
/* Read len bytes at offset off of rank's region key into dst; done once dst
 * holds them; the target's event remote_event is set once they were read. */
cr_handle cr_get(int rank, int key, size_t off, void *dst, size_t len, int remote_event);
void cr_handle_wait(cr_handle h);
int cr_handle_test(cr_handle h); /* 1: done (the handle is used up), 0: not yet */
/* Every transfer this rank started is complete (handles still need their wait). */
void cr_quiet(void);
/* The Elite switch's broadcast: put to the same region and offset on every rank
 * first..last (this rank included if in range); returns when all are done. */
void cr_put_bcast(int first, int last, int key, size_t off, const void *src, size_t len);

/* Events: counters of this rank that puts and gets of other ranks set
 * (increment). cr_event_wait blocks until the count is positive and takes one;
 * cr_event_test takes one if there is one (1) or returns 0. */
int cr_event_new(void);
void cr_event_free(int ev);
void cr_event_wait(int ev);
int cr_event_test(int ev);

/* ---- one-sided: atomics on 64-bit words (off a multiple of 8) ---------------- */

uint64_t cr_swap(int rank, int key, size_t off, uint64_t value);      /* returns the old word */
uint64_t cr_fetch_add(int rank, int key, size_t off, uint64_t value); /* returns the old word */
int cr_test_and_set(int rank, int key, size_t off); /* old word != 0; sets it to 1 */
uint64_t cr_cas(int rank, int key, size_t off, uint64_t expected, uint64_t desired); /* old word */
/* The network test: does the remote word equal value? (Read without taking it.) */
int cr_remote_test(int rank, int key, size_t off, uint64_t value);

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif

#include "courier/modes.h"
#include "courier/streams.h"

#endif
