/* Module maps (MODULES records) from dl_iterate_phdr, so stacks can be symbolized
 * later, and the shim's own address range, so its frames can be dropped from stacks.
 * dl_iterate_phdr takes the loader lock: never call these with the stream lock held. */
#include "shim.h"
#include "common/wire.h"

#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uintptr_t culeak_self_lo, culeak_self_hi;

static unsigned long long seen_adds, seen_subs;
static uint64_t generation;
unsigned culeak_modules_epoch = 1;

void culeak_modules_touch(void) { __atomic_add_fetch(&culeak_modules_epoch, 1, __ATOMIC_RELEASE); }

struct growbuf {
    uint8_t *p;
    size_t len, cap;
    int failed;
};

static uint8_t *reserve(struct growbuf *b, size_t n)
{
    if (b->failed)
        return NULL;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 16384;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->failed = 1;
            return NULL;
        }
        b->p = p;
        b->cap = cap;
    }
    return b->p + b->len;
}

static void put_u(struct growbuf *b, uint64_t v)
{
    uint8_t *p = reserve(b, CULEAK_UVARINT_MAX);
    if (p)
        b->len += culeak_put_u(p, v);
}

static void put_s(struct growbuf *b, const char *s)
{
    size_t n = strlen(s);
    uint8_t *p = reserve(b, CULEAK_UVARINT_MAX + n);
    if (p)
        b->len += culeak_put_s(p, s, n);
}

struct walk {
    struct growbuf body;
    uint64_t count;
    char exe[4096];
};

static int add_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct walk *w = arg;
    const char *path = info->dlpi_name;
    if (w->count == 0 && (!path || !path[0])) /* the main program */
        path = w->exe;
    if (!path || !path[0])
        return 0;
    char abs[4096];
    if (path[0] != '/' && strchr(path, '/') && realpath(path, abs)) /* found via a relative search path */
        path = abs;
    if (w->count == 0) {
        seen_adds = info->dlpi_adds;
        seen_subs = info->dlpi_subs;
    }
    uint64_t nseg = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        nseg += info->dlpi_phdr[i].p_type == PT_LOAD;
    put_s(&w->body, path);
    put_u(&w->body, info->dlpi_addr);
    put_u(&w->body, nseg);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        put_u(&w->body, ph->p_vaddr);
        put_u(&w->body, ph->p_memsz);
    }
    w->count++;
    return 0;
}

uint8_t *culeak_modules_record(size_t *len)
{
    struct walk *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    ssize_t n = readlink("/proc/self/exe", w->exe, sizeof w->exe - 1);
    w->exe[n > 0 ? n : 0] = 0;
    dl_iterate_phdr(add_module, w);
    culeak_modules_touch();
    uint8_t *rec = NULL;
    size_t plen = 2 * CULEAK_UVARINT_MAX + w->body.len;
    if (!w->body.failed)
        rec = malloc(CULEAK_REC_HEADROOM + plen);
    if (rec) {
        uint8_t *p = rec + CULEAK_REC_HEADROOM;
        size_t k = culeak_put_u(p, __atomic_add_fetch(&generation, 1, __ATOMIC_RELAXED));
        k += culeak_put_u(p + k, w->count);
        memcpy(p + k, w->body.p, w->body.len);
        *len = culeak_rec_finish(rec, CULEAK_REC_MODULES, k + w->body.len);
    }
    free(w->body.p);
    free(w);
    return rec;
}

static int read_counters(struct dl_phdr_info *info, size_t size, void *arg)
{
    unsigned long long *c = arg;
    c[0] = info->dlpi_adds;
    c[1] = info->dlpi_subs;
    return 1; /* the counters are the same in every entry */
}

int culeak_modules_changed(void)
{
    unsigned long long c[2] = {0, 0};
    dl_iterate_phdr(read_counters, c);
    return c[0] != __atomic_load_n(&seen_adds, __ATOMIC_RELAXED) ||
           c[1] != __atomic_load_n(&seen_subs, __ATOMIC_RELAXED);
}

void culeak_modules_send_if_changed(void)
{
    if (!culeak_modules_changed())
        return;
    size_t len;
    uint8_t *rec = culeak_modules_record(&len);
    if (!rec)
        return;
    culeak_stream_append(rec, len);
    free(rec);
}

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    uintptr_t me = (uintptr_t)arg, lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    if (me < lo || me >= hi)
        return 0;
    culeak_self_lo = lo;
    culeak_self_hi = hi;
    return 1;
}

void culeak_self_range_init(void)
{
    dl_iterate_phdr(find_self, (void *)(uintptr_t)&culeak_self_range_init);
}
