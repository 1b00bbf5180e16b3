/* Keys written to the job's terminal as a terminal would send them (job_input.h). */
#include "job_input.h"
#include "command_handlers.h"
#include "console.h"
#include "screen.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

static int can_type(struct console *c) { return c->live && !c->job.exited && c->job.master >= 0; }

static void give(struct console *c)
{
    c->u.keyboard_job = 1;
    c->u.help_open = 0;
    ui_message(&c->u, 0, "the keyboard is the job's: what you type goes to its standard input; Ctrl-] returns");
}

void job_input_end(struct console *c)
{
    if (!c->u.keyboard_job)
        return;
    c->u.keyboard_job = 0;
    ui_message(&c->u, 0, "the job ended: the keyboard is culeak's again");
}

void cmd_input(struct console *c, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    if (!can_type(c)) {
        ui_message(&c->u, 1, "there is no running job to type into");
        return;
    }
    give(c);
}

static void send_bytes(struct console *c, const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(c->job.master, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) { /* the job reads nothing and its terminal's buffer is full */
            ui_message(&c->u, 1, "the job is not reading its input: typed keys dropped");
            return;
        }
        s += w;
        n -= (size_t)w;
    }
}

int job_input_key(struct console *c, int sk, const char *utf8, int nav)
{
    if (sk == SK_CHAR && (unsigned char)utf8[0] == KEY_HANDBACK && !utf8[1]) {
        if (c->u.keyboard_job) {
            c->u.keyboard_job = 0;
            ui_message(&c->u, 0, "the keyboard is culeak's again");
        } else if (can_type(c)) {
            give(c);
        } else {
            ui_message(&c->u, 1, "there is no running job to type into");
        }
        return 1;
    }
    if (sk == SK_CHAR && utf8[0] == 0x1a && !utf8[1]) { /* Ctrl-Z */
        ui_message(&c->u, 0, "Ctrl-Z suspends neither culeak nor the job here (a stopped job would wait on a "
                   "console that cannot resume it): kill stops the job, quit or detach leaves");
        return 1;
    }
    if (!c->u.keyboard_job)
        return 0;
    if (!can_type(c)) {
        job_input_end(c);
        return 0;
    }
    static const char *const nav_seq[] = {[UK_UP] = "\x1b[A", [UK_DOWN] = "\x1b[B", [UK_PGUP] = "\x1b[5~",
                                          [UK_PGDN] = "\x1b[6~", [UK_HOME] = "\x1b[H", [UK_END] = "\x1b[F"};
    const char *seq = NULL;
    switch (sk) {
    case SK_CHAR: seq = utf8; break;
    case SK_NAV: seq = nav >= UK_UP && nav <= UK_END ? nav_seq[nav] : NULL; break;
    case SK_LEFT: seq = "\x1b[D"; break;
    case SK_RIGHT: seq = "\x1b[C"; break;
    case SK_BACKSPACE: seq = "\x7f"; break;
    case SK_DELETE: seq = "\x1b[3~"; break;
    case SK_ESC: seq = "\x1b"; break;
    case SK_INTR: seq = "\x03"; break; /* the job's terminal makes it SIGINT, as in a terminal */
    default: return 0;                 /* resize, redraw, focus, help: the console's */
    }
    if (seq)
        send_bytes(c, seq, strlen(seq));
    return 1;
}
