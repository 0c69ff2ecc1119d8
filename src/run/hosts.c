/* Host lists for `courier run`: --hosts and --hostfile, and where the ranks go.
 *
 * Invariants: names are kept as given (an ssh destination, a namespace: never
 * resolved here; cr_hosts_all_here compares them with this machine's own names
 * and addresses, without asking a name service); ranks are placed in order,
 * filling each host's slots before the next, so rank numbers run consecutively
 * per host (what COURIER_HOST_LAYOUT tells the ranks); never more ranks than
 * slots. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hosts.h"
#include "launcher.h"

#define MAX_HOSTS 4096
#define MAX_SLOTS CR_RUN_MAX_RANKS /* a host may run the whole job */

static int add(cr_hostlist *hl, const char *name, size_t len, long slots, char *err, size_t errlen)
{
    if (!len || len > 255) {
        snprintf(err, errlen, "a host name must be 1..255 characters");
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        if (!isgraph((unsigned char)name[i]) || name[i] == ',' || name[i] == ':') {
            snprintf(err, errlen, "host name '%.*s' has a character no host name has", (int)len,
                     name);
            return -1;
        }
    for (int i = 0; i < hl->n; i++)
        if (strlen(hl->name[i]) == len && !memcmp(hl->name[i], name, len)) {
            hl->slots[i] += (int)slots;
            if (hl->slots[i] > MAX_SLOTS) hl->slots[i] = MAX_SLOTS;
            return 0;
        }
    if (hl->n >= MAX_HOSTS) {
        snprintf(err, errlen, "more than %d hosts", MAX_HOSTS);
        return -1;
    }
    char **nn = realloc(hl->name, (size_t)(hl->n + 1) * sizeof *nn);
    if (nn) hl->name = nn;
    int *ns = realloc(hl->slots, (size_t)(hl->n + 1) * sizeof *ns);
    if (ns) hl->slots = ns;
    int *nc = realloc(hl->count, (size_t)(hl->n + 1) * sizeof *nc);
    if (nc) hl->count = nc;
    char *copy = strndup(name, len);
    if (!nn || !ns || !nc || !copy) {
        free(copy);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    hl->name[hl->n] = copy;
    hl->slots[hl->n] = (int)slots;
    hl->count[hl->n] = 0;
    hl->n++;
    return 0;
}

static int parse_slots(const char *s, size_t len, long *out)
{
    char buf[16];
    if (!len || len >= sizeof buf) return -1;
    memcpy(buf, s, len);
    buf[len] = 0;
    char *end;
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (errno || *end || v < 1 || v > MAX_SLOTS) return -1;
    *out = v;
    return 0;
}

int cr_hosts_parse_list(cr_hostlist *hl, const char *list, char *err, size_t errlen)
{
    if (!*list) {
        snprintf(err, errlen, "--hosts needs a list of hosts, e.g. a:4,b:4");
        return -1;
    }
    for (const char *p = list;;) {
        size_t k = strcspn(p, ",");
        const char *colon = memchr(p, ':', k);
        size_t nlen = colon ? (size_t)(colon - p) : k;
        long slots = 1;
        if (colon && parse_slots(colon + 1, k - nlen - 1, &slots)) {
            snprintf(err, errlen, "--hosts %s: '%.*s' needs a count of 1..%d after ':'", list,
                     (int)k, p, MAX_SLOTS);
            return -1;
        }
        if (add(hl, p, nlen, slots, err, errlen)) return -1;
        if (!p[k]) break;
        p += k + 1;
    }
    return 0;
}

int cr_hosts_parse_file(cr_hostlist *hl, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "--hostfile %s: %s", path, strerror(errno));
        return -1;
    }
    char line[1024];
    int ln = 0, rc = 0, before = hl->n;
    while (!rc && fgets(line, sizeof line, f)) {
        ln++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char *save = NULL, *name = strtok_r(line, " \t\r\n", &save);
        if (!name) continue;
        long slots = 1;
        for (char *w; (w = strtok_r(NULL, " \t\r\n", &save));) {
            if (!strncmp(w, "slots=", 6) || !strncmp(w, "count=", 6) || !strncmp(w, "cpu=", 4)) {
                const char *v = strchr(w, '=') + 1;
                if (parse_slots(v, strlen(v), &slots)) {
                    snprintf(err, errlen, "--hostfile %s line %d: '%s' needs 1..%d", path, ln, w,
                             MAX_SLOTS);
                    rc = -1;
                }
            } else if (!strncmp(w, "max_slots=", 10) || !strncmp(w, "max-slots=", 10)) {
                /* accepted: courier never places more ranks than slots */
            } else {
                snprintf(err, errlen,
                         "--hostfile %s line %d: unknown '%s' (give: name [slots=N] "
                         "[max_slots=M])",
                         path, ln, w);
                rc = -1;
            }
            if (rc) break;
        }
        if (!rc) rc = add(hl, name, strlen(name), slots, err, errlen);
    }
    fclose(f);
    if (!rc && hl->n == before) {
        snprintf(err, errlen, "--hostfile %s names no host", path);
        rc = -1;
    }
    return rc;
}

