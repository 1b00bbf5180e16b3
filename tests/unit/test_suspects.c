/* Growth suspects from synthetic streams: a growing site is one, a churning site and a
 * site that goes up and down are not; the forecast's arithmetic and words; fewer marks
 * than the window; processes kept apart; marks of other labels left out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "model/model.h"
#include "stream_builder.h"
#include "model_fixture.h"
#include "model/suspects.h"
#include "report/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define APP "/opt/app/bin/app"
#define CUDART "/usr/lib/libcudart.so.12"
#define APP_BASE 0x555500000000ull
#define CUDART_BASE 0x7f0000000000ull
#define A(off) (APP_BASE + (off))
#define C(off) (CUDART_BASE + (off))

/* Three sites, each reached by one stack: GROW (stack 2, app+0x200), CHURN (stack 4,
 * app+0x300), UPDOWN (stack 6, app+0x400). */
enum { GROW = 2, CHURN = 4, UPDOWN = 6 };

static struct sb *prefix(uint64_t pid)
{
    struct sb *b = sb_new();
    sb_hello(b, pid, APP, NULL);
    sb_module(b, APP, APP_BASE, 0, 0x10000);
    sb_module(b, CUDART, CUDART_BASE, 0, 0x100000);
    sb_frame(b, 1, 0, A(0x200));
    sb_frame(b, 2, 1, C(0x50));
    sb_frame(b, 3, 0, A(0x300));
    sb_frame(b, 4, 3, C(0x50));
    sb_frame(b, 5, 0, A(0x400));
    sb_frame(b, 6, 5, C(0x50));
    return b;
}

/* A MARK dt_ns after the previous record; mem_total 0: without the device's memory. */
static void mark_at(struct sb *b, uint64_t seq, uint64_t dt_ns, const char *label, uint64_t mem_free,
                    uint64_t mem_total)
{
    sb_u(b, seq);
    sb_u(b, dt_ns);
    sb_u(b, 7);
    sb_s(b, label);
    sb_u(b, 0);
    if (mem_total) {
        sb_z(b, 0);
        sb_u(b, mem_free);
        sb_u(b, mem_total);
    }
    sb_end(b, CULEAK_REC_MARK);
}

/* The mark "iteration I" (mark_at's other arguments as there). */
static void mark_iteration(struct sb *b, uint64_t seq, uint64_t dt_ns, int i, uint64_t mem_free, uint64_t mem_total)
{
    char label[32];
    snprintf(label, sizeof label, "iteration %d", i);
    mark_at(b, seq, dt_ns, label, mem_free, mem_total);
}

/* Iteration i: GROW keeps 4 KiB; CHURN allocates 1 MiB and frees it; UPDOWN goes up and
 * down in a sawtooth: 0, 32 KiB, 64 KiB, 0, ... at the marks, which rises at 7 of the
 * last 10 intervals and ends higher than 10 marks ago. Then the mark "iteration i". */
struct job {
    uint64_t seq, addr;
    uint64_t updown[2];
    int nupdown;
};

static void iteration(struct sb *b, struct job *j, int i, uint64_t mark_dt, uint64_t mem_free, uint64_t mem_total)
{
    sb_alloc(b, ++j->seq, GROW, j->addr += 0x10000, 4096);
    uint64_t churn = j->addr += 0x100000;
    sb_alloc(b, ++j->seq, CHURN, churn, 1 << 20);
    sb_free_dev(b, ++j->seq, CHURN, churn);
    if (i % 3 == 0) {
        while (j->nupdown > 0)
            sb_free_dev(b, ++j->seq, UPDOWN, j->updown[--j->nupdown]);
    } else {
        sb_alloc(b, ++j->seq, UPDOWN, j->updown[j->nupdown++] = j->addr += 0x10000, 32768);
    }
    mark_iteration(b, ++j->seq, mark_dt, i, mem_free, mem_total);
}

static struct sb *job_stream(uint64_t pid, int iterations, uint64_t mem_free, uint64_t mem_total)
{
    struct sb *b = prefix(pid);
    struct job j = {.addr = 0x7000000000ull};
    for (int i = 0; i < iterations; i++)
        iteration(b, &j, i, 300000000ull, mem_free, mem_total);
    return b;
}

