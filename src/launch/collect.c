/* The reader of a launched job's rings (collect.h): the rings come from the hub
 * (ring_hub.h), shared with the console, and are read every poll: a writer never wakes
 * the reader, it only waits (bounded) when its ring is full. */
#include "collect.h"
#include "common/outpath.h"
#include "common/path_match.h"
#include "common/strpool.h"
#include "common/aggregate.h"
#include "common/text_escape.h"
#include "ring_hub.h"
#include "roll.h"
#include "common/wire.h"
#include "common/wire_encode.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* An idle ring's writer is looked for in /proc at one poll in DEAD_LOOK (a system call
 * per ring: thousands of processes at once would make every poll that many); the end
 * its writer marked in the ring is seen at once. */
#define DEAD_LOOK 64

/* The processes refused, as NOTE records ("untraced: ...") for a recording of the job:
 * `report` of the recordings then says what the live run said on stderr. */
#define UNTOLD_MAX 64
struct untold {
    long pid[UNTOLD_MAX], ppid[UNTOLD_MAX];
    char why[UNTOLD_MAX][160];
    size_t n;
    unsigned long more; /* refused past UNTOLD_MAX: counted in the last note */
};

struct ring_out {
    int active; /* the hub's ring of this slot is read here */
    int out;    /* the recording; -1: not made yet */
    int failed; /* it could not be made: what the ring holds is dropped */
    struct culeak_roller roll; /* its parts (one unless record --roll) */
    int roll_said;             /* a part that could not be started was said */
    struct culeak_agg *agg; /* aggregated: the filter its bytes go through; NULL: none */
};

struct culeak_collector {
    struct culeak_hub *hub;
    char *attach_out; /* attached: the recording of rings that name none */
    char *pattern;    /* launched: the output pattern the job was given (NULL: none) */
    struct culeak_roll_opts roll; /* record --roll */
    struct ring_out *outs; /* one per slot of the hub, by its index */
    size_t n;
    long *pids; /* of every ring taken (culeak_collector_has) */
    size_t npids, cappids;
    unsigned long unrecorded; /* processes refused, or whose recording could not be made */
    unsigned long refused_seen; /* of the hub's refusals, those counted in unrecorded */
    unsigned polls;
    struct untold untold; /* refusals not yet written into a recording */
    struct culeak_collect_tap tap; /* bytes NULL: none */
    struct strpool names; /* the recordings' names taken in this job */
    uint64_t aggregate_ns; /* record --aggregate: the CHURN interval; 0: every event written */
};

struct culeak_collector *culeak_collector_new(void)
{
    struct culeak_collector *c = calloc(1, sizeof *c);
    char err[300];
    if (c)
        strpool_init(&c->names);
    if (c && !(c->hub = culeak_hub_new(0, err, sizeof err))) {
        fprintf(stderr, "culeak: %s\n", err);
        free(c);
        return NULL;
    }
    return c;
}

struct culeak_collector *culeak_collector_attach(const char *out)
{
    struct culeak_collector *c = culeak_collector_new();
    if (!c)
        return NULL;
    if (!(c->attach_out = strdup(out))) {
        culeak_collector_free(c);
        return NULL;
    }
    culeak_hub_started(c->hub); /* no program gets the first ring */
    return c;
}

int culeak_collector_expect(struct culeak_collector *c, const char *pattern)
{
    free(c->pattern);
    c->pattern = pattern ? strdup(pattern) : NULL;
    return pattern && !c->pattern ? -1 : 0;
}

const char *culeak_collector_socket(const struct culeak_collector *c) { return culeak_hub_socket(c->hub); }

int culeak_collector_has(const struct culeak_collector *c, long pid)
{
    for (size_t i = 0; i < c->npids; i++)
        if (c->pids[i] == pid)
            return 1;
    return 0;
}

unsigned long culeak_collector_unrecorded(const struct culeak_collector *c) { return c ? c->unrecorded : 0; }

int culeak_collector_child_env(struct culeak_collector *c) { return culeak_hub_child_env(c->hub); }

