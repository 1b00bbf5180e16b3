/* Suppressions from a report (`report --format suppressions`, `check --gen-suppressions`):
 * one block per leak site, with the frames that all of the site's stacks share. */
#include "report_internal.h"
#include "model/suppress.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_FRAMES 12 /* valgrind's --num-callers */
#define LINE_LEN 1100

/* Frame lines of a stack from its call site outward, at most max: how many. */
static size_t stack_frame_lines(struct model *m, int proc, uint64_t stack, char (*lines)[LINE_LEN], size_t max)
{
    static struct model_frame frames[REPORT_MAX_FRAMES];
    size_t hidden;
    size_t n = report_stack(m, proc, stack, (int)max, frames, REPORT_MAX_FRAMES, &hidden);
    for (size_t i = 0; i < n; i++)
        suppressions_frame_line(&frames[i], lines[i], LINE_LEN);
    return n;
}

static int site_block(FILE *f, struct model *m, const struct report_options *o, const struct model_row *r,
                      size_t max)
{
    char(*lines)[LINE_LEN] = malloc(2 * max * sizeof *lines), (*other)[LINE_LEN] = lines + max;
    size_t nstacks = model_row_stacks(m, MODEL_GROUP_SITE, r->id, o->proc, NULL, NULL, 0);
    uint64_t *stacks = malloc((nstacks ? nstacks : 1) * sizeof *stacks);
    int *procs = malloc((nstacks ? nstacks : 1) * sizeof *procs);
    char **ptrs = malloc(max * sizeof *ptrs);
    if (!lines || !stacks || !procs || !ptrs) {
        free(lines);
        free(stacks);
        free(procs);
        free(ptrs);
        return -1;
    }
    size_t n = stack_frame_lines(m, r->stack_proc, r->stack, lines, max);
    nstacks = model_row_stacks(m, MODEL_GROUP_SITE, r->id, o->proc, stacks, procs, nstacks);
    /* the frames every stack of the site has, from the site outward: a block that
     * matches them all (frames past the block's last line do not matter) */
    for (size_t k = 0; k < nstacks && n > 1; k++) {
        size_t on = stack_frame_lines(m, procs[k], stacks[k], other, n);
        size_t same = 0;
        while (same < n && same < on && !strcmp(lines[same], other[same]))
            same++;
        if (same > 0) /* the site's own frame is shared; 0 would be another site */
            n = same;
    }
    for (size_t i = 0; i < n; i++)
        ptrs[i] = lines[i];
    suppressions_write_block(f, r->text ? r->text : "culeak leak", r->kinds, ptrs, n);
    free(lines);
    free(stacks);
    free(procs);
    free(ptrs);
    return 0;
}

int report_suppressions(FILE *f, struct model *m, const struct report_options *o)
{
    struct report_options so = *o;
    so.group = MODEL_GROUP_SITE; /* one block per site, over every process */
    so.merge_processes = 1;
    size_t max = o->depth > 0 ? (size_t)o->depth : DEFAULT_FRAMES;
    if (max > REPORT_MAX_FRAMES)
        max = REPORT_MAX_FRAMES;
    struct model_table t;
    if (report_query(m, &so, &t) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < t.n && rc == 0; i++) {
        if (t.rows[i].cache != MODEL_CACHE_NONE || t.rows[i].before_attach || t.rows[i].unended)
            continue; /* a caching allocator's, from before an attach, or live at a recording's
                       * end before its process's: not a leak */
        rc = site_block(f, m, &so, &t.rows[i], max);
    }
    model_table_free(&t);
    return rc;
}
