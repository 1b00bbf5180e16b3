/* The console's commands: one function per command, looked up by name or prefix. */
#include "common/apis.h"
#include "common/output_file.h"
#include "cmdline.h"
#include "command_handlers.h"
#include "console.h"
#include "fmt.h"
#include "job_input.h"
#include "common/json.h"
#include "common/wire.h"
#include "gdb_cmds.h"
#include "report/formats.h"
#include "report/report.h"
#include "report/stack_fold.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static void say(struct console *c, const char *line) { outbuf_add_line(&c->u.out, line); }

void cmd_help(struct console *c, int argc, char **argv)
{
    if (argc > 1 && !help_topic_known(argv[1])) {
        ui_message(&c->u, 1, "no command '%s'; help lists them", argv[1]);
        return;
    }
    ui_help_open(&c->u, argc > 1 ? argv[1] : NULL);
    ui_message(&c->u, 0, "help: Up/Down PgUp/PgDn scroll it; q, Esc or F1 closes it");
}

/* Live bytes and count of a snapshot (all processes): O(stacks). */
static void snapshot_totals(struct console *c, const char *name, uint64_t *bytes, uint64_t *count)
{
    struct model_query q;
    model_query_init(&q);
    q.source = MODEL_SOURCE_SNAPSHOT;
    q.snapshot = name;
    q.lazy_names = 1;
    struct model_table t;
    *bytes = *count = 0;
    if (model_table_build(c->u.m, &q, &t) != 0)
        return;
    *bytes = t.total_bytes;
    *count = t.total_count;
    model_table_free(&t);
}

void cmd_snapshot(struct console *c, int argc, char **argv)
{
    char sz[32], name[80];
    const char *want = argc > 1 ? argv[1] : NULL;
    if (want && strlen(want) >= 64) {
        ui_message(&c->u, 1, "snapshot name too long");
        return;
    }
    if (want && model_snapshot_find(c->u.m, want) >= 0) {
        ui_message(&c->u, 1, "there is already a snapshot named '%s'", want);
        return;
    }
    enum model_source at = c->u.src.kind;
    if (at == MODEL_SOURCE_PEAK || at == MODEL_SOURCE_FAILURE) {
        ui_message(&c->u, 1, "a snapshot is taken at a mark, a time, the start or the end: goto one first");
        return;
    }
    if (at == MODEL_SOURCE_SNAPSHOT) { /* recordings at a mark, a time or the start: the state there */
        if (!want) {
            do
                snprintf(name, sizeof name, "s%u", ++c->u.auto_snap);
            while (model_snapshot_find(c->u.m, name) >= 0);
        } else {
            snprintf(name, sizeof name, "%s", want);
        }
        if (model_snapshot_copy(c->u.m, c->u.src.snapshot, name) != 0) {
            ui_message(&c->u, 1, "out of memory");
            return;
        }
        snprintf(c->u.base, sizeof c->u.base, "%s", name);
    } else if (console_snapshot(c, want, name, sizeof name) != 0) {
        ui_message(&c->u, 1, "out of memory");
        return;
    }
    uint64_t bytes, count;
    snapshot_totals(c, name, &bytes, &count);
    ui_message(&c->u, 0, "snapshot %s: %s live in %llu allocation%s%s%s", name, fmt_size(sz, sizeof sz, bytes),
               (unsigned long long)count, plural(count), c->live ? "" : ", ", c->live ? "" : c->tl.where);
}

void cmd_snapshots(struct console *c, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int n = model_snapshot_count(c->u.m);
    if (!n) {
        ui_message(&c->u, 0, "no snapshots yet (snapshot [NAME])");
        return;
    }
    say(c, "snapshots:");
    for (int i = 0; i < n; i++) {
        char line[256], sz[32];
        const char *name = model_snapshot_name(c->u.m, i);
        uint64_t bytes, count;
        snapshot_totals(c, name, &bytes, &count);
        snprintf(line, sizeof line, "  %-16s %10s live in %llu allocation%s%s", name, fmt_size(sz, sizeof sz, bytes),
                 (unsigned long long)count, plural(count), strcmp(name, c->u.base) == 0 ? "  (base of the change column)" : "");
        say(c, line);
    }
    ui_message(&c->u, 0, "%d snapshots listed in the output pane", n);
}

/* "largest first", "smallest first", "A to Z" or "Z to A": the table's order now. */
static const char *sort_order_words(const struct console *c)
{
    enum sort_field f = c->u.sort;
    int text = sort_ascends(f) && f != SORT_ID, ascending = sort_ascends(f) != c->u.sort_reverse;
    return ascending ? (text ? "A to Z" : "smallest first") : (text ? "Z to A" : "largest first");
}

/* Leaves the diff view: the table's order goes back to what it was before the diff. */
static void diff_end(struct console *c)
{
    if (!c->u.diff_active)
        return;
    c->u.diff_active = 0;
    c->u.sort = c->u.sort_before_diff;
    c->u.sort_reverse = c->u.sort_reverse_before_diff;
}

