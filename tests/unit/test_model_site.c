/* Call sites of a program with the CUDA runtime linked in (nvcc's default static cudart):
 * cudart's functions are in the program's own module, so the site must be found by
 * looking through functions (cudaMalloc, libcudart_static_*) and CUDA header code
 * (cuda_runtime.h, out of line or inlined), not by module. The program is
 * tests/unit/site_fixture (built next to this test); it prints its layout and the stacks
 * of three allocations made on three lines of user_step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "report/compare.h"
#include "model/model.h"
#include "stream_builder.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_STACKS 3
#define MAX_DEPTH 64

static char fixture[PATH_MAX];
static uint64_t base, vaddr[16], memsz[16];
static size_t nseg;
static int lines[MAX_STACKS];
static uint64_t ips[MAX_STACKS][MAX_DEPTH]; /* innermost first */
static size_t depth[MAX_STACKS], nstacks;
static uint64_t leaf[MAX_STACKS];           /* frame id of each stack */

static int run_fixture(void **state)
{
    (void)state;
    ssize_t n = readlink("/proc/self/exe", fixture, sizeof fixture - 32);
    if (n <= 0)
        return -1;
    fixture[n] = 0;
    strcpy(strrchr(fixture, '/') + 1, "site_fixture");
    FILE *f = popen(fixture, "r");
    if (!f)
        return -1;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        char *p = line;
        if (sscanf(line, "base %lx", (unsigned long *)&base) == 1)
            continue;
        if (nseg < 16 && sscanf(line, "seg %lx %lx", (unsigned long *)&vaddr[nseg], (unsigned long *)&memsz[nseg]) == 2)
            nseg++;
        else if (sscanf(line, "lines %d %d %d", &lines[0], &lines[1], &lines[2]) == 3)
            continue;
        else if (!strncmp(line, "stack", 5) && nstacks < MAX_STACKS) {
            p += 5;
            char *end;
            unsigned long ip;
            while (depth[nstacks] < MAX_DEPTH && (ip = strtoul(p, &end, 16), end != p)) {
                ips[nstacks][depth[nstacks]++] = ip;
                p = end;
            }
            nstacks++;
        }
    }
    return pclose(f) == 0 && nseg > 0 && nstacks == MAX_STACKS ? 0 : -1;
}

/* The fixture's allocations as a stream; each stack gets its own chain of frames. The
 * module loads `shift` bytes above where it ran; stack s allocates counts[s] blocks of 64
 * bytes (NULL: one each). */
static struct model *load_shifted(const struct model_options *o, uint64_t shift, const int *counts)
{
    struct sb *b = sb_new();
    sb_hello(b, 1, fixture, NULL);
    sb_u(b, 1);
    sb_u(b, 1);
    sb_s(b, fixture);
    sb_u(b, base + shift);
    sb_u(b, nseg);
    for (size_t i = 0; i < nseg; i++) {
        sb_u(b, vaddr[i]);
        sb_u(b, memsz[i]);
    }
    sb_end(b, CULEAK_REC_MODULES);
    uint64_t id = 1;
    for (size_t s = 0; s < nstacks; s++) {
        uint64_t parent = 0;
        for (size_t d = depth[s]; d-- > 0; parent = id++)
            sb_frame(b, id, parent, ips[s][d] + shift);
        leaf[s] = parent;
    }
    uint64_t seq = 1;
    for (size_t s = 0; s < nstacks; s++)
        for (int k = 0; k < (counts ? counts[s] : 1); k++)
            sb_alloc(b, seq++, leaf[s], 0x1000 * (s + 1) + 0x100000 * (uint64_t)k, 64);
    struct model *m = model_new(o);
    assert_non_null(m);
    struct model_stream *st = model_stream_open(m);
    assert_int_equal(model_stream_feed(st, b->buf, b->n), 0);
    model_stream_close(st);
    sb_free(b);
    return m;
}

static struct model *load(const struct model_options *o) { return load_shifted(o, 0, NULL); }

/* Every stack has its own site, in user_step at the line of its call. */
static void assert_user_sites(struct model *m)
{
    struct model_query q;
    model_query_init(&q);
    struct model_table t;
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.n, MAX_STACKS);
    int seen[MAX_STACKS] = {0};
    for (size_t i = 0; i < t.n; i++) {
        assert_non_null(t.rows[i].function);
        assert_string_equal(t.rows[i].function, "user_step");
        assert_non_null(t.rows[i].file);
        assert_non_null(strstr(t.rows[i].file, "user.c"));
        for (int k = 0; k < MAX_STACKS; k++)
            seen[k] += t.rows[i].line == (unsigned)lines[k];
    }
    model_table_free(&t);
    for (int k = 0; k < MAX_STACKS; k++)
        assert_int_equal(seen[k], 1);
}

static void test_default_skips_find_user_lines(void **state)
{
    (void)state;
    struct model *m = load(NULL);
    assert_user_sites(m);
    /* the inlined header frame is not the site's: patterns match from user_step out */
    char pattern[64];
    snprintf(pattern, sizeof pattern, "user.c:%d", lines[2]);
    assert_true(model_stack_matches(m, 0, leaf[2], pattern, 0));
    assert_false(model_stack_matches(m, 0, leaf[2], "typed_malloc_inline", 0));
    assert_true(model_stack_matches(m, 0, leaf[2], "typed_malloc_inline", 1));
    model_free(m);
}

