/* The aggregated recording (common/aggregate.c, model/churn.c): a stream and its
 * aggregated form give the same leak report, peak report, suspects, diff between marks
 * and JSON, over random streams of several sites, devices, threads, marks, context
 * resets and failed allocations, at any interval and pending-list size; what is folded
 * is counted in CHURN records, not written; a CHURN record that does not make sense is
 * refused with a message; an aggregated recording cut anywhere reads up to the cut. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/aggregate.h"
#include "common/decode.h"
#include "model/model.h"
#include "report/report.h"
#include "stream_builder.h"
#include "model_fixture.h"
#include "xorshift.h"

#define APP "/opt/app/bin/app"
#define NSITES 7
#define CTX 0x10

/* ---- a random job's full stream ---- */

struct job_live {
    uint64_t addr;
    int device;
};

static void ev(struct sb *b, uint64_t *seq, struct sb_ev e)
{
    e.seq = ++*seq;
    e.ctx = e.ctx ? e.ctx : CTX;
    sb_event(b, e);
}

/* n steps of allocations at random sites (some kept, most freed soon), marks every
 * 20 to 60 steps, a failed allocation, a context reset of one device now and then,
 * two devices and three threads. */
static struct sb *random_job(uint64_t seed, int n, int *nmarks)
{
    rng = seed;
    struct sb *b = sb_new();
    sb_hello(b, 4242, APP, NULL);
    sb_module(b, APP, 0x400000, 0, 0x100000);
    for (int i = 1; i <= NSITES; i++)
        sb_frame(b, (uint64_t)i, 0, 0x400100 + 16u * (unsigned)i);
    struct job_live live[4096];
    int nlive = 0, mark_in = 20;
    uint64_t seq = 0, addr = 0x700000000000;
    *nmarks = 0;
    for (int step = 0; step < n; step++) {
        uint64_t r = next();
        uint64_t dt = next() % 7 * 1000 + (r % 97 == 0 ? 3000000 : 0); /* now and then a long gap */
        uint64_t tid = 100 + r % 3 / 2 * (r % 5 == 0);                  /* mostly one thread */
        int device = r % 11 == 0;
        if (--mark_in == 0) {
            char label[32];
            snprintf(label, sizeof label, "iteration %d", ++*nmarks);
            sb_u(b, ++seq);
            sb_u(b, dt);
            sb_u(b, 100);
            sb_s(b, label);
            sb_u(b, 0);
            sb_end(b, CULEAK_REC_MARK);
            mark_in = 20 + (int)(next() % 40);
        } else if (r % 173 == 0) { /* a failed allocation */
            ev(b, &seq, (struct sb_ev){.dt = dt, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CUDA_MALLOC,
                                       .kind = CULEAK_KIND_DEVICE, .size = 1 << 30, .result = 2, .device = device,
                                       .stack = 1 + next() % NSITES, .tid = tid});
        } else if (r % 211 == 0) { /* the device's context reset: its allocations end */
            ev(b, &seq, (struct sb_ev){.dt = dt, .op = CULEAK_OP_FREE_ALL, .api = CULEAK_API_CU_CTX_DESTROY,
                                       .device = device, .tid = tid});
            int k = 0;
            for (int i = 0; i < nlive; i++)
                if (live[i].device != device)
                    live[k++] = live[i];
            nlive = k;
        } else if (nlive && (r % 8 < 5 || nlive == 4096)) { /* a free, mostly of a recent one */
            int i = next() % 4 == 0 ? (int)(next() % (uint64_t)nlive) : nlive - 1 - (int)(next() % 3 % nlive);
            ev(b, &seq, (struct sb_ev){.dt = dt, .op = CULEAK_OP_FREE, .api = CULEAK_API_CUDA_FREE,
                                       .kind = CULEAK_KIND_DEVICE, .addr = live[i].addr, .device = -1, .tid = tid});
            live[i] = live[--nlive];
        } else {
            uint64_t site = 1 + next() % NSITES;
            uint64_t size = (uint64_t)(1 + next() % 8) << (8 + site % 4);
            addr += 0x100000;
            unsigned kind = site == NSITES ? CULEAK_KIND_MANAGED : CULEAK_KIND_DEVICE;
            ev(b, &seq, (struct sb_ev){.dt = dt, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CUDA_MALLOC, .kind = kind,
                                       .size = size, .addr = addr, .device = device, .stack = site, .tid = tid});
            live[nlive++] = (struct job_live){addr, device};
        }
    }
    sb_exit(b, ++seq);
    return b;
}

