/* The end of `courier run --trace FILE`: the ranks' part files (src/core/trace.h's
 * records, one file per rank in a directory) become one trace in the Chrome
 * trace-event format, which Perfetto's UI and `courier trace` read.
 *
 * Invariants: the output has one event per line (courier trace relies on it);
 * times are microseconds from the job's earliest record; a part that is missing
 * or cut short is reported and the rest is still written. A message's send and
 * its receive are paired by order: the k-th message from s to d on one context
 * with one tag is the k-th that d matched from s with them (the engine's
 * non-overtaking rule), so the pair needs nothing on the wire. */
#define _GNU_SOURCE
#include "trace_merge.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/trace.h"
#include "json.h"

typedef struct part {
    const cr_trace_head *head;
    const cr_trace_rec *rec;
    size_t map_len;
    uint64_t n;        /* records to read */
    uint32_t ended;    /* the head's: 0 the rank died first, 1 closed, 2 SIGTERM */
    uint64_t last_run; /* index of its last RUN record (the one that counts) */
    long double rate;  /* nanoseconds a tick */
} part;

/* A record's time in cr_clock_ns's nanoseconds (0 stays 0: not set). */
static uint64_t ns_of(const part *p, uint64_t tick)
{
    if (!tick) return 0;
    long double d = ((long double)tick - (long double)p->head->tick0) * p->rate;
    long double ns = (long double)p->head->ns0 + d;
    return ns > 0 ? (uint64_t)ns : 1;
}

/* One part's strings, by id (NAME records), read before its events. */
typedef char names_t[CR_TRACE_NAMES + 1][CR_TRACE_NAME_LEN];

static void names_read(const part *p, names_t *nm)
{
    memset(nm, 0, sizeof *nm);
    for (uint64_t i = 0; i < p->n; i++) {
        const cr_trace_rec *x = &p->rec[i];
        if (x->kind != CR_TR_NAME || !x->name || x->name > CR_TRACE_NAMES) continue;
        memcpy((*nm)[x->name], x, CR_TRACE_NAME_LEN);
        (*nm)[x->name][CR_TRACE_NAME_LEN - 1] = '\0';
    }
}

/* Message counters per (src, dst, ctx, tag): how many were sent and matched so
 * far, and the key's number, from which the pair's flow id is made. */
typedef struct key {
    int32_t src, dst, tag;
    uint16_t ctx;
    bool used;
    uint32_t sent, matched;
    uint64_t num;
} key;

typedef struct keymap {
    key *k;
    size_t cap, n;
} keymap;

static uint64_t key_hash(int32_t s, int32_t d, uint16_t c, int32_t t)
{
    uint64_t h = (uint64_t)(uint32_t)s * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)(uint32_t)d * 0xc2b2ae3d27d4eb4full;
    h ^= (uint64_t)c << 17 ^ (uint64_t)(uint32_t)t * 0x165667b19e3779f9ull;
    return h ^ h >> 29;
}

static key *key_get(keymap *m, int32_t s, int32_t d, uint16_t c, int32_t t)
{
    if (m->n * 2 >= m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 4096;
        key *k = calloc(cap, sizeof *k);
        if (!k) return NULL;
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->k[i].used) continue;
            size_t j = key_hash(m->k[i].src, m->k[i].dst, m->k[i].ctx, m->k[i].tag) & (cap - 1);
            while (k[j].used) j = (j + 1) & (cap - 1);
            k[j] = m->k[i];
        }
        free(m->k);
        m->k = k;
        m->cap = cap;
    }
    size_t j = key_hash(s, d, c, t) & (m->cap - 1);
    for (;; j = (j + 1) & (m->cap - 1)) {
        key *k = &m->k[j];
        if (!k->used) {
            *k = (key){.src = s, .dst = d, .tag = t, .ctx = c, .used = true, .num = m->n++};
            return k;
        }
        if (k->src == s && k->dst == d && k->ctx == c && k->tag == t) return k;
    }
}

/* Flow ids stay below 2^53, exact in any JSON reader. */
static uint64_t flow_id(const key *k, uint32_t nth)
{
    return (k->num & 0x1fffff) << 32 | nth;
}

static double us(uint64_t t, uint64_t origin)
{
    return t > origin ? (double)(t - origin) / 1000.0 : 0.0;
}

static const char *name_of(const names_t *nm, uint16_t id)
{
    return id && id <= CR_TRACE_NAMES ? (*nm)[id] : "";
}

