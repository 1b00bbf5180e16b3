/* The console's live picture of a job, updated record by record. */
#include "track.h"
#include "apis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EMPTY UINT32_MAX

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void tracker_init(struct tracker *t)
{
    memset(t, 0, sizeof *t);
    t->sym = sym_new();
}

static void free_sites(struct tracker *t)
{
    for (size_t i = 0; i < t->nsites; i++) {
        free(t->sites[i].key);
        free(t->sites[i].label);
        free(t->sites[i].module);
    }
    t->nsites = 0;
    if (t->sitehash)
        memset(t->sitehash, 0, t->sitehcap * sizeof *t->sitehash);
}

static void free_proc(struct proc *p)
{
    free(p->fparent);
    free(p->fip);
    free(p->mods);
    free(p->st);
    free(p->sthash);
    free(p->al);
    free(p);
}

void tracker_free(struct tracker *t)
{
    for (size_t i = 0; i < t->nprocs; i++)
        free_proc(t->procs[i]);
    free(t->procs);
    free_sites(t);
    free(t->sites);
    free(t->sitehash);
    sym_free(t->sym);
    memset(t, 0, sizeof *t);
}

void tracker_reset_counts(struct tracker *t)
{
    for (size_t i = 0; i < t->nprocs; i++) {
        struct proc *p = t->procs[i];
        for (size_t s = 0; s < p->nst; s++) {
            uint64_t leaf = p->st[s].leaf;
            uint32_t site = p->st[s].site;
            memset(&p->st[s], 0, sizeof p->st[s]);
            p->st[s].leaf = leaf;
            p->st[s].site = site;
        }
        for (size_t a = 0; a < p->alcap; a++)
            p->al[a].stat = EMPTY;
        p->alcount = 0;
        p->events = p->live_bytes = p->live_count = 0;
    }
    for (size_t i = 0; i < t->nsites; i++) {
        struct site *s = &t->sites[i];
        s->live_bytes = s->live_count = s->peak_bytes = s->allocs = s->base_bytes = 0;
        s->kinds = 0;
    }
    memset(t->dev_live, 0, sizeof t->dev_live);
    memset(t->dev_peak, 0, sizeof t->dev_peak);
    t->dev_seen = 0;
    t->live_bytes = t->peak_bytes = t->live_count = t->events = t->failed = 0;
}

struct proc *tracker_add_proc(struct tracker *t)
{
    if (t->nprocs == t->capprocs) {
        size_t cap = t->capprocs ? t->capprocs * 2 : 8;
        struct proc **v = realloc(t->procs, cap * sizeof *v);
        if (!v)
            return NULL;
        t->procs = v;
        t->capprocs = cap;
    }
    struct proc *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->idx = (int)t->nprocs;
    snprintf(p->exe, sizeof p->exe, "?");
    t->procs[t->nprocs++] = p;
    return p;
}

void track_hello(struct tracker *t, struct proc *p, const struct culeak_hello *h)
{
    (void)t;
    p->pid = h->pid;
    p->ppid = h->ppid;
    p->t0_mono = p->t_last = h->monotonic_ns;
    p->t0_real = h->realtime_ns;
    snprintf(p->exe, sizeof p->exe, "%.*s", (int)h->exe.n, h->exe.p);
    size_t n = 0;
    p->cmd[0] = 0;
    for (size_t i = 0; i < h->argc && n + 1 < sizeof p->cmd; i++) {
        int w = snprintf(p->cmd + n, sizeof p->cmd - n, "%s%.*s", i ? " " : "", (int)h->argv[i].n, h->argv[i].p);
        if (w < 0)
            break;
        n += (size_t)w;
    }
    if (n >= sizeof p->cmd)
        n = sizeof p->cmd - 1;
    if (!p->cmd[0])
        snprintf(p->cmd, sizeof p->cmd, "%s", p->exe);
}

