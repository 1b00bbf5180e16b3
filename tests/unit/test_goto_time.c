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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seconds),
        cmocka_unit_test(test_past_the_end),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
