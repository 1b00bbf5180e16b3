/* The help view: every command with its usage and description, then the keys, wrapped to
 * the screen's width and scrolled like a pager; it covers the table, stack and output
 * panes until closed. `help COMMAND` shows the commands that COMMAND names (a unique
 * prefix, or every command it is a prefix of). */
#include "cmdline.h"
#include "screen.h"
#include "ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct help_lines {
    struct {
        char *text;
        uint8_t attr;
    } *v;
    size_t n, cap;
};

static void add(struct help_lines *h, const char *text, size_t len, uint8_t attr)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 64;
        void *v = realloc(h->v, cap * sizeof *h->v);
        if (!v)
            return;
        h->v = v;
        h->cap = cap;
    }
    char *t = strndup(text, len);
    if (!t)
        return;
    h->v[h->n].text = t;
    h->v[h->n].attr = attr;
    h->n++;
}

/* Wraps one paragraph to width w: its first line at `indent` columns, continuation lines
 * at `indent` plus the paragraph's own leading blanks. Breaks at blanks; a word longer
 * than a line is cut. */
static void add_wrapped(struct help_lines *h, const char *p, size_t len, int indent, int w, uint8_t attr)
{
    int lead = 0;
    while ((size_t)lead < len && p[lead] == ' ')
        lead++;
    char buf[1024];
    int first = 1;
    size_t i = (size_t)lead;
    while (i < len || first) {
        int pad = indent + lead + (first ? 0 : 2);
        int room = w - pad;
        if (room < 10)
            room = 10;
        size_t take = len - i;
        if (take > (size_t)room) {
            take = (size_t)room;
            size_t b = take;
            while (b > 0 && p[i + b] != ' ')
                b--;
            if (b > 0)
                take = b;
        }
        int n = snprintf(buf, sizeof buf, "%*s%.*s", pad, "", (int)take, p + i);
        add(h, buf, n > 0 && (size_t)n < sizeof buf ? (size_t)n : strlen(buf), attr);
        i += take;
        while (i < len && p[i] == ' ')
            i++;
        first = 0;
    }
}

/* A help text's lines are joined into paragraphs and wrapped to the width; a line that
 * starts with a blank (a list item), and the line after one, start paragraphs of their
 * own, except a line indented deeper than its item, which goes on with it. */
static void add_text(struct help_lines *h, const char *text, int indent, int w, uint8_t attr)
{
    char para[2048];
    size_t n = 0;
    int prev_item = 0;
    size_t item_lead = 0;
    while (*text) {
        const char *nl = strchr(text, '\n');
        size_t len = nl ? (size_t)(nl - text) : strlen(text);
        size_t lead = strspn(text, " ");
        if (prev_item && lead > item_lead + 2 && lead < len) { /* an item's own continuation */
            text += lead;
            len -= lead;
        } else {
            int item = lead > 0;
            if (n && (item || prev_item)) {
                add_wrapped(h, para, n, indent, w, attr);
                n = 0;
            }
            prev_item = item;
            item_lead = lead;
        }
        if (n + len + 2 < sizeof para) {
            if (n)
                para[n++] = ' ';
            memcpy(para + n, text, len);
            n += len;
        }
        text += len + (nl != NULL);
    }
    if (n)
        add_wrapped(h, para, n, indent, w, attr);
}

static const char *const keys[][2] = {
    {"Up/Down PgUp/PgDn Home/End", "move in the table; after Shift-Tab, scroll the output pane"},
    {"< > or F6, I", "sort by the column before or after, or the other way (on an empty prompt), as htop"},
    {"F3 F5 F9 F10", "search the output (/), group the next way, kill, quit (the key bar on the last line)"},
    {"mouse", "click a column title to sort, a row to select it (again: show), the key bar; the wheel "
              "scrolls (set mouse off: the terminal's)"},
    {"Tab", "complete commands, site ids, snapshot names and fields"},
    {"Ctrl-P/Ctrl-N", "recall earlier commands (Up/Down too, once the prompt holds text)"},
    {"Ctrl-Z", "nothing: a stopped job would wait on a console that cannot resume it"},
    {"Ctrl-C", "clear the prompt (the job is interrupted only while it has the keyboard)"},
    {"Ctrl-]", "hand the keyboard to the job (its standard input), and back (input)"},
    {"Ctrl-L", "redraw the screen"},
    {"? or F1", "this help (? on an empty prompt); q, Esc or F1 closes it, typing a command too"},
};

