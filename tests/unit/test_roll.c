/* Rolled recordings (src/launch/roll.c, common/recording_part.c): the parts' names, when
 * a part is due to end (time, size), and what the boundary writes: a ROLL naming the next
 * part at the end of one, and MAGIC, the HELLO again and a ROLL naming the part before at
 * the start of the next, which a reader tells from a recording of its own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/decode.h"
#include "common/outpath.h"
#include "common/recording_part.h"
#include "common/wire.h"
#include "common/wire_encode.h"
#include "launch/roll.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_part_names(void **state)
{
    (void)state;
    char out[64];
    /* 2026-12-06 08:00:00 UTC */
    assert_int_equal(culeak_expand_part("r.%t.%n.%p.culeak", 12, 1796544000, out, sizeof out), 1);
    assert_string_equal(out, "r.20261206T080000Z.0012.%p.culeak");
    assert_int_equal(culeak_expand_part("r.%n", 12345, 0, out, sizeof out), 1);
    assert_string_equal(out, "r.12345");
    assert_int_equal(culeak_expand_part("r.%%n.culeak", 1, 0, out, sizeof out), 0);
    assert_string_equal(out, "r.%%n.culeak");
    assert_int_equal(culeak_expand_part("r.%t", 1, 0, out, 8), -1);
}

/* A HELLO as the shim writes it, for pid. */
static size_t hello(uint8_t *rec, uint64_t pid)
{
    uint8_t *p = rec + CULEAK_REC_HEADROOM;
    size_t k = 0;
    uint64_t head[] = {CULEAK_FORMAT_VERSION, pid, 1, 1796544000000000000ull, 5000};
    for (size_t i = 0; i < 5; i++)
        k += culeak_put_u(p + k, head[i]);
    k += culeak_put_s(p + k, "host", 4);
    k += culeak_put_s(p + k, "/bin/job", 8);
    k += culeak_put_u(p + k, 1);
    k += culeak_put_s(p + k, "/bin/job", 8);
    k += culeak_put_u(p + k, 0);
    k += culeak_put_u(p + k, 48);
    k += culeak_put_u(p + k, CULEAK_HELLO_FILE);
    return culeak_rec_finish(rec, CULEAK_REC_HELLO, k);
}

static void write_rec(struct culeak_roller *r, int fd, const uint8_t *rec, size_t n)
{
    assert_int_equal(write(fd, rec, n), (ssize_t)n);
    culeak_roller_wrote(r, rec, n);
}

struct seen {
    int rolls;
    struct culeak_roll last;
    char name[64];
};

static int on_roll(void *ctx, const struct culeak_roll *r)
{
    struct seen *s = ctx;
    s->rolls++;
    s->last = *r;
    snprintf(s->name, sizeof s->name, "%.*s", (int)r->name.n, r->name.p);
    return 0;
}

static void test_boundary(void **state)
{
    (void)state;
    char dir[] = "/tmp/culeak_roll_XXXXXX", tmpl[128], made[256], path[256];
    assert_non_null(mkdtemp(dir));
    snprintf(tmpl, sizeof tmpl, "%s/run.%%n.culeak", dir);
    struct culeak_roller r;
    struct culeak_roll_opts opt = {.seconds = 60, .bytes = 150};
    int fd = culeak_roller_start(&r, &opt, tmpl, 0, 4242, 1000, made, sizeof made);
    assert_true(fd >= 0);
    snprintf(path, sizeof path, "%s/run.0001.culeak", dir);
    assert_string_equal(made, path);
    assert_false(culeak_roller_due(&r, 5000)); /* nothing in it yet */
    uint8_t rec[512];
    write_rec(&r, fd, rec, hello(rec, 4242));
    assert_false(culeak_roller_due(&r, 1059));
    assert_true(culeak_roller_due(&r, 1060)); /* its time is up */
    char text[150];
    memset(text, 'x', sizeof text);
    write_rec(&r, fd, rec, culeak_enc_note(rec, text, sizeof text));
    assert_true(culeak_roller_due(&r, 1001)); /* its size is reached */
    uint64_t offset = r.offset;
    assert_int_equal(culeak_roller_next(&r, &fd, 1001), 0);
    assert_int_equal(r.part, 2);
    assert_false(culeak_roller_due(&r, 1001));
    close(fd);
    /* the part before ends naming the next; the next one names it and where the cut is */
    struct seen seen = {0};
    struct culeak_sink sink = {.ctx = &seen, .roll = on_roll};
    char err[256];
    assert_int_equal(culeak_decode_file(path, &sink, err, sizeof err), 0);
    assert_int_equal(seen.rolls, 1);
    assert_int_equal(seen.last.which, CULEAK_ROLL_NEXT);
    assert_int_equal(seen.last.part, 1);
    assert_int_equal(seen.last.offset, offset);
    assert_string_equal(seen.name, "run.0002.culeak");
    struct culeak_part_head h;
    assert_int_equal(culeak_part_head(path, &h), 0); /* the first part is no later part */
    char second[256];
    snprintf(second, sizeof second, "%s/run.0002.culeak", dir);
    assert_int_equal(culeak_part_head(second, &h), 1);
    assert_int_equal(h.pid, 4242);
    assert_string_equal(h.host, "host");
    assert_int_equal(h.part, 2);
    assert_int_equal(h.offset, offset);
    assert_string_equal(h.previous, "run.0001.culeak");
    culeak_roller_free(&r);
    unlink(path);
    unlink(second);
    rmdir(dir);
}

/* A name that gives the next part the name of one already there (%t within a second)
 * ends nothing: the part goes on, and a later try under another name succeeds. */
static void test_name_taken(void **state)
{
    (void)state;
    char dir[] = "/tmp/culeak_roll_XXXXXX", tmpl[128], made[256];
    assert_non_null(mkdtemp(dir));
    snprintf(tmpl, sizeof tmpl, "%s/run.%%t.culeak", dir);
    struct culeak_roller r;
    struct culeak_roll_opts opt = {.bytes = 4096};
    int fd = culeak_roller_start(&r, &opt, tmpl, 0, 7, 1796544000, made, sizeof made);
    assert_true(fd >= 0);
    uint8_t rec[512];
    write_rec(&r, fd, rec, hello(rec, 7));
    int before = fd;
    assert_int_equal(culeak_roller_next(&r, &fd, 1796544000), -1);
    assert_int_equal(errno, EEXIST);
    assert_int_equal(fd, before);
    assert_int_equal(r.part, 1);
    assert_int_equal(culeak_roller_next(&r, &fd, 1796544001), 0);
    assert_int_equal(r.part, 2);
    char second[256];
    snprintf(second, sizeof second, "%s/run.20261206T080001Z.culeak", dir);
    assert_string_equal(r.name, second);
    close(fd);
    unlink(made);
    unlink(second);
    culeak_roller_free(&r);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_part_names),
        cmocka_unit_test(test_boundary),
        cmocka_unit_test(test_name_taken),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