/* ---- the filter over a stream ---- */

static void to_sb(void *ctx, const void *p, size_t n) { sb_raw(ctx, p, n); }

/* in's aggregated form, fed in pieces of `chunk` bytes (a ring's reads cut anywhere). */
static struct sb *aggregate(const struct sb *in, uint64_t interval_ns, size_t max_pending, size_t chunk)
{
    struct sb *out = sb_new();
    struct culeak_agg *a = culeak_agg_new(interval_ns, max_pending, to_sb, out);
    assert_non_null(a);
    for (size_t off = CULEAK_MAGIC_LEN; off < in->n; off += chunk)
        assert_int_equal(culeak_agg_feed(a, in->buf + off, off + chunk <= in->n ? chunk : in->n - off), 0);
    culeak_agg_finish(a);
    culeak_agg_free(a);
    return out;
}

/* ---- reports ---- */

static char *report_of(struct sb *b, enum report_what what, const char *format, const char *a, const char *bmark)
{
    struct model *m = new_model();
    if (a) {
        model_snapshot_at_mark(m, a, a);
        model_snapshot_at_mark(m, bmark, bmark);
    }
    assert_int_equal(load(m, b), MODEL_FEED_OK);
    struct report_options o;
    report_options_init(&o);
    o.what = what;
    o.diff_a = a;
    o.diff_b = bmark;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!strcmp(format, "suspects"))
        report_suspects_text(f, m, &o);
    else if (!strcmp(format, "json"))
        report_json(f, m, &o, NULL);
    else
        report_text(f, m, &o, NULL);
    fclose(f);
    model_free(m);
    /* what only an aggregated recording says of itself */
    char *p;
    if ((p = strstr(buf, " [aggregated every ")))
        memmove(p, strchr(p, ']') + 1, strlen(strchr(p, ']') + 1) + 1);
    if ((p = strstr(buf, ",\"aggregated\":{")))
        memmove(p, strchr(p, '}') + 1, strlen(strchr(p, '}') + 1) + 1);
    return buf;
}

static void same_reports(struct sb *full, struct sb *agg, int nmarks, const char *what)
{
    char a[32], b[32];
    snprintf(a, sizeof a, "iteration %d", nmarks / 3 > 0 ? nmarks / 3 : 1);
    snprintf(b, sizeof b, "iteration %d", nmarks);
    struct {
        enum report_what what;
        const char *format, *a, *b;
    } cases[] = {
        {REPORT_LEAKS, "text", NULL, NULL},     {REPORT_PEAK, "text", NULL, NULL},
        {REPORT_LEAKS, "json", NULL, NULL},     {REPORT_LEAKS, "suspects", NULL, NULL},
        {REPORT_DIFF, "text", a, b},            {REPORT_DIFF, "json", a, b},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *x = report_of(full, cases[i].what, cases[i].format, cases[i].a, cases[i].b);
        char *y = report_of(agg, cases[i].what, cases[i].format, cases[i].a, cases[i].b);
        if (strcmp(x, y) != 0)
            fail_msg("%s, report %zu (%s) differs:\n--- full\n%s\n--- aggregated\n%s", what, i, cases[i].format, x, y);
        free(x);
        free(y);
    }
}

/* ---- what the aggregated stream holds ---- */

struct tally {
    uint64_t events, churns, folded, folded_bytes, at_peak_lists;
};

static int t_event(void *ctx, const struct culeak_event *e)
{
    (void)e;
    ((struct tally *)ctx)->events++;
    return 0;
}

static int t_churn(void *ctx, const struct culeak_churn *c)
{
    struct tally *t = ctx;
    t->churns++;
    t->at_peak_lists += c->peak_moved;
    for (size_t i = 0; i < c->nunits; i++) {
        t->folded += c->unit[i].count;
        t->folded_bytes += c->unit[i].bytes;
    }
    return 0;
}

static struct tally tally_of(const struct sb *b)
{
    struct tally t = {0};
    struct culeak_sink sink = {.ctx = &t, .event = t_event, .churn = t_churn};
    struct culeak_decoder d;
    culeak_decoder_init(&d, &sink, 1);
    assert_int_equal(culeak_decoder_feed(&d, b->buf, b->n), 0);
    assert_int_equal(culeak_decoder_finish(&d), 0);
    culeak_decoder_free(&d);
    return t;
}