/* Joins words [from, to) with single blanks. */
static void join_words(char **argv, int from, int to, char *out, size_t len)
{
    size_t n = 0;
    out[0] = 0;
    for (int w = from; w < to && n < len; w++) {
        int k = snprintf(out + n, len - n, "%s%s", w > from ? " " : "", argv[w]);
        if (k < 0)
            break;
        n += (size_t)k;
    }
}

/* A snapshot, or in recordings a mark whose state timeline_snapshot() rebuilds. */
static int snapshot_known(struct console *c, const char *name)
{
    return model_snapshot_find(c->u.m, name) >= 0 || (!c->live && timeline_has_mark(&c->tl, name));
}

/* diff's words as snapshots A and B (B empty: now): as typed, or, for names of several
 * words without quotes (diff iteration 5 iteration 10), the split of the words into
 * two names that exist. 0, or -1 with the message set. */
static int diff_names(struct console *c, int argc, char **argv, char *a, size_t alen, char *b, size_t blen)
{
    for (int k = 2; k <= argc; k++) {
        join_words(argv, 1, k, a, alen);
        join_words(argv, k, argc, b, blen);
        if (strcmp(b, "now") == 0)
            b[0] = 0;
        if (snapshot_known(c, a) && (!b[0] || snapshot_known(c, b))) {
            char err[256];
            if (!c->live && (timeline_snapshot(&c->tl, c->u.m, a, err, sizeof err) != 0 ||
                             (b[0] && timeline_snapshot(&c->tl, c->u.m, b, err, sizeof err) != 0))) {
                ui_message(&c->u, 1, "%s", err);
                return -1;
            }
            return 0;
        }
    }
    if (argc == 2 || (argc == 3 && !snapshot_known(c, argv[1])))
        ui_message(&c->u, 1, "no snapshot named '%s' (snapshots lists them)", argv[1]);
    else if (argc == 3)
        ui_message(&c->u, 1, "no snapshot named '%s' (snapshots lists them)", argv[2]);
    else {
        join_words(argv, 1, argc, a, alen);
        ui_message(&c->u, 1, "'%s' names no snapshots A [B] (snapshots lists them; quotes group words)", a);
    }
    return -1;
}

void cmd_diff(struct console *c, int argc, char **argv)
{
    if (argc < 2) {
        ui_message(&c->u, 1, "usage: diff A [B] | diff off");
        return;
    }
    if (strcmp(argv[1], "off") == 0) {
        diff_end(c);
        ui_message(&c->u, 0, "live table, sorted by %s, %s", ui_sort_name(c->u.sort), sort_order_words(c));
        return;
    }
    char a_name[sizeof c->u.diff_a], b_name[sizeof c->u.diff_b];
    if (diff_names(c, argc, argv, a_name, sizeof a_name, b_name, sizeof b_name) != 0)
        return;
    if (!b_name[0] && !c->live) { /* recordings: "now" is where goto stands */
        if (c->u.src.kind == MODEL_SOURCE_PEAK || c->u.src.kind == MODEL_SOURCE_FAILURE) {
            ui_message(&c->u, 1, "diff compares snapshots: goto a mark, a time, the start or the end, or name B");
            return;
        }
        if (c->u.src.kind == MODEL_SOURCE_SNAPSHOT)
            snprintf(b_name, sizeof b_name, "%s", c->u.src.snapshot);
    }
    int b_now = !b_name[0];
    argv[1] = a_name; /* the names as found, for the messages below */
    argc = b_now ? 2 : 3;
    if (!b_now)
        argv[2] = b_name;
    if (!c->u.diff_active) {
        c->u.sort_before_diff = c->u.sort;
        c->u.sort_reverse_before_diff = c->u.sort_reverse;
    }
    c->u.diff_active = 1;
    snprintf(c->u.diff_a, sizeof c->u.diff_a, "%s", argv[1]);
    snprintf(c->u.diff_b, sizeof c->u.diff_b, "%s", b_now ? "" : argv[2]);
    c->u.sort = SORT_CHANGE;
    c->u.sort_reverse = 0;
    c->u.sel = 0;
    c->u.sel_valid = 0;
    ui_rows(&c->u);
    int64_t total = 0, blocks = 0;
    for (size_t i = 0; i < c->u.nrows; i++) {
        if (c->u.rows[i].kinds == 1u << CULEAK_KIND_BLOCK) /* blocks lie inside other rows' memory */
            blocks += c->u.rows[i].change;
        else
            total += c->u.rows[i].change;
    }
    char d[32], nb[32], bl[64] = "";
    if (blocks)
        snprintf(bl, sizeof bl, " (%s in blocks)", fmt_delta(nb, sizeof nb, blocks));
    uint64_t new_bytes = 0, new_count = 0;
    ui_diff_new(&c->u, argv[1], b_now ? NULL : argv[2], &new_bytes, &new_count);
    c->u.out_scroll = 0;
    ui_message(&c->u, 0, "diff %s -> %s: %s%s in %zu site%s; %s in %llu allocation%s made after %s still live "
               "(output pane; diff off: live table)", argv[1], b_now ? "now" : argv[2], fmt_delta(d, sizeof d, total),
               bl, c->u.nrows, plural(c->u.nrows), fmt_size(nb, sizeof nb, new_bytes), (unsigned long long)new_count,
               plural(new_count), argv[1]);
}

