/* A comparison's words say what each run's bytes are: leaked at the exit, live now in a job
 * that runs on, or live when a recording that ends before its process did ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "report/compare.h"
#include "model/model.h"
#include "report/report.h"
#include "stream_builder.h"
#include "model_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define APP "/opt/app/bin/app"
#define APP_BASE 0x555500000000ull

/* A run that holds `blocks` blocks of 1 MiB at one site; with its exit record or without. */
static struct sb *run(int blocks, int exits)
{
    struct sb *b = sb_new();
    sb_hello(b, 100, APP, NULL);
    sb_module(b, APP, APP_BASE, 0, 0x10000);
    sb_frame(b, 1, 0, APP_BASE + 0x200);
    uint64_t seq = 1;
    for (int i = 0; i < blocks; i++)
        sb_alloc(b, seq++, 1, 0x7000000000ull + 0x100000 * (uint64_t)i, 1 << 20);
    if (exits)
        sb_exit(b, seq);
    return b;
}

/* The text of `compare` of the baseline (1 block, exited) and after. */
static char *compared(struct model *after)
{
    struct model *base = model_new(NULL);
    assert_non_null(base);
    feed_all(base, run(1, 1));
    struct report_options o;
    report_options_init(&o);
    struct compare c;
    assert_int_equal(compare_runs(base, after, &o, &c), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    const char *names[2] = {"base.culeak", "this run"};
    assert_int_equal(compare_text(f, &c, &o, names), 0);
    fclose(f);
    compare_free(&c);
    model_free(base);
    return text;
}

static void test_running_job_is_live_now(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    assert_non_null(m);
    struct sb *b = run(3, 0);
    struct model_stream *s = model_stream_open(m); /* its stream open: the job runs on */
    assert_non_null(s);
    assert_int_equal(model_stream_feed(s, b->buf, b->n), MODEL_FEED_OK);
    char *text = compared(m);
    assert_non_null(strstr(text, "this run: 1 process, 3145728 bytes live now in 3 allocations"));
    assert_non_null(strstr(text, "base.culeak: 1 process, 1048576 bytes leaked in 1 allocations"));
    assert_non_null(strstr(text, "COMPARE SUMMARY: live now 2.0 MiB (2097152 bytes) more than the baseline leaked ("));
    assert_null(strstr(text, "SUMMARY: leaked"));
    free(text);
    model_stream_close(s);
    sb_free(b);
    model_free(m);
}

static void test_recording_without_exit_is_live_at_its_end(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    assert_non_null(m);
    feed_all(m, run(3, 0));
    char *text = compared(m);
    assert_non_null(
        strstr(text, "COMPARE SUMMARY: live when the recording ends 2.0 MiB (2097152 bytes) more than the baseline leaked ("));
    free(text);
    model_free(m);
}

static void test_exited_runs_leaked(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    assert_non_null(m);
    feed_all(m, run(3, 1));
    char *text = compared(m);
    assert_non_null(strstr(text, "COMPARE SUMMARY: leaked 2.0 MiB (2097152 bytes) more than the baseline ("));
    free(text);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_running_job_is_live_now),
        cmocka_unit_test(test_recording_without_exit_is_live_at_its_end),
        cmocka_unit_test(test_exited_runs_leaked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