/* Map rank r's part; false (and a line on err) when it is missing or unreadable. */
static bool part_open(part *p, const char *dir, int r, FILE *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%d", dir, r);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(err, "courier: --trace: no trace from rank %d (%s: %s)%s\n", r, path,
                strerror(errno),
                errno == ENOENT ? "; a rank on another host writes its part there: share the "
                                  "directory, or collect the parts by hand"
                                : "");
        if (fd >= 0) close(fd);
        return false;
    }
    if ((size_t)st.st_size < CR_TRACE_HEAD) {
        fprintf(err, "courier: --trace: rank %d's part %s is too short (%lld bytes)\n", r, path,
                (long long)st.st_size);
        close(fd);
        return false;
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        fprintf(err, "courier: --trace: cannot map %s: %s\n", path, strerror(errno));
        return false;
    }
    p->head = m;
    p->map_len = (size_t)st.st_size;
    if (memcmp(p->head->magic, CR_TRACE_MAGIC, 8) || p->head->rec_size != sizeof(cr_trace_rec) ||
        p->head->rank != (uint32_t)r) {
        fprintf(err, "courier: --trace: %s is not rank %d's part of this courier's trace\n", path,
                r);
        munmap(m, p->map_len);
        p->head = NULL;
        return false;
    }
    p->rec = (const cr_trace_rec *)((const char *)m + CR_TRACE_HEAD);
    p->n = (p->map_len - CR_TRACE_HEAD) / sizeof(cr_trace_rec);
    p->ended = p->head->ended;
    p->rate = p->head->tick1 > p->head->tick0 && p->head->ns1 > p->head->ns0
                  ? (long double)(p->head->ns1 - p->head->ns0) /
                        (long double)(p->head->tick1 - p->head->tick0)
                  : 1.0L;
    p->last_run = UINT64_MAX;
    for (uint64_t i = 0; i < p->n; i++)
        if (p->rec[i].kind == CR_TR_RUN) p->last_run = i;
    return true;
}

static void event_head(FILE *o, bool *first)
{
    fputs(*first ? "\n" : ",\n", o);
    *first = false;
}