void cmd_autosnapshot(struct console *c, int argc, char **argv)
{
    double s;
    if (argc < 2) {
        ui_message(&c->u, 0, "autosnapshot: %s%s", c->autosnap_marks ? "at marks " : "",
                   c->autosnap_every > 0 ? "periodic" : c->autosnap_marks ? "" : "off");
        return;
    }
    if (strcmp(argv[1], "marks") == 0) {
        c->autosnap_marks = 1;
        ui_message(&c->u, 0, "a snapshot at every mark");
    } else if (strcmp(argv[1], "off") == 0) {
        c->autosnap_marks = 0;
        c->autosnap_every = 0;
        ui_message(&c->u, 0, "automatic snapshots off");
    } else if (parse_seconds(argv[1], &s) == 0 && s > 0) {
        c->autosnap_every = s;
        c->next_autosnap = console_clock() + s;
        ui_message(&c->u, 0, "a snapshot every %g s", s);
    } else {
        ui_message(&c->u, 1, "usage: autosnapshot marks|SECONDS|off");
    }
}

/* A breakpoint at FILE:LINE where the loaded modules have FILE but no code at LINE can
 * only fire if a module loaded later has: say so, as gdb says "No line N in file". */
static void no_code_note(struct console *c, const char *site, char *out, size_t len)
{
    const char *colon = strrchr(site, ':');
    char file[256];
    uint64_t line;
    if (!colon || colon == site || (size_t)(colon - site) >= sizeof file || parse_u64(colon + 1, &line) != 0 ||
        !line || line > UINT32_MAX)
        return;
    snprintf(file, sizeof file, "%.*s", (int)(colon - site), site);
    unsigned next;
    if (model_source_line(c->u.m, file, (unsigned)line, &next) != 0)
        return;
    if (next)
        snprintf(out, len, " (no code at line %llu of %.120s: the next line with code is %u; pending)",
                 (unsigned long long)line, file, next);
    else
        snprintf(out, len, " (no code at line %llu of %.120s; pending)", (unsigned long long)line, file);
}

static void set_break(struct console *c, int argc, char **argv, int temporary)
{
    if (c->live && c->job.exited) {
        ui_message(&c->u, 1, "the job has exited: a breakpoint set now can never fire");
        return;
    }
    struct bp_spec spec;
    char err[256];
    if (bp_parse(argc - 1, argv + 1, &spec, err, sizeof err) != 0) {
        ui_message(&c->u, 1, "%s", err);
        return;
    }
    uint64_t id;
    const char *s = spec.site[0] == '#' ? spec.site + 1 : spec.site;
    struct row row;
    int found = ui_find_site(&c->u, spec.site, &row) == 0;
    int by_id = parse_u64(s, &id) == 0;
    if (by_id && !found) {
        ui_message(&c->u, 1, "no site #%s in the table", s);
        return;
    }
    struct breakpoint *b = bp_add(&c->u.bps, &spec);
    if (!b)
        return;
    b->by_row = by_id;
    b->group = (int)c->u.group;
    b->row = by_id ? row.id : 0;
    snprintf(b->what, sizeof b->what, "%s", by_id && row.text ? row.text : spec.site);
    b->temporary = temporary;
    ui_bp_collect(&c->u, b);
    char cond[96], why[200] = "";
    bp_cond_describe(cond, sizeof cond, spec.cond, spec.value);
    if (!by_id && !b->nmembers)
        no_code_note(c, spec.site, why, sizeof why);
    ui_message(&c->u, 0, "%sbreakpoint %d at %s when %s%s", temporary ? "temporary " : "", b->id, b->what, cond,
               why[0] ? why : !by_id && !b->nmembers ? " (no allocation matches yet; new stacks are checked)" : "");
    if (c->live)
        console_update_watches(c);
    else
        say(c, "[culeak] (recordings: breakpoints take effect in a live job only)");
}

void cmd_break(struct console *c, int argc, char **argv) { set_break(c, argc, argv, 0); }
void cmd_tbreak(struct console *c, int argc, char **argv) { set_break(c, argc, argv, 1); }

/* Whether a thread of process i is held at a breakpoint or a step, or waits its turn. */
static int proc_paused(const struct console *c, int i)
{
    if (c->u.state == JOB_PAUSED && c->u.held.proc == i)
        return 1;
    for (size_t k = 0; k < c->npending; k++)
        if (c->pending[k].h.proc == i)
            return 1;
    return 0;
}

/* Every mark of every process: label, pid, time since the process started, event, and
 * the process's device memory then. */