void track_modules(struct tracker *t, struct proc *p, const struct culeak_modules *m)
{
    for (size_t i = 0; i < m->count; i++) {
        const struct culeak_module *mod = &m->mod[i];
        uint64_t lo = UINT64_MAX, hi = 0;
        for (size_t s = 0; s < mod->nseg; s++) {
            uint64_t a = mod->base + mod->seg[s].vaddr;
            if (a < lo)
                lo = a;
            if (a + mod->seg[s].memsz > hi)
                hi = a + mod->seg[s].memsz;
        }
        if (lo >= hi)
            continue;
        uint32_t id = sym_module(t->sym, mod->path.p, mod->path.n);
        int dup = 0; /* later records repeat the modules still loaded */
        for (size_t k = 0; k < p->nmods; k++)
            if (p->mods[k].sym == id && p->mods[k].base == mod->base && p->mods[k].lo == lo)
                dup = 1;
        if (dup)
            continue;
        if (p->nmods == p->capmods) {
            size_t cap = p->capmods ? p->capmods * 2 : 32;
            struct module_map *v = realloc(p->mods, cap * sizeof *v);
            if (!v)
                return;
            p->mods = v;
            p->capmods = cap;
        }
        p->mods[p->nmods++] = (struct module_map){.sym = id, .base = mod->base, .lo = lo, .hi = hi};
    }
}

void track_frame(struct proc *p, uint64_t id, uint64_t parent, uint64_t ip)
{
    if (id > (1u << 30))
        return;
    if (id >= p->fcap) {
        size_t cap = p->fcap ? p->fcap : 1024;
        while (cap <= id)
            cap *= 2;
        uint64_t *a = realloc(p->fparent, cap * sizeof *a);
        if (!a)
            return;
        p->fparent = a;
        uint64_t *b = realloc(p->fip, cap * sizeof *b);
        if (!b)
            return;
        p->fip = b;
        memset(p->fparent + p->fcap, 0, (cap - p->fcap) * sizeof *a);
        memset(p->fip + p->fcap, 0, (cap - p->fcap) * sizeof *b);
        p->fcap = cap;
    }
    p->fparent[id] = parent < id ? parent : 0;
    p->fip[id] = ip;
    if (id >= p->nframes)
        p->nframes = id + 1;
}

size_t track_stack(const struct proc *p, uint64_t leaf, uint64_t *ips, size_t max)
{
    size_t n = 0;
    while (leaf && leaf < p->nframes && n < max) {
        ips[n++] = p->fip[leaf];
        leaf = p->fparent[leaf];
    }
    return n;
}

static const struct module_map *module_of(const struct proc *p, uint64_t ip)
{
    for (size_t i = p->nmods; i-- > 0;)
        if (ip >= p->mods[i].lo && ip < p->mods[i].hi)
            return &p->mods[i];
    return NULL;
}

void track_frame_info(struct tracker *t, const struct proc *p, uint64_t ip, struct sym_info *out)
{
    const struct module_map *m = module_of(p, ip);
    if (!m) {
        memset(out, 0, sizeof *out);
        out->module = "?";
        out->offset = ip;
        return;
    }
    sym_lookup(t->sym, m->sym, ip - m->base, out);
}

char *track_frame_label(struct tracker *t, const struct proc *p, uint64_t ip, char *buf, size_t len)
{
    struct sym_info si;
    track_frame_info(t, p, ip, &si);
    if (si.func && si.file)
        snprintf(buf, len, "%s (%s:%d)", si.func, si.file, si.line);
    else if (si.func)
        snprintf(buf, len, "%s (%s+0x%llx)", si.func, si.module, (unsigned long long)si.offset);
    else
        snprintf(buf, len, "%s+0x%llx", si.module, (unsigned long long)si.offset);
    return buf;
}

