/* Searching the output pane. */
#include "command_handlers.h"
#include "cmdline.h"
#include "console.h"

#include <stdio.h>
#include <string.h>

static int is_search_echo(const char *line)
{
    char word[32] = "";
    if (strncmp(line, "(culeak) ", 9) != 0 || sscanf(line + 9, "%31s", word) != 1)
        return 0;
    int i = cmd_lookup(word);
    return i >= 0 && strcmp(cmd_specs[i].name, "search") == 0;
}

void cmd_search(struct console *c, int argc, char **argv)
{
    struct ui *u = &c->u;
    size_t total = outbuf_lines(&u->out), before = total;
    if (argc > 1) {
        size_t n = 0;
        u->out_search[0] = 0;
        for (int i = 1; i < argc && n + 1 < sizeof u->out_search; i++) {
            int w = snprintf(u->out_search + n, sizeof u->out_search - n, "%s%s", i > 1 ? " " : "", argv[i]);
            if (w < 0)
                break;
            n += (size_t)w;
        }
        if (n >= sizeof u->out_search)
            n = sizeof u->out_search - 1;
    } else if (!u->out_search[0]) {
        ui_message(u, 1, "usage: search TEXT (then search alone for the next older match)");
        return;
    } else if (u->out_hit > u->out.dropped) { /* again: older than the last match */
        before = (size_t)(u->out_hit - 1 - u->out.dropped);
    }
    long hit;
    /* the console's echo of a search command is no match */
    while ((hit = outbuf_search(&u->out, u->out_search, before)) >= 0 &&
           is_search_echo(outbuf_line(&u->out, (size_t)hit)))
        before = (size_t)hit;
    if (hit < 0) {
        ui_message(u, 1, "%s'%s' is not in the output%s", argc > 1 ? "" : "no more: ", u->out_search,
                   argc > 1 ? "" : " above the last match");
        return;
    }
    u->out_hit = u->out.dropped + (uint64_t)hit + 1;
    u->out_scroll = total - (size_t)hit - 1; /* the match is the pane's last row */
    u->out_seen = u->out.dropped + total;     /* counted from the rows as they are now */
    ui_message(u, 0, "'%s' at output line %ld of %zu (search: the next older one; End in the output pane: newest)",
               u->out_search, hit + 1, total);
}
