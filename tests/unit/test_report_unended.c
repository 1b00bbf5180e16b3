/* A recording that ends before its process did (saved mid-run, or cut): what is live at
 * its end is "live when the recording ends", not judged, as before-attach memory is;
 * leaks of processes that did exit are still leaks, at the same site too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "report/report.h"
#include "stream_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define APP "/opt/app/bin/app"

/* pid 10 leaks 100 bytes at site A and exits; pid 11 has 200 bytes at A and 50 at B live
 * when its recording ends, without an exit */
static void feed(struct model *m, uint64_t pid, int exits)
{
    struct sb *b = sb_new();
    sb_hello(b, pid, APP, "");
    sb_module(b, APP, 0x400000, 0, 0x10000);
    sb_frame(b, 1, 0, 0x400100);
    sb_frame(b, 2, 1, 0x400200); /* site A */
    sb_frame(b, 3, 1, 0x400300); /* site B */
    sb_alloc(b, 1, 2, 0x1000, exits ? 100 : 200);
    if (!exits)
        sb_alloc(b, 2, 3, 0x2000, 50);
    if (exits)
        sb_exit(b, 3);
    struct model_stream *s = model_stream_open(m);
    assert_int_equal(model_stream_feed(s, b->buf, b->n), 0);
    assert_int_equal(model_stream_finish(s), 0);
    model_stream_close(s);
    sb_free(b);
}

static char *run(struct model *m, const struct report_options *o, int json, struct report_summary *sum)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(json ? report_json(f, m, o, sum) : report_text(f, m, o, sum), 0);
    fclose(f);
    return buf;
}

static void test_live_at_end_not_judged(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    feed(m, 10, 1);
    feed(m, 11, 0);
    struct report_options o;
    report_options_init(&o);
    for (int merge = 0; merge < 2; merge++) {
        o.merge_processes = merge;
        struct report_summary sum;
        char *txt = run(m, &o, 0, &sum);
        assert_int_equal(sum.allocations, 1); /* what --error-exitcode reads */
        assert_int_equal(sum.bytes, 100);
        assert_int_equal(sum.sites, 1);
        assert_int_equal(sum.end_bytes, 250);
        assert_int_equal(sum.end_allocations, 2);
        if (!strstr(txt, "LEAKED 100 bytes in 1 allocation (device) from app+0x200") ||
            !strstr(txt, "NOT JUDGED 200 bytes in 1 allocation (device) from app+0x200") ||
            !strstr(txt, "NOT JUDGED 50 bytes in 1 allocation (device) from app+0x300") ||
            !strstr(txt, "    live when the recording ends, before its process did: not judged\n") ||
            !strstr(txt, "LEAK SUMMARY: 100 bytes leaked in 1 allocations from 1 call sites\n") ||
            !strstr(txt, "END SUMMARY: 250 bytes in 2 allocations live when the recording ends") ||
            !strstr(txt, "[no exit seen: what is live when the recording ends is not judged]") ||
            strstr(txt, "LEAKED 200") || strstr(txt, "LEAKED 50 "))
            fail_msg("merge %d:\n%s", merge, txt);
        free(txt);
        char *js = run(m, &o, 1, &sum);
        if (!strstr(js, "\"live_at_end\":[{") || !strstr(js, "\"live_at_end_bytes\":250,\"live_at_end_allocations\":2") ||
            !strstr(js, "\"summary\":{\"bytes\":100,\"allocations\":1,\"sites\":1,"))
            fail_msg("merge %d:\n%s", merge, js);
        free(js);
    }
    model_free(m);
}

/* the same process once its end is known (check saw it exit, or killed): its memory is judged */
static void test_exit_by_status_judged(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    feed(m, 11, 0);
    assert_int_equal(model_process_exited_by_status(m, 0, 0), 1);
    struct report_options o;
    report_options_init(&o);
    struct report_summary sum;
    char *txt = run(m, &o, 0, &sum);
    assert_int_equal(sum.allocations, 2);
    assert_int_equal(sum.end_allocations, 0);
    assert_null(strstr(txt, "END SUMMARY"));
    free(txt);
    model_free(m);
    /* killed by SIGKILL, as its parent saw: it ended there, what it held is judged */
    m = model_new(NULL);
    feed(m, 11, 0);
    assert_int_equal(model_process_exited_by_status(m, 0, 9), 0);
    txt = run(m, &o, 0, &sum);
    assert_int_equal(sum.allocations, 2);
    assert_int_equal(sum.end_allocations, 0);
    free(txt);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live_at_end_not_judged),
        cmocka_unit_test(test_exit_by_status_judged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
