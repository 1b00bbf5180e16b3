/* GNU readline's callback interface inside the console: bytes come from the poll loop,
 * the line is drawn by the prompt view, nothing touches the terminal directly. */
#include "prompt.h"
#include "cmdline.h"
#include "console.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <readline/history.h>
#include <readline/readline.h>

static struct console *con;
static unsigned char queue[4096];
static size_t qhead, qtail;
static FILE *devnull;
static char history_path[PATH_MAX];

static int getc_fn(FILE *f)
{
    (void)f;
    if (qhead == qtail)
        return EOF;
    return queue[qhead++];
}

/* readline asks whether more input is queued before reading ahead: only our queue counts */
static int input_available(void) { return qhead < qtail; }

static void noop_prep(int meta) { (void)meta; }
static void noop_deprep(void) {}

static void redisplay(void) { con->dirty = 1; }

static void on_line(char *line)
{
    if (!line) { /* Ctrl-D on an empty line */
        ui_message(&con->u, 0, "type quit to leave the console");
        con->dirty = 1;
        return;
    }
    if (*line) {
        HIST_ENTRY *last = history_length > 0 ? history_get(history_base + history_length - 1) : NULL;
        if (!last || strcmp(last->line, line) != 0)
            add_history(line);
    }
    con->u.completions[0] = 0;
    console_exec(con, line);
    free(line);
    con->dirty = 1;
}

/* ---- completion ---- */

static char *gen_from(const char *text, int state, const char *(*item)(size_t i))
{
    static size_t i;
    if (!state)
        i = 0;
    size_t n = strlen(text);
    const char *s;
    while ((s = item(i++)))
        if (strncmp(s, text, n) == 0)
            return strdup(s);
    return NULL;
}

static const char *cmd_item(size_t i) { return i < cmd_nspecs ? cmd_specs[i].name : NULL; }
static const char *sort_item(size_t i) { return i < sort_nfields ? sort_field_names[i] : NULL; }
static const char *group_item(size_t i) { return i < MODEL_GROUP_COUNT ? model_group_name((enum model_group)i) : NULL; }
static const char *snap_item(size_t i)
{
    size_t n = (size_t)model_snapshot_count(con->u.m);
    if (i < n)
        return model_snapshot_name(con->u.m, (int)i);
    return i == n ? "off" : NULL;
}
/* diff's second snapshot: "off" is a first word only */
static const char *snap_only_item(size_t i)
{
    return i < (size_t)model_snapshot_count(con->u.m) ? model_snapshot_name(con->u.m, (int)i) : NULL;
}
static const char *goto_item(size_t i)
{
    static const char *const fixed[] = {"peak", "oom", "end", "start"};
    if (i < 4)
        return fixed[i];
    i -= 4;
    return i < con->tl.nlabels ? con->tl.labels[i] : NULL;
}
static const char *autosnap_item(size_t i)
{
    static const char *const v[] = {"marks", "off", NULL};
    return i < 2 ? v[i] : NULL;
}
static const char *info_item(size_t i)
{
    static const char *const v[] = {"breakpoints", "processes", "snapshots", "marks", NULL};
    return i < 4 ? v[i] : NULL;
}
static const char *set_item(size_t i)
{
    static const char *const v[] = {"mouse", "auto-load", NULL};
    return i < 2 ? v[i] : NULL;
}
static const char *on_off_item(size_t i)
{
    static const char *const v[] = {"on", "off", NULL};
    return i < 2 ? v[i] : NULL;
}
static const char *safe_path_item(size_t i) { return i == 0 ? "safe-path" : NULL; }
static char idbuf[256];
/* A row's function: its text up to " at " or " (" ("grow_step at a.c:12"), or NULL for
 * an unnamed one ("app+0x1200"). */
