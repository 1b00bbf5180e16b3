/* gen_recording: synthetic recordings for measuring how culeak reads at scale, written
 * with the wire format's encoders (common/wire.h) in the records the shim writes: one
 * HELLO, MODULES (this executable, so call sites symbolize), a trace tree of FRAMEs,
 * then ALLOCs and FREEs (the repeats as ALLOC_AGAIN/FREE_AGAIN), a MARK now and then,
 * EXIT.
 *     gen_recording [-e EVENTS] [-s STACKS] [-l LIVE] [-p PROCESSES] [-c] [-r RANK] [-H HOST]
 *                   [-g BYTES] -o FILE
 * EVENTS per process (default 1M) over STACKS stacks (1000) of depth 12, at most LIVE
 * allocations live at once (10000: the rest freed, the last LIVE left as leaks);
 * PROCESSES > 1 writes FILE and FILE.PID for the others, as `culeak record -o FILE`; each
 * runs code of its own (other frames), or with -c the same code, as a job's workers do
 * (the same frames and events, at the same addresses).
 * RANK: the process is that rank of a job (RANK=N in its environment), on HOST
 * ("benchhost"); BYTES: at each mark it also keeps BYTES from a stack of its own (a leak
 * growing BYTES an iteration). */
#include "common/wire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEPTH 12
#define MARK_EVERY 100000

struct out {
    FILE *f;
    uint8_t rec[CULEAK_REC_HEADROOM + 512];
    size_t plen;
};

#define SEED 88172645463325252ull
static uint64_t rng = SEED;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint8_t *at(struct out *o) { return o->rec + CULEAK_REC_HEADROOM + o->plen; }
static void u(struct out *o, uint64_t v) { o->plen += culeak_put_u(at(o), v); }
static void z(struct out *o, int64_t v) { o->plen += culeak_put_z(at(o), v); }
static void s(struct out *o, const char *t) { o->plen += culeak_put_s(at(o), t, strlen(t)); }
static void end(struct out *o, uint8_t type)
{
    size_t n = culeak_rec_finish(o->rec, type, o->plen);
    fwrite(o->rec, 1, n, o->f);
    o->plen = 0;
}

/* This executable's text, from /proc/self/maps: the module frames point into. */
static void self_text(char *path, size_t len, uint64_t *base, uint64_t *lo, uint64_t *hi)
{
    FILE *m = fopen("/proc/self/maps", "r");
    char line[4600];
    *base = *lo = *hi = 0;
    ssize_t k = readlink("/proc/self/exe", path, len - 1);
    path[k > 0 ? k : 0] = 0;
    while (m && fgets(line, sizeof line, m)) {
        unsigned long long a, b, off;
        char perms[8], file[4097] = "";
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4096s", &a, &b, perms, &off, file) < 4 || strcmp(file, path))
            continue;
        if (!*base)
            *base = a - off;
        if (perms[2] == 'x') {
            *lo = a;
            *hi = b;
        }
    }
    if (m)
        fclose(m);
}

static const char *host = "benchhost";
static long rank = -1;
static uint64_t grow;