static void info_marks(struct console *c)
{
    size_t total = ui_mark_count(&c->u);
    if (!total) {
        ui_message(&c->u, 0, "no marks yet (culeak_mark(), culeak.mark() or NVTX ranges make them)");
        return;
    }
    say(c, "  mark                 pid        time   event  device mem");
    for (int p = 0; p < model_process_count(c->u.m); p++) {
        const struct model_process *pr = model_process(c->u.m, p);
        size_t n = 0;
        const struct model_mark *v = model_marks(c->u.m, p, &n);
        for (size_t i = 0; i < n; i++) {
            if (v[i].flags & CULEAK_MARK_POP)
                continue;
            char line[512], t[32], sz[32];
            uint64_t t0 = pr->start_monotonic_ns;
            fmt_duration(t, sizeof t, v[i].t_ns > t0 ? (double)(v[i].t_ns - t0) / 1e9 : 0);
            snprintf(line, sizeof line, "  %-20s %-8llu %6s %7llu %11s", v[i].label ? v[i].label : "",
                     (unsigned long long)pr->pid, t, (unsigned long long)v[i].seq,
                     fmt_size(sz, sizeof sz, v[i].live_bytes));
            say(c, line);
        }
    }
    c->u.out_scroll = 0;
    ui_message(&c->u, 0, "%zu mark%s listed in the output pane", total, total == 1 ? "" : "s");
}

void cmd_info(struct console *c, int argc, char **argv)
{
    char line[1200], cond[96], sz[32];
    if (argc < 2) { /* as gdb: info alone lists what it can describe */
        say(c, "\"info\" must be followed by what to describe:");
        say(c, "  info breakpoints -- breakpoints: number, enabled, hits, condition, site");
        say(c, "  info marks       -- the job's marks: label, pid, time, event, device memory");
        say(c, "  info processes   -- the job's processes: pid, parent, state, memory, command");
        say(c, "  info snapshots   -- snapshots: name, live bytes");
        ui_message(&c->u, 0, "info breakpoints|marks|processes|snapshots (listed in the output pane)");
        return;
    }
    const char *what = argv[1];
    if (strncmp(what, "breakpoints", strlen(what)) == 0) {
        if (!c->u.bps.n) {
            ui_message(&c->u, 0, "no breakpoints (break SITE [CONDITION])");
            return;
        }
        say(c, "Num  Enb  Hits  Condition            Site");
        for (size_t i = 0; i < c->u.bps.n; i++) {
            const struct breakpoint *b = &c->u.bps.v[i];
            bp_cond_describe(cond, sizeof cond, b->spec.cond, b->spec.value);
            snprintf(line, sizeof line, "%-4d %-4s %5llu  %-20s %s%s%s", b->id, b->enabled ? "y" : "n",
                     (unsigned long long)b->hits, cond, b->what,
                     b->by_row && b->group != (int)c->u.group ? " (by an earlier grouping)" : "",
                     b->temporary ? " (temporary: deleted when it pauses)" : "");
            say(c, line);
            if (b->ignore) {
                snprintf(line, sizeof line, "        ignore next %llu hits", (unsigned long long)b->ignore);
                say(c, line);
            }
            for (const char *p = b->commands; p && *p;) { /* gdb's way: the commands under it */
                size_t n = strcspn(p, "\n");
                snprintf(line, sizeof line, "        %.*s", (int)(n < 1000 ? n : 1000), p);
                say(c, line);
                p += n + (p[n] == '\n');
            }
        }
        ui_message(&c->u, 0, "%zu breakpoint%s listed in the output pane", c->u.bps.n, plural(c->u.bps.n));
    } else if (strncmp(what, "processes", strlen(what)) == 0) {
        int n = model_process_count(c->u.m);
        for (int i = 0; i < n; i++) {
            const struct model_process *p = model_process(c->u.m, i);
            struct model_counter dm;
            model_totals(c->u.m, i, MODEL_ALL, MODEL_KIND_DEVICE_MEMORY, &dm);
            int gone = (size_t)i < c->u.ngone && c->u.gone[i];
            size_t k = (size_t)snprintf(line, sizeof line, "  pid %-8llu ppid %-8llu %-8s %10s live %8llu events ",
                                        (unsigned long long)p->pid, (unsigned long long)p->ppid,
                                        p->exited ? "exited" : gone || !c->live ? "gone"
                                                       : proc_paused(c, i)         ? "paused" : "running",
                                        fmt_size(sz, sizeof sz, dm.live_bytes), (unsigned long long)p->events);
            for (size_t a = 0; a < p->argc && k < sizeof line; a++)
                k += (size_t)snprintf(line + k, sizeof line - k, " %s", p->argv[a]);
            if (!p->argc && k < sizeof line)
                snprintf(line + k, sizeof line - k, " %s", p->exe);
            say(c, line);
        }
        ui_message(&c->u, 0, "%d process%s listed in the output pane", n, n == 1 ? "" : "es");
    } else if (strncmp(what, "snapshots", strlen(what)) == 0) {
        cmd_snapshots(c, 1, argv);
    } else if (strncmp(what, "marks", strlen(what)) == 0) {
        info_marks(c);
    } else {
        ui_message(&c->u, 1, "info breakpoints|processes|snapshots|marks");
    }
}