/* The i-th count of Slurm's "4(x2),2" (i from 0), or -1 past the end. */
static long slurm_count(const char *list, int i)
{
    for (const char *p = list; p && *p;) {
        char *end;
        long v = strtol(p, &end, 10), times = 1;
        if (end == p || v < 0) return -1;
        if (!strncmp(end, "(x", 2)) {
            times = strtol(end + 2, &end, 10);
            if (*end++ != ')' || times < 1) return -1;
        }
        if (i < times) return v;
        i -= (int)times;
        p = *end == ',' ? end + 1 : NULL;
    }
    return -1;
}

int cr_hosts_from_slurm(cr_hostlist *hl, char *err, size_t errlen)
{
    const char *nodes = getenv("SLURM_JOB_NODELIST");
    const char *nn = getenv("SLURM_JOB_NUM_NODES");
    const char *counts = getenv("SLURM_TASKS_PER_NODE");
    if (!counts) counts = getenv("SLURM_JOB_CPUS_PER_NODE");
    if (!nodes || !nn || atoi(nn) < 2) return 1;
    /* The node list goes to the shell through the environment, never into the
     * command's text. */
    setenv("COURIER_SLURM_NODES", nodes, 1);
    FILE *f = popen("scontrol show hostnames \"$COURIER_SLURM_NODES\"", "r");
    unsetenv("COURIER_SLURM_NODES");
    if (!f) {
        snprintf(err, errlen, "cannot run scontrol to list the allocation's nodes: %s",
                 strerror(errno));
        return -1;
    }
    char line[300];
    int i = 0, rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!*line) continue;
        long slots = counts ? slurm_count(counts, i) : 1;
        rc = add(hl, line, strlen(line), slots > 0 ? (slots > MAX_SLOTS ? MAX_SLOTS : slots) : 1,
                 err, errlen);
        i++;
    }
    int st = pclose(f);
    if (!rc && (i < 2 || st != 0)) {
        snprintf(err, errlen,
                 "scontrol show hostnames %s gave %d node%s (status %d); give the hosts "
                 "with --hosts",
                 nodes, i, i == 1 ? "" : "s", st);
        rc = -1;
    }
    return rc;
}

int cr_hosts_place(cr_hostlist *hl, int n, char *err, size_t errlen)
{
    int left = n, kept = 0;
    for (int i = 0; i < hl->n; i++) {
        int c = left < hl->slots[i] ? left : hl->slots[i];
        left -= c;
        if (!c) {
            free(hl->name[i]);
            continue;
        }
        hl->name[kept] = hl->name[i];
        hl->slots[kept] = hl->slots[i];
        hl->count[kept] = c;
        kept++;
    }
    hl->n = kept;
    if (left) {
        int slots = n - left;
        snprintf(err, errlen,
                 "-n %d: the hosts have %d slot%s in all; give more slots (a:8 in --hosts, "
                 "slots=8 in a hostfile) or fewer ranks",
                 n, slots, slots == 1 ? "" : "s");
        return -1;
    }
    return 0;
}

/* Whether an address literal is a loopback address or one of this machine's. */
static bool addr_here(const char *name)
{
    unsigned char a[16];
    int fam = inet_pton(AF_INET, name, a) == 1    ? AF_INET
              : inet_pton(AF_INET6, name, a) == 1 ? AF_INET6
                                                  : 0;
    if (!fam) return false;
    if (fam == AF_INET && a[0] == 127) return true;
    if (fam == AF_INET6 && !memcmp(a, &in6addr_loopback, 16)) return true;
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs)) return false;
    bool found = false;
    for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != fam) continue;
        const void *mine =
            fam == AF_INET ? (const void *)&((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr
                           : (const void *)&((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr;
        found = !memcmp(mine, a, fam == AF_INET ? 4 : 16);
    }
    freeifaddrs(ifs);
    return found;
}

/* Whether a host name means this machine: localhost, this machine's name (its
 * first part against a name without a domain, either way) or an address of it. */
static bool name_here(const char *name, const char *me)
{
    if (!strcmp(name, "localhost") || !strcmp(name, "localhost.localdomain") ||
        !strcmp(name, "ip6-localhost") || !strcmp(name, "ip6-loopback"))
        return true;
    if (*me) {
        size_t a = strcspn(name, "."), b = strcspn(me, ".");
        if (!strcmp(name, me) || ((!name[a] || !me[b]) && a == b && !strncmp(name, me, a)))
            return true;
    }
    return addr_here(name);
}

bool cr_hosts_all_here(const cr_hostlist *hl)
{
    char me[256] = "";
    if (gethostname(me, sizeof me - 1)) me[0] = 0;
    for (int i = 0; i < hl->n; i++)
        if (!name_here(hl->name[i], me)) return false;
    return hl->n > 0;
}

void cr_hosts_free(cr_hostlist *hl)
{
    for (int i = 0; i < hl->n; i++) free(hl->name[i]);
    free(hl->name);
    free(hl->slots);
    free(hl->count);
    memset(hl, 0, sizeof *hl);
}