void culeak_collector_started(struct culeak_collector *c) { culeak_hub_started(c->hub); }

/* An entry for each slot the hub has; 0, or -1 (rings past it wait for the next poll). */
static int grow_outs(struct culeak_collector *c)
{
    size_t n = culeak_hub_count(c->hub);
    if (n <= c->n)
        return 0;
    struct ring_out *p = realloc(c->outs, n * sizeof *p);
    if (!p)
        return -1;
    for (size_t i = c->n; i < n; i++)
        p[i] = (struct ring_out){.out = -1};
    c->outs = p;
    c->n = n;
    return 0;
}

static void remember_pid(struct culeak_collector *c, long pid)
{
    if (c->npids == c->cappids) {
        size_t cap = c->cappids ? c->cappids * 2 : 16;
        long *p = realloc(c->pids, cap * sizeof *p);
        if (!p)
            return;
        c->pids = p;
        c->cappids = cap;
    }
    c->pids[c->npids++] = pid;
}

/* A refused process's parent, while it lives (/proc/PID/stat's 4th field): 0 unknown. */
static long parent_of(long pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "re");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    const char *close_paren = strrchr(buf, ')'); /* the command name may hold anything */
    long ppid = 0;
    if (!close_paren || sscanf(close_paren + 1, " %*c %ld", &ppid) != 1)
        return 0;
    return ppid;
}

static void untold_add(struct untold *u, long pid, const char *why)
{
    if (u->n == UNTOLD_MAX) {
        u->more++;
        return;
    }
    u->pid[u->n] = pid;
    u->ppid[u->n] = parent_of(pid);
    snprintf(u->why[u->n], sizeof u->why[u->n], "%s", why);
    u->n++;
}

/* The rings that came, each read from its slot; the processes refused, said. */
static void take_new(struct culeak_collector *c)
{
    long i, pid;
    char why[160];
    while (culeak_hub_refusal(c->hub, &pid, why, sizeof why)) {
        fprintf(stderr, "culeak: process %ld is not traced: %s\n", pid, why);
        untold_add(&c->untold, pid, why);
    }
    c->unrecorded += culeak_hub_refused(c->hub) - c->refused_seen;
    c->refused_seen = culeak_hub_refused(c->hub);
    while (grow_outs(c) == 0 && (i = culeak_hub_take(c->hub)) >= 0) {
        c->outs[i] = (struct ring_out){.active = 1, .out = -1};
        remember_pid(c, culeak_hub_pid(c->hub, (size_t)i));
    }
}

/* Takes name for a recording of this job: 0, or -1 when an earlier process of the job
 * has it (out of memory: taken, as before). */
static int take_name(struct culeak_collector *c, const char *name)
{
    size_t before = c->names.count;
    uint32_t id = strpool_id(&c->names, name, strlen(name));
    return id != UINT32_MAX && id < before ? -1 : 0;
}

/* A pid the system gave again within one job (pid_max wrapped in a long job) expands the
 * output pattern to an earlier process's recording, which replacing would lose: the later
 * process gets PATH.PID, or PATH.PID.N, instead. path becomes that name; shared too is
 * off then (the name is this process's own). */
static void unique_name(struct culeak_collector *c, char *path, size_t cap, long pid, int *shared)
{
    char own[CULEAK_RING_PATH_MAX + 64];
    if (*shared) { /* the job's one name, else PATH.PID: the second of those is taken */
        snprintf(own, sizeof own, "%s.%ld", path, pid);
        if (take_name(c, path) == 0 || take_name(c, own) == 0)
            return;
    } else if (take_name(c, path) == 0)
        return;
    snprintf(own, sizeof own, "%s.%ld", path, pid);
    for (unsigned n = 2; take_name(c, own) != 0; n++)
        snprintf(own, sizeof own, "%.*s.%ld.%u", (int)(cap - 48), path, pid, n);
    if (strlen(own) < cap) {
        memcpy(path, own, strlen(own) + 1);
        *shared = 0;
    }
}

