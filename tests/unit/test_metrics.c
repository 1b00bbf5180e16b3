/* The scrape answer (report/metrics.h): the exact text of both formats for a small job of
 * four processes on three hosts (two are one rank of one host, added up; rank 0 of
 * another host apart; a host name with a quote and a backslash, escaped), the formats'
 * rules over a job with a growth suspect (families declared once before their samples,
 * counters' _total, OpenMetrics' # EOF last), a tracked pool, and the Accept header's
 * choice of format. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "model/model.h"
#include "stream_builder.h"
#include "model_fixture.h"
#include "model/suspects.h"
#include "report/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define APP "/opt/app/bin/app"
#define APP_BASE 0x555500000000ull

/* HELLO of a process on host with one environment entry (NULL: none). */
static struct sb *process(uint64_t pid, const char *host, const char *env)
{
    struct sb *b = sb_new();
    sb_u(b, CULEAK_FORMAT_VERSION);
    sb_u(b, pid);
    sb_u(b, 1);
    sb_u(b, 1000);
    sb_u(b, 1000000);
    sb_s(b, host);
    sb_s(b, APP);
    sb_u(b, 1);
    sb_s(b, APP);
    sb_u(b, env ? 1 : 0);
    if (env)
        sb_s(b, env);
    sb_u(b, 64);
    sb_u(b, 1);
    sb_end(b, CULEAK_REC_HELLO);
    sb_module(b, APP, APP_BASE, 0, 0x10000);
    sb_frame(b, 1, 0, APP_BASE + 0x200);
    return b;
}

static void alloc_on(struct sb *b, uint64_t seq, int device, uint64_t addr, uint64_t size)
{
    sb_event(b, (struct sb_ev){.seq = seq, .dt = 1000, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CUDA_MALLOC,
                               .kind = CULEAK_KIND_DEVICE, .size = size, .addr = addr, .stack = 1,
                               .device = device});
}

static char *exposition(struct model *m, enum metrics_format fmt)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(report_metrics(f, m, fmt), 0);
    fclose(f);
    return text;
}

/* The stream of the last process stays open (it runs on): closed with the model. */
static struct model_stream *running;

static struct model *small_job(void)
{
    struct model *m = new_model();
    struct sb *b = process(100, "node-a", "RANK=0");
    alloc_on(b, 1, 0, 0x7000000000ull, 4096);
    alloc_on(b, 2, 1, 0x7100000000ull, 8192);
    sb_free_dev(b, 3, 1, 0x7000000000ull);
    assert_int_equal(load(m, b), MODEL_FEED_OK);
    sb_free(b);
    b = process(200, "b\"x\\y", NULL);
    alloc_on(b, 1, 0, 0x7000000000ull, 1000);
    assert_int_equal(load(m, b), MODEL_FEED_OK);
    sb_free(b);
    b = process(400, "node-b", "RANK=0"); /* rank 0 of another host: its own series */
    alloc_on(b, 1, 0, 0x7000000000ull, 64);
    assert_int_equal(load(m, b), MODEL_FEED_OK);
    sb_free(b);
    b = process(300, "node-a", "RANK=0"); /* a helper of rank 0: added to its numbers */
    alloc_on(b, 1, 0, 0x7200000000ull, 500);
    running = model_stream_open(m);
    assert_int_equal(model_stream_feed(running, b->buf, b->n), MODEL_FEED_OK);
    sb_free(b);
    return m;
}

static void free_job(struct model *m)
{
    model_stream_close(running);
    model_free(m);
}

static const char samples[] =
    "culeak_live_bytes{host=\"node-a\",rank=\"0\",device=\"0\",allocator=\"cuda\"} 500\n"
    "culeak_live_bytes{host=\"node-a\",rank=\"0\",device=\"1\",allocator=\"cuda\"} 8192\n"
    "culeak_live_bytes{host=\"b\\\"x\\\\y\",device=\"0\",allocator=\"cuda\"} 1000\n"
    "culeak_live_bytes{host=\"node-b\",rank=\"0\",device=\"0\",allocator=\"cuda\"} 64\n"
    "@peak"
    "culeak_peak_bytes{host=\"node-a\",rank=\"0\",device=\"0\",allocator=\"cuda\"} 4596\n"
    "culeak_peak_bytes{host=\"node-a\",rank=\"0\",device=\"1\",allocator=\"cuda\"} 8192\n"
    "culeak_peak_bytes{host=\"b\\\"x\\\\y\",device=\"0\",allocator=\"cuda\"} 1000\n"
    "culeak_peak_bytes{host=\"node-b\",rank=\"0\",device=\"0\",allocator=\"cuda\"} 64\n";

