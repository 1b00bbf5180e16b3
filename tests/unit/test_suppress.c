/* Suppressions: valgrind's syntax read with file:line errors, frames matched from the
 * innermost outward (or from the call site) with '*', '?' and '...', kinds, Python
 * frames, other tools' blocks ignored; reports leave suppressed leaks out and count them,
 * and the blocks a report generates suppress what it reported. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "report/report.h"
#include "stream_builder.h"
#include "model/suppress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct model_frame stack[] = {
    {.function = "cuMemAlloc_v2", .module = "/usr/lib/libcuda.so.1", .skipped = 1},
    {.function = "cudaMalloc", .module = "/usr/lib/libcudart.so.12", .skipped = 1},
    {.function = "Buffers::grow(unsigned long)", .module = "/opt/app/libfoo.so", .file = "/src/foo.cc", .line = 57},
    {.function = "train_step", .module = "/opt/app/libfoo.so", .file = "/src/train.cc", .line = 12},
    {.function = "PyObject_Call", .module = "/usr/bin/python3.12", .skipped = 1},
    {.function = "step", .module = "python", .file = "/home/u/train.py", .line = 57},
    {.function = "<module>", .module = "python", .file = "/home/u/train.py", .line = 80},
};
#define NSTACK (sizeof stack / sizeof *stack)
#define SITE 2

static struct suppressions *parse_ok(const char *text)
{
    struct suppressions *s = suppressions_new();
    char err[256] = "";
    if (suppressions_parse(s, text, "t.supp", err, sizeof err) != 0)
        fail_msg("parse: %s", err);
    return s;
}

/* The block's frame lines (and kinds line) wrapped in a culeak block: does it match? */
static int matches(const char *body, unsigned kind)
{
    char text[2048];
    snprintf(text, sizeof text, "{\n  name\n  culeak:Leak\n%s\n}\n", body);
    struct suppressions *s = parse_ok(text);
    int r = suppressions_match(s, stack, NSTACK, SITE, kind) == 0;
    suppressions_free(s);
    return r;
}

static void test_frame_lines(void **state)
{
    (void)state;
    const unsigned dev = CULEAK_KIND_DEVICE;
    /* from the innermost frame, and from the call site */
    assert_true(matches("fun:cuMemAlloc_v2\nfun:cudaMalloc\nfun:Buffers::grow", dev));
    assert_true(matches("fun:Buffers::grow\nfun:train_step", dev));
    assert_false(matches("fun:train_step", dev)); /* neither innermost nor the site */
    /* demangled, with or without parameters; globs */
    assert_true(matches("fun:Buffers::grow(unsigned long)", dev));
    assert_true(matches("fun:Buffers::*\nfun:train_?tep", dev));
    assert_false(matches("fun:Buffers::shrink", dev));
    /* '*' at either end matches no character too; several in a row are one */
    assert_true(matches("fun:*Buffers::grow\nfun:*train_step", dev));
    assert_true(matches("fun:Buffers::grow*\nfun:train_step*", dev));
    assert_true(matches("fun:Buffers::grow\nfun:train_step**", dev));
    assert_true(matches("fun:Buffers::grow\nfun:*train*step*", dev));
    assert_false(matches("fun:Buffers::grow\nfun:train_step?*", dev));
    /* the names valgrind users write for shared libraries: any libfoo.so, versioned or not */
    assert_true(matches("fun:Buffers::grow\nobj:*lib*.so*", dev));
    assert_true(matches("obj:*lib*.so*\nobj:*lib*.so*", dev)); /* libcuda.so.1, libcudart.so.12 */
    assert_true(matches("obj:lib*.so*\nobj:libcudart.so*", dev));
    assert_false(matches("obj:*lib*.so.2*", dev));
    /* obj: the path or its file name; src: FILE[:LINE] */
    assert_true(matches("obj:*/libfoo.so\nobj:libfoo.so", dev));
    assert_true(matches("src:foo.cc:57", dev));
    assert_true(matches("src:/src/*.cc", dev));
    assert_false(matches("src:foo.cc:58", dev));
    /* ... : any number of frames, none too */
    assert_true(matches("...\nfun:train_step", dev));
    assert_true(matches("fun:Buffers::grow\n...\nfun:train_step\n...\nsrc:train.py:57", dev));
    assert_true(matches("fun:cuMemAlloc_v2\n...\n...\nfun:<module>", dev));
    assert_false(matches("...\nfun:nowhere", dev));
    assert_false(matches("fun:Buffers::grow\nfun:train_step\nsrc:train.py:57", dev)); /* a frame between */
    /* Python frames: the file and line, the function, module "python" */
    assert_true(matches("...\nsrc:train.py:57\nfun:<module>", dev));
    assert_true(matches("...\nobj:python\nobj:python", dev));
    /* more lines than frames: no match */
    assert_false(matches("fun:Buffers::grow\n...\nfun:<module>\nfun:beyond", dev));
    /* kinds */
    assert_true(matches("match-leak-kinds: device,managed\nfun:Buffers::grow", dev));
    assert_false(matches("match-leak-kinds: pinned\nfun:Buffers::grow", dev));
    assert_true(matches("match-leak-kinds: all\nfun:Buffers::grow", CULEAK_KIND_HOST_PINNED));
    assert_true(matches("match-leak-kinds: block\nfun:Buffers::grow", CULEAK_KIND_BLOCK));
    assert_false(matches("match-leak-kinds: block\nfun:Buffers::grow", dev));
    /* valgrind's leak kinds (a block shared with valgrind): every leak is any of them */
    assert_true(matches("match-leak-kinds: definite,possible\nfun:Buffers::grow", dev));
    assert_true(matches("match-leak-kinds: indirect\nfun:Buffers::grow", CULEAK_KIND_MANAGED));
    assert_true(matches("match-leak-kinds: reachable, pinned\nfun:Buffers::grow", dev));
    assert_false(matches("match-leak-kinds: none\nfun:Buffers::grow", dev));
    assert_false(matches("match-leak-kinds: none\nfun:Buffers::grow", CULEAK_KIND_BLOCK));
    assert_true(matches("match-leak-kinds: none,device\nfun:Buffers::grow", dev));
}

