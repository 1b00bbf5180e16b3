/* Folded stacks (flamegraph.pl, speedscope): "root;...;leaf bytes", one line per stack,
 * weighted by the bytes of the report's source; with several processes kept apart, the
 * root is "process PID (rank R)". */
#include "report_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void folded_frame(FILE *f, const struct model_frame *fr)
{
    char buf[1200];
    if (fr->function)
        snprintf(buf, sizeof buf, "%s", fr->function);
    else
        model_frame_format(fr, buf, sizeof buf);
    for (char *c = buf; *c; c++) /* ';' separates frames and a space ends the stack */
        if (*c == ';' || *c == '\n')
            *c = ',';
    fputs(buf, f);
}

int report_folded(FILE *f, struct model *m, const struct report_options *o)
{
    struct report_options so = *o;
    so.group = MODEL_GROUP_STACK;
    struct model_table t;
    if (report_query(m, &so, &t) != 0)
        return -1;
    static struct model_frame frames[REPORT_MAX_FRAMES];
    int split = report_split(m, o);
    for (size_t i = 0; i < t.n; i++) {
        const struct model_row *r = &t.rows[i];
        if (!r->live_bytes)
            continue;
        if (split) { /* the process is the root frame: identical stacks of two ranks stay apart */
            char name[512];
            report_process_name(m, o, r->proc, name, sizeof name);
            for (char *c = name; *c; c++)
                if (*c == ';')
                    *c = ',';
            fprintf(f, "%s;", name);
        }
        size_t n = model_stack_frames(m, r->proc, r->stack, frames, REPORT_MAX_FRAMES);
        if (n > REPORT_MAX_FRAMES)
            n = REPORT_MAX_FRAMES;
        if (n == 0)
            fputs("[no stack]", f);
        for (size_t k = n; k-- > 0;) {
            folded_frame(f, &frames[k]);
            if (k)
                putc(';', f);
        }
        if (r->cache != MODEL_CACHE_NONE)
            fprintf(f, ";[%s cache]", model_cache_name(r->cache));
        fprintf(f, " %" PRIu64 "\n", r->live_bytes);
    }
    model_table_free(&t);
    return 0;
}