static void test_prometheus_text(void **state)
{
    (void)state;
    struct model *m = small_job();
    char *text = exposition(m, METRICS_PROMETHEUS);
    const char *want =
        "# HELP culeak_live_bytes Device memory live now: allocator cuda is all the driver handed out, a pool's "
        "the blocks it lent.\n"
        "# TYPE culeak_live_bytes gauge\n"
        "culeak_live_bytes{host=\"node-a\",rank=\"0\",device=\"0\",allocator=\"cuda\"} 500\n"
        "culeak_live_bytes{host=\"node-a\",rank=\"0\",device=\"1\",allocator=\"cuda\"} 8192\n"
        "culeak_live_bytes{host=\"b\\\"x\\\\y\",device=\"0\",allocator=\"cuda\"} 1000\n"
        "culeak_live_bytes{host=\"node-b\",rank=\"0\",device=\"0\",allocator=\"cuda\"} 64\n"
        "# HELP culeak_peak_bytes The highest culeak_live_bytes so far.\n"
        "# TYPE culeak_peak_bytes gauge\n"
        "culeak_peak_bytes{host=\"node-a\",rank=\"0\",device=\"0\",allocator=\"cuda\"} 4596\n"
        "culeak_peak_bytes{host=\"node-a\",rank=\"0\",device=\"1\",allocator=\"cuda\"} 8192\n"
        "culeak_peak_bytes{host=\"b\\\"x\\\\y\",device=\"0\",allocator=\"cuda\"} 1000\n"
        "culeak_peak_bytes{host=\"node-b\",rank=\"0\",device=\"0\",allocator=\"cuda\"} 64\n"
        "# HELP culeak_reserved_bytes Device memory a caching allocator holds from the driver (its segments).\n"
        "# TYPE culeak_reserved_bytes gauge\n"
        "# HELP culeak_device_size_bytes The device's memory, as the latest mark said.\n"
        "# TYPE culeak_device_size_bytes gauge\n"
        "# HELP culeak_time_to_full_seconds Until the device is full at the pace of its fastest-filling growth "
        "suspect.\n"
        "# TYPE culeak_time_to_full_seconds gauge\n"
        "# HELP culeak_suspects Call sites whose live bytes grow from mark to mark.\n"
        "# TYPE culeak_suspects gauge\n"
        "culeak_suspects{host=\"node-a\",rank=\"0\"} 0\n"
        "culeak_suspects{host=\"b\\\"x\\\\y\"} 0\n"
        "culeak_suspects{host=\"node-b\",rank=\"0\"} 0\n"
        "# HELP culeak_suspect_growth_bytes The fastest growth suspect's growth per mark interval (an "
        "iteration); 0: none.\n"
        "# TYPE culeak_suspect_growth_bytes gauge\n"
        "culeak_suspect_growth_bytes{host=\"node-a\",rank=\"0\"} 0\n"
        "culeak_suspect_growth_bytes{host=\"b\\\"x\\\\y\"} 0\n"
        "culeak_suspect_growth_bytes{host=\"node-b\",rank=\"0\"} 0\n"
        "# HELP culeak_processes Traced processes running.\n"
        "# TYPE culeak_processes gauge\n"
        "culeak_processes{host=\"node-a\",rank=\"0\"} 1\n"
        "culeak_processes{host=\"b\\\"x\\\\y\"} 0\n"
        "culeak_processes{host=\"node-b\",rank=\"0\"} 0\n"
        "# HELP culeak_events_total Allocations, frees and other memory events recorded.\n"
        "# TYPE culeak_events_total counter\n"
        "culeak_events_total{host=\"node-a\",rank=\"0\"} 4\n"
        "culeak_events_total{host=\"b\\\"x\\\\y\"} 1\n"
        "culeak_events_total{host=\"node-b\",rank=\"0\"} 1\n"
        "# HELP culeak_lost_events_total Events dropped while culeak did not read.\n"
        "# TYPE culeak_lost_events_total counter\n"
        "culeak_lost_events_total{host=\"node-a\",rank=\"0\"} 0\n"
        "culeak_lost_events_total{host=\"b\\\"x\\\\y\"} 0\n"
        "culeak_lost_events_total{host=\"node-b\",rank=\"0\"} 0\n";
    assert_string_equal(text, want);
    free(text);
    free_job(m);
}

/* OpenMetrics: TYPE, UNIT (for _bytes and _seconds), HELP; a counter's family is named
 * without _total, its samples with it; # EOF ends the text. */