/* ---- tests ---- */

static void test_same_reports_random_jobs(void **state)
{
    (void)state;
    static const uint64_t intervals[] = {1, 5000, 40000, 2000000, 10000000000ull};
    static const size_t pendings[] = {0, 3, 64};
    for (uint64_t seed = 1; seed <= 12; seed++) {
        int nmarks;
        struct sb *full = random_job(seed * 0x9e3779b97f4a7c15ull, 1500, &nmarks);
        struct tally tf = tally_of(full);
        for (size_t i = 0; i < sizeof intervals / sizeof *intervals; i++)
            for (size_t k = 0; k < sizeof pendings / sizeof *pendings; k++) {
                struct sb *agg = aggregate(full, intervals[i], pendings[k], 1 + (size_t)(seed * 37 % 700));
                char what[96];
                snprintf(what, sizeof what, "seed %llu, interval %llu ns, pending %zu", (unsigned long long)seed,
                         (unsigned long long)intervals[i], pendings[k]);
                struct tally ta = tally_of(agg);
                /* every event is either written or folded (an allocation and its free) */
                if (ta.events + 2 * ta.folded != tf.events)
                    fail_msg("%s: %llu events written and %llu folded of %llu", what, (unsigned long long)ta.events,
                             (unsigned long long)ta.folded, (unsigned long long)tf.events);
                same_reports(full, agg, nmarks, what);
                sb_free(agg);
            }
        sb_free(full);
    }
}

/* Process 7's stream, with two sites (trace nodes 1 and 2) the tests allocate from. */
static struct sb *two_sites(void)
{
    struct sb *b = sb_new();
    sb_hello(b, 7, APP, NULL);
    sb_module(b, APP, 0x400000, 0, 0x100000);
    sb_frame(b, 1, 0, 0x400110);
    sb_frame(b, 2, 0, 0x400120);
    return b;
}

/* One site churns 100 times between two marks, another keeps one block: the churn is
 * one CHURN entry (its first allocation written, so the site keeps its place), the
 * stream far shorter, and the peak a transient block made is told. */
static void test_churn_is_counted_not_written(void **state)
{
    (void)state;
    struct sb *full = two_sites();
    uint64_t seq = 0;
    sb_mark(full, ++seq, "iteration 1");
    sb_alloc(full, ++seq, 1, 0x1000000, 4096); /* kept */
    for (int i = 0; i < 100; i++) {
        uint64_t size = i == 50 ? 1 << 20 : 256; /* the peak: a transient 1 MiB */
        sb_alloc(full, ++seq, 2, 0x2000000 + 0x100000 * (uint64_t)i, size);
        sb_free_dev(full, ++seq, 0, 0x2000000 + 0x100000 * (uint64_t)i);
    }
    sb_mark(full, ++seq, "iteration 2");
    sb_exit(full, ++seq);
    struct sb *agg = aggregate(full, 10000000000ull, 0, 4096);
    struct tally t = tally_of(agg);
    assert_int_equal(t.folded, 99);
    assert_int_equal(t.folded_bytes, 98 * 256 + (1 << 20));
    assert_int_equal(t.events, 3); /* the kept block, the churning site's first block and its free */
    assert_true(agg->n * 4 < full->n);
    char *peak = report_of(agg, REPORT_PEAK, "text", NULL, NULL);
    assert_non_null(strstr(peak, "peak device memory 1.0 MiB (1052672 bytes)"));
    free(peak);
    same_reports(full, agg, 2, "churn");
    char *txt = report_of(agg, REPORT_LEAKS, "json", NULL, NULL);
    assert_non_null(strstr(txt, "\"events\":201,")); /* the folded ones counted too */
    free(txt);
    sb_free(full);
    sb_free(agg);
}

/* The peak is first reached with a transient block live, then reached again by blocks
 * that are written: the peak is the first moment, as in the full recording. */