static int bp_arg(struct console *c, int argc, char **argv, int *id)
{
    *id = 0;
    return argc < 2 ? 0 : cmd_bp_number(c, argv[1], id);
}

static void delete_all(struct console *c)
{
    bp_clear(&c->u.bps);
    ui_message(&c->u, 0, "deleted every breakpoint");
    if (c->live)
        console_update_watches(c);
}

void cmd_delete(struct console *c, int argc, char **argv)
{
    int id;
    if (bp_arg(c, argc, argv, &id) != 0)
        return;
    if (!id) { /* as gdb: all of them only when confirmed */
        if (!c->u.bps.n)
            ui_message(&c->u, 0, "no breakpoints to delete");
        else
            console_confirm(c, delete_all, "Delete all breakpoints? (y or n) ");
        return;
    }
    bp_delete(&c->u.bps, id);
    ui_message(&c->u, 0, "deleted breakpoint %d", id);
    if (c->live)
        console_update_watches(c);
}

static void set_enabled(struct console *c, int argc, char **argv, int on)
{
    int id;
    if (bp_arg(c, argc, argv, &id) != 0)
        return;
    for (size_t i = 0; i < c->u.bps.n; i++) {
        if (id && c->u.bps.v[i].id != id)
            continue;
        if (on && !c->u.bps.v[i].enabled)
            ui_bp_collect(&c->u, &c->u.bps.v[i]); /* stacks seen while disabled */
        c->u.bps.v[i].enabled = on;
    }
    ui_message(&c->u, 0, "%s %s", on ? "enabled" : "disabled", id ? argv[1] : "every breakpoint");
    if (c->live)
        console_update_watches(c);
}

void cmd_enable(struct console *c, int argc, char **argv) { set_enabled(c, argc, argv, 1); }
void cmd_disable(struct console *c, int argc, char **argv) { set_enabled(c, argc, argv, 0); }

void cmd_continue(struct console *c, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    console_resume(c, 0);
}

void cmd_step(struct console *c, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    console_resume(c, 1);
}

void cmd_kill(struct console *c, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    if (!c->live || c->job.exited) {
        ui_message(&c->u, 1, "there is no running job");
        return;
    }
    console_confirm(c, console_kill, "Kill the job (pid %d)? (y or n)", (int)c->job.pid);
}

/* Commands that read every name resolve the pending ones first (see ui_name_row); the
 * status line says how many, since that can take seconds with 100k new sites. */
static void names_resolved(struct console *c, int needed, char *buf, size_t len)
{
    buf[0] = 0;
    size_t n = needed ? ui_resolve_names(&c->u, 0) : 0;
    if (n)
        snprintf(buf, len, " (resolved %zu site names)", n);
}

void cmd_sort(struct console *c, int argc, char **argv)
{
    int f = argc > 1 ? sort_field_by_name(argv[1]) : -1;
    int asc = argc > 2 && strcmp(argv[2], "asc") == 0, desc = argc > 2 && strcmp(argv[2], "desc") == 0;
    int reverse = argc > 2 && strcmp(argv[2], "reverse") == 0;
    if (f < 0 || argc > 3 || (argc > 2 && !asc && !desc && !reverse)) {
        ui_message(&c->u, 1, "usage: sort id|live|count|change|peak|allocs|kind|site|module [asc|desc]");
        return;
    }
    /* numbers: largest first unless asc; ids and texts: A to Z unless desc */
    c->u.sort_reverse = reverse || (sort_ascends((enum sort_field)f) ? desc : asc);
    c->u.sort = (enum sort_field)f;
    char names[64] = "";
    names_resolved(c, f == SORT_SITE, names, sizeof names);
    ui_message(&c->u, 0, "sorted by %s, %s%s", sort_field_names[f], sort_order_words(c), names);
}

void cmd_filter(struct console *c, int argc, char **argv)
{
    size_t n = 0;
    c->u.filter[0] = 0;
    for (int i = 1; i < argc && n + 1 < sizeof c->u.filter; i++) {
        int w = snprintf(c->u.filter + n, sizeof c->u.filter - n, "%s%s", i > 1 ? " " : "", argv[i]);
        if (w < 0)
            break;
        n += (size_t)w;
    }
    c->u.sel = 0;
    c->u.sel_valid = 0;
    char names[64];
    names_resolved(c, c->u.filter[0] != 0, names, sizeof names);
    ui_rows(&c->u);
    if (c->u.filter[0])
        ui_message(&c->u, 0, "filter '%s': %zu site%s%s", c->u.filter, c->u.nrows, plural(c->u.nrows), names);
    else
        ui_message(&c->u, 0, "no filter: %zu site%s", c->u.nrows, plural(c->u.nrows));
}

void cmd_group(struct console *c, int argc, char **argv)
{
    int g = argc > 1 ? group_by_name(argv[1]) : -1;
    if (g < 0) {
        ui_message(&c->u, 1, "usage: group site|function|file|module|stack");
        return;
    }
    c->u.group = (enum model_group)g;
    c->u.sel = 0;
    c->u.sel_valid = 0;
    diff_end(c);
    char names[64];
    names_resolved(c, g == MODEL_GROUP_FUNCTION || g == MODEL_GROUP_FILE, names, sizeof names);
    ui_rows(&c->u);
    ui_message(&c->u, 0, "grouped by %s: %zu row%s (ids changed; breakpoints keep their sites)%s", model_group_name((enum model_group)g),
               c->u.nrows, plural(c->u.nrows), names);
}

