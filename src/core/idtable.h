/* An id table: fixed-size slots named by ids (index + generation), the one
 * table behind every id courier hands out or sends on the wire: the engine's
 * requests (and NX/2's message ids, which are those), MPI requests and matched
 * messages, MPL message ids (docs/engine.md, "Ids").
 *
 * An id is 30 bits: gen << CR_ID_IDX_BITS | index, gen 1..CR_ID_GEN_MAX. Id 0
 * is never issued (gen is never 0), nor index CR_ID_IDX_MASK (the table holds
 * at most CR_ID_MAX_SLOTS slots), so an owner may give those values a meaning
 * of its own (a null handle, MPI_MESSAGE_NO_PROC); an id fits a positive int.
 *
 * Each slot's generation changes every time the slot is issued, so an id kept
 * after its slot was freed (stale), or one never issued, finds nothing: a slot
 * comes back to an old generation only after CR_ID_GEN_MAX reuses. Freed slots
 * queue (FIFO) and one is reused only once more than reuse_min are free, so a
 * program that keeps one operation at a time still cycles through reuse_min+1
 * slots: an id stays detected as stale for (reuse_min + 1) * CR_ID_GEN_MAX
 * allocations at least. Past that the generation wraps (to 1): the slot
 * remembers it, and cr_idt_find then calls every other generation retired.
 *
 * Slots live in chunks that never move: a slot pointer stays valid while the
 * table grows (a waiter holds one while the lock is released). The owner's slot
 * type starts with a cr_idslot (its first member) and the table is a member of
 * the owner's state; the table has no state of its own elsewhere. Not thread
 * safe: the owner holds its lock (the engine lock). */
#ifndef COURIER_IDTABLE_H
#define COURIER_IDTABLE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CR_ID_IDX_BITS 20
#define CR_ID_GEN_BITS 10
#define CR_ID_IDX_MASK ((1u << CR_ID_IDX_BITS) - 1)
#define CR_ID_GEN_MAX ((1u << CR_ID_GEN_BITS) - 1)
#define CR_ID_MAX_SLOTS CR_ID_IDX_MASK /* indices 0..CR_ID_IDX_MASK - 1 */
#define CR_IDT_CHUNK_BITS 8            /* 256 slots per chunk */

/* The table's part of every slot: the owner's slot type begins with it. */
typedef struct cr_idslot {
    struct cr_idslot *next_free; /* in the queue of free slots */
    uint32_t idx;                /* its index (owners may mark a slot outside any table) */
    uint16_t gen;                /* of the id last issued for it (0: never issued) */
    uint8_t live;                /* issued and not freed since */
    uint8_t wrapped;             /* gen has come round to 1 at least once */
} cr_idslot;

typedef struct cr_idt {
    char **chunks; /* 1 << CR_IDT_CHUNK_BITS slots each */
    size_t slot_size;
    uint32_t n;     /* slots made: indices 0..n-1 */
    uint32_t limit; /* most slots (CR_ID_MAX_SLOTS; a test may lower it) */
    uint32_t nfree; /* slots in the free queue */
    uint32_t reuse_min;
    cr_idslot *free_head, *free_tail;
} cr_idt;

/* What an id names (cr_idt_find). */
enum cr_id_state {
    CR_ID_UNKNOWN, /* never issued */
    CR_ID_LIVE,    /* its slot, in use */
    CR_ID_RETIRED  /* issued once, its slot since freed (and perhaps issued again) */
};

/* An empty table of slots of slot_size bytes (at least a cr_idslot). */
void cr_idt_init(cr_idt *t, size_t slot_size, uint32_t reuse_min);
/* Give the memory back (the table is empty and usable again after cr_idt_init). */
void cr_idt_destroy(cr_idt *t);
/* A new slot: grows the table, or takes the free slot at the head of the queue
 * when more than reuse_min are free (or the table is at its limit). NULL when
 * the table is full (cr_idt_full) or memory ran out. */
void *cr_idt_grow(cr_idt *t);
/* What id names, and its slot (when the index exists, also for a retired id). */
enum cr_id_state cr_idt_find(const cr_idt *t, uint32_t id, void **slot);

static inline void cr_idslot_issue(cr_idslot *s)
{
    uint32_t g = s->gen + 1u;
    if (g > CR_ID_GEN_MAX) {
        g = 1;
        s->wrapped = 1;
    }
    s->gen = (uint16_t)g;
    s->live = 1;
}

/* A slot (see cr_idt_grow): the owner sets its own fields. O(1). */
static inline void *cr_idt_alloc(cr_idt *t)
{
    if (__builtin_expect(t->nfree <= t->reuse_min, 0)) return cr_idt_grow(t);
    cr_idslot *s = t->free_head;
    if (!(t->free_head = s->next_free)) t->free_tail = NULL;
    t->nfree--;
    cr_idslot_issue(s);
    return s;
}

/* Free a live slot (a slot not live is left alone): its id turns stale. O(1);
 * the owner's fields stay as they are until the slot is issued again. */
static inline void cr_idt_free(cr_idt *t, void *slot)
{
    cr_idslot *s = slot;
    if (!s->live) return;
    s->live = 0;
    s->next_free = NULL;
    if (t->free_tail)
        t->free_tail->next_free = s;
    else
        t->free_head = s;
    t->free_tail = s;
    t->nfree++;
}

/* The slot of index i < t->n (live or not). */
static inline void *cr_idt_at(const cr_idt *t, uint32_t i)
{
    return t->chunks[i >> CR_IDT_CHUNK_BITS] +
           (size_t)(i & ((1u << CR_IDT_CHUNK_BITS) - 1)) * t->slot_size;
}

static inline uint32_t cr_idt_id(const void *slot)
{
    const cr_idslot *s = slot;
    return (uint32_t)s->gen << CR_ID_IDX_BITS | s->idx;
}

static inline uint32_t cr_id_gen(uint32_t id)
{
    return id >> CR_ID_IDX_BITS;
}

/* The live slot id names; NULL for a stale id or one never issued. O(1). */
static inline void *cr_idt_get(const cr_idt *t, uint32_t id)
{
    uint32_t i = id & CR_ID_IDX_MASK;
    if (i >= t->n) return NULL;
    cr_idslot *s = cr_idt_at(t, i);
    return s->live && s->gen == cr_id_gen(id) ? s : NULL;
}

static inline bool cr_idt_live(const void *slot)
{
    return ((const cr_idslot *)slot)->live;
}

/* Slots in use. */
static inline uint32_t cr_idt_used(const cr_idt *t)
{
    return t->n - t->nfree;
}

/* No slot can be had: every one of the limit is in use. */
static inline bool cr_idt_full(const cr_idt *t)
{
    return t->n >= t->limit && t->nfree == 0;
}
#endif
