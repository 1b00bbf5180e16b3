/* Model benchmark (not a test): events per second through decode + model on one core,
 * bytes per live allocation, the time to symbolize and print a leak report, and the size
 * and time of the HTML page, on a synthetic recording of 1M events over 10k distinct
 * stacks with a mark every 1000 events. The stacks' addresses lie in this executable's
 * own code, so symbolization does real DWARF work. */
#include "model/live_table.h"
#include "model/model_internal.h"
#include "report/report.h"
#include "report/report_internal.h"
#include "model/suppress.h"
#include "self_image.h"
#include "xorshift.h"
#include "bench_time.h"

#include <stdio.h>
#include <time.h>

#define EVENTS 1000000
#define STACKS 10000
#define DEPTH 8
#define MARK_EVERY 1000
#define RUNS 9 /* repeated figures: median and range of this many */

/* "median 1.23 ms (1.10 to 1.50, 9 runs)" of RUNS timings (sorted in place) */
static const char *spread(double *t)
{
    static char buf[128];
    qsort(t, RUNS, sizeof *t, cmp_double);
    snprintf(buf, sizeof buf, "median %.3f ms (%.3f to %.3f, %d runs)", t[RUNS / 2] * 1e3, t[0] * 1e3,
             t[RUNS - 1] * 1e3, RUNS);
    return buf;
}

/* 10k stacks of depth 8 over 2k distinct call addresses; 1M events: allocations, and
 * frees of a random earlier one, leaving about a fifth live. */
static struct sb *build(const struct self_image *s, size_t *live_at_end)
{
    struct sb *b = sb_new();
    sb_hello(b, 1, s->exe, NULL);
    sb_self_module(b, s);
    uint64_t ips[2000];
    for (int i = 0; i < 2000; i++)
        ips[i] = s->text_lo + next() % (s->text_hi - s->text_lo);
    uint64_t id = 1, leaves[STACKS];
    for (int st = 0; st < STACKS; st++) {
        uint64_t parent = 0;
        for (int d = 0; d < DEPTH; d++) {
            sb_frame(b, id, parent, ips[(st * 7 + d * 131 + (d == DEPTH - 1 ? st : 0)) % 2000] + (uint64_t)d);
            parent = id++;
        }
        leaves[st] = parent;
    }
    uint64_t *live = malloc(EVENTS * sizeof *live);
    size_t nlive = 0;
    for (uint64_t seq = 1; seq <= EVENTS; seq++) {
        if (seq % MARK_EVERY == 0) {
            char label[32];
            snprintf(label, sizeof label, "iteration %llu", (unsigned long long)(seq / MARK_EVERY));
            sb_mark(b, seq, label);
            continue;
        }
        if (nlive > 0 && next() % 5 < 2) {
            size_t k = next() % nlive;
            sb_free_dev(b, seq, leaves[next() % STACKS], live[k]);
            live[k] = live[--nlive];
        } else {
            uint64_t addr = 0x700000000000ull + seq * 256;
            sb_alloc(b, seq, leaves[next() % STACKS], addr, 256 + next() % 65536);
            live[nlive++] = addr;
        }
    }
    sb_exit(b, EVENTS + 1);
    free(live);
    *live_at_end = nlive;
    return b;
}