static void test_openmetrics_text(void **state)
{
    (void)state;
    struct model *m = small_job();
    char *text = exposition(m, METRICS_OPENMETRICS);
    assert_non_null(strstr(text, "# TYPE culeak_live_bytes gauge\n# UNIT culeak_live_bytes bytes\n"
                                 "# HELP culeak_live_bytes Device memory live now"));
    const char *peak = strstr(samples, "@peak");
    char *live = strndup(samples, (size_t)(peak - samples));
    assert_non_null(strstr(text, live));
    assert_non_null(strstr(text, peak + 5));
    free(live);
    assert_non_null(strstr(text, "# TYPE culeak_time_to_full_seconds gauge\n# UNIT culeak_time_to_full_seconds "
                                 "seconds\n"));
    assert_non_null(strstr(text, "# TYPE culeak_suspects gauge\n# HELP culeak_suspects "));
    assert_non_null(strstr(text, "# TYPE culeak_events counter\n# HELP culeak_events Allocations"));
    assert_non_null(strstr(text, "\nculeak_events_total{host=\"node-a\",rank=\"0\"} 4\n"));
    assert_null(strstr(text, "# TYPE culeak_events_total"));
    size_t n = strlen(text);
    assert_true(n > 6 && strcmp(text + n - 6, "# EOF\n") == 0);
    assert_ptr_equal(strstr(text, "# EOF"), text + n - 6);
    free(text);
    free_job(m);
}

/* The family a sample line belongs to: its name, less _total for a counter. */
static int belongs(const char *line, const char *family, const char *type, int om)
{
    size_t k = strcspn(line, "{ ");
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)k, line);
    if (!strcmp(name, family))
        return !om || strcmp(type, "counter") != 0;
    return om && !strcmp(type, "counter") && strlen(name) == strlen(family) + 6 &&
           !strncmp(name, family, strlen(family)) && !strcmp(name + strlen(family), "_total");
}

/* Every line either declares the family the samples after it belong to, or is one of
 * them; a family is declared once; units end the name. */
static void check_rules(const char *text, int om)
{
    char family[128] = "", type[32] = "", seen[4096] = " ";
    char *copy = strdup(text), *save = NULL;
    int eof = 0;
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        assert_false(eof);
        if (!strcmp(l, "# EOF")) {
            eof = 1;
            continue;
        }
        char name[128], word[64];
        if (sscanf(l, "# TYPE %127s %63s", name, word) == 2) {
            char key[140];
            snprintf(key, sizeof key, " %s ", name);
            assert_null(strstr(seen, key));
            strncat(seen, key + 1, sizeof seen - strlen(seen) - 1);
            snprintf(family, sizeof family, "%s", name);
            snprintf(type, sizeof type, "%s", word);
            continue;
        }
        if (sscanf(l, "# UNIT %127s %63s", name, word) == 2) {
            assert_true(om);
            assert_string_equal(name, family);
            size_t nl = strlen(name), wl = strlen(word);
            assert_true(nl > wl && !strcmp(name + nl - wl, word) && name[nl - wl - 1] == '_');
            continue;
        }
        if (sscanf(l, "# HELP %127s", name) == 1) {
            if (om)
                assert_string_equal(name, family);
            continue;
        }
        assert_true(family[0]);
        if (!belongs(l, family, type, om))
            fail_msg("sample \"%s\" outside its family (%s %s)", l, family, type);
    }
    assert_int_equal(eof, om);
    free(copy);
}

/* 12 iterations of 4 KiB kept each, with the device's memory on the marks: one suspect
 * whose growth and time to full the answer carries as model_suspects says. */