#define SHOW_FRAMES 256

/* show SITE [full], show -a SITE: runs of looked-through frames are folded unless full. */
void cmd_show(struct console *c, int argc, char **argv)
{
    int full = argc > 1 && strcmp(argv[1], "-a") == 0;
    const char *spec = argc > 1 + full ? argv[1 + full] : NULL;
    if (!full && argc > 2 && strcmp(argv[2], "full") == 0)
        full = 1;
    else if (argc > 2 + full)
        spec = NULL;
    if (!spec) {
        ui_message(&c->u, 1, "usage: show SITE [full] (a table id, a function name or file:line)");
        return;
    }
    struct row st;
    if (ui_find_site(&c->u, spec, &st) != 0) {
        ui_message(&c->u, 1, "no site matches '%s'", spec);
        return;
    }
    c->u.filter[0] = 0;
    c->u.sel_site = st.id;
    c->u.sel_valid = 1;
    ui_rows(&c->u);
    char line[1300], a[32], b[32];
    snprintf(line, sizeof line, "site #%u %s: %s live in %llu allocation%s, peak %s, %llu allocation%s made",
             ui_site_id(st.id), st.text ? st.text : "?", fmt_size(a, sizeof a, st.live),
             (unsigned long long)st.count, plural(st.count), fmt_size(b, sizeof b, st.peak),
             (unsigned long long)st.allocs, plural(st.allocs));
    say(c, line);
    struct model_frame f[SHOW_FRAMES];
    struct stack_line l[SHOW_FRAMES];
    size_t n = model_stack_frames(c->u.m, st.stack_proc, st.stack, f, SHOW_FRAMES);
    size_t got = n < SHOW_FRAMES ? n : SHOW_FRAMES;
    size_t nl = stack_lines(f, got, !full, l), folded = 0;
    for (size_t i = 0; i < nl; i++) {
        folded += l[i].count;
        say(c, stack_line_text(&l[i], f, line, sizeof line));
    }
    if (got < n) {
        snprintf(line, sizeof line, "  ... %zu more frames", n - got);
        say(c, line);
    }
    c->u.out_scroll = 0;
    if (folded)
        ui_message(&c->u, 0, "site #%u selected; its stack is in the output pane (%zu looked-through frames "
                   "folded: show %s full lists them)", ui_site_id(st.id), folded, spec);
    else
        ui_message(&c->u, 0, "site #%u selected; its stack is in the output pane too", ui_site_id(st.id));
}

void cmd_process(struct console *c, int argc, char **argv)
{
    uint64_t pid;
    int n = model_process_count(c->u.m);
    if (argc < 2 || strcmp(argv[1], "all") == 0) {
        c->u.proc_filter = -1;
        c->u.sel_valid = 0;
        ui_message(&c->u, 0, n == 1 ? "every process (there is %d)" : "all %d processes together", n);
        return;
    }
    if (parse_u64(argv[1], &pid) != 0) {
        ui_message(&c->u, 1, "usage: process PID|all");
        return;
    }
    /* a pid that exec'd is several processes in turn: the latest one */
    for (int i = n - 1; i >= 0; i--) {
        if (model_process(c->u.m, i)->pid == pid) {
            c->u.proc_filter = i;
            c->u.sel_valid = 0;
            ui_message(&c->u, 0, "process %llu only (process all: every process)", (unsigned long long)pid);
            return;
        }
    }
    ui_message(&c->u, 1, "no process %s (info processes lists them)", argv[1]);
}

static void save_breakpoints(struct console *c, const char *path)
{
    struct culeak_output out;
    if (culeak_output_open(&out, path) != 0) {
        ui_message(&c->u, 1, "cannot write %s: %s", path, strerror(errno));
        return;
    }
    bp_write_commands(out.f, &c->u.bps);
    int werr = culeak_output_close(&out, 0) != 0 ? errno : 0;
    if (werr)
        ui_message(&c->u, 1, "cannot write %s: %s", path, strerror(werr));
    else
        ui_message(&c->u, 0, "saved %zu breakpoint%s to %s (culeak -x %s sets them again)", c->u.bps.n,
                   plural(c->u.bps.n), path, path);
}

void cmd_save(struct console *c, int argc, char **argv)
{
    char msg[600];
    if (argc < 2) {
        ui_message(&c->u, 1, "usage: save FILE | save breakpoints FILE");
        return;
    }
    if (strcmp(argv[1], "breakpoints") == 0) {
        ui_message(&c->u, 1, "usage: save breakpoints FILE");
        return;
    }
    if (strncmp(argv[1], "breakpoints ", 12) == 0) { /* gdb's save breakpoints */
        save_breakpoints(c, argv[1] + 12);
        return;
    }
    int rc = console_save(c, argv[1], msg, sizeof msg);
    ui_message(&c->u, rc != 0, "%s", msg);
}

