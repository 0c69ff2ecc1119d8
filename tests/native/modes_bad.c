/* Bad arguments to the GMD modes' calls: `modes_bad CASE`; each must end the
 * job with one line naming the call, the rank and the reason (tests/expect.sh). */
#include <string.h>

#include <courier/courier.h>

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    char buf[64] = {0};
    if (cr_rank() != 0) {
        cr_recv_mode(0, 999, buf, sizeof buf, NULL); /* ended by the launcher */
        return 0;
    }
    if (!strcmp(c, "rank")) cr_send_sync(7, 1, buf, 8);
    if (!strcmp(c, "negrank")) cr_send_nowait(-2, 1, buf, 8);
    if (!strcmp(c, "type")) cr_send_single(1, -4, buf, 8);
    if (!strcmp(c, "neglen")) cr_send_nowait(1, 1, buf, (size_t)-5);
    if (!strcmp(c, "huge")) cr_send_sync(1, 1, buf, (size_t)1 << 50);
    if (!strcmp(c, "null")) cr_send_single(1, 1, NULL, 10);
    if (!strcmp(c, "recv_src")) cr_recv_mode(5, 1, buf, 8, NULL);
    if (!strcmp(c, "recv_type")) cr_recv_mode(1, -7, buf, 8, NULL);
    if (!strcmp(c, "recv_null")) cr_recv_mode(1, 1, NULL, 8, NULL);
    if (!strcmp(c, "probe_src")) cr_probe_mode(2, 1, NULL);
    if (!strcmp(c, "truncate")) { /* to itself: buffered, then too long for the receive */
        cr_send_nowait(0, 1, buf, 64);
        cr_recv_mode(0, 1, buf, 8, NULL);
    }
    return 0;
}
