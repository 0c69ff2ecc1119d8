/* Spare blocks kept for reuse, by size class: class k holds blocks with room
 * for 64 << k bytes after a fixed part. The simulated mode's per-message
 * objects (the simulator's packets in src/run/vsim.c, a rank's arrivals in
 * src/transport/sim.c) come and go millions of times a second, at sizes
 * (1 KiB and a little more) that glibc's thread cache does not keep.
 *  - A block comes from malloc and may always be given to free() instead of
 *    back here (its owner keeps the class cr_spares_get gave it).
 *  - While a block is kept here, its first pointer's worth of bytes link it
 *    into its class's list; the rest is left as it was.
 *  - Room above the largest class is allocated to size and never kept.
 *  - A class keeps at most max_count blocks and at most max_bytes of room.
 * Not thread-safe: each list has one owner (a rank's transport, the simulator). */
#ifndef CR_SPARES_H
#define CR_SPARES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CR_SPARES_KINDS 8

typedef struct cr_spares {
    void *list[CR_SPARES_KINDS];
    uint32_t n[CR_SPARES_KINDS];
    unsigned kinds;     /* classes in use, at most CR_SPARES_KINDS */
    uint32_t max_count; /* blocks a class keeps, at most ... */
    size_t max_bytes;   /* ... and room a class keeps, at most */
} cr_spares;

static inline cr_spares cr_spares_make(unsigned kinds, uint32_t max_count, size_t max_bytes)
{
    return (cr_spares){.kinds = kinds < CR_SPARES_KINDS ? kinds : CR_SPARES_KINDS,
                       .max_count = max_count,
                       .max_bytes = max_bytes};
}

/* A block of fixed bytes and room for at least `room` more; its class in *kind
 * (kinds: allocated to size). NULL: out of memory. */
static inline void *cr_spares_get(cr_spares *s, size_t fixed, size_t room, unsigned *kind)
{
    unsigned k = 0;
    while (k < s->kinds && room > (size_t)64 << k) k++;
    *kind = k;
    void *p;
    if (k < s->kinds && (p = s->list[k])) {
        memcpy(&s->list[k], p, sizeof(void *));
        s->n[k]--;
        return p;
    }
    return malloc(fixed + (k < s->kinds ? (size_t)64 << k : room));
}

/* Gives back p, of class kind (from cr_spares_get): kept or freed. */
static inline void cr_spares_put(cr_spares *s, void *p, unsigned kind)
{
    if (kind >= s->kinds || s->n[kind] >= s->max_count ||
        s->n[kind] >= s->max_bytes >> (6 + kind)) {
        free(p);
        return;
    }
    memcpy(p, &s->list[kind], sizeof(void *));
    s->list[kind] = p;
    s->n[kind]++;
}

/* Frees every block kept. */
static inline void cr_spares_clear(cr_spares *s)
{
    for (unsigned k = 0; k < s->kinds; k++)
        while (s->list[k]) {
            void *p = s->list[k];
            memcpy(&s->list[k], p, sizeof(void *));
            free(p);
        }
    memset(s->n, 0, sizeof s->n);
}

#endif