static void test_peak_reached_again_later(void **state)
{
    (void)state;
    struct sb *full = two_sites();
    sb_alloc(full, 1, 1, 0x1000000, 100); /* A, kept */
    sb_alloc(full, 2, 2, 0x2000000, 10);  /* B's first: written */
    sb_free_dev(full, 3, 0, 0x2000000);
    sb_alloc(full, 4, 2, 0x3000000, 50); /* transient: 150 live, the peak (event 4) */
    sb_free_dev(full, 5, 0, 0x3000000);
    sb_alloc(full, 6, 1, 0x4000000, 50); /* kept: 150 live again (event 6) */
    sb_exit(full, 7);
    struct sb *agg = aggregate(full, 10000000000ull, 0, 64);
    assert_int_equal(tally_of(agg).folded, 1);
    char *peak = report_of(agg, REPORT_PEAK, "text", NULL, NULL);
    assert_non_null(strstr(peak, "peak device memory 150 bytes at 0.000 s (event 4)"));
    free(peak);
    same_reports(full, agg, 0, "peak reached again");
    sb_free(full);
    sb_free(agg);
}

/* The report of an aggregated recording says so, and how much it folded. */
static void test_report_says_aggregated(void **state)
{
    (void)state;
    int nmarks;
    struct sb *full = random_job(99, 400, &nmarks);
    struct sb *agg = aggregate(full, 10000000000ull, 0, 512);
    struct tally t = tally_of(agg);
    struct model *m = new_model();
    assert_int_equal(load(m, agg), MODEL_FEED_OK);
    struct report_options o;
    report_options_init(&o);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_text(f, m, &o, NULL);
    fclose(f);
    char want[200];
    snprintf(want, sizeof want, " [aggregated every 10 s: %llu allocations freed within their interval are counted",
             (unsigned long long)t.folded);
    assert_non_null(strstr(buf, want));
    assert_true(t.folded > 0);
    free(buf);
    assert_int_equal(model_process(m, 0)->aggregated_ns, 10000000000ull);
    model_free(m);
    sb_free(full);
    sb_free(agg);
}

/* An aggregated recording cut at any byte reads up to the cut: the allocations it
 * counts never fall as the cut moves on, and the whole file counts them all. */
static void test_cut_anywhere(void **state)
{
    (void)state;
    int nmarks;
    struct sb *full = random_job(5, 300, &nmarks);
    struct sb *agg = aggregate(full, 20000, 0, 100);
    uint64_t last = 0;
    for (size_t cut = CULEAK_MAGIC_LEN + 1; cut <= agg->n; cut += 1 + cut % 5) {
        struct model *m = new_model();
        struct model_stream *s = model_stream_open(m);
        int rc = model_stream_feed(s, agg->buf, cut);
        if (rc == MODEL_FEED_OK)
            model_stream_finish(s);
        model_stream_close(s);
        assert_int_equal(rc, MODEL_FEED_OK);
        struct model_counter c;
        model_totals(m, MODEL_ALL, MODEL_ALL, MODEL_KIND_DEVICE_MEMORY, &c);
        assert_true(c.allocs >= last);
        last = c.allocs;
        model_free(m);
    }
    struct model *m = new_model();
    assert_int_equal(load(m, full), MODEL_FEED_OK);
    struct model_counter c;
    model_totals(m, MODEL_ALL, MODEL_ALL, MODEL_KIND_DEVICE_MEMORY, &c);
    assert_int_equal(last, c.allocs);
    model_free(m);
    sb_free(full);
    sb_free(agg);
}

/* A CHURN record built by hand after a HELLO and a frame: the decoder's verdict. */
static int churn_verdict(void (*build)(struct sb *), char *err, size_t len)
{
    struct sb *b = sb_new();
    sb_hello(b, 7, APP, NULL);
    sb_frame(b, 1, 0, 0x400110);
    build(b);
    sb_end(b, CULEAK_REC_CHURN);
    struct culeak_sink sink = {0};
    struct culeak_decoder d;
    culeak_decoder_init(&d, &sink, 1);
    int rc = culeak_decoder_feed(&d, b->buf, b->n);
    snprintf(err, len, "%s", d.error);
    culeak_decoder_free(&d);
    sb_free(b);
    return rc;
}

