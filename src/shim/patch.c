/* A shim loaded into a running process (culeak attach) is not in front of anything: every
 * module bound its CUDA calls before it came. So it rewrites what they bound, as a
 * debugger-injected heap profiler does for malloc:
 *   - the relocation slots (GOT/PLT: JUMP_SLOT, GLOB_DAT) of every loaded module that name
 *     a function the shim wraps, when they hold its real function or still point into the
 *     module (a lazy slot not yet bound);
 *   - every other pointer to a wrapped real function in a module's writable data: the
 *     tables a static cudart, a shared cudart or a framework filled through
 *     cuGetProcAddress or dlsym (a function pointer equal to a real entry point is that
 *     entry point, and the wrapper has its ABI).
 * Pointers the program keeps on its heap or stack are not found. Each store is one aligned
 * word, so a thread calling through a slot gets the old or the new function, never half.
 * The scan runs inside dl_iterate_phdr: no module is unloaded under it. */
#include "shim.h"
#include "hooks.h"

#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct target {
    uintptr_t real;
    uintptr_t hook;
    int row;
};

struct scan {
    struct target t[CULEAK_ROW_COUNT];
    size_t n;
    struct culeak_patch_count *count;
    uintptr_t page;
};

static int by_real(const void *a, const void *b)
{
    uintptr_t x = ((const struct target *)a)->real, y = ((const struct target *)b)->real;
    return x < y ? -1 : x > y;
}

static const struct target *find_real(const struct scan *s, uintptr_t v)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->t[mid].real == v)
            return &s->t[mid];
        if (s->t[mid].real < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static const struct target *find_name(const struct scan *s, const char *name)
{
    if (name[0] != 'c' || name[1] != 'u')
        return NULL;
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(culeak_rows[s->t[i].row].name, name) == 0)
            return &s->t[i];
    return NULL;
}

struct module {
    const struct dl_phdr_info *info;
    uintptr_t relro_lo, relro_hi;
};

static int in_module(const struct module *m, uintptr_t v)
{
    for (int i = 0; i < m->info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &m->info->dlpi_phdr[i];
        uintptr_t lo = m->info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && v >= lo && v < lo + ph->p_memsz)
            return 1;
    }
    return 0;
}

/* Stores v at slot; a read-only page (RELRO, after relocation) is made writable for the
 * store and read-only again. */
static int store(const struct module *m, uintptr_t slot, uintptr_t v)
{
    long pagesz = sysconf(_SC_PAGESIZE);
    int ro = slot >= m->relro_lo && slot < m->relro_hi;
    void *page = (void *)(slot & ~(uintptr_t)(pagesz - 1));
    if (ro && mprotect(page, (size_t)pagesz, PROT_READ | PROT_WRITE) != 0)
        return -1;
    __atomic_store_n((uintptr_t *)slot, v, __ATOMIC_RELEASE);
    if (ro)
        mprotect(page, (size_t)pagesz, PROT_READ);
    return 0;
}

/* dlpi_addr-relative or already relocated (glibc relocates most of _DYNAMIC in place). */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, uintptr_t v)
{
    return v < info->dlpi_addr ? v + info->dlpi_addr : v;
}

