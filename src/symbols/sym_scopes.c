/* The functions of a module's compile units by address (sym_scopes.h). */
#include "sym_scopes.h"
#include "common/u64map.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

struct fn_range {
    Dwarf_Addr lo, hi;   /* [lo, hi) */
    Dwarf_Die die;       /* the subprogram */
};

struct cu_fns {
    struct fn_range *v;
    size_t n, cap;
};

struct scope_index {
    struct u64map by_cu; /* CU DIE offset -> cus[] */
    struct cu_fns *cus;
    size_t ncus, cap;
};

struct scope_index *scope_index_new(void)
{
    struct scope_index *x = calloc(1, sizeof *x);
    if (x)
        u64map_init(&x->by_cu);
    return x;
}

void scope_index_free(struct scope_index *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < x->ncus; i++)
        free(x->cus[i].v);
    free(x->cus);
    u64map_free(&x->by_cu);
    free(x);
}

static int add_range(struct cu_fns *c, Dwarf_Addr lo, Dwarf_Addr hi, const Dwarf_Die *die)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        struct fn_range *v = realloc(c->v, cap * sizeof *v);
        if (!v)
            return -1;
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = (struct fn_range){lo, hi, *die};
    return 0;
}

/* The subprograms with code under parent, looking into namespaces and types (C++ puts
 * functions there) but not into functions. */
static int collect(struct cu_fns *c, Dwarf_Die *parent, int depth)
{
    Dwarf_Die child;
    if (depth > 64 || dwarf_child(parent, &child) != 0)
        return 0;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_subprogram) {
            Dwarf_Addr base, lo, hi;
            ptrdiff_t off = 0;
            while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0)
                if (hi > lo && add_range(c, lo, hi, &child) != 0)
                    return -1;
        } else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
                   tag == DW_TAG_union_type || tag == DW_TAG_module) {
            if (collect(c, &child, depth + 1) != 0)
                return -1;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return 0;
}

static int by_lo(const void *a, const void *b)
{
    const struct fn_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static struct cu_fns *cu_of(struct scope_index *x, Dwarf_Die *cudie)
{
    uint64_t key = dwarf_dieoffset(cudie);
    uint32_t i = u64map_get(&x->by_cu, key);
    if (i != UINT32_MAX)
        return &x->cus[i];
    if (x->ncus == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 16;
        struct cu_fns *v = realloc(x->cus, cap * sizeof *v);
        if (!v)
            return NULL;
        x->cus = v;
        x->cap = cap;
    }
    struct cu_fns *c = &x->cus[x->ncus];
    memset(c, 0, sizeof *c);
    if (collect(c, cudie, 0) != 0 || u64map_put(&x->by_cu, key, (uint32_t)x->ncus) != 0) {
        free(c->v);
        return NULL;
    }
    qsort(c->v, c->n, sizeof *c->v, by_lo);
    x->ncus++;
    return c;
}

int scope_index_path(struct scope_index *x, Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die *path, int max)
{
    struct cu_fns *c = x && max > 0 ? cu_of(x, cudie) : NULL;
    if (!c || !c->n)
        return 0;
    /* the last range starting at or below pc; ranges of a CU's functions do not overlap */
    size_t lo = 0, hi = c->n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->v[mid].lo <= pc)
            lo = mid;
        else
            hi = mid;
    }
    if (c->v[lo].lo > pc || pc >= c->v[lo].hi)
        return 0;
    int n = 0;
    path[n++] = c->v[lo].die;
    if (max == 1)
        return 1; /* the function alone */
    /* down the DIEs that contain pc: lexical blocks and inlined instances */
    Dwarf_Die cur = c->v[lo].die;
    for (int depth = 0; depth < 256; depth++) {
        Dwarf_Die child;
        int found = 0;
        if (dwarf_child(&cur, &child) == 0) {
            do {
                int tag = dwarf_tag(&child);
                if ((tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine) && dwarf_haspc(&child, pc) == 1) {
                    found = 1;
                    break;
                }
            } while (dwarf_siblingof(&child, &child) == 0);
        }
        if (!found)
            break;
        cur = child;
        if (dwarf_tag(&cur) == DW_TAG_inlined_subroutine && n < max)
            path[n++] = cur;
    }
    return n;
}