static void test_file_syntax(void **state)
{
    (void)state;
    struct suppressions *s = parse_ok("# comment\n\n"
                                      "{\n   first\n   culeak:Leak\n   fun:a\n}\n"
                                      "{\n   valgrind's own\n   Memcheck:Leak\n   match-leak-kinds: definite\n"
                                      "   fun:malloc\n}\n"
                                      "  {  \n\tsecond one\n culeak,Memcheck:Leak\n obj:*\n  }\n");
    assert_int_equal(suppressions_count(s), 2);
    const char *file;
    unsigned line;
    assert_string_equal(suppressions_name(s, 1, &file, &line), "second one");
    assert_string_equal(file, "t.supp");
    assert_int_equal(line, 14);
    suppressions_free(s);
}

static void expect_error(const char *text, const char *want)
{
    struct suppressions *s = suppressions_new();
    char err[256] = "";
    assert_int_equal(suppressions_parse(s, text, "bad.supp", err, sizeof err), -1);
    if (!strstr(err, want))
        fail_msg("error '%s' lacks '%s'", err, want);
    suppressions_free(s);
}

static void test_malformed(void **state)
{
    (void)state;
    expect_error("fun:a\n", "bad.supp:1: expected '{'");
    expect_error("{\n}\n", "bad.supp:2: the block opened at line 1 has no name");
    expect_error("{\n n\n culeak:Leak\n fun:a\n", "bad.supp:4: the block opened at line 1 has no '}'");
    expect_error("{\n n\n culeak:Leak\n\n frob:a\n}\n", "bad.supp:5: expected a frame line");
    expect_error("{\n n\n culeak:Param\n fun:a\n}\n", "bad.supp:3: culeak suppresses leaks only");
    expect_error("{\n n\n no tool here\n}\n", "bad.supp:3: expected TOOL:KIND");
    expect_error("{\n n\n culeak:Leak\n match-leak-kinds: definite,leaky\n fun:a\n}\n",
                 "bad.supp:4: unknown kind 'leaky'");
    expect_error("{\n n\n culeak:Leak\n match-leak-kinds: ,\n fun:a\n}\n", "bad.supp:4: match-leak-kinds names no kind");
    expect_error("{\n n\n culeak:Leak\n}\n", "bad.supp:4: the block 'n' has no frame lines");
    expect_error("{\n n\n culeak:Leak\n fun:a\n{\n", "bad.supp:5: '{' inside the block");
    expect_error("{\n n\n culeak:Leak\n fun:\n}\n", "bad.supp:4: 'fun:' matches nothing");
    /* a file that cannot be read */
    struct suppressions *s = suppressions_new();
    char err[256];
    assert_int_equal(suppressions_load(s, "/nonexistent/x.supp", err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/x.supp: No such file"));
    /* a directory is said to be one, not "read error" */
    assert_int_equal(suppressions_load(s, "/tmp", err, sizeof err), -1);
    assert_string_equal(err, "/tmp: Is a directory");
    suppressions_free(s);
    /* a block without its name line would be read as another tool's and skipped */
    expect_error("{\n culeak:Leak\n fun:a\n}\n",
                 "bad.supp:2: the block opened at line 1 has no name: its first line is the TOOL:KIND line "
                 "'culeak:Leak'");
    expect_error("{\n Memcheck,culeak:Leak\n fun:a\n}\n", "bad.supp:2: the block opened at line 1 has no name");
}

static void test_written_block_reads_back(void **state)
{
    (void)state;
    char lines[3][1100];
    char *ptrs[3] = {lines[0], lines[1], lines[2]};
    for (int i = 0; i < 3; i++)
        suppressions_frame_line(&stack[SITE + i], lines[i], sizeof lines[i]);
    assert_string_equal(lines[0], "fun:Buffers::grow(unsigned long)");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    suppressions_write_block(f, "grow at foo.cc:57", 1u << CULEAK_KIND_DEVICE, ptrs, 3);
    fclose(f);
    assert_non_null(strstr(text, "{\n   grow at foo.cc:57\n   culeak:Leak\n   match-leak-kinds: device\n"));
    struct suppressions *s = parse_ok(text);
    assert_int_equal(suppressions_match(s, stack, NSTACK, SITE, CULEAK_KIND_DEVICE), 0);
    assert_int_equal(suppressions_match(s, stack, NSTACK, SITE, CULEAK_KIND_MANAGED), -1);
    suppressions_free(s);
    free(text);
}

/* ---- reports over a model: two sites in an app with symbols unknown (obj: lines) */

#define APP "/opt/app/bin/app"
#define LIB "/opt/app/lib/libother.so"

static struct model *two_sites(void)
{
    struct model *m = model_new(NULL);
    struct sb *b = sb_new();
    sb_hello(b, 42, APP, NULL);
    sb_module(b, APP, 0x400000, 0, 0x10000);
    sb_module(b, LIB, 0x7f0000000000ull, 0, 0x10000);
    sb_frame(b, 1, 0, 0x400100);             /* main */
    sb_frame(b, 2, 1, 0x400200);             /* site A in the app */
    sb_frame(b, 3, 1, 0x7f0000000300ull);    /* site B in libother */
    sb_alloc(b, 1, 2, 0x1000, 1000);
    sb_alloc(b, 2, 3, 0x2000, 300);
    sb_alloc(b, 3, 3, 0x3000, 300);
    sb_exit(b, 4);
    struct model_stream *st = model_stream_open(m);
    assert_int_equal(model_stream_feed(st, b->buf, b->n), 0);
    model_stream_finish(st);
    model_stream_close(st);
    sb_free(b);
    return m;
}

static char *text_report(struct model *m, const struct report_options *o, struct report_summary *sum)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(report_text(f, m, o, sum), 0);
    fclose(f);
    return buf;
}

static void test_report_leaves_out_and_counts(void **state)
{
    (void)state;
    struct model *m = two_sites();
    struct report_options o;
    report_options_init(&o);
    struct suppressions *s = parse_ok("{\n  libother's\n  culeak:Leak\n  obj:*/libother.so\n  ...\n}\n");
    o.supp = s;
    struct report_summary sum;
    char *txt = text_report(m, &o, &sum);
    assert_int_equal(sum.allocations, 1);
    assert_int_equal(sum.suppressed_bytes, 600);
    assert_int_equal(sum.suppressed_allocations, 2);
    assert_int_equal(sum.suppressed_sites, 1);
    assert_non_null(strstr(txt, "LEAK SUMMARY: 1000 bytes leaked in 1 allocations from 1 call sites\n"
                                "suppressed: 600 bytes in 2 allocations from 1 sites\n"
                                "  used suppression 'libother's' (t.supp:1): 600 bytes in 2 allocations\n"));
    assert_null(strstr(txt, "libother.so+"));
    free(txt);
    /* JSON: the counts and the block used */
    char *js = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&js, &len);
    assert_int_equal(report_json(f, m, &o, NULL), 0);
    fclose(f);
    assert_non_null(strstr(js, "{\"version\":1,"));
    assert_non_null(strstr(js, "\"suppressed\":{\"bytes\":600,\"allocations\":2,\"sites\":1,\"used\":[{\"name\":"
                               "\"libother's\",\"file\":\"t.supp\",\"line\":1,\"bytes\":600,\"allocations\":2}]}"));
    free(js);
    /* a peak report shows everything: suppressions are about leaks */
    o.what = REPORT_PEAK;
    txt = text_report(m, &o, &sum);
    assert_int_equal(sum.allocations, 3);
    free(txt);
    suppressions_free(s);
    model_free(m);
}

