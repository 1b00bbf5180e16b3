/* Hostile or huge recordings are read in time and memory that follow the input: a module
 * path naming a FIFO is never opened (report and open would block on it), a stream of
 * many HELLO records is one process and then corrupt, FREE_ALLs of contexts that hold
 * nothing walk nothing, and a decoder gives back the room of a large record once read.
 * An alarm turns a hang into a failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/decode.h"
#include "model/model.h"
#include "model/model_internal.h"
#include "report/report.h"
#include "stream_builder.h"

#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static struct model *feed(struct sb *b, int *rc)
{
    struct model *m = model_new(NULL);
    assert_non_null(m);
    struct model_stream *s = model_stream_open(m);
    assert_non_null(s);
    *rc = model_stream_feed(s, b->buf, b->n);
    if (*rc == 0)
        model_stream_finish(s);
    model_stream_close(s);
    return m;
}

static void test_fifo_module_is_not_opened(void **st)
{
    char dir[] = "/tmp/culeak-hostile-XXXXXX", fifo[64];
    assert_non_null(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/lib.so", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    struct sb *b = sb_new();
    sb_hello(b, 42, "/bin/app", NULL);
    sb_module(b, fifo, 0x400000, 0, 0x10000);
    sb_frame(b, 1, 0, 0x401234);
    sb_alloc(b, 1, 1, 0x7000, 4096);
    sb_exit(b, 2);
    int rc;
    struct model *m = feed(b, &rc);
    assert_int_equal(rc, 0);
    struct report_options o;
    report_options_init(&o);
    struct report_summary sum;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(report_text(f, m, &o, &sum), 0); /* blocked forever on the FIFO before */
    fclose(f);
    assert_int_equal(sum.allocations, 1);
    free(text);
    model_free(m);
    sb_free(b);
    unlink(fifo);
    rmdir(dir);
}

static void test_many_hellos_are_corrupt(void **st)
{
    struct sb *b = sb_new();
    for (int i = 0; i < 70000; i++)
        sb_hello(b, (uint64_t)i + 1, "/bin/app", NULL);
    int rc;
    struct model *m = feed(b, &rc);
    assert_int_equal(rc, MODEL_FEED_CORRUPT);
    assert_int_equal(model_process_count(m), 1);
    model_free(m);
    sb_free(b);
}

static void test_free_alls_walk_what_they_free(void **st)
{
    struct sb *b = sb_new();
    sb_hello(b, 42, "/bin/app", NULL);
    uint64_t seq = 1;
    for (uint64_t i = 0; i < 1000; i++) /* live in context 1 to the end */
        sb_event(b, (struct sb_ev){.seq = seq++, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CUDA_MALLOC,
                                   .kind = CULEAK_KIND_DEVICE, .ctx = 1, .size = 64, .addr = 0x10000 + i * 64});
    for (uint64_t i = 0; i < 80000; i++) { /* context 2: one allocation, then destroyed */
        sb_event(b, (struct sb_ev){.seq = seq++, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CUDA_MALLOC,
                                   .kind = CULEAK_KIND_DEVICE, .ctx = 2, .size = 64, .addr = 0x900000 + i * 64});
        sb_event(b, (struct sb_ev){.seq = seq++, .op = CULEAK_OP_FREE_ALL, .api = CULEAK_API_CU_CTX_DESTROY,
                                   .kind = CULEAK_KIND_DEVICE, .ctx = 2});
        sb_event(b, (struct sb_ev){.seq = seq++, .op = CULEAK_OP_FREE_ALL, .api = CULEAK_API_CU_CTX_DESTROY,
                                   .kind = CULEAK_KIND_DEVICE, .ctx = 2});
    }
    int rc;
    struct model *m = feed(b, &rc);
    assert_int_equal(rc, 0);
    const struct model_process *p = model_process(m, 0);
    assert_non_null(p);
    assert_int_equal(p->free_alls, 160000);
    assert_int_equal(m->live.n, 1000);
    if (m->free_all_visits > 80000)
        fail_msg("FREE_ALLs looked at %llu live entries to free 80000",
                 (unsigned long long)m->free_all_visits);
    model_free(m);
    sb_free(b);
}

static void test_decoder_gives_back_a_large_record(void **st)
{
    struct culeak_sink sink = {0};
    struct culeak_decoder d;
    culeak_decoder_init(&d, &sink, 1);
    struct sb *b = sb_new();
    sb_hello(b, 42, "/bin/app", NULL);
    assert_int_equal(culeak_decoder_feed(&d, b->buf, b->n), 0);
    /* a 12 MiB record of a type this reader skips, arriving in 64 KiB pieces */
    size_t big = 12u << 20;
    uint8_t *rec = calloc(1, big + 16);
    assert_non_null(rec);
    rec[0] = 200;
    size_t h = 1 + culeak_put_u(rec + 1, big);
    for (size_t off = 0; off < h + big; off += 65536)
        assert_int_equal(culeak_decoder_feed(&d, rec + off, off + 65536 <= h + big ? 65536 : h + big - off), 0);
    assert_int_equal(culeak_decoder_finish(&d), 0);
    if (d.cap > (1u << 20))
        fail_msg("the decoder keeps %zu bytes after the record", d.cap);
    free(rec);
    culeak_decoder_free(&d);
    sb_free(b);
}

int main(void)
{
    alarm(120); /* a hang fails the test instead of holding the suite */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_module_is_not_opened),
        cmocka_unit_test(test_many_hellos_are_corrupt),
        cmocka_unit_test(test_free_alls_walk_what_they_free),
        cmocka_unit_test(test_decoder_gives_back_a_large_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