/* The recording of ring i, at the path its writer put in the header. */
static void open_out(struct culeak_collector *c, size_t i)
{
    struct ring_out *o = &c->outs[i];
    struct culeak_ring *r = culeak_hub_ring(c->hub, i);
    long pid = culeak_hub_pid(c->hub, i);
    char path[CULEAK_RING_PATH_MAX], made[CULEAK_RING_PATH_MAX + 32];
    memcpy(path, r->h->path, sizeof path);
    path[sizeof path - 1] = 0;
    int shared = r->h->path_shared != 0;
    o->failed = 1;
    if (path[0] == '/' && !(c->pattern && culeak_path_matches(c->pattern, pid, path))) {
        /* written only where culeak said: a ring's header is its writer's to fill */
        char shown[2 * CULEAK_RING_PATH_MAX];
        fprintf(stderr, "culeak: process %ld names a recording culeak did not give it (%s): it is not recorded\n",
                pid, text_escape(shown, sizeof shown, path));
        c->unrecorded++;
        return;
    }
    if (path[0] != '/' && c->attach_out) { /* an attached process names no recording */
        snprintf(path, sizeof path, "%s", c->attach_out);
        shared = 1;
    }
    if (path[0] != '/')
        return; /* no recording asked for */
    unique_name(c, path, sizeof path, pid, &shared);
    /* the stream's MAGIC is no record (the ring starts at HELLO): the roller writes it */
    o->out = culeak_roller_start(&o->roll, &c->roll, path, shared, pid, (long long)time(NULL), made, sizeof made);
    if (o->out >= 0)
        (void)take_name(c, made); /* PATH.PID, when the job's one name was there before it */
    if (o->out < 0) {
        char why[160];
        snprintf(why, sizeof why, "its recording could not be created: %s", strerror(errno));
        fprintf(stderr, "culeak: cannot create %s (%s): process %ld is not recorded\n", made, strerror(errno), pid);
        untold_add(&c->untold, pid, why);
    }
    o->failed = o->out < 0;
    c->unrecorded += o->failed;
}

void culeak_collector_roll(struct culeak_collector *c, const struct culeak_roll_opts *opt) { c->roll = *opt; }

/* Ring i's recording goes on in a new part when its part is due to end. */
static void roll_if_due(struct culeak_collector *c, size_t i)
{
    struct ring_out *o = &c->outs[i];
    long long now = (long long)time(NULL);
    if (o->out < 0 || !culeak_roller_due(&o->roll, now) || culeak_roller_next(&o->roll, &o->out, now) == 0)
        return;
    if (errno != EEXIST && !o->roll_said) { /* taken: a later try has another name */
        fprintf(stderr, "culeak: cannot start the next part of the recording of process %ld (%s): it goes on in %s\n",
                culeak_hub_pid(c->hub, i), strerror(errno), o->roll.name);
        o->roll_said = 1;
    }
}

void culeak_collector_tap(struct culeak_collector *c, const struct culeak_collect_tap *tap)
{
    c->tap = tap ? *tap : (struct culeak_collect_tap){0};
}

void culeak_collector_aggregate(struct culeak_collector *c, uint64_t interval_ns) { c->aggregate_ns = interval_ns; }

struct agg_target {
    struct culeak_collector *c;
    size_t i;
};
static void write_out(struct culeak_collector *c, size_t i, const uint8_t *p, size_t n);
static void agg_write(void *ctx, const void *p, size_t n)
{
    struct agg_target *t = ctx;
    write_out(t->c, t->i, p, n);
}

/* What goes to ring i's recording: the tap sees it as it came; an aggregated recording
 * gets it through its filter, made at the recording's first bytes. */
