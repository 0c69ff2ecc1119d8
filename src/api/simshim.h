/* What the simulated mode's two preloads (libcourier_simclock.so: simclock.c's
 * timers; libcourier_simshared.so: simshared.c's shared buffers) share: where
 * a loaded object lies, so that each can tell libcourier's own calls from the
 * program's. */
#ifndef COURIER_SIMSHIM_H
#define COURIER_SIMSHIM_H

#include <link.h>
#include <stdint.h>

/* The lowest and highest address of info's loadable segments. */
static inline void cr_shim_load_range(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
    *lo = UINTPTR_MAX;
    *hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < *lo) *lo = a;
        if (a + ph->p_memsz > *hi) *hi = a + ph->p_memsz;
    }
}

#endif