/* Default suppressions (a file loaded with suppressions_load_defaults) beside the user's:
 * what only they match is held by a library until exit, counted apart from what the
 * user's suppress; a user's block that matches too comes first. */
static void test_defaults_counted_apart(void **state)
{
    (void)state;
    struct model *m = two_sites();
    struct report_options o;
    report_options_init(&o);
    char path[] = "/tmp/culeak-test-supp-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\n  libother-held\n  culeak:Leak\n  obj:*/libother.so\n  ...\n}\n", f);
    fclose(f);
    struct suppressions *s = suppressions_new();
    char err[256] = "";
    assert_int_equal(suppressions_load_defaults(s, path, err, sizeof err), 0);
    assert_int_equal(suppressions_count(s), 1);
    assert_int_equal(suppressions_user_count(s), 0);
    assert_true(suppressions_is_default(s, 0));
    o.supp = s;
    struct report_summary sum;
    char *txt = text_report(m, &o, &sum);
    assert_int_equal(sum.allocations, 1);
    assert_int_equal(sum.suppressed_allocations, 0);
    assert_int_equal(sum.held_bytes, 600);
    assert_int_equal(sum.held_allocations, 2);
    assert_int_equal(sum.held_sites, 1);
    assert_null(strstr(txt, "suppressed:"));
    char want[512];
    snprintf(want, sizeof want,
             "LIBRARY SUMMARY: 600 bytes in 2 allocations from 1 sites held by a library until exit (default "
             "suppressions, not counted as leaks)\n  used default suppression 'libother-held' (%s:1): 600 bytes in 2 "
             "allocations\n", path);
    assert_non_null(strstr(txt, want));
    free(txt);
    /* a user's block matching the same stacks: theirs, once given first */
    struct suppressions *both = parse_ok("{\n  mine\n  culeak:Leak\n  obj:*/libother.so\n  ...\n}\n");
    assert_int_equal(suppressions_load_defaults(both, path, err, sizeof err), 0);
    assert_int_equal(suppressions_user_count(both), 1);
    o.supp = both;
    txt = text_report(m, &o, &sum);
    assert_int_equal(sum.suppressed_allocations, 2);
    assert_int_equal(sum.held_allocations, 0);
    assert_null(strstr(txt, "LIBRARY SUMMARY"));
    free(txt);
    unlink(path);
    suppressions_free(both);
    suppressions_free(s);
    model_free(m);
}

