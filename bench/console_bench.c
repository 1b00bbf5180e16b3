/* Console benchmark (not a test): a synthetic job of 1M live allocations over 100k
 * distinct stacks fed through the console's path (bytes -> model_stream_feed, with an
 * observer like the console's), then the time one redraw takes (the table's rows, sorted,
 * and every pane rendered into the curses-free grid): the first frame (100k sites never
 * named: only the rows on screen are resolved), the time the console's between-frame
 * slices take to name every site, then per redraw, median and range over several frames,
 * of frames where nothing changed and of frames after a tenth of a second of events
 * (10k), in the modes that cost most: the change column against a snapshot, a diff,
 * scrolled to the end, sorted by site text and by module, grouped by function and by
 * stack. Prints events/s, frame times and memory. CONSOLE_BENCH_MODE: see mode(). */
#include "../src/console/ui.h"
#include "self_image.h"
#include "bench_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define LIVE 1000000
#define STACKS 100000
#define CHUNK 65536  /* what the console reads from a socket at a time */
#define FRAMES 21    /* frames per figure: median and range */
#define BATCH 10000  /* events between two frames: a tenth of a second at 100k events/s */

/* CPU time of this thread: the figures of one frame's parts, less noisy on a busy machine */
static double cpu_now(void) { return bench_seconds(CLOCK_THREAD_CPUTIME_ID); }

static long max_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static long rss_kib(void) /* resident now */
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
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

/* The events of one frame interval: BATCH/2 frees of the oldest live allocations, BATCH/2
 * new ones spread over the stacks. */
static uint64_t seq = 1, next_free, next_new, batches;
static struct sb *batch(void)
{
    struct sb *b = sb_new();
    b->n = 0; /* no stream header: it goes on the stream fed already */
    batches++;
    for (int i = 0; i < BATCH / 2; i++, next_free++)
        sb_free_dev(b, seq++, 4 + next_free % STACKS, 0x700000000000ull + next_free * 256);
    for (int i = 0; i < BATCH / 2; i++, next_new++)
        sb_alloc(b, seq++, 4 + (next_new * 7919) % STACKS, 0x720000000000ull + next_new * 256, 1024);
    return b;
}

/* FRAMES redraws; with events, a batch is fed before each (not timed). Prints the median
 * and the range in ms, wall and CPU time. */
static void series(const char *what, struct ui *u, struct model_stream *s, int events, struct grid *g,
                   const struct layout *l)
{
    double wall[FRAMES], cpu[FRAMES];
    for (int i = 0; i < FRAMES; i++) {
        if (events) {
            struct sb *b = batch();
            feed(s, b);
            sb_free(b);
        }
        double t = now(), c = cpu_now();
        ui_render(u, g, l);
        cpu[i] = cpu_now() - c;
        wall[i] = now() - t;
    }
    qsort(wall, FRAMES, sizeof *wall, cmp_double);
    qsort(cpu, FRAMES, sizeof *cpu, cmp_double);
    printf("    %-45s %6.2f ms (%.2f to %.2f)   CPU %6.2f ms (%.2f to %.2f)\n", what, wall[FRAMES / 2] * 1e3,
           wall[0] * 1e3, wall[FRAMES - 1] * 1e3, cpu[FRAMES / 2] * 1e3, cpu[0] * 1e3, cpu[FRAMES - 1] * 1e3);
}

/* Both kinds of frame in the ui's current mode (after one frame that makes its rows).
 * CONSOLE_BENCH_MODE=text: only the modes whose name starts with text are timed (a
 * profile of one mode; the set-up still runs). */