/* Frames of the CUDA runtime, the driver and culeak itself are not call sites. */
static int runtime_module(const char *base)
{
    static const char *const prefixes[] = {"libcuda.so", "libcudart", "libculeak", "libcudadevrt", "libc10_cuda"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (strncmp(base, prefixes[i], strlen(prefixes[i])) == 0)
            return 1;
    return 0;
}

int track_stack_matches(struct tracker *t, const struct proc *p, uint64_t leaf, const char *pattern)
{
    uint64_t ips[128];
    size_t n = track_stack(p, leaf, ips, 128);
    const char *colon = strrchr(pattern, ':');
    for (size_t i = 0; i < n; i++) {
        struct sym_info si;
        track_frame_info(t, p, ips[i], &si);
        if (colon && si.file) {
            char fl[512];
            snprintf(fl, sizeof fl, "%s:%d", si.file, si.line);
            if (strcmp(fl, pattern) == 0)
                return 1;
            size_t plen = strlen(pattern);
            size_t flen = strlen(fl);
            if (flen < plen && pattern[plen - flen - 1] == '/' && strcmp(pattern + plen - flen, fl) == 0)
                return 1; /* dir/file.cu:42 */
        } else if (!colon) {
            if (si.func && strcmp(si.func, pattern) == 0)
                return 1;
            if (si.file && strcmp(si.file, pattern) == 0)
                return 1;
        }
    }
    return 0;
}

/* Key, label and module of a stack under a grouping. */
static void site_key(struct tracker *t, const struct proc *p, uint64_t leaf, enum group_by g, char *key,
                     size_t klen, char *label, size_t llen, char *module, size_t mlen)
{
    uint64_t ips[64];
    size_t n = track_stack(p, leaf, ips, 64);
    if (n == 0) {
        snprintf(key, klen, "(no stack)");
        snprintf(label, llen, "(no stack)");
        snprintf(module, mlen, "?");
        return;
    }
    size_t pick = 0;
    struct sym_info si;
    for (size_t i = 0; i < n; i++) {
        track_frame_info(t, p, ips[i], &si);
        if (!runtime_module(si.module)) {
            pick = i;
            break;
        }
    }
    track_frame_info(t, p, ips[pick], &si);
    snprintf(module, mlen, "%s", si.module);
    char where[600];
    track_frame_label(t, p, ips[pick], where, sizeof where);
    switch (g) {
    case GROUP_SITE:
        snprintf(key, klen, "%s+%llx", si.module, (unsigned long long)si.offset);
        snprintf(label, llen, "%s", where);
        break;
    case GROUP_FUNCTION:
        if (si.func) {
            snprintf(key, klen, "%s!%s", si.module, si.func);
            snprintf(label, llen, "%s", si.func);
        } else {
            snprintf(key, klen, "%s+%llx", si.module, (unsigned long long)si.offset);
            snprintf(label, llen, "%s", where);
        }
        break;
    case GROUP_FILE:
        snprintf(key, klen, "%s", si.file ? si.file : si.module);
        snprintf(label, llen, "%s", si.file ? si.file : si.module);
        break;
    case GROUP_MODULE:
        snprintf(key, klen, "%s", si.module);
        snprintf(label, llen, "%s", si.module);
        break;
    case GROUP_STACK: {
        size_t k = 0;
        key[0] = 0;
        for (size_t i = 0; i < n && k + 1 < klen; i++) {
            struct sym_info fi;
            track_frame_info(t, p, ips[i], &fi);
            int w = snprintf(key + k, klen - k, "%s+%llx/", fi.module, (unsigned long long)fi.offset);
            if (w < 0)
                break;
            k += (size_t)w;
        }
        char caller[600] = "";
        if (pick + 1 < n)
            track_frame_label(t, p, ips[pick + 1], caller, sizeof caller);
        snprintf(label, llen, "%s%s%s", where, caller[0] ? " <- " : "", caller);
        break;
    }
    }
}

static uint32_t site_for(struct tracker *t, const struct proc *p, uint64_t leaf)
{
    char key[2048], label[1300], module[256];
    site_key(t, p, leaf, t->group, key, sizeof key, label, sizeof label, module, sizeof module);
    if ((t->nsites + 1) * 2 > t->sitehcap) {
        size_t cap = t->sitehcap ? t->sitehcap * 2 : 1024;
        uint32_t *h = calloc(cap, sizeof *h);
        if (!h)
            return 0;
        for (size_t i = 0; i < t->nsites; i++) {
            size_t k = (size_t)hash_str(t->sites[i].key) & (cap - 1);
            while (h[k])
                k = (k + 1) & (cap - 1);
            h[k] = (uint32_t)i + 1;
        }
        free(t->sitehash);
        t->sitehash = h;
        t->sitehcap = cap;
    }
    size_t k = (size_t)hash_str(key) & (t->sitehcap - 1);
    while (t->sitehash[k]) {
        struct site *s = &t->sites[t->sitehash[k] - 1];
        if (strcmp(s->key, key) == 0) {
            s->nstacks++;
            return t->sitehash[k] - 1;
        }
        k = (k + 1) & (t->sitehcap - 1);
    }
    if (t->nsites == t->capsites) {
        size_t cap = t->capsites ? t->capsites * 2 : 256;
        struct site *v = realloc(t->sites, cap * sizeof *v);
        if (!v)
            return 0;
        t->sites = v;
        t->capsites = cap;
    }
    struct site *s = &t->sites[t->nsites];
    memset(s, 0, sizeof *s);
    s->key = strdup(key);
    s->label = strdup(label);
    s->module = strdup(module);
    s->proc = p->idx;
    s->leaf = leaf;
    s->nstacks = 1;
    t->sitehash[k] = (uint32_t)t->nsites + 1;
    return (uint32_t)t->nsites++;
}

uint32_t track_stat(struct tracker *t, struct proc *p, uint64_t leaf)
{
    if ((p->nst + 1) * 2 > p->sthcap) {
        size_t cap = p->sthcap ? p->sthcap * 2 : 256;
        uint32_t *h = calloc(cap, sizeof *h);
        if (!h)
            return EMPTY;
        for (size_t i = 0; i < p->nst; i++) {
            size_t k = (size_t)mix(p->st[i].leaf) & (cap - 1);
            while (h[k])
                k = (k + 1) & (cap - 1);
            h[k] = (uint32_t)i + 1;
        }
        free(p->sthash);
        p->sthash = h;
        p->sthcap = cap;
    }
    size_t k = (size_t)mix(leaf) & (p->sthcap - 1);
    while (p->sthash[k]) {
        if (p->st[p->sthash[k] - 1].leaf == leaf)
            return p->sthash[k] - 1;
        k = (k + 1) & (p->sthcap - 1);
    }
    if (p->nst == p->capst) {
        size_t cap = p->capst ? p->capst * 2 : 256;
        struct stackstat *v = realloc(p->st, cap * sizeof *v);
        if (!v)
            return EMPTY;
        p->st = v;
        p->capst = cap;
    }
    struct stackstat *s = &p->st[p->nst];
    memset(s, 0, sizeof *s);
    s->leaf = leaf;
    s->site = site_for(t, p, leaf);
    p->sthash[k] = (uint32_t)p->nst + 1;
    return (uint32_t)p->nst++;
}

void tracker_regroup(struct tracker *t, enum group_by g)
{
    free_sites(t);
    t->group = g;
    for (size_t i = 0; i < t->nprocs; i++) {
        struct proc *p = t->procs[i];
        for (size_t k = 0; k < p->nst; k++) {
            struct stackstat *st = &p->st[k];
            st->site = site_for(t, p, st->leaf);
            struct site *s = &t->sites[st->site];
            s->live_bytes += st->live_bytes;
            s->live_count += st->live_count;
            s->allocs += st->allocs;
            s->base_bytes += st->base_bytes;
            s->kinds |= st->kinds;
            if (st->peak_bytes > s->peak_bytes)
                s->peak_bytes = st->peak_bytes; /* the group's own peak is not known: its largest member's */
        }
    }
    for (size_t i = 0; i < t->nsites; i++)
        if (t->sites[i].live_bytes > t->sites[i].peak_bytes)
            t->sites[i].peak_bytes = t->sites[i].live_bytes;
}

void tracker_mark_base(struct tracker *t)
{
    for (size_t i = 0; i < t->nprocs; i++) {
        struct proc *p = t->procs[i];
        for (size_t k = 0; k < p->nst; k++) {
            p->st[k].base_bytes = p->st[k].live_bytes;
            p->st[k].base_count = p->st[k].live_count;
        }
    }
    for (size_t i = 0; i < t->nsites; i++)
        t->sites[i].base_bytes = t->sites[i].live_bytes;
}

int track_dev_slot(int device, unsigned kind)
{
    if (kind == CULEAK_KIND_HOST_PINNED || kind == CULEAK_KIND_HOST_REGISTERED || device < 0 ||
        device >= TRACK_MAX_DEV)
        return TRACK_MAX_DEV;
    return device;
}

/* ---- live allocations: open addressing, linear probing, backward-shift deletion ---- */

static uint8_t addr_class(unsigned kind)
{
    switch (kind) {
    case CULEAK_KIND_VMM_PHYSICAL: case CULEAK_KIND_VMM_MAPPED: case CULEAK_KIND_ADDRESS_RESERVE:
    case CULEAK_KIND_ARRAY: case CULEAK_KIND_POOL: case CULEAK_KIND_USER:
        return (uint8_t)kind;
    default:
        return 0;
    }
}

static size_t al_slot(const struct proc *p, uint64_t addr, uint8_t cls)
{
    return (size_t)mix(addr ^ ((uint64_t)cls << 56)) & (p->alcap - 1);
}

static int al_grow(struct proc *p)
{
    size_t cap = p->alcap ? p->alcap * 2 : 4096;
    struct alloc_ent *old = p->al;
    size_t oldcap = p->alcap;
    struct alloc_ent *v = malloc(cap * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < cap; i++)
        v[i].stat = EMPTY;
    p->al = v;
    p->alcap = cap;
    for (size_t i = 0; i < oldcap; i++) {
        if (old[i].stat == EMPTY)
            continue;
        size_t k = al_slot(p, old[i].addr, old[i].cls);
        while (v[k].stat != EMPTY)
            k = (k + 1) & (cap - 1);
        v[k] = old[i];
    }
    free(old);
    return 0;
}

static struct alloc_ent *al_find(struct proc *p, uint64_t addr, uint8_t cls)
{
    if (!p->alcap)
        return NULL;
    size_t k = al_slot(p, addr, cls);
    while (p->al[k].stat != EMPTY) {
        if (p->al[k].addr == addr && p->al[k].cls == cls)
            return &p->al[k];
        k = (k + 1) & (p->alcap - 1);
    }
    return NULL;
}

static void al_remove(struct proc *p, struct alloc_ent *e)
{
    size_t i = (size_t)(e - p->al), mask = p->alcap - 1;
    p->al[i].stat = EMPTY;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (p->al[j].stat == EMPTY)
            break;
        size_t home = al_slot(p, p->al[j].addr, p->al[j].cls);
        /* move j back to i when its home is not in (i, j] */
        if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
            p->al[i] = p->al[j];
            p->al[j].stat = EMPTY;
            i = j;
        }
    }
    p->alcount--;
}

