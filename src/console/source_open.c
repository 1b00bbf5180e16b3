/* Recordings (culeak open): read whole before the screen opens, the timeline moved through
 * with goto; no job, so nothing to start or end. */
#include "console.h"
#include "fmt.h"
#include "source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void console_history(struct console *c)
{
    /* recordings: device memory over each process's time, summed at the same fractions */
    c->u.nspark = 0;
    memset(c->u.spark, 0, sizeof c->u.spark);
    for (int p = 0; p < model_process_count(c->u.m); p++) {
        size_t n = model_timeline(c->u.m, p, MODEL_ALL, NULL, 0);
        struct model_sample *v = n ? malloc(n * sizeof *v) : NULL;
        if (!v)
            continue;
        model_timeline(c->u.m, p, MODEL_ALL, v, n);
        for (size_t i = 0; i < SPARK_N; i++)
            c->u.spark[i] += v[(n - 1) * i / (SPARK_N - 1)].max_bytes;
        free(v);
    }
    c->u.nspark = SPARK_N;
}

static int recordings_open(struct console *c)
{
    char err[512];
    const struct console_options *opt = &c->opt;
    if (timeline_load(&c->tl, c->u.m, opt->files, opt->nfiles, err, sizeof err) != 0) {
        fprintf(stderr, "culeak open: %s\n", err);
        return 1;
    }
    c->u.state = JOB_NONE;
    size_t n = 0;
    for (int i = 0; i < opt->nfiles && n + 2 < sizeof c->u.title; i++) {
        int w = snprintf(c->u.title + n, sizeof c->u.title - n, "%s%s", i ? " " : "", opt->files[i]);
        if (w < 0)
            break;
        n += (size_t)w;
    }
    console_history(c);
    return 0;
}

/* What reading the recordings found, as culeak report says it. */
static void recordings_start(struct console *c)
{
    if (c->tl.warning[0]) { /* as culeak report's warnings */
        char line[500];
        snprintf(line, sizeof line, "[culeak] %.400s", c->tl.warning);
        outbuf_add_line(&c->u.out, line);
    }
    if (c->tl.damage[0]) { /* as culeak report: what comes before the damage is shown */
        char line[500];
        snprintf(line, sizeof line, "[culeak] %.400s: read up to the damage", c->tl.damage);
        outbuf_add_line(&c->u.out, line);
        ui_message(&c->u, 1, "a recording is corrupt: read up to the damage (see the output pane)");
    } else
        ui_message(&c->u, 0, "%llu event%s in %d process%s; goto peak|oom|MARK|TIME|start|end",
                   (unsigned long long)c->tl.nevents, plural(c->tl.nevents), model_process_count(c->u.m),
                   model_process_count(c->u.m) == 1 ? "" : "es");
}

static int recordings_close(struct console *c)
{
    (void)c;
    return 0;
}

const struct console_source console_recordings = {recordings_open, recordings_start, recordings_close};
