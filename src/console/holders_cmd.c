/* Who holds a site's blocks, asked of the running job: `holders SITE` sends each process
 * that has live blocks of the site a HOLDERS command naming them (culeak-stream(5)); the
 * shim has the job's interpreter walk at its next safe point, and the answer (HOLDER
 * records, ended by one of address 0) shows in the stack pane under the site and in the
 * output pane when it comes. `set holders on` has every process walk at each mark. */
#include "console.h"
#include "command_handlers.h"
#include "common/wire.h"
#include "fmt.h"

#include <stdio.h>
#include <string.h>

#define ASK_BLOCKS 64 /* the shim keeps this many ranges of a question */

enum { HOLDERS_ASK = 0, HOLDERS_MARKS_ON = 1, HOLDERS_MARKS_OFF = 2 };

/* The reader of a process still running, or NULL. */
static struct ring_reader *running(struct console *c, int proc)
{
    const struct model_process *p = model_process(c->u.m, proc);
    if (!p || p->ended || p->exited || (size_t)proc >= c->nby_proc)
        return NULL;
    struct ring_reader *k = c->by_proc[proc];
    return k && k->ring ? k : NULL;
}

/* Asks process proc about its live blocks of the row: 1 asked, 0 none live, -1 gone. */
static int ask(struct console *c, int proc, uint32_t row)
{
    uint64_t v[2 + 2 * ASK_BLOCKS], addr[ASK_BLOCKS], size[ASK_BLOCKS];
    size_t n = model_row_blocks(c->u.m, c->u.group, row, proc, addr, size, ASK_BLOCKS);
    if (n == 0)
        return 0;
    struct ring_reader *k = running(c, proc);
    if (!k)
        return -1;
    if (n > ASK_BLOCKS)
        n = ASK_BLOCKS;
    v[0] = HOLDERS_ASK;
    v[1] = n;
    for (size_t i = 0; i < n; i++) {
        v[2 + 2 * i] = addr[i];
        v[3 + 2 * i] = size[i];
    }
    return ring_reader_send(k, CULEAK_CMD_HOLDERS, v, 2 + 2 * n) == 0 ? 1 : -1;
}

void cmd_holders(struct console *c, int argc, char **argv)
{
    struct row st;
    if (argc != 2) {
        ui_message(&c->u, 1, "usage: holders SITE (a table id, a function name or file:line)");
        return;
    }
    if (!c->live) {
        ui_message(&c->u, 1, "holders asks a running job; a recording says who held its blocks under each site "
                             "(the stack pane), as far as it was asked then");
        return;
    }
    if (ui_find_site(&c->u, argv[1], &st) != 0) {
        ui_message(&c->u, 1, "no site matches '%s'", argv[1]);
        return;
    }
    c->u.sel_site = st.id;
    c->u.sel_valid = 1;
    int asked = 0, gone = 0;
    for (int proc = 0; proc < model_process_count(c->u.m); proc++) {
        int r = ask(c, proc, st.id);
        asked += r > 0;
        gone += r < 0;
    }
    c->u.holders_row = st.id;
    c->u.holders_waiting = asked;
    if (!asked) {
        ui_message(&c->u, 1, gone ? "holders: the processes with live blocks of site #%u have ended"
                                  : "holders: site #%u has no live blocks to ask about",
                   ui_site_id(st.id));
        return;
    }
    ui_message(&c->u, 0, "holders of site #%u asked of %d process%s; the answer shows under the site when the job's "
                         "interpreter next runs Python%s",
               ui_site_id(st.id), asked, asked == 1 ? "" : "es",
               c->u.state == JOB_PAUSED ? " (after continue, if the paused thread is its main thread)" : "");
    c->dirty = 1;
}

/* The answer as lines of the output pane, under a title. */
static void say_answer(struct console *c, const struct model_process *p, const struct model_holder_walk *w)
{
    struct model_holders h[8];
    /* the walk looked at the blocks asked about only: all it said is of them (a pool's
     * segments asked about: the blocks in them) */
    size_t n = model_row_holders_walk(c->u.m, MODEL_GROUP_COUNT, 0, w->proc, w->walk, h, 8);
    char line[1400], b[32];
    snprintf(line, sizeof line, "[culeak] pid %llu: who holds the blocks of site #%u:", (unsigned long long)p->pid,
             ui_site_id(c->u.holders_row));
    outbuf_add_line(&c->u.out, line);
    for (size_t i = 0; i < n; i++) {
        snprintf(line, sizeof line, "  HELD BY %s: %llu block%s, %s", h[i].words, (unsigned long long)h[i].blocks,
                 plural(h[i].blocks), fmt_size(b, sizeof b, h[i].bytes));
        outbuf_add_line(&c->u.out, line);
    }
    if (!n)
        outbuf_add_line(&c->u.out, "  no Python object of a framework lies in them (no tensor, no array)");
}

void console_o_holders(void *ctx, int proc, const struct model_holder_walk *w)
{
    struct console *c = ctx;
    c->dirty = 1;
    if (strcmp(w->kind, "ask") != 0 || c->u.holders_waiting <= 0)
        return;
    c->u.holders_waiting--;
    const struct model_process *p = model_process(c->u.m, proc);
    if (!p)
        return;
    if (w->why[0]) {
        ui_message(&c->u, 1, "holders: pid %llu: %s", (unsigned long long)p->pid, w->why);
        return;
    }
    say_answer(c, p, w);
    ui_message(&c->u, 0, "holders of site #%u: pid %llu answered (stack pane, output pane)",
               ui_site_id(c->u.holders_row), (unsigned long long)p->pid);
}

static void send_marks(struct console *c, struct ring_reader *k)
{
    uint64_t v = c->holders_marks ? HOLDERS_MARKS_ON : HOLDERS_MARKS_OFF;
    ring_reader_send(k, CULEAK_CMD_HOLDERS, &v, 1);
}

void console_holders_hello(struct console *c, struct ring_reader *k)
{
    if (c->holders_marks) /* off is each process's start, unless --holders said on */
        send_marks(c, k);
}

void console_set_holders(struct console *c, const char *on_off)
{
    int on = !strcmp(on_off, "on") ? 1 : !strcmp(on_off, "off") ? 0 : -1;
    if (on < 0) {
        ui_message(&c->u, 1, "usage: set holders on|off");
        return;
    }
    c->holders_marks = on;
    for (size_t i = 0; i < c->nreaders; i++)
        if (c->readers[i]->ring)
            send_marks(c, c->readers[i]);
    ui_message(&c->u, 0, on ? "holders on: at each mark, the job's Python side finds who holds its tensors"
                            : "holders off: no walk at marks");
}
