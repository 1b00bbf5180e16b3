/* The attach's patcher (src/shim/patch.c, compiled in here, with the rows of the shim
 * played by this file) on a fake module built in memory: the relocation slots of both of
 * its tables, the PLT's (.rela.plt, JUMP_SLOT) and .rela.dyn's (GLOB_DAT), that name a
 * wrapped function and hold its real address or a lazy stub inside the module, get the
 * wrapper; slots of other kinds, of other functions, or bound to another definition stay
 * as they were; a module's pointers to real functions in its writable data (a table) are
 * rewritten too, and a module counts once for either. No debugger, no loader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../src/shim/patch.c"

struct culeak_row culeak_rows[CULEAK_ROW_COUNT] = {
#define ROW(fn) [CULEAK_ROW_##fn] = {#fn, NULL, NULL, NULL},
    CULEAK_DRIVER_HOOKS(ROW) CULEAK_DRIVER_PLAIN(ROW) CULEAK_RUNTIME_HOOKS(ROW)
#undef ROW
};
void *culeak_real_resolve(enum culeak_row_id id) { return NULL; }
uintptr_t culeak_self_lo = 1, culeak_self_hi = 2;

/* the real functions and their wrappers: addresses only, never called */
#define REAL(k) ((uintptr_t)0x10000 * (k))
#define HOOK(k) ((uintptr_t)0x10000 * (k) + 0x800)
#define OTHER ((uintptr_t)0x7777000)

static const char strtab[] = "\0cuMemAlloc_v2\0cuMemFree_v2\0malloc\0cuMemFreeHost\0cudaMalloc\0cuMemAllocHost_v2";
enum { S_ALLOC = 1, S_FREE = 15, S_MALLOC = 28, S_FREEHOST = 35, S_CUDAMALLOC = 49, S_ALLOCHOST = 60 };
static ElfW(Sym) symtab[7];

static uint8_t text[64];     /* the module's code: its lazy PLT stubs point here */
static uintptr_t slot[10];   /* its GOT */

static void scan_of(struct scan *s, struct culeak_patch_count *n)
{
    static const enum culeak_row_id rows[] = {CULEAK_ROW_cuMemAlloc_v2, CULEAK_ROW_cuMemFree_v2,
                                              CULEAK_ROW_cuMemFreeHost, CULEAK_ROW_cudaMalloc,
                                              CULEAK_ROW_cuMemAllocHost_v2};
    memset(s, 0, sizeof *s);
    memset(n, 0, sizeof *n);
    s->count = n;
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        s->t[s->n++] = (struct target){REAL(i + 1), HOOK(i + 1), (int)rows[i]};
}

static ElfW(Rela) rela_of(int k, unsigned type, unsigned sym)
{
    return (ElfW(Rela)){(ElfW(Addr))(uintptr_t)&slot[k], ELF64_R_INFO(sym, type), 0};
}

/* Slot k holds v before; the patcher leaves want there. */
static const struct {
    int k;
    uintptr_t before, after;
} expect[] = {
    {0, REAL(1), HOOK(1)},                     /* JUMP_SLOT cuMemAlloc_v2, bound */
    {1, REAL(2), HOOK(2)},                     /* GLOB_DAT cuMemFree_v2 in .rela.dyn */
    {2, 0x4242, 0x4242},                       /* JUMP_SLOT malloc: not wrapped */
    {3, REAL(1), REAL(1)},                     /* RELATIVE: no symbol's slot */
    {4, OTHER, OTHER},                         /* cuMemFreeHost bound to another definition */
    {5, HOOK(4), HOOK(4)},                     /* cudaMalloc: the wrapper already */
    {6, 0, HOOK(5)},                           /* JUMP_SLOT cuMemAllocHost_v2, lazy: the stub */
    {7, REAL(2), REAL(2)},                     /* a word no relocation names */
    {8, REAL(1), HOOK(1)},                     /* GLOB_DAT cuMemAlloc_v2, last of .rela.dyn */
};

static void fill_slots(void)
{
    for (size_t i = 0; i < sizeof expect / sizeof *expect; i++)
        slot[expect[i].k] = expect[i].before;
    slot[6] = (uintptr_t)&text[16];
}

