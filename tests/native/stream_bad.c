/* Bad arguments to the streams' calls: `stream_bad CASE`; each must end the
 * job with one line naming the call, the rank and the reason (tests/expect.sh). */
#include <string.h>

#include <courier/courier.h>

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    uint64_t w = 0, buf[4];
    cr_stream_init();
    if (cr_rank() != 0) {
        cr_stream_close(cr_stream_open(0, 3, NULL, 0, 0)); /* a stream for the splice cases */
        cr_stream s = cr_stream_accept(0, 1, 4);
        cr_stream_recv(s, &w); /* ended by the launcher */
        cr_stream_recv(s, &w);
        return 0;
    }
    cr_stream s = cr_stream_open(1, 1, NULL, 0, 0);
    int self[1] = {0}, far[1] = {9}, two[1] = {1};
    if (!strcmp(c, "unknown")) cr_stream_send(42, 1);
    if (!strcmp(c, "negative")) cr_stream_send(-1, 1);
    if (!strcmp(c, "closed")) {
        cr_stream_close(s);
        cr_stream_send(s, 1);
    }
    if (!strcmp(c, "twice")) {
        cr_stream_close(s);
        cr_stream_close(s);
    }
    if (!strcmp(c, "wrong_end")) cr_stream_recv(s, &w);
    if (!strcmp(c, "rank")) cr_stream_open(5, 2, NULL, 0, 0);
    if (!strcmp(c, "via_rank")) cr_stream_open(1, 2, far, 1, 0);
    if (!strcmp(c, "via_self")) cr_stream_open(1, 2, self, 1, 0);
    if (!strcmp(c, "via_dst")) cr_stream_open(1, 2, two, 1, 0);
    if (!strcmp(c, "nvia")) cr_stream_open(1, 2, self, -1, 0);
    if (!strcmp(c, "via_null")) cr_stream_open(1, 2, NULL, 2, 0);
    if (!strcmp(c, "channel")) cr_stream_open(1, 70000, NULL, 0, 0);
    if (!strcmp(c, "again")) cr_stream_open(1, 1, NULL, 0, 0);
    if (!strcmp(c, "flags")) cr_stream_open(1, 2, NULL, 0, 0x10);
    if (!strcmp(c, "depth")) cr_stream_accept(1, 2, -3);
    if (!strcmp(c, "accept_rank")) cr_stream_accept(2, 2, 0);
    if (!strcmp(c, "negcount")) cr_stream_write(s, buf, (size_t)-3);
    if (!strcmp(c, "hugecount")) cr_stream_write(s, buf, (size_t)1 << 60);
    if (!strcmp(c, "nullbuf")) cr_stream_write(s, NULL, 3);
    if (!strcmp(c, "redirect_null")) cr_stream_redirect(s, NULL, 3);
    if (!strcmp(c, "splice_end")) cr_stream_splice(s, s);
    if (!strncmp(c, "splice", 6)) {
        cr_stream r = cr_stream_accept(1, 3, 4);
        if (!strcmp(c, "splice_redirect")) cr_stream_redirect(r, buf, 4);
        cr_stream_splice(r, s);
        if (!strcmp(c, "spliced")) cr_stream_send(s, 1);
        if (!strcmp(c, "splice_close")) cr_stream_close(r);
    }
    return 0;
}