/* model_bench [PAGE.html]: also writes the HTML page there, to open it in a browser */
int main(int argc, char **argv)
{
    struct self_image s;
    if (self_image_find(&s) != 0)
        return 1;
    size_t expect_live;
    struct sb *b = build(&s, &expect_live);
    printf("recording: %zu events, %d stacks, %.1f MB\n", (size_t)EVENTS, STACKS, (double)b->n / 1e6);

    double best = 0;
    struct model *m = NULL;
    for (int round = 0; round < 3; round++) {
        model_free(m);
        m = model_new(NULL);
        struct model_stream *st = model_stream_open(m);
        double t0 = now();
        if (model_stream_feed(st, b->buf, b->n) != 0 || model_stream_finish(st) != 0) {
            fprintf(stderr, "feed failed: %s\n", model_stream_error(st));
            return 1;
        }
        double dt = now() - t0;
        model_stream_close(st);
        double rate = EVENTS / dt;
        if (rate > best)
            best = rate;
    }
    printf("decode + model: %.2f M events/s (best of 3, one core)\n", best / 1e6);
    printf("live allocations at end: %zu, live table %.1f bytes per live allocation\n", m->live.n,
           (double)live_table_memory(&m->live) / (double)m->live.n);
    if (m->live.n != expect_live)
        fprintf(stderr, "warning: %zu live, expected %zu\n", m->live.n, expect_live);

    FILE *devnull = fopen("/dev/null", "w");
    struct report_options o;
    report_options_init(&o);
    o.group = MODEL_GROUP_STACK;
    double t0 = now();
    struct report_summary sum;
    report_text(devnull, m, &o, &sum);
    double t_stack = now() - t0;
    o.group = MODEL_GROUP_SITE;
    t0 = now();
    report_text(devnull, m, &o, &sum);
    double t_site = now() - t0;
    t0 = now();
    report_text(devnull, m, &o, &sum);
    double t_again = now() - t0;
    printf("leak report, symbolized, all %d stacks printed (cold symbol caches): %.2f s\n", STACKS, t_stack);
    printf("leak report by site (%llu sites): %.3f s; again, warm: %.3f s\n", (unsigned long long)sum.sites,
           t_site, t_again);
    /* suppressions: every live stack is matched against every block (none matches); the
     * first table build judges each stack, later ones (the console's frames) reuse that */
    struct suppressions *supp = suppressions_new();
    char text[4096] = "", err[256];
    for (int k = 0; k < 10; k++) {
        size_t n = strlen(text);
        snprintf(text + n, sizeof text - n, "{\n s%d\n culeak:Leak\n fun:no_such_function_%d\n ...\n fun:main\n}\n", k, k);
    }
    if (!supp || suppressions_parse(supp, text, "bench", err, sizeof err) != 0)
        return 1;
    struct model_table tb;
    double t_plain[RUNS], t_first, t_later[RUNS], t_report[RUNS];
    for (int k = 0; k < RUNS; k++) {
        t0 = now();
        report_query(m, &o, &tb);
        t_plain[k] = now() - t0;
        model_table_free(&tb);
    }
    o.supp = supp;
    t0 = now();
    report_query(m, &o, &tb);
    t_first = now() - t0;
    model_table_free(&tb);
    for (int k = 0; k < RUNS; k++) {
        t0 = now();
        report_query(m, &o, &tb);
        t_later[k] = now() - t0;
        model_table_free(&tb);
    }
    for (int k = 0; k < RUNS; k++) {
        t0 = now();
        report_text(devnull, m, &o, &sum);
        t_report[k] = now() - t0;
    }
    printf("leak table by site (%d stacks): without suppressions %s\n", STACKS, spread(t_plain));
    printf("  with 10 suppressions matching none: first build %.2f ms, later builds %s\n", t_first * 1e3,
           spread(t_later));
    printf("  leak report by site with them (two table builds and the counts): %s\n", spread(t_report));
    o.supp = NULL;
    suppressions_free(supp);
    fclose(devnull);
    model_free(m);

    /* the HTML page: moments kept while reading, then the page built and written */
    m = model_new(NULL);
    model_keep_moments(m, 256, 0);
    struct model_stream *st = model_stream_open(m);
    t0 = now();
    if (model_stream_feed(st, b->buf, b->n) != 0 || model_stream_finish(st) != 0)
        return 1;
    double t_feed = now() - t0;
    model_stream_close(st);
    char *page = NULL;
    size_t page_len = 0;
    FILE *pf = open_memstream(&page, &page_len);
    t0 = now();
    if (!pf || report_html(pf, m, &o) != 0)
        return 1;
    fclose(pf);
    double t_page = now() - t0;
    FILE *keep = argc > 1 ? fopen(argv[1], "w") : NULL;
    if (keep) {
        fwrite(page, 1, page_len, keep);
        fclose(keep);
    }
    printf("html page of %llu marks: %.1f MB, read with moments kept %.2f s, page built and written %.2f s\n",
           (unsigned long long)(EVENTS / MARK_EVERY), (double)page_len / 1e6, t_feed, t_page);
    free(page);
    model_free(m);
    sb_free(b);
    return 0;
}