static void account(struct tracker *t, struct proc *p, const struct alloc_ent *a, int sign)
{
    struct stackstat *st = &p->st[a->stat];
    struct site *s = &t->sites[st->site];
    int mem = culeak_kind_is_memory(a->kind);
    uint64_t bytes = mem ? a->size : 0;
    int slot = track_dev_slot(a->device, a->kind);
    if (sign > 0) {
        st->live_bytes += bytes;
        st->live_count++;
        s->live_bytes += bytes;
        s->live_count++;
        p->live_bytes += bytes;
        p->live_count++;
        t->live_bytes += bytes;
        t->live_count++;
        t->dev_live[slot] += bytes;
        if (mem)
            t->dev_seen |= 1u << slot;
        if (st->live_bytes > st->peak_bytes)
            st->peak_bytes = st->live_bytes;
        if (s->live_bytes > s->peak_bytes)
            s->peak_bytes = s->live_bytes;
        if (t->live_bytes > t->peak_bytes)
            t->peak_bytes = t->live_bytes;
        if (t->dev_live[slot] > t->dev_peak[slot])
            t->dev_peak[slot] = t->dev_live[slot];
    } else {
        st->live_bytes -= bytes;
        st->live_count--;
        s->live_bytes -= bytes;
        s->live_count--;
        p->live_bytes -= bytes;
        p->live_count--;
        t->live_bytes -= bytes;
        t->live_count--;
        t->dev_live[slot] -= bytes;
    }
}

