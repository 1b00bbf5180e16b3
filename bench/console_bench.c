/* Console benchmark (not a test): a synthetic job of 1M live allocations over 100k
 * distinct stacks fed through the console's path (bytes -> model_stream_feed, with an
 * observer like the console's), then the time to build, sort and render one table frame
 * into the curses-free grid: cold (100k sites never named: only the rows on screen are
 * resolved), the time the console's between-frame slices take to name every site, warm,
 * with the change column against a snapshot, and as a diff. Prints events/s, frame times
 * and memory. */
#include "../src/console/ui.h"
#include "self_image.h"

#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#define LIVE 1000000
#define STACKS 100000
#define CHUNK 65536 /* what the console reads from a socket at a time */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of this thread: the figures of one frame's parts, less noisy on a busy machine */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static uint64_t events_seen;
static void on_event(void *ctx, int proc, const struct culeak_event *e)
{
    (void)ctx, (void)proc, (void)e;
    events_seen++;
}

static void feed(struct model_stream *s, const struct sb *b)
{
    for (size_t off = 0; off < b->n; off += CHUNK)
        if (model_stream_feed(s, b->buf + off, b->n - off < CHUNK ? b->n - off : CHUNK) != MODEL_FEED_OK) {
            fprintf(stderr, "feed failed: %s\n", model_stream_error(s));
            exit(1);
        }
}

static double frame(struct ui *u, struct grid *g, const struct layout *l)
{
    double t = now();
    ui_render(u, g, l);
    return now() - t;
}