static int one(const char *file, uint64_t pid, uint64_t events, uint64_t stacks, uint64_t live_max)
{
    struct out o = {.f = fopen(file, "wbx")};
    if (!o.f) {
        fprintf(stderr, "gen_recording: %s: %s\n", file, strerror(errno));
        return 1;
    }
    static char buf[1 << 20];
    setvbuf(o.f, buf, _IOFBF, sizeof buf);
    fwrite(CULEAK_MAGIC, 1, CULEAK_MAGIC_LEN, o.f);
    char exe[4096];
    uint64_t base, lo, hi;
    self_text(exe, sizeof exe, &base, &lo, &hi);
    u(&o, CULEAK_FORMAT_VERSION), u(&o, pid), u(&o, 1), u(&o, 1700000000000000000ull), u(&o, 1000000);
    char env[32];
    snprintf(env, sizeof env, "RANK=%ld", rank);
    s(&o, host), s(&o, exe), u(&o, 1), s(&o, exe), u(&o, rank >= 0);
    if (rank >= 0)
        s(&o, env);
    u(&o, 64), u(&o, CULEAK_HELLO_FILE);
    end(&o, CULEAK_REC_HELLO);
    u(&o, 1), u(&o, 1), s(&o, exe), u(&o, base), u(&o, 1), u(&o, lo - base), u(&o, hi - lo);
    end(&o, CULEAK_REC_MODULES);
    /* STACKS stacks sharing their outer frames, as a program's do */
    uint64_t *leaf = malloc((stacks + 1) * sizeof *leaf), id = 0;
    uint64_t ips[256];
    for (int i = 0; i < 256; i++)
        ips[i] = lo + next() % (hi - lo);
    for (uint64_t st = 0; st <= stacks; st++) { /* the last one: the growing leak's */
        uint64_t parent = 0;
        for (int d = 0; d < DEPTH; d++) {
            u(&o, ++id), u(&o, parent), u(&o, ips[(d < DEPTH / 2 ? (uint64_t)d * 7 : st * 31 + (uint64_t)d) % 256] + (uint64_t)d);
            end(&o, CULEAK_REC_FRAME);
            parent = id;
        }
        leaf[st] = parent;
    }
    /* allocations live in a ring of LIVE slots: each new one frees the slot's last */
    uint64_t *slot = calloc(live_max ? live_max : 1, sizeof *slot), addr = 0, seq = 0, prev_stack = 0;
    uint64_t prev_size = 0, next_addr = 0x7f0000000000ull;
    int last_alloc = 0, last_free = 0;
    for (uint64_t e = 0, marks = 0; e < events;) {
        if (++seq % MARK_EVERY == 0 || e >= (marks + 1) * MARK_EVERY) { /* frees move seq on too */
            char label[32];
            snprintf(label, sizeof label, "step %llu", (unsigned long long)++marks);
            u(&o, seq), u(&o, 1000), u(&o, 7), s(&o, label), u(&o, 0);
            if (rank >= 0) /* the device's memory: 80 GiB, half of it free */
                z(&o, 0), u(&o, 40ull << 30), u(&o, 80ull << 30);
            end(&o, CULEAK_REC_MARK);
            last_alloc = last_free = 0;
            if (grow) { /* never freed */
                uint64_t a = next_addr;
                next_addr += grow + (1 << 20);
                u(&o, ++seq), u(&o, 800), u(&o, 0), u(&o, 1), u(&o, 1), z(&o, 0), u(&o, 0), u(&o, grow);
                z(&o, (int64_t)(a - addr)), u(&o, leaf[stacks]);
                end(&o, CULEAK_REC_ALLOC);
                addr = a;
                e++;
            }
            continue;
        }
        uint64_t k = seq % (live_max ? live_max : 1);
        if (slot[k] && (e & 1)) { /* a free */
            int64_t step = (int64_t)(slot[k] - addr);
            if (last_free) {
                u(&o, 500), z(&o, step);
                end(&o, CULEAK_REC_FREE_AGAIN);
            } else {
                u(&o, 1), u(&o, 500), u(&o, 0), u(&o, 2), u(&o, 1), z(&o, step), u(&o, prev_size);
                end(&o, CULEAK_REC_FREE);
            }
            addr = slot[k];
            slot[k] = 0;
            last_free = 1, last_alloc = 0;
        } else { /* an allocation, often at the stack and size of the one before */
            if (slot[k]) {
                seq++; /* its slot's free first, as a FREE of its own */
                u(&o, 1), u(&o, 500), u(&o, 0), u(&o, 2), u(&o, 1), z(&o, (int64_t)(slot[k] - addr)), u(&o, prev_size);
                end(&o, CULEAK_REC_FREE);
                addr = slot[k];
                e++;
                last_free = 0;
            }
            uint64_t a = next_addr;
            next_addr += 1 << 20;
            int again = last_alloc && next() % 4;
            uint64_t stack = again ? prev_stack : leaf[next() % stacks];
            uint64_t size = again ? prev_size : 512 + next() % (1 << 20);
            if (again) {
                u(&o, 800), z(&o, (int64_t)(a - addr));
                end(&o, CULEAK_REC_ALLOC_AGAIN);
            } else {
                u(&o, 1), u(&o, 800), u(&o, 0), u(&o, 1), u(&o, 1), z(&o, 0), u(&o, 0), u(&o, size);
                z(&o, (int64_t)(a - addr)), u(&o, stack);
                end(&o, CULEAK_REC_ALLOC);
            }
            addr = slot[k] = a;
            prev_stack = stack, prev_size = size;
            last_alloc = 1, last_free = 0;
        }
        e++;
    }
    u(&o, ++seq), u(&o, 1000), u(&o, 0);
    end(&o, CULEAK_REC_EXIT);
    free(slot);
    free(leaf);
    if (fclose(o.f) != 0) {
        fprintf(stderr, "gen_recording: %s: %s\n", file, strerror(errno));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    unsigned long long events = 1000000, stacks = 1000, live = 10000, procs = 1;
    const char *file = NULL;
    int c, same_code = 0;
    while ((c = getopt(argc, argv, "e:s:l:p:o:cr:H:g:")) != -1) {
        if (c == 'o')
            file = optarg;
        else if (c == 'c')
            same_code = 1;
        else if (c == 'r')
            rank = strtol(optarg, NULL, 10);
        else if (c == 'H')
            host = optarg;
        else if (c == 'g')
            grow = strtoull(optarg, NULL, 10);
        else if (c == 'e' || c == 's' || c == 'l' || c == 'p')
            *(c == 'e' ? &events : c == 's' ? &stacks : c == 'l' ? &live : &procs) = strtoull(optarg, NULL, 10);
        else
            return 2;
    }
    if (!file || !stacks || !procs) {
        fprintf(stderr, "usage: gen_recording [-e EVENTS] [-s STACKS] [-l LIVE] [-p PROCESSES] [-c] [-r RANK] "
                        "[-H HOST] [-g BYTES] -o FILE\n");
        return 2;
    }
    for (unsigned long long p = 0; p < procs; p++) {
        char name[4200];
        snprintf(name, sizeof name, p ? "%s.%llu" : "%s", file, 100000 + p);
        if (same_code)
            rng = SEED;
        if (one(name, 100000 + p + (rank > 0 ? (unsigned long long)rank : 0), events, stacks, live))
            return 1;
    }
    return 0;
}
