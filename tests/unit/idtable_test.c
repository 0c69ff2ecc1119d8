/* Unit test of the id table (src/core/idtable.c), with no job: ids of slots
 * allocated and freed, stale and never-issued ids finding nothing, the free
 * queue's order and its reuse_min, growth past a chunk with slot addresses kept,
 * the limit (NULL, then a slot again once one is freed), generation wrap (a
 * stale id stays stale for CR_ID_GEN_MAX reuses, cr_idt_find's answers after
 * the wrap), ids within 30 bits and never 0, and the owner's fields kept while
 * a slot is free. Exits non-zero, naming the check, when the code is wrong. */
#include <stdio.h>
#include <stdlib.h>

#include "idtable.h"
#include "unit.h"

typedef struct item {
    cr_idslot id; /* first, as the table requires */
    int value;
    char pad[37]; /* a slot size that is not a power of two */
} item;

static void basics(void)
{
    cr_idt t;
    cr_idt_init(&t, sizeof(item), 0);
    CHECK(cr_idt_get(&t, 0) == NULL);
    CHECK(cr_idt_get(&t, 1u << CR_ID_IDX_BITS) == NULL); /* index 0, gen 1: never issued */
    item *a = cr_idt_alloc(&t), *b = cr_idt_alloc(&t);
    CHECK(a && b && a != b);
    uint32_t ia = cr_idt_id(a), ib = cr_idt_id(b);
    CHECK(ia != 0 && ib != 0 && ia != ib);
    CHECK(ia < 1u << 30 && ib < 1u << 30); /* fits a positive int, and an MPI handle */
    CHECK(cr_idt_get(&t, ia) == a && cr_idt_get(&t, ib) == b);
    CHECK(cr_idt_used(&t) == 2);
    void *s = NULL;
    CHECK(cr_idt_find(&t, ia, &s) == CR_ID_LIVE && s == a);
    a->value = 42;
    cr_idt_free(&t, a);
    CHECK(cr_idt_get(&t, ia) == NULL); /* stale */
    CHECK(cr_idt_find(&t, ia, &s) == CR_ID_RETIRED && s == a);
    CHECK(a->value == 42); /* the owner's fields stay until reuse */
    cr_idt_free(&t, a);    /* twice: left alone */
    CHECK(t.nfree == 1);
    /* reuse: the same slot, a new id; the old one stays stale */
    item *c = cr_idt_alloc(&t);
    CHECK(c == a);
    uint32_t ic = cr_idt_id(c);
    CHECK(ic != ia && (ic & CR_ID_IDX_MASK) == (ia & CR_ID_IDX_MASK));
    CHECK(cr_idt_get(&t, ia) == NULL && cr_idt_get(&t, ic) == c);
    CHECK(cr_idt_find(&t, ia, NULL) == CR_ID_RETIRED);
    /* an id with a generation not yet issued, or an index not yet made */
    CHECK(cr_idt_find(&t, ic + (1u << CR_ID_IDX_BITS), NULL) == CR_ID_UNKNOWN);
    CHECK(cr_idt_get(&t, ic + (1u << CR_ID_IDX_BITS)) == NULL);
    CHECK(cr_idt_find(&t, (1u << CR_ID_IDX_BITS) | 7, NULL) == CR_ID_UNKNOWN);
    CHECK(cr_idt_get(&t, (1u << CR_ID_IDX_BITS) | 7) == NULL);
    CHECK(cr_idt_get(&t, ic | 0xc0000000u) == NULL);                    /* bits above the id */
    CHECK(cr_idt_find(&t, ic & CR_ID_IDX_MASK, NULL) == CR_ID_UNKNOWN); /* gen 0 */
    cr_idt_destroy(&t);
}

/* The free queue is first in, first out. */
static void fifo(void)
{
    cr_idt t;
    cr_idt_init(&t, sizeof(item), 0);
    item *s[4];
    for (int i = 0; i < 4; i++) s[i] = cr_idt_alloc(&t);
    cr_idt_free(&t, s[2]);
    cr_idt_free(&t, s[0]);
    cr_idt_free(&t, s[3]);
    CHECK(cr_idt_alloc(&t) == s[2]);
    CHECK(cr_idt_alloc(&t) == s[0]);
    CHECK(cr_idt_alloc(&t) == s[3]);
    CHECK(t.n == 4 && t.nfree == 0);
    CHECK(cr_idt_alloc(&t) != s[1] && t.n == 5);
    cr_idt_destroy(&t);
}

/* With reuse_min R, one operation at a time cycles through R + 1 slots. */
static void reuse_min(void)
{
    enum { R = 16 };
    cr_idt t;
    cr_idt_init(&t, sizeof(item), R);
    item *first = cr_idt_alloc(&t);
    uint32_t id0 = cr_idt_id(first);
    cr_idt_free(&t, first);
    int again = -1;
    for (int i = 1; i < 100; i++) {
        item *x = cr_idt_alloc(&t);
        if (x == first && again < 0) again = i;
        cr_idt_free(&t, x);
    }
    CHECK(again == R + 1);
    CHECK(t.n == R + 1);
    CHECK(cr_idt_get(&t, id0) == NULL);
    cr_idt_destroy(&t);
}

