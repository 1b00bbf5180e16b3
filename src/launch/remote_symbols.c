/* Finding dlopen, dlsym and dlerror in a running process: the C library it mapped (from
 * /proc/PID/maps), its dynamic symbol table read with libelf, and the load bias of the
 * mapping (where file offset 0 sits, less the first PT_LOAD's address). */
#include "remote_symbols.h"

#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

/* soname itself, or stem-<digits and dots>.so */
static int name_matches(const char *base, const char *soname, const char *stem)
{
    if (strcmp(base, soname) == 0)
        return 1;
    size_t n = strlen(stem);
    if (strncmp(base, stem, n) != 0 || base[n] != '-')
        return 0;
    const char *p = base + n + 1;
    size_t digits = strspn(p, "0123456789.");
    return digits > 0 && strcmp(p + digits - (p[digits - 1] == '.'), ".so") == 0;
}

int culeak_maps_module(FILE *maps, const char *soname, const char *stem, struct culeak_remote_module *m)
{
    char line[4352];
    int found = 0;
    while (fgets(line, sizeof line, maps)) {
        unsigned long long lo, hi, off;
        int path_at = 0;
        if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &lo, &hi, &off, &path_at) != 3 || !path_at)
            continue;
        char *path = line + path_at;
        path[strcspn(path, "\n")] = 0;
        if (path[0] != '/')
            continue;
        const char *base = strrchr(path, '/') + 1;
        if (found && strcmp(path, m->path) != 0)
            continue;
        if (!found && !name_matches(base, soname, stem))
            continue;
        if (!found) {
            snprintf(m->path, sizeof m->path, "%s", path);
            m->lo = lo;
            m->hi = hi;
            m->start = 0;
            found = 1;
        }
        if (off == 0 && !m->start)
            m->start = lo;
        m->lo = lo < m->lo ? lo : m->lo;
        m->hi = hi > m->hi ? hi : m->hi;
    }
    return found && m->start;
}

/* The index of the default version among several (versym without the hidden bit). */
static int is_default_version(Elf_Data *versym, size_t i)
{
    if (!versym || (i + 1) * sizeof(GElf_Versym) > versym->d_size)
        return 1;
    GElf_Versym v;
    if (!gelf_getversym(versym, (int)i, &v))
        return 1;
    return !(v & 0x8000);
}

static int first_load(Elf *e, uint64_t *vaddr)
{
    size_t n;
    if (elf_getphdrnum(e, &n) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
            uint64_t align = ph.p_align > 1 ? ph.p_align : 1;
            *vaddr = ph.p_vaddr - ph.p_vaddr % align;
            return 0;
        }
    }
    return -1;
}

static int dynsym_lookup(Elf *e, const char *name, uint64_t *value)
{
    Elf_Scn *scn = NULL, *dynsym = NULL, *versym_scn = NULL;
    GElf_Shdr sh, dyn_sh = {0};
    while ((scn = elf_nextscn(e, scn))) {
        if (!gelf_getshdr(scn, &sh))
            continue;
        if (sh.sh_type == SHT_DYNSYM) {
            dynsym = scn;
            dyn_sh = sh;
        } else if (sh.sh_type == SHT_GNU_versym)
            versym_scn = scn;
    }
    if (!dynsym || !dyn_sh.sh_entsize)
        return -1;
    Elf_Data *data = elf_getdata(dynsym, NULL);
    Elf_Data *versym = versym_scn ? elf_getdata(versym_scn, NULL) : NULL;
    size_t count = dyn_sh.sh_size / dyn_sh.sh_entsize;
    int found = 0;
    for (size_t i = 1; data && i < count; i++) {
        GElf_Sym s;
        if (!gelf_getsym(data, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value)
            continue;
        const char *sname = elf_strptr(e, dyn_sh.sh_link, s.st_name);
        if (!sname || strcmp(sname, name) != 0)
            continue;
        if (!found || is_default_version(versym, i))
            *value = s.st_value;
        found = 1;
        if (is_default_version(versym, i))
            break;
    }
    return found ? 0 : -1;
}

int culeak_elf_symbol(const char *file, const char *name, uint64_t *value, uint64_t *load)
{
    if (elf_version(EV_CURRENT) == EV_NONE)
        return -1;
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    int r = e && elf_kind(e) == ELF_K_ELF && first_load(e, load) == 0 ? dynsym_lookup(e, name, value) : -1;
    if (e)
        elf_end(e);
    close(fd);
    return r;
}

static int find_module(pid_t pid, const char *soname, const char *stem, struct culeak_remote_module *m)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    int r = culeak_maps_module(f, soname, stem, m);
    fclose(f);
    return r;
}

/* name's address in module m of pid: its file seen from the process's root first */
static uint64_t remote_symbol(pid_t pid, const struct culeak_remote_module *m, const char *name)
{
    char file[4200];
    uint64_t value = 0, load = 0;
    snprintf(file, sizeof file, "/proc/%d/root%s", (int)pid, m->path);
    if (culeak_elf_symbol(file, name, &value, &load) != 0 && culeak_elf_symbol(m->path, name, &value, &load) != 0)
        return 0;
    return m->start - load + value;
}

int culeak_remote_dl(pid_t pid, struct culeak_remote_dl *dl, char *err, size_t len)
{
    struct culeak_remote_module libc, libdl;
    memset(dl, 0, sizeof *dl);
    if (!find_module(pid, "libc.so.6", "libc", &libc)) {
        snprintf(err, len,
                 "pid %d has no libc.so.6 in its memory map (a statically linked program, or another C "
                 "library): culeak can attach only to dynamically linked programs using glibc; "
                 "launch it under culeak instead (culeak record -- PROGRAM)",
                 (int)pid);
        return -1;
    }
    snprintf(dl->libc, sizeof dl->libc, "%s", libc.path);
    dl->dlopen = remote_symbol(pid, &libc, "dlopen");
    if (dl->dlopen) { /* glibc 2.34 and later */
        dl->dlsym = remote_symbol(pid, &libc, "dlsym");
        dl->dlerror = remote_symbol(pid, &libc, "dlerror");
    } else if (find_module(pid, "libdl.so.2", "libdl", &libdl) && (dl->dlopen = remote_symbol(pid, &libdl, "dlopen"))) {
        snprintf(dl->libc, sizeof dl->libc, "%s", libdl.path);
        dl->dlsym = remote_symbol(pid, &libdl, "dlsym");
        dl->dlerror = remote_symbol(pid, &libdl, "dlerror");
    } else {
        dl->dlopen = remote_symbol(pid, &libc, "__libc_dlopen_mode");
        dl->dlsym = remote_symbol(pid, &libc, "__libc_dlsym");
        dl->dlopen_private = 1;
    }
    if (!dl->dlopen || !dl->dlsym) {
        snprintf(err, len, "no dlopen and dlsym found in pid %d's %s (a C library culeak does not know)", (int)pid,
                 dl->libc);
        return -1;
    }
    return 0;
}

int culeak_remote_libc_spans(pid_t pid, uint64_t span[2][2])
{
    struct culeak_remote_module libc, ld;
    if (!find_module(pid, "libc.so.6", "libc", &libc) || !find_module(pid, "ld-linux-x86-64.so.2", "ld", &ld))
        return -1;
    span[0][0] = libc.lo, span[0][1] = libc.hi;
    span[1][0] = ld.lo, span[1][1] = ld.hi;
    return 0;
}