static void test_only_growth_is_suspect(void **state)
{
    (void)state;
    struct model *m = new_model();
    struct sb *b = job_stream(100, 12, 1ull << 30, 2ull << 30);
    assert_int_equal(load(m, b), 0);
    struct model_suspects s;
    assert_int_equal(model_suspects(m, MODEL_ALL, 1, &s), 0);
    assert_int_equal(s.n, 1);
    const struct model_suspect *x = &s.v[0];
    assert_non_null(strstr(x->text, "app+0x200"));
    assert_int_equal(x->kind, MODEL_KIND_DEVICE_MEMORY);
    assert_int_equal(x->per_mark, 4096);
    assert_int_equal(x->intervals, MODEL_SUSPECT_WINDOW);
    assert_int_equal(x->rises, MODEL_SUSPECT_WINDOW);
    assert_int_equal(x->marks, 12);
    assert_int_equal(x->live_bytes, 12 * 4096);
    assert_string_equal(x->series, "iteration #");
    assert_string_equal(x->last_label, "iteration 11");
    /* its lowest: the first mark, one block */
    assert_int_equal(x->since_bytes, 4096);
    assert_string_equal(x->since_label, "iteration 0");
    assert_int_equal(x->since_marks, 11);
    model_suspects_free(&s);
    sb_free(b);
    model_free(m);
}

static void test_since_is_the_last_low_mark(void **state)
{
    (void)state;
    struct model *m = new_model();
    struct sb *b = prefix(100);
    struct job j = {.addr = 0x7000000000ull};
    /* a steady block for 4 marks, then growth for 12: since the last steady mark, which
     * has left the window */
    sb_alloc(b, ++j.seq, GROW, j.addr += 0x10000, 8192);
    for (int i = 0; i < 16; i++) {
        if (i >= 4)
            sb_alloc(b, ++j.seq, GROW, j.addr += 0x10000, 1024);
        char label[32];
        snprintf(label, sizeof label, "step %d", i);
        mark_at(b, ++j.seq, 1000000, label, 0, 0);
    }
    assert_int_equal(load(m, b), 0);
    struct model_suspects s;
    assert_int_equal(model_suspects(m, MODEL_ALL, 0, &s), 0);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.v[0].since_label, "step 3");
    assert_int_equal(s.v[0].since_marks, 12);
    assert_int_equal(s.v[0].since_bytes, 8192);
    assert_int_equal(s.v[0].live_bytes, 8192 + 12 * 1024);
    assert_int_equal(s.v[0].window_bytes, 8192 + 2 * 1024);
    assert_string_equal(s.v[0].series, "step #");
    model_suspects_free(&s);
    sb_free(b);
    model_free(m);
}

static void test_fewer_marks_than_window(void **state)
{
    (void)state;
    /* 4 marks = 3 intervals: no verdict yet */
    struct model *m = new_model();
    struct sb *b = job_stream(100, 4, 0, 0);
    assert_int_equal(load(m, b), 0);
    struct model_suspects s;
    assert_int_equal(model_suspects(m, MODEL_ALL, 0, &s), 0);
    assert_int_equal(s.n, 0);
    model_suspects_free(&s);
    sb_free(b);
    model_free(m);

    /* 5 marks = 4 intervals, all rising: a suspect over a window of 4 */
    m = new_model();
    b = job_stream(100, 5, 0, 0);
    assert_int_equal(load(m, b), 0);
    assert_int_equal(model_suspects(m, MODEL_ALL, 0, &s), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.v[0].intervals, 4);
    assert_int_equal(s.v[0].rises, 4);
    assert_int_equal(s.v[0].per_mark, 4096);
    assert_string_equal(s.v[0].since_label, "iteration 0"); /* 0 bytes just before it */
    assert_int_equal(s.v[0].forecast, 0); /* the marks carried no device memory */
    model_suspects_free(&s);
    sb_free(b);
    model_free(m);

    /* 6 marks = 5 intervals, one of them flat: 4 of 5 rose (ceil 0.8 * 5 = 4): a suspect;
     * two flat: not one */
    for (int flats = 1; flats <= 2; flats++) {
        m = new_model();
        b = prefix(100);
        struct job j = {.addr = 0x7000000000ull};
        for (int i = 0; i < 6; i++) {
            if (i == 0 || i > flats)
                sb_alloc(b, ++j.seq, GROW, j.addr += 0x10000, 4096);
            mark_iteration(b, ++j.seq, 1000000, i, 0, 0);
        }
        assert_int_equal(load(m, b), 0);
        assert_int_equal(model_suspects(m, MODEL_ALL, 0, &s), 0);
        assert_int_equal(s.n, flats == 1 ? 1 : 0);
        model_suspects_free(&s);
        sb_free(b);
        model_free(m);
    }
}