/* Growth past many chunks keeps every slot where it was and every id valid. */
static void growth(void)
{
    enum { N = 5000 };
    cr_idt t;
    cr_idt_init(&t, sizeof(item), 0);
    static item *p[N];
    static uint32_t id[N];
    for (int i = 0; i < N; i++) {
        p[i] = cr_idt_alloc(&t);
        CHECK(p[i] != NULL);
        p[i]->value = i;
        id[i] = cr_idt_id(p[i]);
    }
    CHECK(t.n == N && cr_idt_used(&t) == N);
    for (int i = 0; i < N; i++) {
        CHECK(cr_idt_get(&t, id[i]) == p[i]);
        CHECK(cr_idt_at(&t, (uint32_t)i) == p[i]);
        CHECK(p[i]->value == i);
    }
    for (int i = 0; i < N; i += 2) cr_idt_free(&t, p[i]);
    for (int i = 0; i < N; i++) CHECK((cr_idt_get(&t, id[i]) != NULL) == (i % 2 == 1));
    CHECK(cr_idt_used(&t) == N / 2);
    cr_idt_destroy(&t);
    CHECK(t.n == 0 && cr_idt_get(&t, id[1]) == NULL);
}

/* At the limit: NULL and cr_idt_full; a freed slot makes room again. */
static void limit(void)
{
    cr_idt t;
    cr_idt_init(&t, sizeof(item), 8);
    t.limit = 300; /* (the real limit, CR_ID_MAX_SLOTS, in the test below) */
    item *p[300];
    for (int i = 0; i < 300; i++) p[i] = cr_idt_alloc(&t);
    CHECK(p[299] != NULL);
    CHECK(cr_idt_full(&t));
    CHECK(cr_idt_alloc(&t) == NULL);
    uint32_t old = cr_idt_id(p[7]);
    cr_idt_free(&t, p[7]); /* fewer free than reuse_min, but the table is at its limit */
    CHECK(!cr_idt_full(&t));
    item *q = cr_idt_alloc(&t);
    CHECK(q == p[7] && cr_idt_id(q) != old);
    CHECK(cr_idt_alloc(&t) == NULL);
    cr_idt_destroy(&t);

    /* the real limit: index CR_ID_IDX_MASK is never issued */
    cr_idt_init(&t, sizeof(cr_idslot), 0);
    uint32_t last = 0;
    for (uint32_t i = 0; i < CR_ID_MAX_SLOTS; i++) {
        cr_idslot *s = cr_idt_alloc(&t);
        if (!s) break;
        last = cr_idt_id(s);
    }
    CHECK(t.n == CR_ID_MAX_SLOTS);
    CHECK((last & CR_ID_IDX_MASK) == CR_ID_IDX_MASK - 1);
    CHECK(cr_idt_alloc(&t) == NULL && cr_idt_full(&t));
    cr_idt_destroy(&t);
}

/* A slot's generation wraps after CR_ID_GEN_MAX issues: a stale id is found
 * stale through all of them, and after the wrap find calls other generations
 * retired. */
static void wrap(void)
{
    cr_idt t;
    cr_idt_init(&t, sizeof(item), 0);
    item *x = cr_idt_alloc(&t);
    uint32_t id1 = cr_idt_id(x);
    CHECK(cr_id_gen(id1) == 1);
    cr_idt_free(&t, x);
    uint32_t prev = id1;
    for (unsigned i = 2; i <= CR_ID_GEN_MAX; i++) {
        item *y = cr_idt_alloc(&t);
        CHECK(y == x);
        CHECK(cr_id_gen(cr_idt_id(y)) == i);
        CHECK(cr_idt_get(&t, id1) == NULL);
        CHECK(cr_idt_get(&t, prev) == NULL);
        CHECK(cr_idt_find(&t, prev, NULL) == CR_ID_RETIRED);
        if (i < CR_ID_GEN_MAX) /* the next generation: not issued yet */
            CHECK(cr_idt_find(&t, cr_idt_id(y) + (1u << CR_ID_IDX_BITS), NULL) == CR_ID_UNKNOWN);
        prev = cr_idt_id(y);
        cr_idt_free(&t, y);
    }
    CHECK(!x->id.wrapped);
    CHECK(cr_id_gen(prev) == CR_ID_GEN_MAX);
    item *y = cr_idt_alloc(&t); /* gen comes round to 1, never 0 */
    CHECK(y == x && x->id.wrapped);
    CHECK(cr_idt_id(y) == id1);
    CHECK(cr_idt_get(&t, id1) == y);
    CHECK(cr_idt_get(&t, prev) == NULL);
    cr_idt_free(&t, y);
    y = cr_idt_alloc(&t);
    CHECK(cr_id_gen(cr_idt_id(y)) == 2);
    /* after the wrap every other generation of the slot was issued once */
    CHECK(cr_idt_find(&t, prev, NULL) == CR_ID_RETIRED);
    CHECK(cr_idt_find(&t, id1 + 5 * (1u << CR_ID_IDX_BITS), NULL) == CR_ID_RETIRED);
    CHECK(cr_idt_find(&t, cr_idt_id(y), NULL) == CR_ID_LIVE);
    cr_idt_destroy(&t);
}

int main(void)
{
    basics();
    fifo();
    reuse_min();
    growth();
    limit();
    wrap();
    if (failures) {
        fprintf(stderr, "idtable_test: %d checks failed\n", failures);
        return 1;
    }
    printf("idtable_test: ok\n");
    return 0;
}
