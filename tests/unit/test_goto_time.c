/* `goto TIME` in a recording (src/console/timeline.c): a bare number is seconds since the
 * earliest process started, as are "1.5s" and "1500ms"; the state there holds the events
 * up to that time, on either side of it; a time past the recordings' length is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/model.h"
#include "stream_builder.h"
#include "../../src/console/timeline.h"

#define S 1000000000ull

/* A process started at wall time 50 s: allocations at 1.0, 1.4, 1.6 and 2.0 s, exit at
 * 2.0 s. */
static char path[64];

static int setup(void **st)
{
    struct sb *b = sb_new();
    sb_hello_at(b, 10, "/bin/app", NULL, 50 * S, 7 * S);
    static const uint64_t at[] = {S, 14 * S / 10, 16 * S / 10, 2 * S};
    uint64_t t = 0;
    for (int i = 0; i < 4; i++) {
        sb_event(b, (struct sb_ev){.seq = (uint64_t)i + 1, .dt = at[i] - t, .op = CULEAK_OP_ALLOC,
                                   .api = CULEAK_API_CUDA_MALLOC, .kind = CULEAK_KIND_DEVICE, .size = 4096,
                                   .addr = 0x7000000000ull + (uint64_t)i * 0x10000, .device = 0});
        t = at[i];
    }
    sb_u(b, 5);
    sb_u(b, 0);
    sb_u(b, 0);
    sb_end(b, CULEAK_REC_EXIT);
    snprintf(path, sizeof path, "/tmp/culeak-goto-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, b->buf, b->n), (ssize_t)b->n);
    close(fd);
    sb_free(b);
    return 0;
}

static int teardown(void **st)
{
    unlink(path);
    return 0;
}

/* goto WHAT: 0 and the position's words in where, or -1 and the error there. */
static int go(const char *what, char *where, size_t len)
{
    struct timeline tl;
    struct model *m = model_new(NULL);
    assert_non_null(m);
    char *files[] = {path}, err[256] = "";
    assert_int_equal(timeline_load(&tl, m, files, 1, err, sizeof err), 0);
    struct view_source src;
    int rc = timeline_goto(&tl, &m, what, &src, err, sizeof err);
    snprintf(where, len, "%s", rc == 0 ? tl.where : err);
    printf("# goto %s: %s\n", what, where);
    timeline_free(&tl);
    model_free(m);
    return rc;
}

static void test_seconds(void **st)
{
    char w[256];
    assert_int_equal(go("1.5", w, sizeof w), 0);
    assert_string_equal(w, "at 1.5s: event 2/4");
    assert_int_equal(go("1.5s", w, sizeof w), 0);
    assert_string_equal(w, "at 1.5s: event 2/4");
    assert_int_equal(go("1500ms", w, sizeof w), 0);
    assert_string_equal(w, "at 1.5s: event 2/4");
    assert_int_equal(go("1.7", w, sizeof w), 0);
    assert_non_null(strstr(w, ": event 3/4"));
    assert_int_equal(go("0.5", w, sizeof w), 0);
    assert_non_null(strstr(w, ": event 0/4"));
    assert_int_equal(go("2", w, sizeof w), 0); /* the end itself */
    assert_non_null(strstr(w, ": event 4/4"));
}

static void test_past_the_end(void **st)
{
    char w[256];
    assert_int_equal(go("2.5", w, sizeof w), -1);
    assert_non_null(strstr(w, "is past the end: the recordings last 2"));
    assert_int_equal(go("3s", w, sizeof w), -1);
}

/* Events and marks share one numbering (seq), the one info marks shows: 4 allocations and
 * 4 marks, numbered 1 to 8, are "event 8/8" at the end, not "4/4"; the marks armed as
 * snapshots on loading are not snapshots the user took. */
static void test_numbered_as_info_marks(void **st)
{
    char p2[64];
    snprintf(p2, sizeof p2, "/tmp/culeak-goto-XXXXXX");
    int fd = mkstemp(p2);
    assert_true(fd >= 0);
    struct sb *b = sb_new();
    sb_hello_at(b, 11, "/bin/app", NULL, 50 * S, 7 * S);
    for (int i = 0; i < 4; i++) {
        char label[32];
        sb_alloc(b, (uint64_t)(2 * i + 1), 0, 0x7000000000ull + (uint64_t)i * 0x10000, 4096);
        snprintf(label, sizeof label, "iteration %d", i);
        sb_mark(b, (uint64_t)(2 * i + 2), label);
    }
    sb_exit(b, 9);
    assert_int_equal(write(fd, b->buf, b->n), (ssize_t)b->n);
    close(fd);
    sb_free(b);
    struct timeline tl;
    struct model *m = model_new(NULL);
    char *files[] = {p2}, err[256] = "";
    assert_int_equal(timeline_load(&tl, m, files, 1, err, sizeof err), 0);
    printf("# %s; %d snapshots armed, %d taken by name\n", tl.where, model_snapshot_count(m),
           model_snapshot_named_count(m));
    assert_string_equal(tl.where, "at end: event 8/8");
    /* 4.5 us in: 2 allocations and 2 marks taken, the last numbered 4 */
    struct view_source src;
    assert_int_equal(timeline_goto(&tl, &m, "0.0000045", &src, err, sizeof err), 0);
    printf("# goto 0.0000045: %s\n", tl.where);
    assert_non_null(strstr(tl.where, ": event 4/8"));
    assert_true(model_snapshot_count(m) >= 5); /* "@start" and the 4 marks */
    assert_int_equal(model_snapshot_named_count(m), 0);
    assert_int_equal(model_snapshot_take(m, "mine"), 0);
    assert_int_equal(model_snapshot_named_count(m), 1);
    timeline_free(&tl);
    model_free(m);
    unlink(p2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seconds),
        cmocka_unit_test(test_past_the_end),
        cmocka_unit_test(test_numbered_as_info_marks),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