static const char *row_function(const struct row *r)
{
    if (!r->named || !r->text)
        return NULL;
    size_t n = strcspn(r->text, " ");
    if (!n || n >= sizeof idbuf || memmem(r->text, n, "+0x", 3))
        return NULL;
    memcpy(idbuf, r->text, n);
    idbuf[n] = 0;
    return idbuf;
}
static const char *site_item(size_t i)
{
    /* the visible table's ids, then the sites' function names, as gdb's break completes */
    if (i == 0)
        ui_rows_need(&con->u, 0, con->u.nrows);
    if (i < con->u.nrows) {
        snprintf(idbuf, sizeof idbuf, "%u", ui_site_id(con->u.rows[i].id));
        return idbuf;
    }
    i -= con->u.nrows;
    if (i >= con->u.nrows)
        return NULL;
    const char *f = row_function(&con->u.rows[i]);
    if (f)
        return f;
    snprintf(idbuf, sizeof idbuf, "%u", ui_site_id(con->u.rows[i].id)); /* a duplicate: dropped */
    return idbuf;
}
static const char *proc_item(size_t i)
{
    size_t n = (size_t)model_process_count(con->u.m);
    if (i < n) {
        snprintf(idbuf, sizeof idbuf, "%llu", (unsigned long long)model_process(con->u.m, (int)i)->pid);
        return idbuf;
    }
    return i == n ? "all" : NULL;
}
static const char *bp_item(size_t i)
{
    if (i < con->u.bps.n) {
        snprintf(idbuf, sizeof idbuf, "%d", con->u.bps.v[i].id);
        return idbuf;
    }
    return NULL;
}

static const char *order_item(size_t i)
{
    static const char *const v[] = {"asc", "desc", NULL};
    return i < 2 ? v[i] : NULL;
}

/* Words of the line before position end. */
static int words_before(const char *line, int end)
{
    int n = 0;
    for (int i = 0; i < end && line[i]; i++)
        n += line[i] != ' ' && (i == 0 || line[i - 1] == ' ');
    return n;
}

static const char *(*current_items)(size_t);
static char *gen(const char *text, int state) { return gen_from(text, state, current_items); }

/* save's first word: "breakpoints", then the file names readline would offer */
static char *save_gen(const char *text, int state)
{
    static int files; /* the file name generator's state: 0 until it is asked */
    if (!state) {
        files = 0;
        if (*text && !strncmp("breakpoints", text, strlen(text)))
            return strdup("breakpoints");
    }
    return rl_filename_completion_function(text, files++);
}

static char **complete(const char *text, int start, int end)
{
    (void)end;
    rl_attempted_completion_over = 1;
    char word[64] = "";
    sscanf(rl_line_buffer, "%63s", word);
    if (start == 0 || !strchr(rl_line_buffer, ' ') || (size_t)start <= strspn(rl_line_buffer, " ")) {
        current_items = cmd_item;
    } else {
        int ci = cmd_lookup(word);
        if (ci < 0)
            return NULL;
        /* which argument: the first, but two snapshots for diff, asc|desc after sort's
         * column, and a mark's label of several words for goto */
        int arg = words_before(rl_line_buffer, start);
        enum cmd_arg kind = cmd_specs[ci].arg;
        char first[64] = "";
        sscanf(rl_line_buffer, "%*s %63s", first);
        if (arg > 1 && kind == ARG_SORT && arg == 2) {
            current_items = order_item;
            return rl_completion_matches(text, gen);
        }
        if (kind == ARG_SNAPSHOT && arg == 2) { /* diff A B: no "off" there, nothing after off */
            if (!strcmp(first, "off"))
                return NULL;
            current_items = snap_only_item;
            return rl_completion_matches(text, gen);
        }
        if (!strcmp(cmd_specs[ci].name, "set")) { /* set mouse on|off, set auto-load safe-path */
            current_items = arg == 1 ? set_item : arg == 2 && !strcmp(first, "mouse") ? on_off_item
                          : arg == 2 && !strcmp(first, "auto-load")                  ? safe_path_item
                                                                                     : NULL;
            rl_attempted_completion_over = !(arg == 3 && !strcmp(first, "auto-load")); /* its dirs */
            return current_items ? rl_completion_matches(text, gen) : NULL;
        }
        if (!strcmp(cmd_specs[ci].name, "save") && arg == 1) /* save breakpoints FILE, or save FILE */
            return rl_completion_matches(text, save_gen);
        if (arg > 1 && kind != ARG_GOTO && !(kind == ARG_SNAPSHOT && arg == 2))
            return NULL;
        switch (kind) {
        case ARG_SORT: current_items = sort_item; break;
        case ARG_GROUP: current_items = group_item; break;
        case ARG_SNAPSHOT: current_items = snap_item; break;
        case ARG_GOTO: current_items = goto_item; break;
        case ARG_SITE: current_items = site_item; break;
        case ARG_PROCESS: current_items = proc_item; break;
        case ARG_BREAKPOINT: current_items = bp_item; break;
        case ARG_AUTOSNAP: current_items = autosnap_item; break;
        case ARG_COMMAND: current_items = cmd_item; break;
        case ARG_FILE: rl_attempted_completion_over = 0; return NULL; /* file names */
        default:
            if (strcmp(cmd_specs[ci].name, "info") == 0) {
                current_items = info_item;
                break;
            }
            return NULL;
        }
    }
    return rl_completion_matches(text, gen);
}