static void test_rules_with_suspect(void **state)
{
    (void)state;
    struct model *m = new_model();
    struct sb *b = process(100, "gpu7", "SLURM_PROCID=5");
    uint64_t seq = 0;
    for (int i = 0; i < 12; i++) {
        alloc_on(b, ++seq, 0, 0x7000000000ull + (uint64_t)i * 0x10000, 4096);
        sb_u(b, ++seq);
        sb_u(b, 300000000ull);
        sb_u(b, 7);
        char label[32];
        snprintf(label, sizeof label, "iteration %d", i);
        sb_s(b, label);
        sb_u(b, 0);
        sb_z(b, 0);
        sb_u(b, (1ull << 30) - 4096ull * (uint64_t)(i + 1));
        sb_u(b, 1ull << 30);
        sb_end(b, CULEAK_REC_MARK);
    }
    assert_int_equal(load(m, b), MODEL_FEED_OK);
    sb_free(b);
    struct model_suspects s;
    assert_int_equal(model_suspects(m, MODEL_ALL, 0, &s), 0);
    assert_int_equal(s.n, 1);
    assert_true(s.v[0].forecast);
    char want[256];
    snprintf(want, sizeof want, "culeak_time_to_full_seconds{host=\"gpu7\",rank=\"5\",device=\"0\"} %.9g\n",
             s.v[0].fill_s);
    model_suspects_free(&s);
    for (int om = 0; om < 2; om++) {
        char *text = exposition(m, om ? METRICS_OPENMETRICS : METRICS_PROMETHEUS);
        check_rules(text, om);
        assert_non_null(strstr(text, want));
        assert_non_null(strstr(text, "culeak_suspects{host=\"gpu7\",rank=\"5\"} 1\n"));
        assert_non_null(strstr(text, "culeak_suspect_growth_bytes{host=\"gpu7\",rank=\"5\"} 4096\n"));
        assert_non_null(strstr(text, "culeak_device_size_bytes{host=\"gpu7\",rank=\"5\",device=\"0\"} 1073741824\n"));
        assert_non_null(strstr(text, "culeak_live_bytes{host=\"gpu7\",rank=\"5\",device=\"0\",allocator=\"cuda\"} "
                                     "49152\n"));
        free(text);
    }
    model_free(m);
    m = small_job();
    for (int om = 0; om < 2; om++) {
        char *text = exposition(m, om ? METRICS_OPENMETRICS : METRICS_PROMETHEUS);
        check_rules(text, om);
        free(text);
    }
    free_job(m);
}

/* A process that reports PyTorch's blocks: its device memory under allocator cuda, the
 * blocks under allocator pytorch, and the pool's segments as its reserved bytes. */
static void test_pool_allocator(void **state)
{
    (void)state;
    struct model *m = new_model();
    struct sb *b = process(100, "node-a", "RANK=2");
    alloc_on(b, 1, 0, 0x7000000000ull, 2 << 20);
    for (uint64_t i = 0; i < 4; i++) {
        int free_it = i == 3;
        sb_event(b, (struct sb_ev){.seq = 2 + i, .dt = 1000, .op = free_it ? CULEAK_OP_FREE : CULEAK_OP_ALLOC,
                                   .api = free_it ? CULEAK_API_TORCH_BLOCK_FREE : CULEAK_API_TORCH_BLOCK_ALLOC,
                                   .kind = CULEAK_KIND_BLOCK, .size = free_it ? 0 : 4096,
                                   .addr = 0x7000000000ull + 4096 * (free_it ? 2 : i), .stack = 1});
    }
    assert_int_equal(load(m, b), MODEL_FEED_OK);
    sb_free(b);
    struct model_memory mm;
    model_memory_now(m, 0, &mm);
    assert_int_equal(mm.pools, 1u << MODEL_CACHE_PYTORCH);
    char reserved[256];
    snprintf(reserved, sizeof reserved,
             "culeak_reserved_bytes{host=\"node-a\",rank=\"2\",device=\"0\",allocator=\"pytorch\"} %llu\n",
             (unsigned long long)mm.reserved_bytes);
    char *text = exposition(m, METRICS_PROMETHEUS);
    assert_non_null(strstr(text, "culeak_live_bytes{host=\"node-a\",rank=\"2\",device=\"0\",allocator=\"cuda\"} "
                                 "2097152\n"
                                 "culeak_live_bytes{host=\"node-a\",rank=\"2\",device=\"0\",allocator=\"pytorch\"} "
                                 "8192\n"));
    assert_non_null(strstr(text, "culeak_peak_bytes{host=\"node-a\",rank=\"2\",device=\"0\",allocator=\"pytorch\"} "
                                 "12288\n"));
    assert_non_null(strstr(text, reserved));
    check_rules(text, 0);
    free(text);
    model_free(m);
}

static void test_negotiate(void **state)
{
    (void)state;
    /* Prometheus' own Accept header */
    assert_int_equal(metrics_negotiate("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                                       "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
                     METRICS_OPENMETRICS);
    assert_int_equal(metrics_negotiate("text/plain"), METRICS_PROMETHEUS);
    assert_int_equal(metrics_negotiate(""), METRICS_PROMETHEUS);
    assert_int_equal(metrics_negotiate(NULL), METRICS_PROMETHEUS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prometheus_text),
        cmocka_unit_test(test_openmetrics_text),
        cmocka_unit_test(test_rules_with_suspect),
        cmocka_unit_test(test_pool_allocator),
        cmocka_unit_test(test_negotiate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