static void test_forecast(void **state)
{
    (void)state;
    struct model *m = new_model();
    /* 1 GiB free, +4 KiB per 0.3 s iteration: 262,144 iterations, ~78,643 s */
    struct sb *b = job_stream(100, 12, 1ull << 30, 80ull << 30);
    assert_int_equal(load(m, b), 0);
    struct model_suspects s;
    assert_int_equal(model_suspects(m, MODEL_ALL, 0, &s), 0);
    assert_int_equal(s.n, 1);
    const struct model_suspect *x = &s.v[0];
    assert_int_equal(x->forecast, 1);
    assert_int_equal(x->device, 0);
    assert_int_equal(x->free_bytes, 1ull << 30);
    assert_int_equal(x->total_bytes, 80ull << 30);
    assert_true(x->interval_s > 0.2999 && x->interval_s < 0.3001);
    assert_true(x->fill_marks == 262144.0);
    /* the events of an iteration add a few microseconds to the 0.3 s between marks */
    assert_true(x->fill_s > 78643.0 && x->fill_s < 78645.0);
    char buf[256];
    /* the recording was read to its end: its process runs no more */
    assert_int_equal(x->running, 0);
    model_suspect_forecast(x, buf, sizeof buf);
    assert_string_equal(buf, "at +4.00 KiB per iteration (0.30 s each), this site would have filled device 0 in "
                             "~260,000 more iterations (~21.8 h)");
    struct model_suspect live = *x;
    live.running = 1;
    model_suspect_forecast(&live, buf, sizeof buf);
    assert_string_equal(buf, "at +4.00 KiB per iteration (0.30 s each), this site fills device 0 in ~260,000 "
                             "iterations (~21.8 h)");
    model_suspect_fill_text(&live, buf, sizeof buf);
    assert_string_equal(buf, "fills device 0 in ~260,000 iterations (~21.8 h)");
    /* a fast job: its marks microseconds apart, the device full in under a second */
    live.interval_s = 20e-6;
    live.fill_s = live.fill_marks * live.interval_s;
    model_suspect_forecast(&live, buf, sizeof buf);
    assert_string_equal(buf, "at +4.00 KiB per iteration (20 \xc2\xb5s each), this site fills device 0 in ~260,000 "
                             "iterations (~5 s)");
    live.fill_marks = 240;
    live.fill_s = 240 * 20e-6;
    model_suspect_fill_text(&live, buf, sizeof buf);
    assert_string_equal(buf, "fills device 0 in ~240 iterations (under a second)");
    /* marks all at one instant: no time to speak of */
    live.interval_s = 0;
    live.fill_s = 0;
    model_suspect_forecast(&live, buf, sizeof buf);
    assert_string_equal(buf, "at +4.00 KiB per iteration, this site fills device 0 in ~240 iterations");
    model_suspects_free(&s);
    sb_free(b);
    model_free(m);
    /* the same job while it runs (its stream still open) */
    m = new_model();
    b = job_stream(100, 12, 1ull << 30, 80ull << 30);
    struct model_stream *st = model_stream_open(m);
    assert_int_equal(model_stream_feed(st, b->buf, b->n), MODEL_FEED_OK);
    assert_int_equal(model_suspects(m, MODEL_ALL, 0, &s), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.v[0].running, 1);
    model_suspects_free(&s);
    model_stream_close(st);
    assert_int_equal(model_suspects(m, MODEL_ALL, 0, &s), 0);
    assert_int_equal(s.v[0].running, 0);
    model_suspects_free(&s);
    sb_free(b);
    model_free(m);

    /* the words alone */
    model_format_count(buf, sizeof buf, 41234);
    assert_string_equal(buf, "~41,000");
    model_format_count(buf, sizeof buf, 7);
    assert_string_equal(buf, "~7");
    model_format_count(buf, sizeof buf, 3456789);
    assert_string_equal(buf, "~3.5 million");
    model_format_count(buf, sizeof buf, 9.04e6);
    assert_string_equal(buf, "~9 million");
    model_format_count(buf, sizeof buf, 123456789);
    assert_string_equal(buf, "~120 million");
    model_format_count(buf, sizeof buf, 1.46e9);
    assert_string_equal(buf, "~1.5 billion");
    model_format_count(buf, sizeof buf, 2.3e15);
    assert_string_equal(buf, "~2,300 trillion");
    model_format_count(buf, sizeof buf, 996);
    assert_string_equal(buf, "~1,000");
    model_format_duration(buf, sizeof buf, 3.4 * 3600);
    assert_string_equal(buf, "~3.4 h");
    model_format_duration(buf, sizeof buf, 42);
    assert_string_equal(buf, "~42 s");
    model_format_duration(buf, sizeof buf, 0.004);
    assert_string_equal(buf, "under a second");
    model_format_duration(buf, sizeof buf, 600);
    assert_string_equal(buf, "~10 min");
    model_format_duration(buf, sizeof buf, 3 * 86400);
    assert_string_equal(buf, "~3.0 days");
    model_format_duration(buf, sizeof buf, 45 * 86400);
    assert_string_equal(buf, "~45 days");
    model_format_duration(buf, sizeof buf, 150 * 86400);
    assert_string_equal(buf, "~5 months");
    model_format_duration(buf, sizeof buf, 3.2 * 365.25 * 86400);
    assert_string_equal(buf, "~3.2 years");
    model_format_duration(buf, sizeof buf, 27249.3 * 86400); /* decades: in years, not days */
    assert_string_equal(buf, "~75 years");
    model_format_duration(buf, sizeof buf, 1e6 * 365.25 * 86400);
    assert_string_equal(buf, "~1 million years");
    assert_int_equal(model_format_interval(buf, sizeof buf, 0.3), 1);
    assert_string_equal(buf, "0.30 s");
    assert_int_equal(model_format_interval(buf, sizeof buf, 0.0104), 1);
    assert_string_equal(buf, "10.4 ms");
    assert_int_equal(model_format_interval(buf, sizeof buf, 42e-6), 1);
    assert_string_equal(buf, "42 \xc2\xb5s");
    assert_int_equal(model_format_interval(buf, sizeof buf, 0), 0);
    assert_string_equal(buf, "");
    model_format_size(buf, sizeof buf, 16384);
    assert_string_equal(buf, "16.0 KiB");
    model_format_size(buf, sizeof buf, 4.0 * 1048576);
    assert_string_equal(buf, "4.00 MiB");
    model_format_size(buf, sizeof buf, 100);
    assert_string_equal(buf, "100 B");

    /* a device with nothing free, and one whose memory is unknown */
    struct model_suspect full = {.per_mark = 4096, .interval_s = 0.3, .forecast = 1, .device = 1};
    model_suspect_forecast(&full, buf, sizeof buf);
    assert_string_equal(buf, "at +4.00 KiB per iteration (0.30 s each); device 1 has no free memory left");
    full.forecast = 0;
    model_suspect_forecast(&full, buf, sizeof buf);
    assert_string_equal(buf, "at +4.00 KiB per iteration (0.30 s each); the device's free memory is unknown");
}