int cr_trace_merge(const cr_trace_job *j, FILE *err)
{
    int n = j->nranks;
    part *parts = calloc((size_t)n, sizeof *parts);
    bool *have = calloc((size_t)n, sizeof *have);
    names_t *nm = malloc(sizeof *nm);
    keymap km = {0};
    if (!parts || !have || !nm) {
        fprintf(err, "courier: --trace: out of memory merging %d ranks' parts\n", n);
        free(parts);
        free(have);
        free(nm);
        return -1;
    }
    uint64_t origin = UINT64_MAX;
    for (int r = 0; r < n; r++) {
        have[r] = part_open(&parts[r], j->dir, r, err);
        if (!have[r]) continue;
        for (uint64_t i = 0; i < parts[r].n; i++) {
            const cr_trace_rec *x = &parts[r].rec[i];
            uint64_t t0 = ns_of(&parts[r], x->t0);
            if (x->kind && x->kind != CR_TR_NAME && t0 && t0 < origin) origin = t0;
        }
        if (!parts[r].ended)
            fprintf(err,
                    "courier: --trace: rank %d died before it wrote its last records: the trace "
                    "has what it wrote until then\n",
                    r);
    }
    if (origin == UINT64_MAX) origin = j->hang_at;
    FILE *o = fopen(j->out, "w");
    if (!o) {
        fprintf(err, "courier: --trace: cannot write %s: %s\n", j->out, strerror(errno));
        for (int r = 0; r < n; r++)
            if (have[r]) munmap((void *)parts[r].head, parts[r].map_len);
        free(parts);
        free(have);
        free(nm);
        return -1;
    }
    fputs("{\"traceEvents\":[", o);
    bool first = true;
    for (int r = 0; r < n; r++) {
        event_head(o, &first);
        fprintf(o,
                "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"rank "
                "%d\"}},\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\",\"args\":{"
                "\"sort_index\":%d}}",
                r, r, r, r);
        static const char *const thr[] = {"main", "progress", "thread"};
        for (int t = 0; t < CR_TR_THREADS; t++)
            fprintf(o,
                    ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":{"
                    "\"name\":\"%s\"}}",
                    r, t, thr[t]);
    }
    uint64_t events = 0, unmatched = 0;
    for (int r = 0; r < n; r++) {
        if (!have[r]) continue;
        const part *p = &parts[r];
        names_read(p, nm);
        uint64_t last = 0;
        for (uint64_t i = 0; i < p->n; i++) {
            const cr_trace_rec *x = &p->rec[i];
            uint64_t end = ns_of(p, x->t1 > x->t0 ? x->t1 : x->t0);
            if (x->kind && x->kind != CR_TR_NAME && end > last) last = end;
        }
        for (uint64_t i = 0; i < p->n; i++) {
            const cr_trace_rec *x = &p->rec[i];
            uint64_t t0 = ns_of(p, x->t0), t1 = ns_of(p, x->t1);
            switch (x->kind) {
            case CR_TR_RUN: {
                if (i != p->last_run) continue;
                uint64_t end = t1 ? t1 : last;
                event_head(o, &first);
                fprintf(o,
                        "{\"ph\":\"X\",\"cat\":\"run\",\"name\":\"rank %d\",\"pid\":%d,\"tid\":0,"
                        "\"ts\":%.3f,\"dur\":%.3f}",
                        r, r, us(t0, origin), us(end, t0));
                break;
            }
            case CR_TR_CALL:
                event_head(o, &first);
                fprintf(o, "{\"ph\":\"X\",\"cat\":\"call\",\"name\":");
                cr_json_str(o, name_of(nm, x->name));
                fprintf(o,
                        ",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"peer\":%d,"
                        "\"tag\":%d,\"bytes\":%" PRIu64 ",\"ctx\":%u,\"how\":",
                        r, x->tid, us(t0, origin), us(t1, t0), x->peer, x->tag, x->bytes, x->ctx);
                cr_json_str(o, name_of(nm, x->how));
                fprintf(o, ",\"wait\":%.3f}}", (double)x->wait / 1000.0);
                break;
            case CR_TR_SEND:
            case CR_TR_RECV: { /* a flow's start at its send, its end where it was matched */
                bool send = x->kind == CR_TR_SEND;
                key *k = send ? key_get(&km, r, x->peer, x->ctx, x->tag)
                              : key_get(&km, x->peer, r, x->ctx, x->tag);
                if (!k) break;
                event_head(o, &first);
                fprintf(o,
                        "{\"ph\":\"%s\",\"cat\":\"msg\",\"name\":\"msg\",\"id\":%" PRIu64
                        ",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"args\":{\"%s\":%d,\"bytes\":%" PRIu64
                        ",\"tag\":%d,\"ctx\":%u,\"how\":",
                        send ? "s" : "f\",\"bp\":\"e", flow_id(k, send ? k->sent++ : k->matched++),
                        r, x->tid, us(send ? t0 : t1, origin), send ? "to" : "from", x->peer,
                        x->bytes, x->tag, x->ctx);
                cr_json_str(o, name_of(nm, x->how));
                if (!send) fprintf(o, ",\"posted\":%.3f", us(t0, origin));
                fputs("}}", o);
                break;
            }
            default:
                continue;
            }
            events++;
        }
    }
    for (size_t i = 0; i < km.cap; i++)
        if (km.k[i].used && km.k[i].sent != km.k[i].matched)
            unmatched += km.k[i].sent > km.k[i].matched ? km.k[i].sent - km.k[i].matched
                                                        : km.k[i].matched - km.k[i].sent;
    /* The watchdog's report, one instant event per line, on the rank it names. */
    for (const char *l = j->hang; l && *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), l);
        const char *rk = strstr(line, "rank ");
        int pid = rk ? atoi(rk + 5) : 0;
        if (pid < 0 || pid >= n) pid = 0;
        event_head(o, &first);
        fprintf(o,
                "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"hang\",\"name\":\"hang\",\"pid\":%d,"
                "\"tid\":0,\"ts\":%.3f,\"args\":{\"report\":",
                pid, us(j->hang_at, origin));
        cr_json_str(o, line);
        fputs("}}", o);
        l = e ? e + 1 : l + len;
    }
    fputs("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"courier_trace\":1,\"ranks\":", o);
    fprintf(o, "%d,\"command\":", n);
    cr_json_str(o, j->command ? j->command : "");
    fputs(",\"clock\":", o);
    cr_json_str(o, j->clock ? j->clock : "real");
    fputs(",\"lost\":{", o);
    bool lf = true;
    for (int r = 0; r < n; r++) {
        if (have[r] && !parts[r].head->lost && parts[r].ended) continue;
        fprintf(o, "%s\"%d\":%s", lf ? "" : ",", r,
                !have[r]          ? "\"missing\""
                : !parts[r].ended ? "\"cut\""
                                  : "");
        if (have[r] && parts[r].ended) fprintf(o, "%" PRIu64, parts[r].head->lost);
        lf = false;
    }
    fprintf(o, "},\"unmatched\":%" PRIu64 "}}\n", unmatched);
    int rc = ferror(o) ? -1 : 0;
    if (fclose(o) != 0) rc = -1;
    if (rc) fprintf(err, "courier: --trace: writing %s failed: %s\n", j->out, strerror(errno));
    for (int r = 0; r < n; r++)
        if (have[r]) munmap((void *)parts[r].head, parts[r].map_len);
    free(parts);
    free(have);
    free(nm);
    free(km.k);
    return rc ? -1 : (int)(events > INT32_MAX ? INT32_MAX : events);
}

void cr_trace_parts_remove(const char *dir, int nranks)
{
    char path[4096];
    for (int r = 0; r < nranks; r++) {
        snprintf(path, sizeof path, "%s/rank-%d", dir, r);
        unlink(path);
    }
    rmdir(dir);
}