static void show_matches(char **matches, int n, int maxlen)
{
    (void)maxlen;
    char *o = con->u.completions;
    size_t left = sizeof con->u.completions;
    int w = snprintf(o, left, " %d matches:", n);
    for (int i = 1; i <= n && w > 0 && (size_t)w < left; i++) {
        o += w;
        left -= (size_t)w;
        w = snprintf(o, left, " %s", matches[i]);
    }
    con->dirty = 1;
}

const char *prompt_history_path(void)
{
    const char *state = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    char dir[PATH_MAX - 16];
    if (state && *state)
        snprintf(dir, sizeof dir, "%s/culeak", state);
    else if (home && *home)
        snprintf(dir, sizeof dir, "%s/.local/state/culeak", home);
    else
        return NULL;
    /* mkdir -p */
    for (char *p = dir + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            mkdir(dir, 0700);
            *p = '/';
        }
    }
    mkdir(dir, 0700);
    snprintf(history_path, sizeof history_path, "%s/history", dir);
    return history_path;
}

void prompt_open(struct console *c)
{
    con = c;
    devnull = fopen("/dev/null", "we"); /* close-on-exec: not the job's */
    rl_readline_name = "culeak";
    rl_catch_signals = 0;
    rl_catch_sigwinch = 0;
    rl_change_environment = 0;
    rl_getc_function = getc_fn;
    rl_input_available_hook = input_available;
    rl_redisplay_function = redisplay;
    rl_prep_term_function = noop_prep;
    rl_deprep_term_function = noop_deprep;
    rl_instream = stdin;
    rl_outstream = devnull ? devnull : stdout;
    rl_attempted_completion_function = complete;
    rl_completion_display_matches_hook = show_matches;
    rl_inhibit_completion = 0;
    using_history();
    stifle_history(1000);
    const char *hp = prompt_history_path();
    if (hp)
        read_history(hp);
    rl_callback_handler_install(c->u.prompt, on_line);
}

void prompt_close(void)
{
    rl_callback_handler_remove();
    const char *hp = history_path[0] ? history_path : NULL;
    if (hp) {
        write_history(hp);
        history_truncate_file(hp, 1000);
    }
    if (devnull)
        fclose(devnull);
    devnull = NULL;
}

void prompt_feed(const char *bytes)
{
    size_t n = strlen(bytes);
    if (qhead == qtail)
        qhead = qtail = 0;
    if (qtail + n > sizeof queue)
        return;
    memcpy(queue + qtail, bytes, n);
    qtail += n;
    while (qhead < qtail && !con->quit)
        rl_callback_read_char();
}

void prompt_move(int delta)
{
    if (delta < 0)
        rl_backward_char(1, 0);
    else
        rl_forward_char(1, 0);
    con->dirty = 1;
}

void prompt_delete(void)
{
    rl_delete(1, 0);
    con->dirty = 1;
}

void prompt_clear(void)
{
    rl_replace_line("", 0);
    rl_point = rl_end = 0;
    con->dirty = 1;
}

int prompt_empty(void) { return rl_end == 0; }

int prompt_recall(int up)
{
    if (rl_end == 0)
        return 0; /* an empty prompt: the arrows move in the table */
    if (up)
        rl_get_previous_history(1, 0);
    else
        rl_get_next_history(1, 0);
    con->dirty = 1;
    return 1;
}

void prompt_sync(struct console *c)
{
    c->u.line = rl_line_buffer ? rl_line_buffer : "";
    c->u.point = rl_point;
}