/* The forecast's edges, 12 iterations: GROW keeps 3,000 bytes of device memory each (the
 * device's free memory, 1 GiB + 1 at the latest mark, is not a multiple of it); CHURN
 * registers 4 KiB of host memory each (host memory: no forecast for the device); UPDOWN
 * rises at 9 of the last 10 intervals and comes back exactly to where the window began.
 * One interval (4 to 5) is 1 s, the others 0.3 s; the first marks said 2 GiB free. */
static void test_forecast_edges(void **state)
{
    (void)state;
    struct model *m = new_model();
    struct sb *b = prefix(100);
    uint64_t seq = 0, addr = 0x7000000000ull, up[16];
    int nup = 0;
    for (int i = 0; i < 12; i++) {
        sb_alloc(b, ++seq, GROW, addr += 0x10000, 3000);
        sb_event(b, (struct sb_ev){.seq = ++seq, .dt = 1000, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CU_MEM_HOST_REGISTER,
                                   .kind = CULEAK_KIND_HOST_REGISTERED, .size = 4096, .addr = addr += 0x10000,
                                   .stack = CHURN});
        if (i >= 2 && i <= 10)
            sb_alloc(b, ++seq, UPDOWN, up[nup++] = addr += 0x10000, 4096);
        while (i == 11 && nup > 0)
            sb_free_dev(b, ++seq, UPDOWN, up[--nup]);
        mark_iteration(b, ++seq, i == 5 ? 1000000000ull : 300000000ull, i, i < 11 ? 2ull << 30 : (1ull << 30) + 1, 80ull << 30);
    }
    assert_int_equal(load(m, b), 0);
    struct model_suspects s;
    assert_int_equal(model_suspects(m, MODEL_ALL, 1, &s), 0);
    assert_int_equal(s.n, 2); /* GROW and CHURN; UPDOWN ends where its window began */
    const struct model_suspect *x = &s.v[0], *host = &s.v[1];
    assert_non_null(strstr(x->text, "app+0x200"));
    assert_int_equal(x->per_mark, 3000);
    assert_int_equal(x->forecast, 1);
    assert_int_equal(x->free_bytes, (1ull << 30) + 1); /* the latest mark's */
    /* 1 GiB + 1 at 3,000 bytes an iteration: 357,913.94... rounds up, to when it is full */
    assert_true(x->fill_marks == 357914.0);
    assert_true(x->interval_s > 0.2999 && x->interval_s < 0.3001); /* the median interval */
    assert_true(x->fill_s > 357914.0 * 0.2999 && x->fill_s < 357914.0 * 0.3001);
    assert_non_null(strstr(host->text, "app+0x300"));
    assert_int_equal(host->per_mark, 4096);
    assert_int_equal(host->forecast, 0);
    assert_int_equal(host->device, -1);
    model_suspects_free(&s);
    sb_free(b);
    model_free(m);
}

