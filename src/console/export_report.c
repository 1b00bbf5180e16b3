/* `export FILE.html`: a report format's writer (report/formats.h: the HTML page, with its
 * timeline, flame graph and sites) over what the console's model holds; with a diff on
 * between two marks' snapshots, the page opens on that comparison. */
#include "common/output_file.h"
#include "console.h"
#include "report/formats.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void console_export_report(struct console *c, const struct report_format *format, const char *path)
{
    struct culeak_output out;
    if (culeak_output_open(&out, path) != 0) {
        ui_message(&c->u, 1, "cannot write %s: %s", path, strerror(errno));
        return;
    }
    FILE *f = out.f;
    struct report_options o;
    report_options_init(&o);
    if (c->u.diff_active && c->u.diff_b[0]) { /* the page finds A and B among its marks */
        o.what = REPORT_DIFF;
        o.diff_a = c->u.diff_a;
        o.diff_b = c->u.diff_b;
    }
    o.supp = c->opt.supp; /* what they suppress is no leak on the page either */
    int rc = format->write(f, c->u.m, &o, NULL);
    errno = 0;
    int err = culeak_output_close(&out, rc != 0) != 0 ? errno : 0;
    if (rc != 0 || err)
        ui_message(&c->u, 1, "cannot write %s%s%s", path, err ? ": " : "", err ? strerror(err) : "");
    else
        ui_message(&c->u, 0, "wrote %s (timeline, flame graph, sites; open it in a browser)", path);
}