static void mode(const char *what, struct ui *u, struct model_stream *s, struct grid *g, const struct layout *l)
{
    char line[80];
    const char *only = getenv("CONSOLE_BENCH_MODE");
    if (only && strncmp(what, only, strlen(only)) != 0)
        return;
    ui_render(u, g, l);
    snprintf(line, sizeof line, "%s, nothing changed:", what);
    series(line, u, s, 0, g, l);
    snprintf(line, sizeof line, "%s, %dk events arrived:", what, BATCH / 1000);
    series(line, u, s, 1, g, l);
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
        sb_alloc(b, seq++, 4 + i % STACKS, 0x700000000000ull + i * 256, (uint64_t)256 << (i * 7 % 19));

    long rss0 = max_rss_kib();
    struct ui u;
    if (ui_init(&u) != 0)
        return 1;
    struct model_observer obs = {.event = on_event};
    model_set_observer(u.m, &obs);
    struct model_stream *s = model_stream_open(u.m);
    double t0 = now();
    feed(s, b);
    double ingest = now() - t0;
    long rss1 = max_rss_kib();
    sb_free(b);

    struct layout l;
    struct grid g;
    layout_compute(50, 160, &l);
    grid_init(&g, 50, 160);
    t0 = now();
    ui_render(&u, &g, &l);
    double cold = now() - t0;
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
    ui_render(&u, &g, &l);
    size_t rows = u.nrows;
    printf("console bench: %d live allocations over %d stacks, %zu site rows, a %dx%d screen\n", LIVE, STACKS, rows,
           50, 160);
    printf("  ingest (bytes -> model, observer): %.2f M events/s (%.3f s for %d)\n", LIVE / ingest / 1e6, ingest,
           LIVE);
    printf("  first frame %.1f ms (names resolved for the rows on screen only); then %zu site names resolved\n"
           "  in the background in %.2f s (%zu slices, longest %.1f ms)\n",
           cold * 1e3, pending, naming, slices, slice_max * 1e3);

    /* where the time of a frame with new events goes: the model's table, the console's rows
     * from it, the rest of the render */
    double t_build = 0, t_rows = 0, t_render = 0;
    for (int i = 0; i < 10; i++) {
        struct sb *e = batch();
        feed(s, e);
        sb_free(e);
        struct model_query q;
        model_query_init(&q);
        q.lazy_names = 1;
        q.unsorted = 1; /* as the console asks: it sorts the rows its own way */
        struct model_table t;
        double ts = cpu_now();
        model_table_build(u.m, &q, &t);
        t_build += (cpu_now() - ts) / 10;
        model_table_free(&t);
        ts = cpu_now();
        ui_rows(&u);
        t_rows += (cpu_now() - ts) / 10;
        ts = cpu_now();
        ui_render(&u, &g, &l);
        t_render += (cpu_now() - ts) / 10;
    }
    printf("  in CPU time, after new events: the model's table %.1f ms; the console's rows, sorted, %.1f ms\n"
           "  (the table included); a redraw with the rows made %.2f ms\n",
           t_build * 1e3, t_rows * 1e3, t_render * 1e3);

    printf("  per redraw (median and range of %d frames; %dk events fed between frames, not timed):\n", FRAMES,
           BATCH / 1000);
    mode("live table", &u, s, &g, &l);
    model_snapshot_take(u.m, "a");
    snprintf(u.base, sizeof u.base, "a");
    struct sb *more = batch(); /* some change against the snapshot */
    feed(s, more);
    sb_free(more);
    mode("change column", &u, s, &g, &l);
    u.base[0] = 0;
    u.sel = u.nrows - 1; /* the end of the table */
    u.sel_valid = 0;
    mode("scrolled to the end", &u, s, &g, &l);
    u.sel = 0;
    u.sort = SORT_SITE; /* as the command: every name resolved first */
    ui_resolve_names(&u, 0);
    mode("sorted by site", &u, s, &g, &l);
    u.sort = SORT_MODULE;
    mode("sorted by module", &u, s, &g, &l);
    u.sort = SORT_LIVE;
    u.diff_active = 1;
    snprintf(u.diff_a, sizeof u.diff_a, "a");
    mode("diff a -> now", &u, s, &g, &l);
    size_t diff_rows = u.nrows;
    u.diff_active = 0;
    u.group = MODEL_GROUP_FUNCTION;
    mode("grouped by function", &u, s, &g, &l);
    u.group = MODEL_GROUP_STACK;
    mode("grouped by stack", &u, s, &g, &l);
    u.group = MODEL_GROUP_SITE;
    ui_render(&u, &g, &l);

    uint64_t bytes, count;
    ui_totals(&u, &bytes, &count);
    printf("  %zu rows in the diff; %llu allocations live at the end\n", diff_rows, (unsigned long long)count);
    printf("  memory: max RSS %.0f MiB before, %.0f MiB after ingest (%.0f bytes per live allocation), resident\n"
           "  %.0f MiB at the end, max RSS %.0f MiB (stream buffers and the snapshot included)\n",
           rss0 / 1024.0, rss1 / 1024.0, (double)(rss1 - rss0) * 1024 / LIVE, rss_kib() / 1024.0,
           max_rss_kib() / 1024.0);
    grid_free(&g);
    model_stream_close(s);
    ui_free(&u);
    return events_seen == LIVE + BATCH * batches ? 0 : 1;
}
