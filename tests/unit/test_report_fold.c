/* Text reports fold each run of looked-through frames after the call site (the Python
 * interpreter between two Python frames, a library calling back into the program) into
 * one line naming its modules, as the console does; output paths expand %p, %h, %r. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/outpath.h"
#include "report/report.h"
#include "stream_builder.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define APP "/opt/app/bin/app"
#define PY "/usr/bin/python3.12"
#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

/* iterations: 0, one allocation at the stack; else one per iteration, each followed by
 * the mark "iteration N": a growth suspect at the same stack */
static struct model *interpreter_between_n(int iterations)
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
    uint64_t seq = 0;
    for (int i = 0; i < (iterations ? iterations : 1); i++) {
        sb_alloc(b, ++seq, 7, 0x1000 + 0x100 * (uint64_t)i, 64);
        char label[32];
        snprintf(label, sizeof label, "iteration %d", i);
        if (iterations)
            sb_mark(b, ++seq, label);
    }
    sb_exit(b, ++seq);
    struct model_stream *s = model_stream_open(m);
    assert_int_equal(model_stream_feed(s, b->buf, b->n), 0);
    model_stream_finish(s);
    model_stream_close(s);
    sb_free(b);
    return m;
}

static struct model *interpreter_between(void) { return interpreter_between_n(0); }

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

/* A growth suspect's stack reads as the leak report's: the same folded lines */
static void test_suspect_frames_fold(void **state)
{
    (void)state;
    struct model *m = interpreter_between_n(12);
    struct report_options o;
    report_options_init(&o);
    char *txt = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&txt, &len);
    assert_int_equal(report_suspects_text(f, m, &o), 0);
    fclose(f);
    assert_non_null(strstr(txt, "GROWS +64 B per iteration (device memory) at app+0x200"));
    assert_non_null(strstr(txt, "    #0  app+0x200\n"
                                "    ... 3 frames in python3.12 (looked through)\n"
                                "    #4  app+0x100\n"));
    assert_null(strstr(txt, "#1  python3.12"));
    free(txt);
    /* JSON: every frame of the suspect's stack, as the leaks' */
    f = open_memstream(&txt, &len);
    assert_int_equal(report_json(f, m, &o, NULL), 0);
    fclose(f);
    const char *sus = strstr(txt, "\"suspects\":[{");
    assert_non_null(sus);
    assert_non_null(strstr(sus, "\"running\":false,\"stack\":[{\"function\":"));
    assert_non_null(strstr(sus, "\"library_frames_hidden\":2"));
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
    /* the boundary: a name of cap - 1 characters fits whole, one more is cut */
    assert_int_equal(culeak_expand_path("a%pb", 4242, "h", "0", out, 7), 1);
    assert_string_equal(out, "a4242b");
    assert_int_equal(culeak_expand_path("a%pb", 4242, "h", "0", out, 6), -1);
    assert_string_equal(out, "a4242");
    assert_int_equal(culeak_expand_path("%h", 1, "node1", "0", out, 6), 0);
    assert_string_equal(out, "node1");
    /* the job's global rank comes before the rank on this node */
    setenv("LOCAL_RANK", "1", 1);
    setenv("RANK", "5", 1);
    assert_int_equal(culeak_expand_path("r%r", 1, "h", NULL, out, sizeof out), 0);
    assert_string_equal(out, "r5");
    unsetenv("RANK");
    assert_int_equal(culeak_expand_path("r%r", 1, "h", NULL, out, sizeof out), 0);
    assert_string_equal(out, "r1");
    unsetenv("LOCAL_RANK");
    assert_int_equal(culeak_expand_path("r%r", 1, "h", NULL, out, sizeof out), 0);
    assert_string_equal(out, "r0");
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
        cmocka_unit_test(test_suspect_frames_fold),
        cmocka_unit_test(test_expand_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