static unsigned patch_relocs(struct scan *s, const struct module *m, const ElfW(Dyn) *dyn)
{
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    uintptr_t jmprel = 0, rela = 0;
    size_t jmpsz = 0, relasz = 0;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)dyn_ptr(m->info, d->d_un.d_ptr); break;
        case DT_STRTAB: strtab = (const char *)dyn_ptr(m->info, d->d_un.d_ptr); break;
        case DT_JMPREL: jmprel = dyn_ptr(m->info, d->d_un.d_ptr); break;
        case DT_PLTRELSZ: jmpsz = d->d_un.d_val; break;
        case DT_RELA: rela = dyn_ptr(m->info, d->d_un.d_ptr); break;
        case DT_RELASZ: relasz = d->d_un.d_val; break;
        default: break;
        }
    }
    if (!symtab || !strtab)
        return 0;
    unsigned done = 0;
    const struct { uintptr_t at; size_t size; } tables[2] = {{jmprel, jmpsz}, {rela, relasz}};
    for (int k = 0; k < 2; k++) {
        const ElfW(Rela) *r = (const ElfW(Rela) *)tables[k].at;
        for (size_t i = 0; r && i < tables[k].size / sizeof *r; i++) {
            unsigned type = ELF64_R_TYPE(r[i].r_info), sym = ELF64_R_SYM(r[i].r_info);
            if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || sym == 0)
                continue;
            const struct target *t = find_name(s, strtab + symtab[sym].st_name);
            if (!t)
                continue;
            uintptr_t slot = m->info->dlpi_addr + r[i].r_offset;
            uintptr_t v = __atomic_load_n((uintptr_t *)slot, __ATOMIC_ACQUIRE);
            /* bound to another definition than the one the shim wraps: left alone */
            if (v == t->hook || (v != t->real && !in_module(m, v)))
                continue;
            if (store(m, slot, t->hook) == 0)
                done++;
            else
                s->count->failed++;
        }
    }
    return done;
}

/* Pointers to real functions in the module's writable segments (its tables), never in the
 * module that defines the function (the driver's own tables are the driver's business). */
__attribute__((no_sanitize("address"))) static unsigned patch_tables(struct scan *s, const struct module *m)
{
    unsigned done = 0;
    for (int i = 0; i < m->info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &m->info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
            continue;
        uintptr_t lo = (m->info->dlpi_addr + ph->p_vaddr + 7) & ~(uintptr_t)7;
        uintptr_t hi = m->info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        for (uintptr_t a = lo; a + sizeof(uintptr_t) <= hi; a += sizeof(uintptr_t)) {
            uintptr_t v = *(const uintptr_t *)a;
            if (v < s->t[0].real || v > s->t[s->n - 1].real)
                continue;
            const struct target *t = find_real(s, v);
            if (!t || in_module(m, v))
                continue;
            if (store(m, a, t->hook) == 0)
                done++;
            else
                s->count->failed++;
        }
    }
    return done;
}

static int patch_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct scan *s = arg;
    struct module m = {info, 0, 0};
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
        if (ph->p_type == PT_GNU_RELRO) {
            m.relro_lo = info->dlpi_addr + ph->p_vaddr;
            m.relro_hi = m.relro_lo + ph->p_memsz;
        }
    }
    /* the shim's own rows hold the real functions; the vdso has nothing to rewrite */
    if (in_module(&m, culeak_self_lo) || !dyn || strstr(info->dlpi_name, "linux-vdso"))
        return 0;
    unsigned slots = patch_relocs(s, &m, dyn), tables = patch_tables(s, &m);
    s->count->slots += slots;
    s->count->tables += tables;
    s->count->modules += slots + tables > 0;
    return 0;
}

void culeak_patch_loaded(struct culeak_patch_count *n)
{
    static struct scan s; /* one attach at a time (attach.c) */
    memset(n, 0, sizeof *n);
    memset(&s, 0, sizeof s);
    s.count = n;
    /* resolved before dl_iterate_phdr takes the loader's lock: resolving opens modules */
    for (int i = 0; i < CULEAK_ROW_COUNT; i++) {
        if (!culeak_rows[i].hook)
            continue;
        void *real = culeak_real((enum culeak_row_id)i);
        if (!real || real == culeak_rows[i].hook || __atomic_load_n(&culeak_rows[i].via, __ATOMIC_ACQUIRE))
            continue;
        s.t[s.n++] = (struct target){(uintptr_t)real, (uintptr_t)culeak_rows[i].hook, i};
    }
    if (s.n == 0)
        return;
    qsort(s.t, s.n, sizeof *s.t, by_real);
    dl_iterate_phdr(patch_one, &s);
}
