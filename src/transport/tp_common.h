/* What the network transports (tcp, ucx) share, and the launcher's agents with
 * them (src/transport/tp_common.c): reading COURIER_NET, matching addresses to
 * prefixes, the clock, and the one-line warnings and fatal errors. */
#ifndef COURIER_TP_COMMON_H
#define COURIER_TP_COMMON_H

#include <ifaddrs.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "transport.h"

/* COURIER_NET (or --net), read: an address, a prefix (address/bits), or an
 * interface's name. */
typedef struct cr_net_spec {
    int fam;                /* AF_INET or AF_INET6; 0: an interface's name */
    int bits;               /* the prefix's length (32 or 128 for an address) */
    bool prefix;            /* given as address/bits */
    unsigned char addr[16]; /* network order */
    const char *name;       /* the interface (fam 0) */
} cr_net_spec;

/* Read net (NULL or "": 127.0.0.1). 0, or -1 when it has a '/' but is no
 * address/prefix. */
int cr_net_parse(const char *net, cr_net_spec *spec);
/* Does the interface address i (name and address) answer to spec? */
bool cr_net_matches(const cr_net_spec *spec, const struct ifaddrs *i);
/* Is the address sa (of any family) within pfx/bits of family fam? */
bool cr_addr_in_prefix(const struct sockaddr *sa, const unsigned char *pfx, int fam, int bits);
/* The bytes of an IPv4 or IPv6 address (NULL for other families); *fam its family. */
const unsigned char *cr_addr_bytes(const struct sockaddr *sa, int *fam);

uint64_t cr_tp_now_ms(void);
/* A warning the job survives, logged once per kind (a bit of *warned). */
void cr_tp_warn_once(const cr_tp_env *env, unsigned *warned, unsigned kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The job cannot go on: one line through env->fatal. */
void cr_tp_die(const cr_tp_env *env, const char *call, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));

#endif