static void head(struct sb *b, uint64_t nunits)
{
    sb_u(b, 10000000000ull); /* interval */
    sb_u(b, 5);              /* first */
    sb_u(b, 9);              /* last */
    sb_u(b, nunits);
}
static void unit(struct sb *b, uint64_t step, uint64_t count, uint64_t bytes, uint64_t peak, uint64_t thread)
{
    sb_u(b, step);
    sb_u(b, CULEAK_KIND_DEVICE << 2 | 3); /* peak and thread follow */
    sb_z(b, 0);
    sb_u(b, count);
    sb_u(b, bytes);
    sb_u(b, peak);
    sb_u(b, thread);
}
static void good(struct sb *b) { head(b, 1), unit(b, 1, 3, 768, 0, 0), sb_u(b, 0), sb_u(b, 0); }
static void too_many_units(struct sb *b) { head(b, 1000), unit(b, 1, 3, 768, 0, 0), sb_u(b, 0), sb_u(b, 0); }
static void empty_unit(struct sb *b) { head(b, 1), unit(b, 1, 0, 0, 0, 0), sb_u(b, 0), sb_u(b, 0); }
static void bytes_of_nothing(struct sb *b) { head(b, 1), unit(b, 1, 0, 5, 0, 0), sb_u(b, 0), sb_u(b, 0); }
static void step_overflow(struct sb *b)
{
    head(b, 2), unit(b, 5, 1, 1, 0, 0), unit(b, UINT64_MAX - 1, 1, 1, 0, 0), sb_u(b, 0), sb_u(b, 0);
}
static void no_counter(struct sb *b)
{
    head(b, 0);
    sb_u(b, 1); /* a peak */
    sb_u(b, 0);
    sb_u(b, CULEAK_KIND_COUNT);
    sb_u(b, 100), sb_u(b, 7), sb_u(b, 3);
    sb_u(b, 0);
}
static void backwards(struct sb *b)
{
    sb_u(b, 1), sb_u(b, 9), sb_u(b, 5), sb_u(b, 0), sb_u(b, 0), sb_u(b, 0);
}
static void truncated(struct sb *b) /* ends before its thread field */
{
    head(b, 1), sb_u(b, 1), sb_u(b, CULEAK_KIND_DEVICE << 2 | 3), sb_z(b, 0), sb_u(b, 1), sb_u(b, 1ull << 40), sb_u(b, 0);
}
static void at_peak_overflow(struct sb *b) { head(b, 0), sb_u(b, 0), sb_u(b, 500); }

static void test_malformed_churn_refused(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(churn_verdict(good, err, sizeof err), 0);
    struct {
        void (*build)(struct sb *);
        const char *says;
    } bad[] = {
        {too_many_units, "bad CHURN unit count"},
        {empty_unit, "a CHURN unit that counts nothing"},
        {bytes_of_nothing, "a CHURN unit that counts nothing"},
        {step_overflow, "bad CHURN stack step"},
        {no_counter, "a CHURN peak of no counter"},
        {backwards, "a CHURN record ends before it starts"},
        {truncated, "truncated CHURN record"},
        {at_peak_overflow, "bad CHURN count of values at the peak"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(churn_verdict(bad[i].build, err, sizeof err), -1);
        if (!strstr(err, bad[i].says))
            fail_msg("case %zu: '%s' does not say '%s'", i, err, bad[i].says);
    }
}

/* A stream that stops making sense mid-way: what came before is written, with a NOTE
 * that says where aggregation stopped; the filter takes nothing more. */
static void test_corrupt_input_noted(void **state)
{
    (void)state;
    int nmarks;
    struct sb *full = random_job(3, 100, &nmarks);
    uint8_t junk[] = {CULEAK_REC_FREE, 1, 0x80}; /* an overlong varint, cut */
    sb_raw(full, junk, sizeof junk);
    struct sb *out = sb_new();
    struct culeak_agg *a = culeak_agg_new(1000000, 0, to_sb, out);
    assert_int_equal(culeak_agg_feed(a, full->buf + CULEAK_MAGIC_LEN, full->n - CULEAK_MAGIC_LEN), -1);
    assert_int_equal(culeak_agg_feed(a, junk, sizeof junk), -1);
    culeak_agg_finish(a);
    culeak_agg_free(a);
    assert_non_null(memmem(out->buf, out->n, "aggregated recording cut here: ", 31));
    struct model *m = new_model();
    assert_int_equal(load(m, out), MODEL_FEED_OK);
    assert_int_equal(model_process(m, 0)->notes, 1);
    model_free(m);
    sb_free(full);
    sb_free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_reports_random_jobs), cmocka_unit_test(test_churn_is_counted_not_written),
        cmocka_unit_test(test_peak_reached_again_later), cmocka_unit_test(test_report_says_aggregated),
        cmocka_unit_test(test_cut_anywhere),
        cmocka_unit_test(test_malformed_churn_refused),  cmocka_unit_test(test_corrupt_input_noted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