/* The table as report JSON is: a version, the processes, then the rows with their
 * process and stack (that of the member with the most bytes). */
static void export_json(struct console *c, FILE *f)
{
    struct report_options o;
    report_options_init(&o);
    o.proc = c->u.proc_filter < 0 ? MODEL_ALL : c->u.proc_filter;
    fprintf(f, "{\"version\":%d,\"source\":\"console\",\"group\":\"%s\",", REPORT_JSON_VERSION,
            model_group_name(c->u.group));
    report_json_processes(f, c->u.m, &o);
    fputs(",\"sites\":[\n", f);
    for (size_t i = 0; i < c->u.nrows; i++) {
        const struct row *r = &c->u.rows[i];
        const char *label = r->text ? r->text : "?", *module = r->module ? r->module : "?";
        char kinds[128];
        ui_kinds(r->kinds, kinds, sizeof kinds);
        fprintf(f, "  {\"id\":%u,\"live_bytes\":%llu,\"live_count\":%llu,\"change_bytes\":%lld,\"peak_bytes\":%llu,"
                   "\"allocs\":%llu,\"kind\":",
                ui_site_id(r->id), (unsigned long long)r->live, (unsigned long long)r->count, (long long)r->change,
                (unsigned long long)r->peak, (unsigned long long)r->allocs);
        json_write_str(f, kinds, strlen(kinds));
        fputs(",\"module\":", f);
        json_write_str(f, module, strlen(module));
        fputs(",\"site\":", f);
        json_write_str(f, label, strlen(label));
        const struct model_process *p = r->stack_proc >= 0 ? model_process(c->u.m, r->stack_proc) : NULL;
        if (p) {
            fprintf(f, ",\"pid\":%llu,\"rank\":%d,", (unsigned long long)p->pid, p->rank);
            report_json_stack(f, c->u.m, r->stack_proc, r->stack, 0);
        }
        fprintf(f, "}%s\n", i + 1 < c->u.nrows ? "," : "");
    }
    fputs("]}\n", f);
}

static void export_csv(struct console *c, FILE *f)
{
    fputs("id,live_bytes,live_count,change_bytes,peak_bytes,allocs,kind,module,site\n", f);
    for (size_t i = 0; i < c->u.nrows; i++) {
        const struct row *r = &c->u.rows[i];
        const char *label = r->text ? r->text : "?", *module = r->module ? r->module : "?";
        char kinds[128];
        ui_kinds(r->kinds, kinds, sizeof kinds);
        fprintf(f, "%u,%llu,%llu,%lld,%llu,%llu,%s,\"%s\",\"", ui_site_id(r->id), (unsigned long long)r->live,
                (unsigned long long)r->count, (long long)r->change, (unsigned long long)r->peak,
                (unsigned long long)r->allocs, kinds, module);
        for (const char *p = label; *p; p++) {
            if (*p == '"')
                fputc('"', f);
            fputc(*p, f);
        }
        fputs("\"\n", f);
    }
}

void cmd_export(struct console *c, int argc, char **argv)
{
    if (argc < 2) {
        ui_message(&c->u, 1, "usage: export FILE (.html: a page with pictures, .json: JSON, otherwise CSV)");
        return;
    }
    size_t n = strlen(argv[1]);
    const struct report_format *page = report_format_of_path(argv[1]);
    if (page) {
        console_export_report(c, page, argv[1]);
        return;
    }
    int json = n > 5 && strcmp(argv[1] + n - 5, ".json") == 0;
    struct culeak_output out;
    if (culeak_output_open(&out, argv[1]) != 0) {
        ui_message(&c->u, 1, "cannot write %s: %s", argv[1], strerror(errno));
        return;
    }
    ui_resolve_names(&c->u, 0); /* the file gets every row's name */
    ui_rows(&c->u);
    if (json)
        export_json(c, out.f);
    else
        export_csv(c, out.f);
    int werr = culeak_output_close(&out, 0) != 0 ? errno : 0;
    if (werr)
        ui_message(&c->u, 1, "cannot write %s: %s", argv[1], strerror(werr));
    else
        ui_message(&c->u, 0, "exported %zu row%s to %s", c->u.nrows, plural(c->u.nrows), argv[1]);
}

void cmd_goto(struct console *c, int argc, char **argv)
{
    if (c->live) {
        ui_message(&c->u, 1, "goto moves through recordings (culeak open FILE); a live job only moves forward");
        return;
    }
    if (argc < 2) {
        ui_message(&c->u, 1, "usage: goto MARK|TIME|peak|oom|start|end");
        return;
    }
    char err[256];
    struct model *before = c->u.m;
    if (timeline_goto(&c->tl, &c->u.m, argv[1], &c->u.src, err, sizeof err) != 0) {
        ui_message(&c->u, 1, "%s", err);
        return;
    }
    if (c->u.m != before) { /* reloaded: ids, snapshots and the process filter start over */
        c->u.base[0] = 0;
        diff_end(c);
        c->u.proc_filter = -1;
    }
    c->u.sel_valid = 0;
    ui_rows(&c->u);
    uint64_t bytes, count;
    ui_totals(&c->u, &bytes, &count);
    char sz[32];
    ui_message(&c->u, 0, "%s: %s live", c->tl.where, fmt_size(sz, sizeof sz, bytes));
}

