/* The second half of a diff: the allocations made after snapshot A that are still live,
 * grouped by stack (bytes, count, the stack), written to the output pane. One scan of the
 * live allocations (model_diff), on the explicit command only, never per frame. */
#include "fmt.h"
#include "ui.h"

#include <stdio.h>

#define NEW_STACKS 10 /* stacks listed with their frames; the rest in one line */
#define NEW_FRAMES 8  /* lines of frames per stack (show SITE lists them all) */

static void say(struct ui *u, const char *line) { outbuf_add_line(&u->out, line); }

int ui_diff_new(struct ui *u, const char *a, const char *b, uint64_t *bytes, uint64_t *count)
{
    struct model_query q;
    model_query_init(&q);
    q.proc = u->proc_filter < 0 ? MODEL_ALL : u->proc_filter;
    q.lazy_names = 1; /* the changed rows are not printed: name only the stacks listed */
    struct model_diff d;
    if (model_diff(u->m, a, b, &q, &d) != 0)
        return -1;
    *bytes = d.new_bytes;
    *count = d.new_count;
    char line[1300], sz[32];
    if (d.a.pools) { /* tensor tracking: each side as torch.cuda.memory_allocated() / memory_reserved() */
        const struct model_memory *side[2] = {&d.a, &d.b};
        char s1[32], s2[32], s3[32];
        snprintf(line, sizeof line, "%s -> %s: allocated %s, reserved %s, other %s", a, b ? b : "now",
                 fmt_delta(s1, sizeof s1, (int64_t)(d.b.allocated_bytes - d.a.allocated_bytes)),
                 fmt_delta(s2, sizeof s2, (int64_t)(d.b.reserved_bytes - d.a.reserved_bytes)),
                 fmt_delta(s3, sizeof s3, (int64_t)(d.b.other_bytes - d.a.other_bytes)));
        say(u, line);
        for (int i = 0; i < 2; i++) {
            snprintf(line, sizeof line, "  at %s: allocated %s in %llu blocks, reserved %s in %llu segments, other %s",
                     i ? b ? b : "now" : a, fmt_size(s1, sizeof s1, side[i]->allocated_bytes),
                     (unsigned long long)side[i]->allocated_blocks, fmt_size(s2, sizeof s2, side[i]->reserved_bytes),
                     (unsigned long long)side[i]->reserved_segments, fmt_size(s3, sizeof s3, side[i]->other_bytes));
            say(u, line);
        }
        if (d.new_reserved_count) {
            snprintf(line, sizeof line, "the pools reserved %s in %llu segment%s after %s",
                     fmt_size(sz, sizeof sz, d.new_reserved_bytes), (unsigned long long)d.new_reserved_count,
                     plural(d.new_reserved_count), a);
            say(u, line);
        }
    }
    /* with B a past snapshot the model knows what is live now, not at B: a lower bound */
    char when[200];
    if (b)
        snprintf(when, sizeof when, "made after %s up to %s and still live now", a, b);
    else
        snprintf(when, sizeof when, "made after %s and still live now", a);
    if (!d.nnew) {
        snprintf(line, sizeof line, "no allocation %s", when);
        say(u, line);
    } else {
        snprintf(line, sizeof line, "%llu allocation%s %s: %s in %zu stack%s", (unsigned long long)d.new_count,
                 plural(d.new_count), when, fmt_size(sz, sizeof sz, d.new_bytes), d.nnew, plural(d.nnew));
        say(u, line);
    }
    uint64_t rest_bytes = 0, rest_count = 0;
    for (size_t i = 0; i < d.nnew; i++) {
        const struct model_diff_new *n = &d.news[i];
        if (i >= NEW_STACKS) {
            rest_bytes += n->bytes;
            rest_count += n->count;
            continue;
        }
        const struct model_process *p = model_process(u->m, n->proc);
        snprintf(line, sizeof line, "  %s in %llu allocation%s, pid %llu, first at event %llu:",
                 fmt_size(sz, sizeof sz, n->bytes), (unsigned long long)n->count, plural(n->count),
                 p ? (unsigned long long)p->pid : 0ull, (unsigned long long)n->first_seq);
        say(u, line);
        ui_list_stack(u, n->proc, n->stack, NEW_FRAMES);
    }
    if (d.nnew > NEW_STACKS) {
        snprintf(line, sizeof line, "  ... %zu more stacks: %s in %llu allocation%s", d.nnew - NEW_STACKS,
                 fmt_size(sz, sizeof sz, rest_bytes), (unsigned long long)rest_count, plural(rest_count));
        say(u, line);
    }
    model_diff_free(&d);
    return 0;
}