static void test_both_relocation_tables(void **state)
{
    symtab[1].st_name = S_ALLOC;
    symtab[2].st_name = S_FREE;
    symtab[3].st_name = S_MALLOC;
    symtab[4].st_name = S_FREEHOST;
    symtab[5].st_name = S_CUDAMALLOC;
    symtab[6].st_name = S_ALLOCHOST;
    /* .rela.plt and .rela.dyn of four entries each */
    ElfW(Rela) plt[4] = {rela_of(0, R_X86_64_JUMP_SLOT, 1), rela_of(2, R_X86_64_JUMP_SLOT, 3),
                         rela_of(4, R_X86_64_JUMP_SLOT, 4), rela_of(6, R_X86_64_JUMP_SLOT, 6)};
    ElfW(Rela) dyn_rela[4] = {rela_of(1, R_X86_64_GLOB_DAT, 2), rela_of(3, R_X86_64_RELATIVE, 0),
                              rela_of(5, R_X86_64_GLOB_DAT, 5), rela_of(8, R_X86_64_GLOB_DAT, 1)};
    ElfW(Dyn) dyn[] = {
        {DT_SYMTAB, {.d_ptr = (uintptr_t)symtab}}, {DT_STRTAB, {.d_ptr = (uintptr_t)strtab}},
        {DT_JMPREL, {.d_ptr = (uintptr_t)plt}},    {DT_PLTRELSZ, {.d_val = sizeof plt}},
        {DT_RELA, {.d_ptr = (uintptr_t)dyn_rela}}, {DT_RELASZ, {.d_val = sizeof dyn_rela}},
        {DT_NULL, {0}},
    };
    ElfW(Phdr) ph[1] = {{.p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_vaddr = (uintptr_t)text, .p_memsz = sizeof text}};
    struct dl_phdr_info info = {.dlpi_addr = 0, .dlpi_name = "libfake.so", .dlpi_phdr = ph, .dlpi_phnum = 1};
    struct module m = {&info, 0, 0};
    struct scan s;
    struct culeak_patch_count n;
    scan_of(&s, &n);
    fill_slots();
    unsigned done = patch_relocs(&s, &m, dyn);
    for (size_t i = 0; i < sizeof expect / sizeof *expect; i++) {
        uintptr_t want = expect[i].k == 6 ? HOOK(5) : expect[i].after;
        if (slot[expect[i].k] != want)
            fail_msg("slot %d: 0x%lx, not 0x%lx", expect[i].k, (unsigned long)slot[expect[i].k], (unsigned long)want);
    }
    assert_int_equal(done, 4);
    assert_int_equal(n.failed, 0);
}

/* Tables in a module's writable data: each pointer to a real function becomes its
 * wrapper (not one that lies in the module itself); a module with only a table counts
 * as a module patched, as one with only slots does. */
static uintptr_t table[6];

static void test_tables_and_modules(void **state)
{
    symtab[1].st_name = S_ALLOC;
    ElfW(Rela) plt[1] = {rela_of(0, R_X86_64_JUMP_SLOT, 1)};
    ElfW(Dyn) no_relocs[] = {{DT_SYMTAB, {.d_ptr = (uintptr_t)symtab}}, {DT_STRTAB, {.d_ptr = (uintptr_t)strtab}},
                             {DT_NULL, {0}}};
    ElfW(Dyn) relocs[] = {{DT_SYMTAB, {.d_ptr = (uintptr_t)symtab}}, {DT_STRTAB, {.d_ptr = (uintptr_t)strtab}},
                          {DT_JMPREL, {.d_ptr = (uintptr_t)plt}}, {DT_PLTRELSZ, {.d_val = sizeof plt}},
                          {DT_NULL, {0}}};
    struct scan s;
    struct culeak_patch_count n;
    scan_of(&s, &n);
    /* module A: a table only */
    table[0] = REAL(2);
    table[1] = 0x1234;
    table[2] = REAL(5);
    table[3] = REAL(3) + 8; /* inside no real function's entry: not one */
    table[4] = HOOK(1);
    table[5] = REAL(1);
    ElfW(Phdr) pa[2] = {{.p_type = PT_DYNAMIC, .p_vaddr = (uintptr_t)no_relocs},
                        {.p_type = PT_LOAD, .p_flags = PF_R | PF_W, .p_vaddr = (uintptr_t)table, .p_memsz = sizeof table}};
    struct dl_phdr_info a = {.dlpi_addr = 0, .dlpi_name = "liba.so", .dlpi_phdr = pa, .dlpi_phnum = 2};
    assert_int_equal(patch_one(&a, sizeof a, &s), 0);
    assert_int_equal(table[0], HOOK(2));
    assert_int_equal(table[1], 0x1234);
    assert_int_equal(table[2], HOOK(5));
    assert_int_equal(table[3], REAL(3) + 8);
    assert_int_equal(table[4], HOOK(1));
    assert_int_equal(table[5], HOOK(1));
    assert_int_equal(n.tables, 3);
    assert_int_equal(n.slots, 0);
    assert_int_equal(n.modules, 1);
    /* module B: a slot only (its code holds no table) */
    slot[0] = REAL(1);
    ElfW(Phdr) pb[2] = {{.p_type = PT_DYNAMIC, .p_vaddr = (uintptr_t)relocs},
                        {.p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_vaddr = (uintptr_t)text, .p_memsz = sizeof text}};
    struct dl_phdr_info b = {.dlpi_addr = 0, .dlpi_name = "libb.so", .dlpi_phdr = pb, .dlpi_phnum = 2};
    assert_int_equal(patch_one(&b, sizeof b, &s), 0);
    assert_int_equal(slot[0], HOOK(1));
    assert_int_equal(n.tables, 3);
    assert_int_equal(n.slots, 1);
    assert_int_equal(n.modules, 2);
    /* module C: nothing to patch */
    ElfW(Phdr) pc[2] = {{.p_type = PT_DYNAMIC, .p_vaddr = (uintptr_t)no_relocs},
                        {.p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_vaddr = (uintptr_t)text, .p_memsz = sizeof text}};
    struct dl_phdr_info c = {.dlpi_addr = 0, .dlpi_name = "libc_.so", .dlpi_phdr = pc, .dlpi_phnum = 2};
    assert_int_equal(patch_one(&c, sizeof c, &s), 0);
    assert_int_equal(n.modules, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_both_relocation_tables),
        cmocka_unit_test(test_tables_and_modules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