static void free_addr(struct tracker *t, struct proc *p, uint64_t addr, unsigned kind)
{
    struct alloc_ent *a = al_find(p, addr, addr_class(kind));
    if (!a && addr_class(kind) != 0)
        a = al_find(p, addr, 0);
    if (!a) /* a free whose kind the shim could only guess: try the other classes */
        for (unsigned k = 1; k < CULEAK_KIND_COUNT && !a; k++)
            if (addr_class(k))
                a = al_find(p, addr, addr_class(k));
    if (!a)
        return;
    account(t, p, a, -1);
    al_remove(p, a);
}

uint32_t track_event(struct tracker *t, struct proc *p, const struct culeak_event *e)
{
    t->events++;
    p->events++;
    p->t_last = e->t_ns;
    switch (e->op) {
    case CULEAK_OP_ALLOC: {
        uint32_t si = track_stat(t, p, e->stack);
        if (si == EMPTY)
            return EMPTY;
        struct stackstat *st = &p->st[si];
        if (e->result != 0) {
            st->failed++;
            t->failed++;
            return si;
        }
        st->allocs++;
        st->kinds |= 1u << (e->kind & 31);
        t->sites[st->site].allocs++;
        t->sites[st->site].kinds |= 1u << (e->kind & 31);
        uint8_t cls = addr_class(e->kind);
        struct alloc_ent *old = al_find(p, e->addr, cls);
        if (old) { /* the free was missed: the address was handed out again */
            account(t, p, old, -1);
            al_remove(p, old);
        }
        if ((p->alcount + 1) * 4 > p->alcap * 3 && al_grow(p) != 0)
            return si;
        size_t k = al_slot(p, e->addr, cls);
        while (p->al[k].stat != EMPTY)
            k = (k + 1) & (p->alcap - 1);
        p->al[k] = (struct alloc_ent){.addr = e->addr, .size = e->size, .stat = si, .cls = cls,
                                      .kind = (uint8_t)e->kind, .device = (int16_t)e->device};
        p->alcount++;
        account(t, p, &p->al[k], +1);
        return si;
    }
    case CULEAK_OP_FREE:
        if (e->result == 0)
            free_addr(t, p, e->addr, e->kind);
        return EMPTY;
    case CULEAK_OP_FREE_ALL:
        for (size_t i = 0; i < p->alcap;) {
            struct alloc_ent *a = &p->al[i];
            if (a->stat != EMPTY && a->device == e->device &&
                a->kind != CULEAK_KIND_HOST_REGISTERED && a->kind != CULEAK_KIND_USER) {
                account(t, p, a, -1);
                al_remove(p, a); /* may move another entry into slot i: look at it again */
                continue;
            }
            i++;
        }
        return EMPTY;
    default:
        return EMPTY;
    }
}