/* Without function skips every stack stops in cudart: one site for all (the bug). */
static void test_module_skips_alone_stop_in_cudart(void **state)
{
    (void)state;
    struct model_options o = {.no_default_skips = 1};
    struct model *m = load(&o);
    struct model_query q;
    model_query_init(&q);
    struct model_table t;
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.n, 1);
    assert_string_equal(t.rows[0].function, "libcudart_static_deadbeef");
    model_table_free(&t);
    model_free(m);
}

static void test_configured_function_skips(void **state)
{
    (void)state;
    struct model_options o = {.no_default_skips = 1, .skip_functions = "cudaMalloc,libcudart_static_*,*/cuda_runtime.h"};
    struct model *m = load(&o);
    assert_user_sites(m);
    model_free(m);

    setenv("CULEAK_SKIP_FUNCTIONS", "libcudart_static_*,cudaMalloc,*/cuda_runtime.h", 1);
    struct model_options env_only = {.no_default_skips = 1};
    m = load(&env_only);
    unsetenv("CULEAK_SKIP_FUNCTIONS");
    assert_user_sites(m);
    model_free(m);
}

/* _start and cudart have no DWARF: no file:line, however near another unit's code. The
 * looked-through frames say so. */
static void test_frames_without_dwarf_have_no_line(void **state)
{
    (void)state;
    struct model *m = load(NULL);
    struct model_frame fr[MAX_DEPTH * 2];
    size_t n = model_stack_frames(m, 0, leaf[0], fr, MAX_DEPTH * 2);
    assert_true(n >= 5 && n <= MAX_DEPTH * 2);
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        const char *fn = fr[i].function ? fr[i].function : "";
        if (!strcmp(fn, "_start") || !strcmp(fn, "cudaMalloc") || !strcmp(fn, "libcudart_static_deadbeef")) {
            assert_null(fr[i].file);
            assert_int_equal(fr[i].line, 0);
            found++;
        }
        if (!strcmp(fn, "cudaMalloc") || !strcmp(fn, "libcudart_static_deadbeef") || !strcmp(fn, "typed_malloc"))
            assert_true(fr[i].skipped);
        if (!strcmp(fn, "user_step") || !strcmp(fn, "main"))
            assert_false(fr[i].skipped);
    }
    assert_int_equal(found, 3);
    model_free(m);
}

/* Two runs whose program loaded at other addresses compare line by line: user_step's first
 * line grew from 1 to 3 blocks, its second is the same, its third is gone; no site is
 * new (matched by function and file:line, not by address). */
static void test_compare_runs_by_line(void **state)
{
    (void)state;
    static const int before[MAX_STACKS] = {1, 1, 1}, after[MAX_STACKS] = {3, 1, 0};
    struct model *a = load_shifted(NULL, 0, before), *b = load_shifted(NULL, 0x10000000, after);
    struct report_options o;
    report_options_init(&o);
    struct compare c;
    assert_int_equal(compare_runs(a, b, &o, &c), 0);
    assert_int_equal(c.n, MAX_STACKS);
    assert_int_equal(c.changes[COMPARE_NEW], 0);
    assert_int_equal(c.changes[COMPARE_GROWN], 1);
    assert_int_equal(c.changes[COMPARE_SAME], 1);
    assert_int_equal(c.changes[COMPARE_GONE], 1);
    assert_int_equal(c.delta_bytes, 64);
    for (size_t i = 0; i < c.n; i++) {
        const struct compare_row *r = &c.rows[i];
        assert_string_equal(r->function, "user_step");
        if (r->line == (unsigned)lines[0]) {
            assert_int_equal(r->change, COMPARE_GROWN);
            assert_int_equal(r->side[0].bytes, 64);
            assert_int_equal(r->side[1].bytes, 192);
            assert_int_equal(r->delta_count, 2);
        } else if (r->line == (unsigned)lines[1]) {
            assert_int_equal(r->change, COMPARE_SAME);
        } else {
            assert_int_equal(r->line, lines[2]);
            assert_int_equal(r->change, COMPARE_GONE);
            assert_int_equal(r->side[1].bytes, 0);
        }
    }
    assert_int_equal(c.rows[0].change, COMPARE_GROWN); /* most growth first */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    const char *names[2] = {"before.culeak", "after.culeak"};
    assert_int_equal(compare_text(f, &c, &o, names), 0);
    fclose(f);
    /* recordings without their exit: live when they end, not leaked */
    assert_non_null(strstr(buf, "COMPARE SUMMARY: live when the recording ends 64 bytes more than the baseline"));
    assert_non_null(strstr(buf, "\nGROWN "));
    assert_non_null(strstr(buf, "\nGONE "));
    assert_null(strstr(buf, "\nNEW "));
    free(buf);
    compare_free(&c);
    model_free(a);
    model_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_skips_find_user_lines),
        cmocka_unit_test(test_compare_runs_by_line),
        cmocka_unit_test(test_module_skips_alone_stop_in_cudart),
        cmocka_unit_test(test_configured_function_skips),
        cmocka_unit_test(test_frames_without_dwarf_have_no_line),
    };
    return cmocka_run_group_tests(tests, run_fixture, NULL);
}