int main(void)
{
    /* this executable's code: call addresses inside it make symbolization real work */
    struct self_image me;
    if (self_image_find(&me) != 0 || me.text_hi <= me.text_lo)
        return 1;

    /* the stream: HELLO, the module, 100k leaves under a shared 3-frame root, 1M allocations */
    struct sb *b = sb_new();
    sb_hello(b, 1234, me.exe, NULL);
    sb_module(b, me.exe, me.base, me.text_lo - me.base, me.text_hi - me.text_lo);
    uint64_t span = me.text_hi - me.text_lo - 64;
    sb_frame(b, 1, 0, me.text_lo + 16);
    sb_frame(b, 2, 1, me.text_lo + 32);
    sb_frame(b, 3, 2, me.text_lo + 48);
    for (uint64_t i = 0; i < STACKS; i++)
        sb_frame(b, 4 + i, 3, me.text_lo + 64 + (i * 2654435761u) % span);
    for (uint64_t i = 0; i < LIVE; i++)
        sb_alloc(b, i + 1, 4 + i % STACKS, 0x700000000000ull + i * 256, 256 + (i % 7) * 64);
    struct sb *more = sb_new(); /* later: a tenth freed, a tenth allocated again */
    more->n = 0;
    for (uint64_t i = 0; i < LIVE / 10; i++)
        sb_free_dev(more, LIVE + 2 * i + 1, 4 + i % STACKS, 0x700000000000ull + i * 256);
    for (uint64_t i = 0; i < LIVE / 10; i++)
        sb_alloc(more, LIVE + 2 * i + 2, 4 + (i * 7) % STACKS, 0x710000000000ull + i * 256, 512);

    long rss0 = rss_kib();
    struct ui u;
    if (ui_init(&u) != 0)
        return 1;
    struct model_observer obs = {.event = on_event};
    model_set_observer(u.m, &obs);
    struct model_stream *s = model_stream_open(u.m);
    double t0 = now();
    feed(s, b);
    double ingest = now() - t0;
    long rss1 = rss_kib();

    struct layout l;
    struct grid g;
    layout_compute(50, 160, &l);
    grid_init(&g, 50, 160);
    double cold = frame(&u, &g, &l), warm = 0;
    /* the console's loop: one bounded slice of name resolution per turn until none is left */
    size_t pending = model_names_pending(u.m), slices = 0;
    double slice_max = 0;
    t0 = now();
    while (model_names_pending(u.m)) {
        double ts = now();
        ui_resolve_names(&u, 0.015);
        slices++;
        if (now() - ts > slice_max)
            slice_max = now() - ts;
    }
    double naming = now() - t0;
    for (int i = 0; i < 10; i++)
        warm += frame(&u, &g, &l) / 10;
    size_t rows = u.nrows;
    /* where a warm frame's time goes: the model's table (its sort apart), the console's
     * rows from it (copied, filtered and sorted again), the rest of the render */
    double t_build = 0, t_sort = 0, t_rows = 0, t_render = 0;
    for (int i = 0; i < 10; i++) {
        struct model_query q;
        model_query_init(&q);
        q.lazy_names = 1;
        struct model_table t;
        double ts = cpu_now();
        model_table_build(u.m, &q, &t);
        t_build += (cpu_now() - ts) / 10;
        model_table_sort(&t, MODEL_FIELD_ID, 1); /* rows in the order the build makes them */
        ts = cpu_now();
        model_table_sort(&t, MODEL_FIELD_LIVE_BYTES, 0);
        t_sort += (cpu_now() - ts) / 10;
        model_table_free(&t);
        ts = cpu_now();
        ui_rows(&u);
        t_rows += (cpu_now() - ts) / 10;
        ts = cpu_now();
        ui_render(&u, &g, &l);
        t_render += (cpu_now() - ts) / 10;
    }
    model_snapshot_take(u.m, "a");
    snprintf(u.base, sizeof u.base, "a");
    t0 = now();
    feed(s, more);
    double ingest2 = now() - t0;
    double change = 0;
    for (int i = 0; i < 10; i++)
        change += frame(&u, &g, &l) / 10;
    u.diff_active = 1;
    snprintf(u.diff_a, sizeof u.diff_a, "a");
    double diff = 0;
    for (int i = 0; i < 10; i++)
        diff += frame(&u, &g, &l) / 10;
    size_t diff_rows = u.nrows;
    u.diff_active = 0;
    u.group = MODEL_GROUP_FUNCTION;
    double byfunc = frame(&u, &g, &l);
    long rss2 = rss_kib();

    uint64_t bytes, count;
    ui_totals(&u, &bytes, &count);
    printf("console bench: %d live allocations over %d stacks, %zu site rows (%llu live now)\n", LIVE, STACKS, rows,
           (unsigned long long)count);
    printf("  ingest (bytes -> model, observer): %.2f M events/s (%.3f s for %d; then %.2f M events/s)\n",
           LIVE / ingest / 1e6, ingest, LIVE, 2.0 * (LIVE / 10) / ingest2 / 1e6);
    printf("  frame (build + sort + render %dx%d): cold %.1f ms (names resolved for the rows on screen only),\n",
           50, 160, cold * 1e3);
    printf("        then %zu site names resolved in the background in %.2f s (%zu slices, longest %.1f ms),\n",
           pending, naming, slices, slice_max * 1e3);
    printf("        warm %.1f ms; in CPU time: a frame %.1f ms, the model's table %.1f ms (its sort %.1f ms),\n"
           "        the console's rows %.1f ms (the table included), the other panes %.1f ms,\n", warm * 1e3,
           t_render * 1e3, t_build * 1e3, t_sort * 1e3, t_rows * 1e3, (t_render - t_rows) * 1e3);
    printf("        with change column %.1f ms, diff (%zu rows) %.1f ms, grouped by function %.1f ms\n", change * 1e3,
           diff_rows, diff * 1e3, byfunc * 1e3);
    printf("  memory: max RSS %.0f MiB before, %.0f MiB after ingest (%.0f bytes per live allocation), %.0f MiB at end"
           " (stream buffers included)\n",
           rss0 / 1024.0, rss1 / 1024.0, (double)(rss1 - rss0) * 1024 / LIVE, rss2 / 1024.0);
    grid_free(&g);
    model_stream_close(s);
    ui_free(&u);
    sb_free(b);
    sb_free(more);
    return events_seen == LIVE + LIVE / 5 ? 0 : 1;
}
