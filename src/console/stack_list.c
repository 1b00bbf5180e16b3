/* A stack written to the output pane (the diff's new allocations, the growth suspects):
 * folded as the stack pane and the reports fold it (stack_fold.h), its first lines only;
 * `show SITE` lists it all. */
#include "report/stack_fold.h"
#include "ui.h"

#include <stdio.h>

#define LIST_FRAMES 256 /* frames read per stack to fold the looked-through ones */

void ui_list_stack(struct ui *u, int proc, uint64_t stack, size_t max_lines)
{
    struct model_frame f[LIST_FRAMES];
    struct stack_line l[LIST_FRAMES];
    char line[1400], fl[1300];
    size_t depth = model_stack_frames(u->m, proc, stack, f, LIST_FRAMES);
    size_t got = depth < LIST_FRAMES ? depth : LIST_FRAMES;
    size_t nl = stack_lines(f, got, 1, l);
    for (size_t k = 0; k < nl && k < max_lines; k++) {
        snprintf(line, sizeof line, "  %s", stack_line_text(&l[k], f, fl, sizeof fl));
        outbuf_add_line(&u->out, line);
    }
    size_t next = nl > max_lines ? l[max_lines].frame : got;
    if (next < depth) {
        snprintf(line, sizeof line, "    ... %zu more frames", depth - next);
        outbuf_add_line(&u->out, line);
    }
}
