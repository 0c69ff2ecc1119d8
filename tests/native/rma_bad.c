/* Bad arguments to the native one-sided calls: `rma_bad CASE`; rank 0 makes
 * the bad call, which must end the job with one line naming the call, the rank
 * and the reason (tests/expect.sh); the others wait for it in cr_sync. */
#include <string.h>

#include <courier/courier.h>

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    char mem[64] = {0}, buf[64] = {0};
    int key = cr_region_register(mem, sizeof mem);
    int ev = cr_event_new();
    if (cr_rank() == 0) {
        if (!strcmp(c, "offset")) cr_put(1, key, 60, buf, 16, CR_NO_EVENT);
        if (!strcmp(c, "key")) cr_get(1, 5, 0, buf, 8, CR_NO_EVENT);
        if (!strcmp(c, "rank")) cr_put(9, key, 0, buf, 8, CR_NO_EVENT);
        if (!strcmp(c, "align")) cr_fetch_add(1, key, 4, 1);
        if (!strcmp(c, "twice")) {
            cr_handle h = cr_get(1, key, 0, buf, 8, CR_NO_EVENT);
            cr_handle_wait(h);
            cr_handle_wait(h);
        }
        if (!strcmp(c, "event")) cr_event_wait(ev + 5);
        if (!strcmp(c, "remote_event")) cr_put(1, key, 0, buf, 8, 5000);
        if (!strcmp(c, "null")) cr_put(1, key, 0, NULL, 8, CR_NO_EVENT);
    }
    if (!strcmp(c, "freed")) {
        cr_region_free(key);
        if (cr_rank() == 0) cr_put(1, key, 0, buf, 8, CR_NO_EVENT);
    }
    cr_sync();
    return 0;
}
