/* Test and bench helper: the running executable (a PIE built with -g) as the module of a
 * stream, so that call addresses inside its code symbolize for real. */
#ifndef CULEAK_TEST_SELF_IMAGE_H
#define CULEAK_TEST_SELF_IMAGE_H

#include "stream_builder.h"

#include <link.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

struct self_image {
    char exe[PATH_MAX];
    uint64_t base;             /* load bias */
    uint64_t text_lo, text_hi; /* the executable PT_LOAD segment, loaded */
    uint64_t vaddr[16], memsz[16];
    size_t nseg;               /* PT_LOAD segments, the first 16 */
};

static inline int self_image_phdr(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct self_image *s = data;
    if (info->dlpi_name && info->dlpi_name[0])
        return 0; /* the main program has an empty name */
    s->base = info->dlpi_addr;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        if (s->nseg < 16) {
            s->vaddr[s->nseg] = ph->p_vaddr;
            s->memsz[s->nseg++] = ph->p_memsz;
        }
        if (ph->p_flags & PF_X) {
            s->text_lo = info->dlpi_addr + ph->p_vaddr;
            s->text_hi = s->text_lo + ph->p_memsz;
        }
    }
    return 1;
}

/* 0, or -1 when /proc/self/exe cannot be read. */
static inline int self_image_find(struct self_image *s)
{
    memset(s, 0, sizeof *s);
    ssize_t n = readlink("/proc/self/exe", s->exe, sizeof s->exe - 1);
    if (n <= 0)
        return -1;
    s->exe[n] = 0;
    dl_iterate_phdr(self_image_phdr, s);
    return 0;
}

/* MODULES with one module: the executable at its load bias with its PT_LOAD segments. */
static inline void sb_self_module(struct sb *b, const struct self_image *s)
{
    sb_u(b, 1);
    sb_u(b, 1);
    sb_s(b, s->exe);
    sb_u(b, s->base);
    sb_u(b, s->nseg);
    for (size_t i = 0; i < s->nseg; i++) {
        sb_u(b, s->vaddr[i]);
        sb_u(b, s->memsz[i]);
    }
    sb_end(b, CULEAK_REC_MODULES);
}

#endif
