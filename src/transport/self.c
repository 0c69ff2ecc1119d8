/* Self transport: messages a rank sends to itself. Delivery is immediate and
 * always accepted (the engine buffers unexpected self messages without limit,
 * so a blocking send to oneself never waits for a receive that the same thread
 * has yet to post); get and put are plain copies. Nothing ever waits here, so
 * it has nothing to arm. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport.h"

typedef struct self_state {
    cr_tp_env env;
} self_state;

static int self_open(void **ctx, const cr_tp_env *env)
{
    self_state *s = malloc(sizeof *s);
    if (!s) return -ENOMEM;
    s->env = *env;
    *ctx = s;
    return 0;
}

static bool self_reaches(void *ctx, int peer)
{
    return peer == ((self_state *)ctx)->env.rank;
}

static void self_own(void *ctx, int peer)
{
    (void)ctx;
    (void)peer;
}

static void self_close(void *ctx)
{
    free(ctx);
}

static int self_send_am(void *ctx, int peer, const cr_hdr *h, const void *payload, size_t len)
{
    self_state *s = ctx;
    s->env.deliver(s->env.owner, peer, h, payload, len);
    return 0;
}

static int self_nothing(void *ctx)
{
    (void)ctx;
    return 0;
}

static void self_flush(void *ctx)
{
    (void)ctx;
}

static int self_get(void *ctx, int peer, void *dst, uint64_t addr, size_t len)
{
    (void)ctx;
    (void)peer;
    memcpy(dst, (const void *)(uintptr_t)addr, len);
    return 0;
}

static int self_put(void *ctx, int peer, uint64_t addr, const void *src, size_t len)
{
    (void)ctx;
    (void)peer;
    memcpy((void *)(uintptr_t)addr, src, len);
    return 0;
}

static int self_peer_gone(void *ctx, int peer)
{
    (void)ctx;
    (void)peer;
    return 0;
}

static size_t self_max_payload(void *ctx, int peer)
{
    (void)ctx;
    (void)peer;
    return SIZE_MAX;
}

const cr_transport cr_transport_self = {
    .name = "self",
    .caps = CR_CAP_GET | CR_CAP_PUT,
    .open = self_open,
    .reaches = self_reaches,
    .own = self_own,
    .close = self_close,
    .send_am = self_send_am,
    .poll = self_nothing,
    .get = self_get,
    .put = self_put,
    .flush = self_flush,
    .arm = self_nothing,
    .peer_gone = self_peer_gone,
    .max_payload = self_max_payload,
};