static void test_generated_blocks_suppress_the_report(void **state)
{
    (void)state;
    struct model *m = two_sites();
    struct report_options o;
    report_options_init(&o);
    char *gen = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&gen, &len);
    assert_int_equal(report_suppressions(f, m, &o), 0);
    fclose(f);
    struct suppressions *s = parse_ok(gen);
    assert_int_equal(suppressions_count(s), 2); /* one block per site */
    assert_non_null(strstr(gen, "   obj:" LIB "\n   obj:" APP "\n}\n"));
    o.supp = s;
    struct report_summary sum;
    char *txt = text_report(m, &o, &sum);
    assert_int_equal(sum.allocations, 0);
    assert_int_equal(sum.suppressed_bytes, 1600);
    assert_int_equal(sum.suppressed_sites, 2);
    /* sites already suppressed get no block */
    char *again = NULL;
    f = open_memstream(&again, &len);
    assert_int_equal(report_suppressions(f, m, &o), 0);
    fclose(f);
    assert_string_equal(again, "");
    free(again);
    free(txt);
    free(gen);
    suppressions_free(s);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_lines),
        cmocka_unit_test(test_file_syntax),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_written_block_reads_back),
        cmocka_unit_test(test_report_leaves_out_and_counts),
        cmocka_unit_test(test_defaults_counted_apart),
        cmocka_unit_test(test_generated_blocks_suppress_the_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
