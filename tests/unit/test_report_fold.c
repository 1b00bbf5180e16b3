/* Text reports fold each run of looked-through frames after the call site (the Python
 * interpreter between two Python frames, a library calling back into the program) into
 * one line naming its modules, as the console does; output paths expand %p, %h, %r. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "outpath.h"
#include "report.h"
#include "stream_builder.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define APP "/opt/app/bin/app"
#define PY "/usr/bin/python3.12"
#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static struct model *interpreter_between(void)
{
    struct model *m = model_new(NULL);
    struct sb *b = sb_new();
    sb_hello(b, 7, APP, NULL);
    sb_module(b, APP, 0x400000, 0, 0x10000);
    sb_module(b, PY, 0x500000, 0, 0x10000);
    sb_module(b, LIBC, 0x7f0000000000ull, 0, 0x10000);
    sb_frame(b, 1, 0, 0x400100);            /* the program's outer frame */
    sb_frame(b, 2, 1, 0x500100);            /* three interpreter frames */
    sb_frame(b, 3, 2, 0x500200);
    sb_frame(b, 4, 3, 0x500300);
    sb_frame(b, 5, 4, 0x400200);            /* the call site */
    sb_frame(b, 6, 5, 0x7f0000000100ull);   /* inside libc, below the site: hidden */
    sb_frame(b, 7, 6, 0x7f0000000200ull);
    sb_alloc(b, 1, 7, 0x1000, 64);
    sb_exit(b, 2);
    struct model_stream *s = model_stream_open(m);
    assert_int_equal(model_stream_feed(s, b->buf, b->n), 0);
    model_stream_finish(s);
    model_stream_close(s);
    sb_free(b);
    return m;
}

static void test_interpreter_frames_fold(void **state)
{
    (void)state;
    struct model *m = interpreter_between();
    struct report_options o;
    report_options_init(&o);
    char *txt = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&txt, &len);
    assert_int_equal(report_text(f, m, &o, NULL), 0);
    fclose(f);
    assert_non_null(strstr(txt, "    #0  app+0x200\n"
                                "    ... 3 frames in python3.12 (looked through)\n"
                                "    #4  app+0x100\n"));
    free(txt);
    /* JSON keeps every frame: it is data */
    f = open_memstream(&txt, &len);
    assert_int_equal(report_json(f, m, &o, NULL), 0);
    fclose(f);
    assert_non_null(strstr(txt, "\"library_frames_hidden\":2"));
    const char *p = txt;
    int frames = 0;
    while ((p = strstr(p, "\"offset\":")))
        frames++, p++;
    assert_int_equal(frames, 5);
    free(txt);
    model_free(m);
}

static void test_expand_path(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(culeak_expand_path("run.%p.%r.%h.culeak", 123, "node1", "3", out, sizeof out), 1);
    assert_string_equal(out, "run.123.3.node1.culeak");
    assert_int_equal(culeak_expand_path("100%% %x %", 1, "h", "0", out, sizeof out), 0);
    assert_string_equal(out, "100% %x %");
    assert_int_equal(culeak_expand_path("a%pb", 4242, "h", "0", out, 5), -1); /* cut, not overrun */
    assert_string_equal(out, "a424");
    setenv("RANK", "5", 1);
    assert_int_equal(culeak_expand_path("r%r", 1, "h", NULL, out, sizeof out), 0);
    assert_string_equal(out, "r5");
    unsetenv("RANK");
    assert_int_equal(culeak_output_dir_writable("plain-name"), 0);
    assert_int_equal(culeak_output_dir_writable("/tmp/x.json"), 0);
    assert_int_equal(culeak_output_dir_writable("/no/such/dir/x.json"), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(culeak_output_dir_writable("/etc/passwd/x.json"), -1);
    assert_int_equal(errno, ENOTDIR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interpreter_frames_fold),
        cmocka_unit_test(test_expand_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
