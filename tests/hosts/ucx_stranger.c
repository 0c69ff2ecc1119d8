/* A stranger that speaks UCX: it knows a rank's UCX TCP port (anyone on the
 * network can find it by connecting) and builds the rank's UCX worker address
 * from its own (UCX 1.13, UCX_TLS=tcp: the same layout, the rank's IPv4
 * address and port in place of ours; the worker's id is not checked), then
 * sends active messages with courier's message id and header sizes, claiming to
 * be rank 1 (the rank it knocks at is rank 0). A job must refuse them (src/transport/ucx.c, the
 * job's key). ucx_stranger OUR_IPV4 RANK_IPV4 PORT... Exit 0 when every message was sent (whatever
 * the rank made of it). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

/* Our own UCX listening port: the one listening socket of this process. */
static int own_port(void)
{
    for (int fd = 3; fd < 1024; fd++) {
        int on = 0;
        socklen_t ol = sizeof on;
        struct sockaddr_in sa;
        socklen_t sl = sizeof sa;
        if (!getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &ol) && on &&
            !getsockname(fd, (struct sockaddr *)&sa, &sl) && sa.sin_family == AF_INET)
            return ntohs(sa.sin_port);
    }
    return -1;
}

static void replace(unsigned char *a, size_t n, const void *from, const void *to, size_t k,
                    const char *what)
{
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(a + i, from, k)) {
            memcpy(a + i, to, k);
            return;
        }
    /* another UCX than 1.13's layout: this stranger cannot build the address */
    fprintf(stderr, "ucx_stranger: our %s is not in our worker address (UCX's layout differs)\n",
            what);
    exit(77);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: ucx_stranger OUR_IPV4 RANK_IPV4 PORT...\n");
        return 2;
    }
    struct in_addr ours, theirs;
    if (inet_pton(AF_INET, argv[1], &ours) != 1 || inet_pton(AF_INET, argv[2], &theirs) != 1)
        return 2;
    ucp_config_t *cfg;
    ucp_context_h ctx;
    ucp_worker_h w;
    ucp_params_t up = {.field_mask = UCP_PARAM_FIELD_FEATURES, .features = UCP_FEATURE_AM};
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SINGLE};
    if (ucp_config_read(NULL, NULL, &cfg) != UCS_OK || ucp_init(&up, cfg, &ctx) != UCS_OK ||
        ucp_worker_create(ctx, &wp, &w) != UCS_OK) {
        fprintf(stderr, "ucx_stranger: cannot start UCX\n");
        return 2;
    }
    ucp_config_release(cfg);
    ucp_worker_attr_t wa = {.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS};
    if (ucp_worker_query(w, &wa) != UCS_OK) return 2;
    int mine = own_port();
    if (mine < 0) {
        fprintf(stderr, "ucx_stranger: no UCX listening port of ours\n");
        return 2;
    }
    int sent = 0;
    for (int a = 3; a < argc; a++) {
        unsigned char *addr = malloc(wa.address_length);
        memcpy(addr, wa.address, wa.address_length);
        uint16_t p0 = htons((uint16_t)mine), p1 = htons((uint16_t)atoi(argv[a]));
        replace(addr, wa.address_length, &ours, &theirs, 4, "address");
        replace(addr, wa.address_length, &p0, &p1, 2, "port");
        ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                              .address = (ucp_address_t *)addr};
        ucp_ep_h e;
        if (ucp_ep_create(w, &ep, &e) != UCS_OK) {
            fprintf(stderr, "ucx_stranger: ucp_ep_create to %s:%s failed\n", argv[2], argv[a]);
            free(addr);
            continue;
        }
        /* courier's header sizes (40-byte cr_hdr, rank, sequence, and a key or
         * not): "rank 1's second message", a zero cr_hdr, a zero key */
        for (size_t hl = 48; hl <= 56; hl += 8) {
            unsigned char hdr[64] = {0}, payload[8] = {0};
            const uint32_t src = 1, seq = 1;
            memcpy(hdr + 40, &src, 4);
            memcpy(hdr + 44, &seq, 4);
            ucp_request_param_t rp = {.op_attr_mask = 0};
            void *r = ucp_am_send_nbx(e, 0, hdr, hl, payload, sizeof payload, &rp);
            for (int i = 0; r && !UCS_PTR_IS_ERR(r) && i < 2000000; i++) {
                ucp_worker_progress(w);
                if (ucp_request_check_status(r) != UCS_INPROGRESS) break;
            }
            if (r && !UCS_PTR_IS_ERR(r)) {
                if (ucp_request_check_status(r) == UCS_OK) sent++;
                ucp_request_free(r);
            } else if (!r)
                sent++;
        }
        /* let it arrive before we go */
        ucp_request_param_t fp = {.op_attr_mask = 0};
        void *f = ucp_ep_flush_nbx(e, &fp);
        for (int i = 0; f && !UCS_PTR_IS_ERR(f) && i < 2000000; i++) {
            ucp_worker_progress(w);
            if (ucp_request_check_status(f) != UCS_INPROGRESS) break;
        }
        if (f && !UCS_PTR_IS_ERR(f)) ucp_request_free(f);
        free(addr);
    }
    printf("ucx_stranger: %d messages sent\n", sent);
    return 0;
}
