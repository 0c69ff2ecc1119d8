/* The id table's slow paths (idtable.h has the layout of an id and the inline
 * fast paths): making slots, finding what an id names, giving memory back.
 * Invariants: slots 0..n-1 exist, in chunks that never move; every free slot
 * is in the queue exactly once (nfree of them) and no live one is; a slot's gen
 * is 0 until it is first issued, then 1..CR_ID_GEN_MAX. */
#include <stdlib.h>

#include "idtable.h"

#define CHUNK (1u << CR_IDT_CHUNK_BITS)

void cr_idt_init(cr_idt *t, size_t slot_size, uint32_t reuse_min)
{
    *t = (cr_idt){.slot_size = slot_size < sizeof(cr_idslot) ? sizeof(cr_idslot) : slot_size,
                  .limit = CR_ID_MAX_SLOTS,
                  .reuse_min = reuse_min};
}

void cr_idt_destroy(cr_idt *t)
{
    for (uint32_t c = 0; c < (t->n + CHUNK - 1) / CHUNK; c++) free(t->chunks[c]);
    free(t->chunks);
    cr_idt_init(t, t->slot_size, t->reuse_min);
}

/* The slot at the head of the free queue, issued; NULL when none is free. */
static void *reuse(cr_idt *t)
{
    cr_idslot *s = t->free_head;
    if (!s) return NULL;
    if (!(t->free_head = s->next_free)) t->free_tail = NULL;
    t->nfree--;
    cr_idslot_issue(s);
    return s;
}

void *cr_idt_grow(cr_idt *t)
{
    uint32_t limit = t->limit < CR_ID_MAX_SLOTS ? t->limit : CR_ID_MAX_SLOTS;
    if (t->n >= limit) return reuse(t);
    if (t->n % CHUNK == 0) {
        char **c = realloc(t->chunks, (t->n / CHUNK + 1) * sizeof *c);
        if (!c) return reuse(t);
        t->chunks = c;
        if (!(c[t->n / CHUNK] = calloc(CHUNK, t->slot_size))) return reuse(t);
    }
    cr_idslot *s = cr_idt_at(t, t->n);
    s->idx = t->n++;
    cr_idslot_issue(s);
    return s;
}

enum cr_id_state cr_idt_find(const cr_idt *t, uint32_t id, void **slot)
{
    uint32_t i = id & CR_ID_IDX_MASK, gen = cr_id_gen(id);
    if (i >= t->n || gen == 0 || gen > CR_ID_GEN_MAX) return CR_ID_UNKNOWN;
    cr_idslot *s = cr_idt_at(t, i);
    if (slot) *slot = s;
    if (gen == s->gen) return s->live ? CR_ID_LIVE : CR_ID_RETIRED;
    /* an older generation, or (once the generations wrapped) any other */
    return gen < s->gen || s->wrapped ? CR_ID_RETIRED : CR_ID_UNKNOWN;
}
