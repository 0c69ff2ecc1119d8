/* Order and type selection: messages from one node to another arrive in the
 * order sent among those a receive selects; typesel exact, -1, and masks built
 * from 32-bit and 64-bit longs. */
#include <limits.h>

#include "../check.h"

enum { N = 3000 };

int main(void)
{
    long me = mynode(), n = numnodes();
    CHECK(n == 2, "run with 2 nodes");
    if (me == 0) {
        for (long i = 0; i < N; i++) { /* types cycle 0..30; sizes cross the eager limit */
            long msg[2] = {i, i % 31};
            static char big[40000];
            big[0] = (char)i;
            if (i % 500 == 7)
                csend(i % 31, big, sizeof big, 1, 0);
            else
                csend(i % 31, (char *)msg, sizeof msg, 1, 0);
        }
        return 0;
    }
    /* 1. only type 5, in order; 2. a mask of odd types (32-bit style); 3. a mask
     * of types 0, 2, 4 as a 64-bit long; 4. everything else with -1, in order. */
    long last[31];
    for (int t = 0; t < 31; t++) last[t] = -1;
    static char buf[40000];
    long got = 0;
    for (long k = 0; k < N / 31; k++) {
        crecv(5, buf, sizeof buf);
        long i = infocount() == 40000 ? -1 : ((long *)buf)[0];
        CHECK(infotype() == 5, "type %ld", infotype());
        if (i >= 0) {
            CHECK(i > last[5], "type 5 out of order: %ld after %ld", i, last[5]);
            last[5] = i;
        }
        got++;
    }
    long odd = (long)(int)(0x80000000u | 0x2aaaaaaau); /* bits 1,3,...,29 */
    long odd_count = 0;
    for (long i = 0; i < N; i++)
        if ((i % 31) % 2 == 1) odd_count++;
    odd_count -= N / 31; /* the type-5 messages taken above */
    for (long k = 0; k < odd_count; k++) {
        crecv(odd, buf, sizeof buf);
        long t = infotype();
        CHECK(t % 2 == 1, "mask of odd types gave type %ld", t);
        if (infocount() != 40000) {
            long i = ((long *)buf)[0];
            CHECK(i > last[t], "type %ld out of order: %ld after %ld", t, i, last[t]);
            last[t] = i;
        }
        got++;
    }
    long even3 = LONG_MIN | 0x15; /* types 0, 2, 4 */
    while (iprobe(even3)) {
        crecv(even3, buf, sizeof buf);
        CHECK(infotype() == 0 || infotype() == 2 || infotype() == 4, "type %ld", infotype());
        got++;
    }
    long prev = -1;
    while (got < N) {
        crecv(-1, buf, sizeof buf);
        long t = infotype();
        CHECK(t % 2 == 0 && t != 0 && t != 2 && t != 4, "left-over type %ld", t);
        if (infocount() != 40000) {
            long i = ((long *)buf)[0];
            CHECK(i > prev, "-1 out of order: %ld after %ld", i, prev);
            prev = i;
        }
        got++;
    }
    CHECK(!iprobe(-1), "extra message");
    printf("order: %ld messages in order under every typesel\n", got);
    return 0;
}