/* A site back exactly where its window began, above every low it fell to before: UPDOWN
 * holds 4 KiB, frees it (its low, 0), holds 8 KiB from then on, and within the last 10
 * intervals rises at 9 by 1 KiB and falls back to 8 KiB at the last. It rose at 9 of 10
 * intervals with a median step of +1 KiB, but it ends where it began: no suspect. */
static void test_back_where_the_window_began(void **state)
{
    (void)state;
    struct model *m = new_model();
    struct sb *b = prefix(100);
    uint64_t seq = 0, addr = 0x7000000000ull, up[16];
    int nup = 0;
    for (int i = 0; i < 14; i++) {
        if (i == 0)
            sb_alloc(b, ++seq, UPDOWN, up[nup++] = addr += 0x10000, 4096);
        if (i == 1)
            sb_free_dev(b, ++seq, UPDOWN, up[--nup]);
        if (i == 2) {
            sb_alloc(b, ++seq, UPDOWN, addr += 0x10000, 4096);
            sb_alloc(b, ++seq, UPDOWN, addr += 0x10000, 4096);
        }
        if (i >= 4 && i <= 12)
            sb_alloc(b, ++seq, UPDOWN, up[nup++] = addr += 0x10000, 1024);
        while (i == 13 && nup > 0)
            sb_free_dev(b, ++seq, UPDOWN, up[--nup]);
        mark_iteration(b, ++seq, 300000000ull, i, 0, 0);
    }
    assert_int_equal(load(m, b), 0);
    struct model_suspects s;
    assert_int_equal(model_suspects(m, MODEL_ALL, 1, &s), 0);
    assert_int_equal(s.n, 0);
    model_suspects_free(&s);
    sb_free(b);
    model_free(m);
}

/* Iterations shorter than the events' clock's tick: the marks come 0 or a tick (4 ms)
 * apart, a tick at every third mark. An iteration is then the window's mean, about
 * 1.6 ms, not the median interval (the few microseconds of the events between marks). */
static void test_iterations_within_a_tick(void **state)
{
    (void)state;
    struct model *m = new_model();
    struct sb *b = prefix(100);
    struct job j = {.addr = 0x7000000000ull};
    for (int i = 0; i < 12; i++)
        iteration(b, &j, i, i % 3 == 2 ? 4000000ull : 0, 1ull << 30, 2ull << 30);
    assert_int_equal(load(m, b), 0);
    struct model_suspects s;
    assert_int_equal(model_suspects(m, MODEL_ALL, 1, &s), 0);
    assert_int_equal(s.n, 1);
    const struct model_suspect *x = &s.v[0];
    /* the last 10 intervals: 4 ticks (marks 2, 5, 8 and 11) and 10 iterations' events (3
     * or 4 us each) */
    if (!(x->interval_s > 0.00160 && x->interval_s < 0.00161))
        fail_msg("an iteration of %.6f s", x->interval_s);
    model_suspects_free(&s);
    sb_free(b);
    model_free(m);
}

