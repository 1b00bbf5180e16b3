/* Commands of gdb's breakpoints and settings (gdb_cmds.h). */
#include "gdb_cmds.h"
#include "command_handlers.h"
#include "console.h"
#include "fmt.h"

#include <stdio.h>
#include <string.h>

int cmd_bp_number(struct console *c, const char *word, int *id)
{
    uint64_t v = 0;
    int last = strcmp(word, "$bpnum") == 0;
    if (last)
        v = (uint64_t)c->u.bps.next_id;
    if ((!last && parse_u64(word, &v) != 0) || v > 1000000000 || !bp_find(&c->u.bps, (int)v)) {
        ui_message(&c->u, 1, "no breakpoint %s (info breakpoints lists them)", word);
        return -1;
    }
    *id = (int)v;
    return 0;
}

void cmd_condition(struct console *c, int argc, char **argv)
{
    int id;
    if (argc < 2) {
        ui_message(&c->u, 1, "usage: condition N [CONDITION] (live > SIZE, grows SIZE, count > N; none: any allocation)");
        return;
    }
    if (cmd_bp_number(c, argv[1], &id) != 0)
        return;
    char text[512] = "", err[256];
    size_t n = 0;
    for (int i = 2; i < argc && n < sizeof text; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%s", i > 2 ? " " : "", argv[i]);
    struct breakpoint *b = bp_find(&c->u.bps, id);
    struct bp_spec spec = b->spec;
    if (bp_parse_cond(text, &spec, err, sizeof err) != 0) {
        ui_message(&c->u, 1, "%s", err);
        return;
    }
    b->spec.cond = spec.cond;
    b->spec.value = spec.value;
    uint64_t count;
    ui_bp_live(&c->u, b, &b->base, &count); /* grows SIZE counts from now, as when set */
    b->grown = 0;
    char cond[96];
    if (spec.cond == BP_ANY)
        ui_message(&c->u, 0, "breakpoint %d now unconditional: it pauses at any allocation of %s", id, b->what);
    else
        ui_message(&c->u, 0, "breakpoint %d pauses when %s", id, bp_cond_describe(cond, sizeof cond, spec.cond,
                                                                                  spec.value));
}

void cmd_ignore(struct console *c, int argc, char **argv)
{
    int id;
    uint64_t count;
    if (argc != 3) {
        ui_message(&c->u, 1, "usage: ignore N COUNT");
        return;
    }
    if (cmd_bp_number(c, argv[1], &id) != 0)
        return;
    if (parse_u64(argv[2], &count) != 0) {
        ui_message(&c->u, 1, "ignore: bad count '%s'", argv[2]);
        return;
    }
    bp_find(&c->u.bps, id)->ignore = count;
    if (!count)
        ui_message(&c->u, 0, "will stop next time breakpoint %d is reached", id);
    else
        ui_message(&c->u, 0, "will ignore next %llu crossing%s of breakpoint %d", (unsigned long long)count,
                   plural(count), id);
}

void cmd_commands(struct console *c, int argc, char **argv)
{
    int id = c->u.bps.next_id; /* as gdb: the breakpoint set last */
    if (argc > 2) {
        ui_message(&c->u, 1, "usage: commands [N], then one command a line, then end");
        return;
    }
    if (argc == 2 ? cmd_bp_number(c, argv[1], &id) != 0 : !bp_find(&c->u.bps, id)) {
        if (argc < 2)
            ui_message(&c->u, 1, "no breakpoint to give commands to (break SITE sets one)");
        return;
    }
    console_commands_begin(c, id);
    outbuf_add_line(&c->u.out, "Type commands for when the breakpoint pauses the job, one per line.");
    outbuf_add_line(&c->u.out, "End with a line saying just \"end\".");
    ui_message(&c->u, 0, "commands for breakpoint %d, one a line; end to finish", id);
}

static int on_off(const char *w) { return !strcmp(w, "on") ? 1 : !strcmp(w, "off") ? 0 : -1; }

void cmd_set(struct console *c, int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "mouse") && on_off(argv[2]) >= 0) {
        c->u.mouse_off = !on_off(argv[2]);
        ui_message(&c->u, 0, c->u.mouse_off ? "mouse off: the terminal selects text again"
                                            : "mouse on: click a column title to sort, a row to select it, the "
                                              "wheel scrolls");
        return;
    }
    if (argc >= 3 && argc <= 4 && !strcmp(argv[1], "auto-load") && !strcmp(argv[2], "safe-path")) {
        snprintf(c->safe_path, sizeof c->safe_path, "%s", argc == 4 ? argv[3] : "");
        ui_message(&c->u, 0, "auto-load safe-path: %s", c->safe_path[0] ? c->safe_path : "(none: ./.culeakinit "
                                                                                           "is never read)");
        return;
    }
    if (argc == 3 && !strcmp(argv[1], "holders")) {
        console_set_holders(c, argv[2]);
        return;
    }
    if (argc == 3 && !strcmp(argv[1], "metrics")) {
        console_set_metrics(c, argv[2]);
        return;
    }
    ui_message(&c->u, 1, "usage: set mouse on|off | set auto-load safe-path DIR[:DIR...] | set metrics HOST:PORT|off | "
               "set holders on|off (now: mouse %s, safe-path %s, holders %s)", c->u.mouse_off ? "off" : "on",
               c->safe_path[0] ? c->safe_path : "(none)", c->holders_marks ? "on" : "off");
}
