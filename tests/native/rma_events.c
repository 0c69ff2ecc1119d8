/* Remote events counted exactly: each round every rank puts one word into the
 * next rank's region with an event there and waits for the event the previous
 * rank's put sets; after ROUNDS rounds no event is left over and every word
 * is the round's value. Run with waits that sleep at once (COURIER_YIELD_US=0,
 * no spin), the waiting point looks at the event between the loop's looks: a
 * wait that took the count there lost it and hung. */
#include <stdint.h>

#include <courier/courier.h>

#include "../check.h"

#define ROUNDS 2000

int main(void)
{
    int me = cr_rank(), n = cr_size();
    int key;
    uint64_t *words = cr_region_alloc(8 * sizeof(uint64_t), &key);
    CHECK(words != NULL, "cr_region_alloc failed");
    int ev = cr_event_new();
    cr_sync();
    for (uint64_t r = 1; r <= ROUNDS; r++) {
        uint64_t v = r * 1000 + (uint64_t)me;
        cr_handle_wait(cr_put((me + 1) % n, key, 0, &v, sizeof v, ev));
        cr_event_wait(ev);
        uint64_t got = __atomic_load_n(&words[0], __ATOMIC_ACQUIRE);
        CHECK(got == r * 1000 + (uint64_t)((me + n - 1) % n), "round %llu: word is %llu",
              (unsigned long long)r, (unsigned long long)got);
        cr_sync(); /* the next round's put overwrites the word */
    }
    CHECK(!cr_event_test(ev), "an event is left over after %d rounds", ROUNDS);
    cr_event_free(ev);
    cr_sync();
    if (me == 0) printf("rma events ok: %d ranks, %d rounds\n", n, ROUNDS);
    return 0;
}
