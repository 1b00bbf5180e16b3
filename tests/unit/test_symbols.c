/* Symbolization of a real -g binary (this test itself, a PIE): a stream whose MODULES
 * describe this executable at its real load bias and whose FRAME is a call in this file
 * must come back as that function and file:line; an address in no module falls back to
 * the raw address; a stripped/missing module to module+offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "model/model.h"
#include "self_image.h"
#include "common/strpool.h"
#include "symbols/symbols.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t recorded_ip;
static int recorded_line;

static __attribute__((noinline)) void capture_caller(void)
{
    recorded_ip = (uint64_t)(uintptr_t)__builtin_return_address(0) - 1;
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void allocation_site_for_test(void)
{
    recorded_line = __LINE__ + 1;
    capture_caller();
    __asm__ volatile("" ::: "memory");
}

static struct sb *stream_for_self(const struct self_image *self)
{
    struct sb *b = sb_new();
    sb_hello(b, 1, self->exe, NULL);
    sb_self_module(b, self);
    sb_frame(b, 1, 0, recorded_ip);
    sb_frame(b, 2, 0, 0x10);              /* in no module */
    sb_alloc(b, 1, 1, 0x1000, 64);
    sb_alloc(b, 2, 2, 0x2000, 32);
    return b;
}

/* The index of functions gives what dwarf_getscopes and the symbol table give, at every
 * few bytes of this test's own code (optimized, with inlined functions): every frame's
 * function, file, line and inlining; the brief frame's function and file (the symbol
 * table names a function's split-off part "f.cold": the index names f). And it searches
 * no whole table for an address in a function the DWARF describes. */
static void test_index_matches_getscopes(void **state)
{
    (void)state;
    struct self_image self;
    assert_int_equal(self_image_find(&self), 0);
    struct strpool p1, p2;
    strpool_init(&p1);
    strpool_init(&p2);
    struct symbolizer *with = symbolizer_new(&p1), *without = symbolizer_new(&p2);
    assert_non_null(with);
    assert_non_null(without);
    symbolizer_without_index(without);
    size_t compared = 0, inlined = 0;
    for (uint64_t ip = self.text_lo; ip < self.text_hi; ip += 5) {
        uint64_t off = ip - self.base;
        const struct sym_result *a = symbolizer_lookup(with, 1, self.exe, off);
        const struct sym_result *b = symbolizer_lookup(without, 1, self.exe, off);
        assert_non_null(a);
        assert_non_null(b);
        assert_int_equal(a->n, b->n);
        for (unsigned k = 0; k < a->n; k++) {
            const struct sym_frame *x = &a->frames[k], *y = &b->frames[k];
            if ((x->function == NULL) != (y->function == NULL) || (x->function && strcmp(x->function, y->function)))
                fail_msg("offset 0x%llx frame %u: %s, without the index %s", (unsigned long long)off, k,
                         x->function ? x->function : "-", y->function ? y->function : "-");
            assert_int_equal(x->function_offset, y->function_offset);
            assert_true((x->file == NULL) == (y->file == NULL) && (!x->file || !strcmp(x->file, y->file)));
            assert_int_equal(x->line, y->line);
            assert_int_equal(x->inlined, y->inlined);
        }
        inlined += a->n > 1;
        const struct sym_frame *x = symbolizer_brief(with, 1, self.exe, off), *y = symbolizer_brief(without, 1, self.exe, off);
        assert_true(x && y);
        assert_true((x->file == NULL) == (y->file == NULL) && (!x->file || !strcmp(x->file, y->file)));
        if (x->function && y->function && strcmp(x->function, y->function)) {
            size_t n = strlen(x->function);
            if (strncmp(x->function, y->function, n) != 0 || y->function[n] != '.')
                fail_msg("offset 0x%llx brief: %s, without the index %s", (unsigned long long)off, x->function,
                         y->function);
        }
        compared++;
    }
    assert_true(compared > 5000);
    assert_true(inlined > 100); /* inlined chains were compared too */
    /* without the index every address searched a whole symbol table and compile unit;
     * with it, only those in no DWARF function (padding between functions, the PLT, the
     * C runtime's start files) */
    assert_true(symbolizer_walks(without) >= 2 * compared);
    if (symbolizer_walks(with) * 5 > symbolizer_walks(without))
        fail_msg("%zu searches of a whole table with the index, %zu without", symbolizer_walks(with),
                 symbolizer_walks(without));
    symbolizer_free(with);
    symbolizer_free(without);
    strpool_free(&p1);
    strpool_free(&p2);
}