/* Whether command i is one that the topic names. */
static int topic_names(const char *topic, size_t i)
{
    if (!topic || !*topic)
        return 1;
    int k = cmd_lookup(topic);
    if (k >= 0)
        return (size_t)k == i;
    return strncmp(cmd_specs[i].name, topic, strlen(topic)) == 0; /* ambiguous: each one */
}

static void build(const struct ui *u, int w, struct help_lines *h)
{
    const char *topic = u->help_topic;
    for (size_t i = 0; i < cmd_nspecs; i++) {
        if (!topic_names(topic, i))
            continue;
        char usage[160];
        snprintf(usage, sizeof usage, "%s%s%s%s", cmd_specs[i].usage, cmd_specs[i].alias ? "   (short: " : "",
                 cmd_specs[i].alias ? cmd_specs[i].alias : "", cmd_specs[i].alias ? ")" : "");
        add_text(h, usage, 1, w, AT_BOLD);
        add_text(h, cmd_specs[i].help, 5, w, AT_NORMAL);
    }
    if (topic[0])
        return;
    add(h, "", 0, AT_NORMAL);
    add(h, " Keys", 5, AT_BOLD);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        char line[300];
        snprintf(line, sizeof line, "%-26s %s", keys[i][0], keys[i][1]);
        add_wrapped(h, line, strlen(line), 1, w, AT_NORMAL);
    }
}

static void lines_free(struct help_lines *h)
{
    for (size_t i = 0; i < h->n; i++)
        free(h->v[i].text);
    free(h->v);
}

int help_topic_known(const char *topic)
{
    for (size_t i = 0; i < cmd_nspecs; i++)
        if (topic_names(topic, i))
            return 1;
    return 0;
}

static void render(struct ui *u, struct grid *g, struct rect r)
{
    grid_fill(g, r, ' ', AT_NORMAL);
    struct help_lines h = {0};
    build(u, r.w, &h);
    int rows = r.h - 1;
    if (rows < 1) {
        lines_free(&h);
        return;
    }
    size_t max_top = h.n > (size_t)rows ? h.n - (size_t)rows : 0;
    if (u->help_top > max_top)
        u->help_top = max_top;
    grid_fill(g, (struct rect){r.y, r.x, 1, r.w}, ' ', AT_TITLE);
    grid_putf(g, r.y, r.x, r.w, AT_TITLE, " help%s%s  lines %zu-%zu of %zu  (Up/Down PgUp/PgDn: scroll; q, Esc: close) ",
              u->help_topic[0] ? " " : "", u->help_topic, h.n ? u->help_top + 1 : 0,
              u->help_top + (size_t)rows < h.n ? u->help_top + (size_t)rows : h.n, h.n);
    for (int i = 0; i < rows && u->help_top + (size_t)i < h.n; i++)
        grid_put(g, r.y + 1 + i, r.x, r.w, h.v[u->help_top + (size_t)i].text, h.v[u->help_top + (size_t)i].attr);
    lines_free(&h);
}

static int key(struct ui *u, int k, struct rect r)
{
    size_t page = r.h > 2 ? (size_t)r.h - 2 : 1;
    switch (k) {
    case UK_UP: if (u->help_top) u->help_top--; break;
    case UK_DOWN: u->help_top++; break; /* the render clamps */
    case UK_PGUP: u->help_top = u->help_top > page ? u->help_top - page : 0; break;
    case UK_PGDN: u->help_top += page; break;
    case UK_HOME: u->help_top = 0; break;
    case UK_END: u->help_top = (size_t)-1 / 2; break;
    default: return 0;
    }
    return 1;
}

const struct view help_view = {"help", render, key};

void ui_help_open(struct ui *u, const char *topic)
{
    u->help_open = 1;
    u->help_top = 0;
    snprintf(u->help_topic, sizeof u->help_topic, "%s", topic ? topic : "");
}

int help_key(struct ui *u, int sk, const char *utf8, int prompt_empty)
{
    if (sk == SK_HELP) {
        if (u->help_open)
            u->help_open = 0;
        else
            ui_help_open(u, NULL);
        return 1;
    }
    if (!u->help_open)
        return sk == SK_CHAR && prompt_empty && strcmp(utf8, "?") == 0 ? (ui_help_open(u, NULL), 1) : 0;
    if (sk == SK_ESC || (sk == SK_CHAR && prompt_empty && strcmp(utf8, "q") == 0)) {
        u->help_open = 0;
        return 1;
    }
    if (sk == SK_CHAR)
        u->help_open = 0; /* typing a command: back to the panes */
    return 0;
}
