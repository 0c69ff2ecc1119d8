/* What the two halves of the simulated mode's preload (libcourier_simclock.so:
 * simclock.c's timers, simshared.c's shared buffers) share: where a loaded
 * object lies, so that each can tell libcourier's own calls from the program's. */
#ifndef COURIER_SIMSHIM_H
#define COURIER_SIMSHIM_H

#include <link.h>
#include <stdint.h>

/* The lowest and highest address of info's loadable segments. */
void cr_shim_load_range(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
    __attribute__((visibility("hidden")));

#endif
