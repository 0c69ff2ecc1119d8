/* What the network transports share (tp_common.h): COURIER_NET, address
 * prefixes, the clock and their one-line messages. Invariant: nothing here
 * keeps state; the caller owns what it passes (warned bits, the env). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tp_common.h"

const unsigned char *cr_addr_bytes(const struct sockaddr *sa, int *fam)
{
    *fam = sa->sa_family;
    if (sa->sa_family == AF_INET)
        return (const unsigned char *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr;
    if (sa->sa_family == AF_INET6)
        return (const unsigned char *)&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
    return NULL;
}

bool cr_addr_in_prefix(const struct sockaddr *sa, const unsigned char *pfx, int fam, int bits)
{
    int f;
    const unsigned char *a = cr_addr_bytes(sa, &f);
    if (!a || f != fam) return false;
    for (int i = 0; i < bits / 8; i++)
        if (a[i] != pfx[i]) return false;
    unsigned char mask = (unsigned char)(0xff00 >> (bits % 8));
    return !(bits % 8) || (a[bits / 8] & mask) == (pfx[bits / 8] & mask);
}

int cr_net_parse(const char *net, cr_net_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    if (!net || !*net) net = "127.0.0.1";
    char a[INET6_ADDRSTRLEN + 8];
    const char *slash = strchr(net, '/');
    size_t n = slash ? (size_t)(slash - net) : strlen(net);
    if (n >= sizeof a) {
        if (slash) return -1;
        spec->name = net; /* too long for an address: a name (that matches nothing) */
        return 0;
    }
    memcpy(a, net, n);
    a[n] = 0;
    if (inet_pton(AF_INET, a, spec->addr) == 1)
        spec->fam = AF_INET, spec->bits = 32;
    else if (inet_pton(AF_INET6, a, spec->addr) == 1)
        spec->fam = AF_INET6, spec->bits = 128;
    if (!slash) {
        if (!spec->fam) spec->name = net;
        return 0;
    }
    char *end;
    long b = strtol(slash + 1, &end, 10);
    if (!spec->fam || !slash[1] || *end || b < 0 || b > spec->bits) return -1;
    spec->bits = (int)b;
    spec->prefix = true;
    return 0;
}

bool cr_net_matches(const cr_net_spec *spec, const struct ifaddrs *i)
{
    if (!i->ifa_addr) return false;
    if (!spec->fam) return strcmp(i->ifa_name, spec->name) == 0;
    return cr_addr_in_prefix(i->ifa_addr, spec->addr, spec->fam, spec->bits);
}

uint64_t cr_tp_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void cr_tp_warn_once(const cr_tp_env *env, unsigned *warned, unsigned kind, const char *fmt, ...)
{
    if (*warned & kind) return;
    *warned |= kind;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    env->warn(env->owner, msg);
}

void cr_tp_die(const cr_tp_env *env, const char *call, const char *fmt, ...)
{
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    env->fatal(env->owner, call, msg);
}