static void write_full(struct culeak_collector *c, size_t i, const uint8_t *p, size_t n)
{
    struct ring_out *o = &c->outs[i];
    if (c->tap.bytes && n)
        c->tap.bytes(c->tap.ctx, i, p, n);
    if (c->aggregate_ns && o->out >= 0 && !o->agg) {
        struct agg_target *t = malloc(sizeof *t);
        if (t)
            *t = (struct agg_target){c, i};
        if (t && !(o->agg = culeak_agg_new(c->aggregate_ns, 0, agg_write, t)))
            free(t);
        if (!o->agg) /* out of memory: this process's recording is a full one */
            c->aggregate_ns = 0;
    }
    if (o->agg) {
        culeak_agg_feed(o->agg, p, n);
        return;
    }
    write_out(c, i, p, n);
}

static void agg_end(struct ring_out *o)
{
    if (!o->agg)
        return;
    culeak_agg_finish(o->agg);
    free(culeak_agg_ctx(o->agg));
    culeak_agg_free(o->agg);
    o->agg = NULL;
}

static void write_out(struct culeak_collector *c, size_t i, const uint8_t *p, size_t n)
{
    struct ring_out *o = &c->outs[i];
    while (n > 0 && o->out >= 0) {
        ssize_t k = write(o->out, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            fprintf(stderr, "culeak: cannot write the recording of process %ld (%s): it is cut off here\n",
                    culeak_hub_pid(c->hub, i), k < 0 ? strerror(errno) : "short write");
            close(o->out);
            o->out = -1;
            return;
        }
        culeak_roller_wrote(&o->roll, p, (size_t)k);
        p += k;
        n -= (size_t)k;
    }
}

/* What ring i holds, written out: one pass, the bytes up to the ring's end and those
 * after it went round, not what the process commits meanwhile. Reading on behind a writer
 * that keeps writing would take each cache line the moment it is written, from the other
 * processor, and write a few kilobytes per system call: under a job that allocates
 * without pause, 1.7 times the CPU of the whole run; the next poll comes within
 * POLL_BUSY_MS, and the ring holds several of them. */
static size_t drain(struct culeak_collector *c, size_t i)
{
    struct culeak_ring *r = culeak_hub_ring(c->hub, i);
    const uint8_t *p;
    size_t n, total = 0;
    for (int part = 0; part < 2 && (n = culeak_ring_peek(r, &p)) > 0; part++) {
        if (c->outs[i].out < 0 && !c->outs[i].failed)
            open_out(c, i);
        roll_if_due(c, i);
        write_full(c, i, p, n);
        culeak_ring_consume(r, n);
        total += n;
    }
    return total;
}

/* Events the writer dropped after its last record (it ended while its reader was
 * stopped): the LOST record it could not write, at the recording's end. */
static void say_last_gap(struct culeak_collector *c, size_t i);

/* Ring i read to its end: the recording closed, the slot given back for a later process
 * (a job of any number of processes over its life holds only those that run). */
static void finish(struct culeak_collector *c, size_t i)
{
    say_last_gap(c, i);
    agg_end(&c->outs[i]);
    if (c->outs[i].out >= 0)
        close(c->outs[i].out);
    culeak_roller_free(&c->outs[i].roll);
    if (c->tap.ended)
        c->tap.ended(c->tap.ctx, i);
    c->outs[i] = (struct ring_out){.out = -1};
    culeak_hub_release(c->hub, i);
}

static int writer_gone(struct culeak_collector *c, size_t i)
{
    if (__atomic_load_n(&culeak_hub_ring(c->hub, i)->h->ended, __ATOMIC_ACQUIRE))
        return 1;
    return (i + c->polls) % DEAD_LOOK == 0 && !culeak_hub_writer_live(c->hub, i);
}

/* Ring i's recording has its HELLO and was read to a record's end: a NOTE fits there. */
static int can_note(const struct culeak_collector *c, size_t i)
{
    return i < c->n && c->outs[i].active && c->outs[i].out >= 0;
}

/* The recording a refusal is written into: its parent's when that is recorded, else the
 * first recording open. -1: none open now (the refusal waits for one). */
static long note_target(struct culeak_collector *c, long ppid)
{
    long first = -1;
    for (size_t i = 0; i < c->n; i++) {
        if (!can_note(c, i))
            continue;
        if (ppid > 0 && culeak_hub_pid(c->hub, i) == ppid)
            return (long)i;
        if (first < 0)
            first = (long)i;
    }
    return first;
}