static void test_symbolizes_function_and_line(void **state)
{
    (void)state;
    allocation_site_for_test();
    struct self_image self;
    assert_int_equal(self_image_find(&self), 0);
    assert_true(self.nseg > 0);

    struct model *m = model_new(NULL);
    struct sb *b = stream_for_self(&self);
    struct model_stream *s = model_stream_open(m);
    assert_int_equal(model_stream_feed(s, b->buf, b->n), 0);
    model_stream_close(s);

    struct model_frame fr[8];
    size_t depth = model_stack_frames(m, 0, 1, fr, 8);
    assert_true(depth >= 1);
    /* the call may be inlined into a caller; the innermost frame is the call's line */
    assert_string_equal(fr[0].function, "allocation_site_for_test");
    assert_non_null(fr[0].file);
    assert_non_null(strstr(fr[0].file, "test_symbols.c"));
    assert_int_equal(fr[0].line, recorded_line);
    assert_string_equal(fr[0].module, self.exe);
    assert_int_equal(fr[0].offset, recorded_ip - self.base);

    /* the site table names the site the same way; patterns find the stack */
    struct model_query q;
    model_query_init(&q);
    struct model_table t;
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.n, 2);
    assert_string_equal(t.rows[0].function, "allocation_site_for_test");
    assert_int_equal(t.rows[0].line, recorded_line);
    assert_non_null(strstr(t.rows[0].text, "allocation_site_for_test at "));
    assert_non_null(strstr(t.rows[1].text, "0x10"));
    model_table_free(&t);
    char pattern[64];
    snprintf(pattern, sizeof pattern, "test_symbols.c:%d", recorded_line);
    assert_true(model_stack_matches(m, 0, 1, pattern, 0));
    assert_true(model_stack_matches(m, 0, 1, "allocation_site_*", 0));
    assert_false(model_stack_matches(m, 0, 1, "other_function", 0));
    assert_false(model_stack_matches(m, 0, 2, "allocation_site_*", 0));
    uint64_t found[4];
    assert_int_equal(model_find_stacks(m, MODEL_ALL, "allocation_site_for_test", 0, found, NULL, 4), 1);
    assert_int_equal(found[0], 1);
    model_free(m);
    sb_free(b);
}

static void test_missing_module_falls_back_to_offset(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    struct sb *b = sb_new();
    sb_hello(b, 1, "/nonexistent/app", NULL);
    sb_module(b, "/nonexistent/app", 0x400000, 0, 0x1000);
    sb_frame(b, 1, 0, 0x400123);
    sb_alloc(b, 1, 1, 0x1000, 64);
    struct model_stream *s = model_stream_open(m);
    assert_int_equal(model_stream_feed(s, b->buf, b->n), 0);
    model_stream_close(s);
    struct model_frame fr[2];
    assert_int_equal(model_stack_frames(m, 0, 1, fr, 2), 1);
    assert_null(fr[0].function);
    char buf[128];
    model_frame_format(&fr[0], buf, sizeof buf);
    assert_string_equal(buf, "app+0x123");
    model_free(m);
    sb_free(b);
}

/* A table built with lazy_names costs no libdw lookup: rows show module+0xoffset with
 * the right numbers; resolving names later gives the same ids their function names. */
static void test_lazy_names_keep_ids(void **state)
{
    (void)state;
    allocation_site_for_test();
    struct self_image self;
    assert_int_equal(self_image_find(&self), 0);
    struct model *m = model_new(NULL);
    struct sb *b = stream_for_self(&self);
    sb_alloc(b, 3, 1, 0x3000, 64); /* the named site: 2 x 64 B; the other 1 x 32 B */
    struct model_stream *s = model_stream_open(m);
    assert_int_equal(model_stream_feed(s, b->buf, b->n), 0);
    model_stream_close(s);

    const char *slash = strrchr(self.exe, '/');
    char plain[PATH_MAX + 32];
    snprintf(plain, sizeof plain, "%s+0x%llx", slash ? slash + 1 : self.exe,
             (unsigned long long)(recorded_ip - self.base));
    struct model_query q;
    model_query_init(&q);
    q.lazy_names = 1;
    struct model_table t;
    assert_int_equal(model_table_build(m, &q, &t), 0);
    size_t pending = model_names_pending(m);
    assert_true(pending >= 2);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.rows[0].live_bytes, 128);
    assert_int_equal(t.rows[0].live_count, 2);
    assert_int_equal(t.rows[1].live_bytes, 32);
    assert_int_equal(t.rows[0].named, 0);
    assert_string_equal(t.rows[0].text, plain);
    assert_null(t.rows[0].function);
    uint32_t id = t.rows[0].id;
    /* grouping by module needs no names either */
    struct model_query qm = q;
    qm.group = MODEL_GROUP_MODULE;
    struct model_table tm;
    assert_int_equal(model_table_build(m, &qm, &tm), 0);
    assert_int_equal(model_names_pending(m), pending);
    model_table_free(&tm);

    /* one row named on demand (the console's rows on screen) */
    struct model_row one = t.rows[0];
    assert_int_equal(model_row_name(m, MODEL_GROUP_SITE, &one), 1);
    assert_int_equal(one.named, 1);
    assert_string_equal(one.function, "allocation_site_for_test");
    assert_int_equal(model_names_pending(m), pending - 1);
    model_table_free(&t);

    /* the rest resolved in slices; the ids stay */
    assert_int_equal(model_resolve_names(m, 1, 0), 1);
    while (model_resolve_names(m, SIZE_MAX, 1000000))
        ;
    assert_int_equal(model_names_pending(m), 0);
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.rows[0].id, id);
    assert_int_equal(t.rows[0].named, 1);
    assert_int_equal(t.rows[0].live_bytes, 128);
    assert_string_equal(t.rows[0].function, "allocation_site_for_test");
    assert_non_null(strstr(t.rows[0].text, "allocation_site_for_test at "));
    assert_int_equal(t.rows[1].named, 1);
    model_table_free(&t);
    model_free(m);
    sb_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_matches_getscopes),
        cmocka_unit_test(test_symbolizes_function_and_line),
        cmocka_unit_test(test_missing_module_falls_back_to_offset),
        cmocka_unit_test(test_lazy_names_keep_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