/* Fewer marks than the window (7: 6 intervals): a site must rise at ceil(0.8 * 6) = 5 of
 * them; one that rises at 4 and falls a little at 2 (higher at the end) is not a suspect,
 * one that rises at 5 is. */
static void test_share_of_rises_rounds_up(void **state)
{
    (void)state;
    for (int rises = 4; rises <= 5; rises++) {
        struct model *m = new_model();
        struct sb *b = prefix(100);
        uint64_t seq = 0, addr = 0x7000000000ull, small[2];
        for (int k = 0; k < 2; k++)
            sb_alloc(b, ++seq, GROW, small[k] = addr += 0x10000, 1024);
        int nsmall = 2;
        for (int i = 0; i < 7; i++) {
            if (i >= 1 && i <= rises)
                sb_alloc(b, ++seq, GROW, addr += 0x10000, 4096);
            else if (i > rises && nsmall > 0)
                sb_free_dev(b, ++seq, GROW, small[--nsmall]);
            mark_iteration(b, ++seq, 300000000ull, i, 0, 0);
        }
        assert_int_equal(load(m, b), 0);
        struct model_suspects s;
        assert_int_equal(model_suspects(m, MODEL_ALL, 0, &s), 0);
        if (s.n != (size_t)(rises == 5))
            fail_msg("rises at %d of 6 intervals: %zu suspects", rises, s.n);
        model_suspects_free(&s);
        sb_free(b);
        model_free(m);
    }
}

static void test_processes_kept_apart(void **state)
{
    (void)state;
    struct model *m = new_model();
    /* process 100 leaks at GROW; process 200 uses the same site but frees it each time,
     * and leaks at UPDOWN's site instead, 8 KiB an iteration */
    struct sb *a = job_stream(100, 12, 0, 0);
    struct sb *b = prefix(200);
    uint64_t seq = 0, addr = 0x7000000000ull;
    for (int i = 0; i < 12; i++) {
        sb_alloc(b, ++seq, GROW, addr += 0x10000, 4096);
        sb_free_dev(b, ++seq, GROW, addr);
        sb_alloc(b, ++seq, UPDOWN, addr += 0x10000, 8192);
        mark_iteration(b, ++seq, 1000000, i, 0, 0);
    }
    assert_int_equal(load(m, a), 0);
    assert_int_equal(load(m, b), 0);
    struct model_suspects s;
    assert_int_equal(model_suspects(m, MODEL_ALL, 1, &s), 0);
    assert_int_equal(s.n, 2);
    /* fastest growing first (neither has a forecast) */
    assert_int_equal(s.v[0].proc, 1);
    assert_non_null(strstr(s.v[0].text, "app+0x400"));
    assert_int_equal(s.v[0].per_mark, 8192);
    assert_int_equal(s.v[1].proc, 0);
    assert_non_null(strstr(s.v[1].text, "app+0x200"));
    assert_int_equal(s.v[1].per_mark, 4096);
    model_suspects_free(&s);
    /* one process asked for */
    assert_int_equal(model_suspects(m, 1, 0, &s), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.v[0].proc, 1);
    model_suspects_free(&s);
    sb_free(a);
    sb_free(b);
    model_free(m);
}

/* The first suspect is the one that fills its device soonest, not the one that grows
 * most per iteration; suspects without a forecast come after. */
static void test_soonest_to_fill_first(void **state)
{
    (void)state;
    struct model *m = new_model();
    /* process 100: +4 KiB an iteration, 1 GiB free; process 200: +8 KiB, 1 TiB free;
     * process 300: +16 KiB, its marks without the device's memory */
    struct sb *a = job_stream(100, 12, 1ull << 30, 80ull << 30);
    struct sb *b[2] = {prefix(200), prefix(300)};
    for (int k = 0; k < 2; k++) {
        uint64_t seq = 0, addr = 0x7000000000ull;
        for (int i = 0; i < 12; i++) {
            sb_alloc(b[k], ++seq, UPDOWN, addr += 0x10000, k ? 16384 : 8192);
            mark_iteration(b[k], ++seq, 300000000ull, i, k ? 0 : 1ull << 40, k ? 0 : 2ull << 40);
        }
    }
    assert_int_equal(load(m, a), 0);
    assert_int_equal(load(m, b[0]), 0);
    assert_int_equal(load(m, b[1]), 0);
    struct model_suspects s;
    assert_int_equal(model_suspects(m, MODEL_ALL, 0, &s), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.v[0].proc, 0);
    assert_int_equal(s.v[0].per_mark, 4096);
    assert_int_equal(s.v[1].proc, 1);
    assert_int_equal(s.v[1].per_mark, 8192);
    assert_int_equal(s.v[2].proc, 2);
    assert_int_equal(s.v[2].forecast, 0);
    model_suspects_free(&s);
    sb_free(a);
    sb_free(b[0]);
    sb_free(b[1]);
    model_free(m);
}

