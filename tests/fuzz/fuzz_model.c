/* libFuzzer target: arbitrary bytes through the stream decoder into the model, fed in
 * two pieces (so records are split across feeds), then every query and report the
 * commands make; bytes that begin as a pickle does go through the PyTorch snapshot reader
 * instead (common/torch_snapshot.h). Nothing may crash, leak or grow without bound. */
#include "common/torch_snapshot.h"
#include "model/model.h"
#include "report/report.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static FILE *devnull;

static void query_everything(struct model *m)
{
    for (int g = 0; g < MODEL_GROUP_COUNT; g++) {
        for (int src = MODEL_SOURCE_NOW; src <= MODEL_SOURCE_FAILURE; src++) {
            struct model_query q;
            model_query_init(&q);
            q.group = (enum model_group)g;
            q.source = (enum model_source)src;
            q.snapshot = "a";
            q.filter = g == MODEL_GROUP_FILE ? "x" : NULL;
            struct model_table t;
            if (model_table_build(m, &q, &t) != 0)
                continue;
            for (size_t i = 0; i < t.n && i < 4; i++) {
                uint64_t stacks[4];
                int procs[4];
                model_row_stacks(m, (enum model_group)g, t.rows[i].id, MODEL_ALL, stacks, procs, 4);
                struct model_frame fr[16];
                model_stack_frames(m, t.rows[i].stack_proc, t.rows[i].stack, fr, 16);
                model_stack_matches(m, t.rows[i].stack_proc, t.rows[i].stack, "f*:12", 1);
            }
            model_table_free(&t);
        }
    }
    struct model_query q;
    model_query_init(&q);
    struct model_diff d;
    if (model_diff(m, "a", NULL, &q, &d) == 0)
        model_diff_free(&d);
    struct report_options o;
    report_options_init(&o);
    report_text(devnull, m, &o, NULL);
    report_json(devnull, m, &o, NULL);
    report_folded(devnull, m, &o);
    report_pprof(devnull, m, &o);
    report_suspects_text(devnull, m, &o);
    o.what = REPORT_PEAK;
    report_text(devnull, m, &o, NULL);
    report_pprof(devnull, m, &o);
    for (int p = 0; p < model_process_count(m); p++) {
        struct model_sample s[8];
        model_timeline(m, p, MODEL_ALL, s, 8);
        model_event_rate(m, p, 0);
        struct model_counter c;
        model_totals(m, p, 0, MODEL_KIND_DEVICE_MEMORY, &c);
    }
}

static int feed(void *ctx, const uint8_t *bytes, size_t n)
{
    return model_stream_feed(ctx, bytes, n) != MODEL_FEED_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!devnull && !(devnull = fopen("/dev/null", "w")))
        return 0;
    struct model_options mo = {.timeline_capacity = 8};
    struct model *m = model_new(&mo);
    if (!m)
        return 0;
    model_snapshot_at_mark(m, "a", "a");
    model_snapshot_at_mark(m, "3", "three");
    struct model_stream *s = model_stream_open(m);
    if (culeak_is_pickle(data, size)) { /* a PyTorch memory snapshot: its stream */
        char err[512];
        if (culeak_torch_snapshot_stream(data, size, "fuzz", feed, s, err, sizeof err) == 0)
            model_stream_finish(s);
    } else {
        size_t cut = size ? (size_t)data[size - 1] * size / 256 : 0;
        int rc = model_stream_feed(s, data, cut);
        if (rc == MODEL_FEED_OK)
            rc = model_stream_feed(s, data + cut, size - cut);
        if (rc == MODEL_FEED_OK)
            model_stream_finish(s);
    }
    model_stream_close(s);
    model_snapshot_take(m, "b");
    query_everything(m);
    model_free(m);
    return 0;
}
