/* The COURIER_* settings a user may give courier run, in one table: each
 * documented variable with the values it allows, checked once by the launcher
 * before any rank starts (cr_envcheck), so that a bad value ends the job with
 * one line naming the variable and what it takes instead of being read
 * silently as something else by every rank. Also the check that --net (or
 * COURIER_NET) names an address of this host (cr_envcheck_net).
 *
 * Invariants: the table is the list of docs/run.md's "Settings" section (the
 * readers in the ranks and the launcher take the same ranges and words: a
 * value accepted here is read as given); an empty value means unset, as the
 * readers take it; variables courier run sets for its ranks (COURIER_RANK,
 * COURIER_SIZE, ...) are not the user's and are not listed. */
#define _GNU_SOURCE
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../transport/tp_common.h"
#include "envcheck.h"

typedef enum { NUMBER, FLAG, WORD, LIST } kind;

typedef struct setting {
    const char *name;
    kind k;
    long lo, hi;              /* NUMBER */
    const char *const *words; /* WORD, LIST: NULL-terminated */
    const char *also;         /* accepted too, not advertised */
} setting;

static const char *const coll_algs[] = {"auto",   "binomial", "pipeline", "recdbl", "rabenseifner",
                                        "ring",   "bruck",    "pairwise", "linear", "scatter",
                                        "direct", "split",    "window",   "area",   NULL};
static const char *const transports[] = {"self", "shm", "tcp", "ucx", NULL};
/* tests: which side of a cooperative copy takes the rest (src/core/engine.c) */
static const char *const claim_sides[] = {"receiver", "sender", NULL};
/* courier run --check (src/api/mpi_check.c reads the same words) */
static const char *const checks[] = {"1",    "all",     "types", "coll",    "leaks",
                                     "sync", "buffers", "rma",   "threads", NULL};

static const setting table[] = {
    {"COURIER_EAGER_LIMIT", NUMBER, 0, INT_MAX, NULL, NULL},
    {"COURIER_UNEXPECTED_LIMIT", NUMBER, 0, LONG_MAX, NULL, NULL},
    {"COURIER_NO_CMA", FLAG, 0, 1, NULL, NULL},
    {"COURIER_SPIN", NUMBER, 1, INT_MAX, NULL, NULL},
    {"COURIER_SPIN_MIN", NUMBER, 1, INT_MAX, NULL, NULL},
    {"COURIER_YIELD_US", NUMBER, 0, INT_MAX, NULL, NULL},
    {"COURIER_NAP_MS", NUMBER, 1, INT_MAX, NULL, NULL},
    {"COURIER_TRANSPORTS", LIST, 0, 0, transports, "sim"},
    {"COURIER_COLL_ALG", WORD, 0, 0, coll_algs, NULL},
    {"COURIER_COLL_WINDOW", NUMBER, 1, 4096, NULL, NULL},
    {"COURIER_NBC_THREAD", FLAG, 0, 1, NULL, NULL},
    {"COURIER_RMA_NO_MAP", FLAG, 0, 1, NULL, NULL},
    {"COURIER_TRACE_BUF", NUMBER, 16, 1L << 24, NULL, NULL},
    {"COURIER_IWARP_WORDS", FLAG, 0, 1, NULL, NULL},
    {"COURIER_TEST_HOSTS", NUMBER, 1, 4096, NULL, NULL},
    {"COURIER_TEST_CLAIM", WORD, 0, 0, claim_sides, NULL},
    {"COURIER_TEST_SHM_FULL_US", NUMBER, 0, 1000000, NULL, NULL},
    {"COURIER_TREE_FANOUT", NUMBER, 1, 4096, NULL, NULL},
    {"COURIER_HEARTBEAT_MS", NUMBER, 10, 60000, NULL, NULL},
    {"COURIER_AGENT_TIMEOUT", NUMBER, 1, 3600, NULL, NULL},
    {"COURIER_NO_SLURM", FLAG, 0, 1, NULL, NULL},
    {"COURIER_CHECK", LIST, 0, 0, checks, "0"},
};

static bool is_word(const setting *s, const char *w, size_t n)
{
    for (const char *const *p = s->words; *p; p++)
        if (strlen(*p) == n && !strncmp(*p, w, n)) return true;
    return s->also && strlen(s->also) == n && !strncmp(s->also, w, n);
}

static bool valid(const setting *s, const char *v)
{
    switch (s->k) {
    case NUMBER:
    case FLAG: {
        char *end;
        errno = 0;
        long x = strtol(v, &end, 10);
        return !errno && *end == '\0' && end != v && x >= s->lo && x <= s->hi;
    }
    case WORD:
        return is_word(s, v, strlen(v));
    case LIST:
        for (const char *p = v;;) {
            size_t k = strcspn(p, ",");
            if (!is_word(s, p, k)) return false;
            if (!p[k]) return true;
            p += k + 1;
        }
    }
    return false;
}

static void allowed(const setting *s, char *buf, size_t len)
{
    size_t off = 0;
    switch (s->k) {
    case NUMBER:
        snprintf(buf, len, "a whole number in %ld..%ld", s->lo, s->hi);
        return;
    case FLAG:
        snprintf(buf, len, "0 or 1");
        return;
    case WORD:
    case LIST:
        off = (size_t)snprintf(buf, len, "%s", s->k == LIST ? "a comma list of " : "one of ");
        for (const char *const *p = s->words; *p && off < len; p++)
            off += (size_t)snprintf(buf + off, len - off, "%s%s", p == s->words ? "" : ", ", *p);
        return;
    }
}

int cr_envcheck(char *err, size_t errlen)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const setting *s = &table[i];
        const char *v = getenv(s->name);
        if (!v || !*v || valid(s, v)) continue;
        char what[200];
        allowed(s, what, sizeof what);
        char shown[64];
        snprintf(shown, sizeof shown, "%s", v);
        for (char *p = shown; *p; p++) /* quoted from the environment: one line, no controls */
            if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
        snprintf(err, errlen, "%s=%s%s is not a value it takes: give %s (docs/run.md, Settings)",
                 s->name, shown, strlen(v) >= sizeof shown ? "..." : "", what);
        return -1;
    }
    return 0;
}

bool cr_envcheck_flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

int cr_envcheck_net(const char *net, const char *given, char *err, size_t errlen)
{
    cr_net_spec spec;
    if (cr_net_parse(net, &spec)) {
        snprintf(err, errlen,
                 "%s%s is not an address, address/prefix or interface name (give e.g. "
                 "10.0.0.0/8, 127.0.0.1 or lo)",
                 given, net);
        return -1;
    }
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs)) return 0; /* cannot tell: the ranks will */
    bool found = false;
    for (const struct ifaddrs *i = ifs; i && !found; i = i->ifa_next)
        found = i->ifa_addr &&
                (i->ifa_addr->sa_family == AF_INET || i->ifa_addr->sa_family == AF_INET6) &&
                cr_net_matches(&spec, i);
    freeifaddrs(ifs);
    if (!found)
        snprintf(err, errlen,
                 "%s%s names no address of this host (give an address, a prefix such as "
                 "10.0.0.0/8, or an interface such as lo; ip -brief address lists them)",
                 given, net);
    return found ? 0 : -1;
}
