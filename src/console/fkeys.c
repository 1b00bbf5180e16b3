/* htop's keys and the mouse in the console: each does what a command does, through it. */
#include "cmdline.h"
#include "console.h"
#include "prompt.h"
#include "screen.h"

#include <stdio.h>
#include <string.h>

/* The width of the table on the screen now. */
static int table_width(const struct console *c)
{
    struct rect tab;
    ui_table_rect(&c->u, &c->lay, &tab);
    return tab.w;
}

void console_fkey(struct console *c, int n)
{
    char cmd[64];
    switch (n) {
    case 1:
        help_key(&c->u, SK_HELP, "", prompt_empty());
        return;
    case 3: /* the search line: /TEXT then Enter; / and Enter alone finds the next older */
        if (prompt_empty())
            prompt_feed("/");
        ui_message(&c->u, 0, "search the output pane: type the text, then Enter (/ and Enter: the next older)");
        return;
    case 5: /* the next grouping, as htop's F5 turns the tree on and off */
        snprintf(cmd, sizeof cmd, "group %s", model_group_name((enum model_group)((c->u.group + 1) % MODEL_GROUP_COUNT)));
        break;
    case 6:
        ui_sort_key(&c->u, table_width(c), '>', cmd, sizeof cmd);
        break;
    case 9:
        snprintf(cmd, sizeof cmd, "kill");
        break;
    case 10:
        snprintf(cmd, sizeof cmd, "quit");
        break;
    default:
        return;
    }
    console_exec(c, cmd);
}

int console_sort_key(struct console *c, const char *typed)
{
    char cmd[64];
    if (!typed[0] || typed[1] || !prompt_empty() || c->confirm_yes || c->cmds_for || c->u.help_open ||
        !ui_sort_key(&c->u, table_width(c), typed[0], cmd, sizeof cmd))
        return 0;
    console_exec(c, cmd);
    return 1;
}

void console_mouse(struct console *c, int y, int x, int button)
{
    char cmd[64];
    int fkey = 0;
    switch (ui_mouse(&c->u, &c->lay, y, x, button, cmd, sizeof cmd, &fkey)) {
    case UM_COMMAND:
        console_exec(c, cmd);
        break;
    case UM_FKEY:
        console_fkey(c, fkey);
        break;
    default:
        break;
    }
}