static void test_other_marks_and_pops_left_out(void **state)
{
    (void)state;
    /* between iteration marks, "forward"/"backward" marks and range pops: the iteration
     * series still sees growth at every interval */
    struct model *m = new_model();
    struct sb *b = prefix(100);
    uint64_t seq = 0, addr = 0x7000000000ull;
    for (int i = 0; i < 12; i++) {
        mark_at(b, ++seq, 1000, "forward", 0, 0);
        sb_alloc(b, ++seq, GROW, addr += 0x10000, 4096);
        sb_u(b, ++seq); /* a range pop */
        sb_u(b, 1000);
        sb_u(b, 7);
        sb_s(b, "");
        sb_u(b, CULEAK_MARK_POP);
        sb_end(b, CULEAK_REC_MARK);
        mark_iteration(b, ++seq, 1000000, i, 0, 0);
    }
    assert_int_equal(load(m, b), 0);
    struct model_suspects s;
    assert_int_equal(model_suspects(m, MODEL_ALL, 0, &s), 0);
    /* both series see it; it is reported once */
    assert_int_equal(s.n, 1);
    assert_int_equal(s.v[0].marks, 12);
    assert_int_equal(s.v[0].per_mark, 4096);
    model_suspects_free(&s);
    sb_free(b);
    model_free(m);
}

/* A leak on an error path, every 7th iteration, 2 MiB at a time: growth in steps is a
 * suspect, marked so, its growth the mean per iteration. A site that rose twice and then
 * stayed, and one that steps up every 7th iteration but fell within the window, are not. */
static void test_growth_in_steps(void **state)
{
    (void)state;
    struct model *m = new_model();
    struct sb *b = prefix(100);
    uint64_t seq = 0, addr = 0x7000000000ull, held[64];
    int nheld = 0;
    for (int i = 0; i < 60; i++) {
        if (i % 7 == 6) /* GROW: the error path */
            sb_alloc(b, ++seq, GROW, addr += 0x1000000, 2 << 20);
        if (i == 2 || i == 5) /* CHURN's site: two blocks at the start, kept */
            sb_alloc(b, ++seq, CHURN, addr += 0x1000000, 1 << 20);
        if (i % 7 == 3) /* UPDOWN: steps up, and falls back once at iteration 54 */
            sb_alloc(b, ++seq, UPDOWN, held[nheld++] = addr += 0x1000000, 4096);
        if (i == 54)
            sb_free_dev(b, ++seq, UPDOWN, held[--nheld]);
        mark_iteration(b, ++seq, 1000000, i, 0, 0);
    }
    assert_int_equal(load(m, b), 0);
    struct model_suspects s;
    assert_int_equal(model_suspects(m, MODEL_ALL, 1, &s), 0);
    assert_int_equal(s.n, 1);
    const struct model_suspect *x = &s.v[0];
    assert_non_null(strstr(x->text, "app+0x200"));
    assert_int_equal(x->stepwise, 1);
    assert_true(x->rises < (8 * x->intervals + 9) / 10); /* not by the 80% rule */
    assert_int_equal(x->live_bytes, 8u * (2 << 20));      /* iterations 6, 13, ..., 55 */
    assert_int_equal(x->per_mark, 8 * (2 << 20) / 59);     /* the mean since iteration 0 */
    char rose[96];
    model_suspect_rise_words(x, rose, sizeof rose);
    assert_non_null(strstr(rose, "in steps"));
    model_suspects_free(&s);
    /* the text and JSON reports say it grows in steps, not that it rose at most marks */
    struct report_options o;
    report_options_init(&o);
    char *text = NULL, *json = NULL;
    size_t tn = 0, jn = 0;
    FILE *f = open_memstream(&text, &tn);
    assert_int_equal(report_suspects_text(f, m, &o), 0);
    fclose(f);
    f = open_memstream(&json, &jn);
    assert_int_equal(report_suspects_json(f, m, &o), 0);
    fclose(f);
    assert_non_null(strstr(text, "rose in steps at "));
    assert_non_null(strstr(text, " marks and never fell"));
    assert_non_null(strstr(json, "\"stepwise\":true"));
    free(text);
    free(json);
    sb_free(b);
    model_free(m);
    /* the steady grower of the other tests is not marked step-wise */
    m = new_model();
    b = job_stream(100, 12, 0, 0);
    assert_int_equal(load(m, b), 0);
    assert_int_equal(model_suspects(m, MODEL_ALL, 0, &s), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.v[0].stepwise, 0);
    model_suspects_free(&s);
    sb_free(b);
    model_free(m);
}

