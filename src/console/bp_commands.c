/* Breakpoint commands, gdb's `commands N ... end`: console commands a breakpoint runs when
 * it pauses the job (snapshot, diff, continue), so that it can log and go on unattended. */
#include "console.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void console_commands_begin(struct console *c, int bp_id)
{
    free(c->cmds_text);
    c->cmds_text = NULL;
    c->cmds_for = bp_id;
    c->u.prompt = ">";
}

/* Adds a line to the commands being taken: 0, or -1 out of memory. */
static int append(struct console *c, const char *line)
{
    size_t had = c->cmds_text ? strlen(c->cmds_text) : 0, n = strlen(line);
    char *t = realloc(c->cmds_text, had + n + 2);
    if (!t)
        return -1;
    if (had)
        t[had++] = '\n';
    memcpy(t + had, line, n + 1);
    c->cmds_text = t;
    return 0;
}

int console_commands_take(struct console *c, const char *line)
{
    if (!c->cmds_for)
        return 0;
    const char *a = line + strspn(line, " \t");
    size_t n = strlen(a);
    while (n && (a[n - 1] == ' ' || a[n - 1] == '\t' || a[n - 1] == '\r'))
        n--;
    char echo[1100];
    snprintf(echo, sizeof echo, ">%.*s", (int)(n < 1000 ? n : 1000), a);
    outbuf_add_line(&c->u.out, echo);
    int id = c->cmds_for;
    if (n == 3 && strncmp(a, "end", 3) == 0) {
        c->cmds_for = 0;
        c->u.prompt = "(culeak) ";
        struct breakpoint *b = bp_find(&c->u.bps, id);
        if (!b)
            ui_message(&c->u, 1, "breakpoint %d was deleted meanwhile: its commands are dropped", id);
        else if (bp_set_commands(b, c->cmds_text) != 0)
            ui_message(&c->u, 1, "out of memory");
        else if (b->commands)
            ui_message(&c->u, 0, "breakpoint %d runs these commands when it pauses the job", id);
        else
            ui_message(&c->u, 0, "breakpoint %d has no commands now", id);
        free(c->cmds_text);
        c->cmds_text = NULL;
        return 1;
    }
    if (!n || *a == '#')
        return 1;
    char w[16];
    snprintf(w, sizeof w, "%.*s", (int)strcspn(a, " \t"), a);
    if (!strcmp(w, "commands")) { /* as gdb: no commands inside commands */
        ui_message(&c->u, 1, "commands cannot be given inside commands (end closes the list)");
        return 1;
    }
    char one[1024];
    snprintf(one, sizeof one, "%.*s", (int)n, a);
    if (append(c, one) != 0)
        ui_message(&c->u, 1, "out of memory");
    else
        ui_message(&c->u, 0, "commands for breakpoint %d, one a line; end to finish", id);
    return 1;
}

void console_commands_due(struct console *c, const struct breakpoint *b)
{
    free(c->cmds_due);
    c->cmds_due = b->commands ? strdup(b->commands) : NULL;
    c->cmds_due_bp = b->id;
}

/* Runs from the loop, outside the model's callbacks: a command here may take a snapshot,
 * resume the job (whose next pause makes commands due again, run on a later turn: never
 * from inside these), or delete the breakpoint (the commands were copied when it paused).
 * They wait while a question waits for its y or n, or `commands` takes lines: either would
 * take them for its own. */
void console_commands_run(struct console *c)
{
    char *text = c->cmds_due;
    if (!text || c->confirm_yes || c->cmds_for)
        return;
    c->cmds_due = NULL;
    char line[600];
    snprintf(line, sizeof line, "[culeak] breakpoint %d paused the job: its commands run", c->cmds_due_bp);
    outbuf_add_line(&c->u.out, line);
    uint64_t held = c->u.held.seq;
    for (char *p = text; *p && !c->quit;) {
        size_t n = strcspn(p, "\n");
        char one[1024];
        snprintf(one, sizeof one, "%.*s", (int)(n < 1000 ? n : 1000), p);
        p += n + (p[n] == '\n');
        console_exec(c, one);
        /* gdb's rule: a command that resumes the job ends the list */
        if (c->u.state != JOB_PAUSED || c->u.held.seq != held || c->confirm_yes)
            break;
    }
    free(text);
    c->dirty = 1;
}