static void quit_killing(struct console *c)
{
    console_kill_now(c);
    c->quit = 1;
}

void cmd_suspects(struct console *c, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int n = ui_suspects_list(&c->u);
    if (n < 0)
        ui_message(&c->u, 1, "out of memory");
    else if (n == 0)
        ui_message(&c->u, 0, "no growth suspects: no site grew at most of the recent marks (needs 5 marks)");
    else
        ui_message(&c->u, 0, "%d growth suspect%s listed in the output pane", n, n == 1 ? "" : "s");
    c->u.out_scroll = 0;
}

void cmd_quit(struct console *c, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    if (c->live && !c->job.exited && !c->job.attached) { /* an attached process is left running */
        console_confirm(c, quit_killing,
                        "The job (pid %d) is running and will be killed. Quit anyway? (y or n) "
                        "[detach leaves it running]",
                        (int)c->job.pid);
        return;
    }
    c->quit = 1;
}

/* gdb's detach: the console leaves, the job runs to its end; its terminal stays held and
 * its further output goes to FILE (default: the file a dying console would use). */
void cmd_detach(struct console *c, int argc, char **argv)
{
    if (!c->live || c->job.exited) {
        ui_message(&c->u, 1, "there is no running job to detach from");
        return;
    }
    if (c->job.attached) { /* its output was never the console's */
        c->quit = 1;
        return;
    }
    if (!c->job.holder.pid) {
        ui_message(&c->u, 1, "cannot detach: nothing holds the job's terminal (see the output pane at start)");
        return;
    }
    const char *path = argc > 1 ? argv[1] : c->job.holder.fallback;
    if (!*path) {
        ui_message(&c->u, 1, "usage: detach FILE (no state directory for the default file)");
        return;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        ui_message(&c->u, 1, "cannot write %s: %s", path, strerror(errno));
        return;
    }
    close(fd);
    char abs[PATH_MAX];
    snprintf(c->detach_to, sizeof c->detach_to, "%.1000s", realpath(path, abs) ? abs : path);
    c->quit = 1;
}

void console_exec(struct console *c, const char *line)
{
    char slash[1100];
    if (line[0] == '/' && line[1] && line[1] != ' ' && !c->confirm_yes) { /* /TEXT: search, as in less */
        snprintf(slash, sizeof slash, "search %s", line + 1);
        line = slash;
    }
    if (console_commands_take(c, line)) /* the lines of `commands N`, until end */
        return;
    char buf[1024];
    char *argv[CMD_MAX_ARGS];
    int argc = cmd_split(line, buf, sizeof buf, argv);
    if (argc < 0) {
        ui_message(&c->u, 1, "cannot read that line (an unclosed quote, or more than %d words)", CMD_MAX_ARGS);
        return;
    }
    if (c->confirm_yes) { /* the answer to a question, as gdb reads it */
        void (*yes)(struct console *) = c->confirm_yes;
        const char *a = line + strspn(line, " \t");
        char echo[1200];
        snprintf(echo, sizeof echo, "(y or n) %s", line);
        outbuf_add_line(&c->u.out, echo);
        if (*a == 'y' || *a == 'Y') {
            c->confirm_yes = NULL;
            yes(c);
        } else if (*a == 'n' || *a == 'N') {
            c->confirm_yes = NULL;
            ui_message(&c->u, 0, "Not confirmed.");
        } else {
            ui_message(&c->u, 1, "Please answer y or n.");
        }
        return;
    }
    if (argc == 0)
        return;
    int i = cmd_lookup(argv[0]);
    if (i == -2) {
        ui_message(&c->u, 1, "'%s' is ambiguous; help lists the commands", argv[0]);
        return;
    }
    if (i < 0) {
        ui_message(&c->u, 1, "unknown command '%s'; help lists the commands", argv[0]);
        return;
    }
    /* a command that takes one name or text takes the rest of the line: the words go
     * back together, one blank apart (quotes keep blanks as typed) */
    enum cmd_arg kind = cmd_specs[i].arg;
    if ((kind == ARG_TEXT || kind == ARG_FILE || kind == ARG_GOTO) && argc > 2) {
        for (int w = 1; w < argc - 1; w++)
            argv[w][strlen(argv[w])] = ' ';
        argc = 2;
    }
    if ((cmd_specs[i].flags & CMD_NEEDS_JOB) && c->live && c->job.pid <= 0) { /* -ex before the job starts */
        ui_message(&c->u, 1, "%s: the job has not started yet", cmd_specs[i].name);
        return;
    }
    char echo[1200];
    snprintf(echo, sizeof echo, "(culeak) %s", line);
    outbuf_add_line(&c->u.out, echo);
    cmd_specs[i].run(c, argc, argv);
}