/* Step-wise growth at its threshold: three sites that never fall and rise at
 * MODEL_SUSPECT_STEP_MIN - 1, MODEL_SUSPECT_STEP_MIN and MODEL_SUSPECT_STEP_MIN + 1 marks
 * of twelve (too few for the 80% rule): the first is no suspect, the others are, each
 * with its growth the mean over the eleven intervals since the first mark. */
static void test_steps_at_the_threshold(void **state)
{
    (void)state;
    static const int stack[3] = {UPDOWN, GROW, CHURN};
    static const char *const text[3] = {"app+0x400", "app+0x200", "app+0x300"};
    const int steps[3] = {MODEL_SUSPECT_STEP_MIN - 1, MODEL_SUSPECT_STEP_MIN, MODEL_SUSPECT_STEP_MIN + 1};
    struct model *m = new_model();
    struct sb *b = prefix(100);
    uint64_t seq = 0, addr = 0x7000000000ull;
    for (int k = 0; k < 3; k++) /* held from before the first mark */
        sb_alloc(b, ++seq, stack[k], addr += 0x1000000, 1 << 20);
    for (int i = 0; i < 12; i++) {
        for (int k = 0; k < 3; k++)
            for (int r = 0; r < steps[k]; r++)
                if (i == 2 + r * 9 / steps[k])
                    sb_alloc(b, ++seq, stack[k], addr += 0x1000000, 65536);
        mark_iteration(b, ++seq, 1000000, i, 0, 0);
    }
    assert_int_equal(load(m, b), 0);
    struct model_suspects s;
    assert_int_equal(model_suspects(m, MODEL_ALL, 1, &s), 0);
    for (size_t i = 0; i < s.n; i++)
        printf("# suspect %s: stepwise %d, %lld bytes a mark, %u rises of %u\n", s.v[i].text, s.v[i].stepwise,
               (long long)s.v[i].per_mark, s.v[i].rises, s.v[i].intervals);
    assert_int_equal(s.n, 2);
    for (int k = 1; k < 3; k++) {
        const struct model_suspect *x = NULL;
        for (size_t i = 0; i < s.n; i++)
            if (strstr(s.v[i].text, text[k]))
                x = &s.v[i];
        assert_non_null(x);
        assert_int_equal(x->stepwise, 1);
        assert_int_equal(x->rises, steps[k]);
        assert_int_equal(x->intervals, MODEL_SUSPECT_WINDOW);
        assert_int_equal(x->live_bytes, (1 << 20) + steps[k] * 65536);
        assert_int_equal(x->window_bytes, 1 << 20);
        assert_int_equal(x->per_mark, steps[k] * 65536 / 11);
    }
    model_suspects_free(&s);
    sb_free(b);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_only_growth_is_suspect),
        cmocka_unit_test(test_since_is_the_last_low_mark),
        cmocka_unit_test(test_fewer_marks_than_window),
        cmocka_unit_test(test_forecast),
        cmocka_unit_test(test_forecast_edges),
        cmocka_unit_test(test_back_where_the_window_began),
        cmocka_unit_test(test_iterations_within_a_tick),
        cmocka_unit_test(test_share_of_rises_rounds_up),
        cmocka_unit_test(test_processes_kept_apart),
        cmocka_unit_test(test_soonest_to_fill_first),
        cmocka_unit_test(test_other_marks_and_pops_left_out),
        cmocka_unit_test(test_growth_in_steps),
        cmocka_unit_test(test_steps_at_the_threshold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
