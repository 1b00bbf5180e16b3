/* `compare FILE`: the run of FILE (the baseline) against what the console shows, as
 * `culeak report --baseline FILE` prints it, into the output pane. */
#include "command_handlers.h"
#include "report/compare.h"
#include "console.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cmd_compare(struct console *c, int argc, char **argv)
{
    if (argc < 2) {
        ui_message(&c->u, 1, "usage: compare FILE (a recording of the run to compare with)");
        return;
    }
    struct model *base = model_new(NULL);
    char err[512];
    int r = base ? model_load_file(base, argv[1], err, sizeof err) : -1;
    if (!base || r < 0 || model_process_count(base) == 0) {
        ui_message(&c->u, 1, "compare: %s", !base ? "out of memory" : r < 0 ? err : "no process in the recording");
        model_free(base);
        return;
    }
    struct report_options o;
    console_report_options(c, &o);
    struct compare cmp;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    const char *names[2] = {argv[1], "this run"};
    if (!f || compare_runs(base, c->u.m, &o, &cmp) != 0) {
        ui_message(&c->u, 1, "compare: out of memory");
        if (f)
            fclose(f);
        free(text);
        model_free(base);
        return;
    }
    int rc = compare_text(f, &cmp, &o, names);
    fclose(f);
    if (rc == 0 && text) {
        outbuf_add_line(&c->u.out, "[culeak] ==== compared with the baseline ====");
        for (char *p = text; *p;) {
            char *nl = strchr(p, '\n');
            if (nl)
                *nl = 0;
            outbuf_add_line(&c->u.out, p);
            if (!nl)
                break;
            p = nl + 1;
        }
        c->u.out_scroll = 0;
        ui_message(&c->u, 0, "compared with %s: %zu call sites new, %zu gone, %zu grown, %zu shrunk (output pane)",
                   argv[1], cmp.changes[COMPARE_NEW], cmp.changes[COMPARE_GONE], cmp.changes[COMPARE_GROWN],
                   cmp.changes[COMPARE_SHRUNK]);
    } else {
        ui_message(&c->u, 1, "compare: the comparison could not be written");
    }
    compare_free(&cmp);
    free(text);
    model_free(base);
}