static void write_note(struct culeak_collector *c, size_t i, const char *text)
{
    uint8_t rec[CULEAK_REC_HEADROOM + CULEAK_UVARINT_MAX + 320];
    size_t n = strlen(text) < 300 ? strlen(text) : 300;
    size_t k = culeak_put_s(rec + CULEAK_REC_HEADROOM, text, n);
    write_full(c, i, rec, culeak_rec_finish(rec, CULEAK_REC_NOTE, k));
}

/* After the rings were read (each recording at a record's end): the refusals told. */
static void tell_refusals(struct culeak_collector *c)
{
    struct untold *u = &c->untold;
    size_t k = 0;
    for (; k < u->n; k++) {
        long t = note_target(c, u->ppid[k]);
        if (t < 0)
            break;
        char text[300];
        int last = k + 1 == u->n && u->more;
        snprintf(text, sizeof text, "untraced: process %ld is not traced (%s)%s", u->pid[k], u->why[k],
                 last ? "; more processes were refused after it" : "");
        write_note(c, (size_t)t, text);
    }
    memmove(u->pid, u->pid + k, (u->n - k) * sizeof *u->pid);
    memmove(u->ppid, u->ppid + k, (u->n - k) * sizeof *u->ppid);
    memmove(u->why, u->why + k, (u->n - k) * sizeof *u->why);
    u->n -= k;
    if (!u->n)
        u->more = 0;
}

size_t culeak_collector_poll(struct culeak_collector *c, int timeout_ms)
{
    struct pollfd fds[CULEAK_HUB_POLLFDS];
    size_t nf = culeak_hub_pollfds(c->hub, fds, CULEAK_HUB_POLLFDS);
    if (poll(fds, nf, timeout_ms) > 0)
        culeak_hub_service(c->hub);
    take_new(c);
    size_t total = 0;
    c->polls++;
    for (size_t i = 0; i < c->n; i++) {
        if (!c->outs[i].active)
            continue;
        size_t got = drain(c, i);
        /* nothing came: whether its writer ended is looked at before the last read, so
         * what it committed before it ended is read */
        if (!got && writer_gone(c, i)) {
            got = drain(c, i);
            const uint8_t *p;
            if (c->untold.n && can_note(c, i))
                tell_refusals(c); /* while this recording is still open */
            if (!culeak_ring_peek(culeak_hub_ring(c->hub, i), &p))
                finish(c, i);
        }
        total += got;
    }
    if (c->untold.n)
        tell_refusals(c);
    if (c->tap.turn)
        c->tap.turn(c->tap.ctx);
    return total;
}

int culeak_collector_busy(struct culeak_collector *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->outs[i].active)
            return 1;
    /* a hand-over under way (its process lives), or a ring not taken yet */
    for (size_t i = 0; i < culeak_hub_count(c->hub); i++)
        if ((i >= c->n || !c->outs[i].active) && culeak_hub_writer_live(c->hub, i))
            return 1;
    return culeak_hub_pending(c->hub);
}

static void say_last_gap(struct culeak_collector *c, size_t i)
{
    uint64_t first, last, n = culeak_ring_untold(culeak_hub_ring(c->hub, i), &first, &last);
    if (!n || (c->outs[i].out < 0 && !c->tap.bytes))
        return;
    uint8_t rec[CULEAK_ENC_LOST_MAX];
    write_full(c, i, rec, culeak_enc_lost(rec, n, first, last));
}

void culeak_collector_free(struct culeak_collector *c)
{
    if (!c)
        return;
    culeak_collector_poll(c, 0);
    for (size_t i = 0; i < c->n; i++)
        if (c->outs[i].active)
            finish(c, i);
    culeak_hub_free(c->hub);
    free(c->outs);
    free(c->pids);
    free(c->attach_out);
    free(c->pattern);
    strpool_free(&c->names);
    free(c);
}
