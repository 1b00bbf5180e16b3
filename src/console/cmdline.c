/* Splitting a typed command into words; the command, sort-field and grouping tables. */
#include "cmdline.h"
#include "command_handlers.h"
#include "model/model.h"

#include <string.h>

int cmd_split(const char *line, char *buf, size_t buflen, char **argv)
{
    size_t n = strlen(line);
    if (n + 1 > buflen)
        return -1;
    int argc = 0;
    const char *p = line;
    char *o = buf;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (!*p)
            break;
        if (argc == CMD_MAX_ARGS)
            return -1;
        argv[argc++] = o;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            if (*p == '"' || *p == '\'') {
                char q = *p++;
                while (*p && *p != q)
                    *o++ = *p++;
                if (!*p)
                    return -1;
                p++;
            } else {
                *o++ = *p++;
            }
        }
        *o++ = 0;
    }
    return argc;
}

/* A command's spec names its handler: CMD(help, ...) runs cmd_help (command_handlers.h),
 * so a command without a handler does not build. */
#define CMD(NAME, ALIAS, ARG, FLAGS, USAGE, HELP) {#NAME, ALIAS, ARG, USAGE, HELP, cmd_##NAME, FLAGS}

const struct cmd_spec cmd_specs[] = {
    CMD(help, "h", ARG_COMMAND, 0, "help [COMMAND]",
     "Open this view: every command, then the keys (also ? on an empty prompt, or F1).\n"
     "help COMMAND shows that command; a prefix of several (help snap) shows each."),
    CMD(snapshot, NULL, ARG_TEXT, 0, "snapshot [NAME]",
     "Remember every site's live bytes now, under NAME (default s1, s2, ...). The table's\n"
     "change column counts from the latest snapshot."),
    CMD(snapshots, NULL, ARG_NONE, 0, "snapshots", "List the snapshots: name, time, live bytes."),
    CMD(diff, NULL, ARG_SNAPSHOT, 0, "diff A [B] | diff off",
     "Show, per site, what changed from snapshot A to snapshot B (default: now), largest\n"
     "growth first, and list in the output pane the allocations made after A that are still\n"
     "live, grouped by stack (bytes, count, the stack; with B: those made up to B and still\n"
     "live now). `diff off` returns to the live table."),
    CMD(autosnapshot, NULL, ARG_AUTOSNAP, 0, "autosnapshot marks|SECONDS|off",
     "Take a snapshot at every culeak_mark() of the job, or every SECONDS, or stop."),
    CMD(break, "b", ARG_SITE, 0, "break SITE [CONDITION]",
     "Pause the job inside the allocation call when SITE (a table id, a function name or\n"
     "file:line) allocates and CONDITION holds. Conditions:\n"
     "  (none)           any new allocation at the site\n"
     "  live > SIZE      the site's live bytes exceed SIZE (units: B KiB MiB GiB)\n"
     "  grows SIZE       the site grew by SIZE since the breakpoint was set, then\n"
     "                   by each further SIZE (+SIZE, +2 SIZE, ...)\n"
     "  count > N        the site holds more than N live allocations\n"
     "e.g. break 3, break main.cu:42 live > 64MiB, break leaky_fn grows 10MiB"),
    CMD(tbreak, NULL, ARG_SITE, 0, "tbreak SITE [CONDITION]",
     "As break, but the breakpoint is deleted when it first pauses the job."),
    CMD(info, "i", ARG_NONE, 0, "info breakpoints|processes|snapshots|marks",
     "Describe breakpoints (with their ignore counts and commands), processes, snapshots or\n"
     "the job's marks (label, pid, time, event, device memory then). info alone lists these."),
    CMD(delete, "d", ARG_BREAKPOINT, 0, "delete [N]", "Delete breakpoint N (all without N, once confirmed: y or n)."),
    CMD(disable, NULL, ARG_BREAKPOINT, 0, "disable [N]", "Disable breakpoint N (all without N)."),
    CMD(enable, NULL, ARG_BREAKPOINT, 0, "enable [N]", "Enable breakpoint N (all without N)."),
    CMD(condition, NULL, ARG_BREAKPOINT, 0, "condition N [CONDITION]",
     "Give breakpoint N the CONDITION break takes (live > SIZE, grows SIZE, count > N;\n"
     "grows counts from now); without one it pauses at any allocation. e.g. condition 2\n"
     "live > 1GiB. N may be $bpnum, the breakpoint set last."),
    CMD(ignore, NULL, ARG_BREAKPOINT, 0, "ignore N COUNT",
     "Let the next COUNT pauses of breakpoint N go by (each still counts as a hit)."),
    CMD(commands, NULL, ARG_BREAKPOINT, 0, "commands [N]",
     "Give breakpoint N (default: the one set last) console commands, typed one a line\n"
     "after it and closed by a line `end`. They run each time it pauses the job, e.g.\n"
     "snapshot, then diff s1, then continue: the breakpoint logs and the job goes on\n"
     "unattended. A command that resumes the job (continue, step, kill) ends the list.\n"
     "commands N then end alone removes them."),
    CMD(continue, "c", ARG_NONE, CMD_NEEDS_JOB, "continue", "Let the paused allocation return and the job run on."),
    CMD(step, "s", ARG_NONE, CMD_NEEDS_JOB, "step", "Let the paused allocation return; pause again at the next allocation."),
    CMD(kill, NULL, ARG_NONE, CMD_NEEDS_JOB, "kill", "Stop the job, once confirmed with y: SIGTERM to its process group, SIGKILL 3 s\n"
     "later."),
    CMD(sort, NULL, ARG_SORT, 0, "sort FIELD [asc|desc]",
     "Sort the table by live, count, change, peak, allocs, kind, site, module or id,\n"
     "numbers largest first (asc: smallest first), ids and texts A to Z (desc: Z to A).\n"
     "A diff sorts by change; diff off restores the order."),
    CMD(filter, NULL, ARG_TEXT, 0, "filter [TEXT]", "Show only sites whose text contains TEXT; no TEXT shows all."),
    CMD(group, NULL, ARG_GROUP, 0, "group site|function|file|module|stack",
     "Aggregate allocations by call site (first frame outside the CUDA libraries), function,\n"
     "source file, module or whole stack."),
    CMD(show, NULL, ARG_SITE, 0, "show SITE [full]",
     "Select SITE in the table and list its stack in the output pane, innermost frame first,\n"
     "the call site marked '>'. Each run of looked-through frames (CUDA and framework\n"
     "libraries, the interpreter) is folded into one line, as in the stack pane; `full`\n"
     "(or show -a SITE) lists every frame."),
    CMD(process, NULL, ARG_PROCESS, 0, "process PID|all", "Show one process of the job, or all of them together."),
    CMD(suspects, NULL, ARG_NONE, 0, "suspects",
     "List the growth suspects in the output pane: call sites whose live bytes rose at 8\n"
     "of the last 10 marks with one label pattern (\"iteration N\"; with fewer marks, 80%\n"
     "of them and at least 4) and are higher than 10 marks ago. Each with its growth per\n"
     "iteration (the median), the mark since which it grows, and when it would fill the\n"
     "device at that pace (the device's free memory at the latest mark, the median time\n"
     "between marks). A site that allocates and frees every iteration, or goes up and down,\n"
     "is not one, nor one that fell back to its lowest and climbs no higher than before.\n"
     "The header shows a line while there are any."),
    CMD(save, NULL, ARG_FILE, 0, "save FILE | save breakpoints FILE",
     "Save the session's events as a recording (one file per process: FILE, FILE.PID...)\n"
     "readable by culeak report and culeak open. Says which are incomplete (the console's\n"
     "copy stopped at CULEAK_COPY_LIMIT or a full disk). save breakpoints FILE writes the\n"
     "breakpoints (conditions, ignore counts, commands) as commands: culeak -x FILE reads\n"
     "them back."),
    CMD(export, NULL, ARG_FILE, 0, "export FILE",
     "Write the table as JSON (FILE ending in .json) or CSV; FILE ending in .html gets a\n"
     "page with a timeline, a flame graph and the sites, to open in a browser."),
    CMD(compare, NULL, ARG_FILE, 0, "compare FILE",
     "Compare with the run recorded in FILE (culeak report --baseline FILE): per call site\n"
     "what is new, gone, grown or shrunk since that run, matched by function and file:line,\n"
     "with each run's totals and growth suspects, listed in the output pane."),
    CMD(goto, NULL, ARG_GOTO, 0, "goto MARK|TIME|peak|oom|end|start",
     "Recordings: move the timeline to the first mark with that label, to a time since the\n"
     "start (12.5s, 2m; not past the end), to the peak of live bytes, to the first failed\n"
     "allocation, or to an end. The table shows the state there, snapshot takes it and\n"
     "diff A compares A with it. Each mark is a snapshot named by its label."),
    CMD(input, NULL, ARG_NONE, CMD_NEEDS_JOB, "input",
     "Hand the keyboard to the job (also Ctrl-]): what you type goes to its standard input,\n"
     "as in a terminal (Ctrl-C interrupts it), until Ctrl-]. Otherwise nothing reaches its\n"
     "input, and a job that reads it waits."),
    CMD(search, "/", ARG_TEXT, 0, "search [TEXT]",
     "Scroll the output pane back to the newest line containing TEXT (case ignored) and\n"
     "highlight it; search alone (or /) finds the next older one, /TEXT is search TEXT.\n"
     "End in the output pane returns."),
    CMD(detach, NULL, ARG_FILE, CMD_NEEDS_JOB, "detach [FILE]",
     "Leave the console and let the job run to its end: a paused job resumes, tracing\n"
     "stops, and the job's further output goes to FILE (default\n"
     "$XDG_STATE_HOME/culeak/job-PID.log). A console that dies detaches the same way."),
    CMD(holders, NULL, ARG_SITE, CMD_NEEDS_JOB, "holders SITE",
     "Ask the running job who holds SITE's live blocks (its 64 biggest): its Python side\n"
     "walks at the interpreter's next safe point and finds, for each tensor or array in\n"
     "them, the shortest chain of references to a root (a global, a local of a running\n"
     "frame, a class attribute, a closure, an lru_cache, an autograd graph). The answer\n"
     "shows under the site in the stack pane and in the output pane when it comes; while\n"
     "the job is paused in its main thread, after continue. Python jobs only."),
    CMD(set, NULL, ARG_NONE, 0, "set mouse on|off | set auto-load safe-path DIR[:DIR...] | set metrics HOST:PORT|off"
                                " | set holders on|off",
     "set mouse off leaves the mouse to the terminal (to select text); on (the default):\n"
     "a click on a column title sorts by it (again: the other way), on a row selects it\n"
     "(again: show lists its stack), the wheel scrolls. set auto-load safe-path names the\n"
     "directories whose ./.culeakinit may be read at start (as gdb's): given in\n"
     "~/.config/culeak/init, / trusts every directory. set metrics serves the live numbers\n"
     "on http://HOST:PORT/metrics for Prometheus, as record --metrics; off stops. set\n"
     "holders on has each Python process of the job find who holds its tensors at each\n"
     "mark (as --holders): the stack pane shows the latest answer under the site."),
    CMD(quit, "q", ARG_NONE, CMD_NEEDS_JOB, "quit", "Leave the console. With the job still running, asks (y or n) first: y kills the\n"
     "job (SIGTERM, SIGKILL 3 s later), n stays; detach leaves it running."),
};
const size_t cmd_nspecs = sizeof cmd_specs / sizeof *cmd_specs;

int cmd_lookup(const char *word)
{
    size_t n = strlen(word);
    if (!n)
        return -1;
    for (size_t i = 0; i < cmd_nspecs; i++)
        if (strcmp(cmd_specs[i].name, word) == 0 || (cmd_specs[i].alias && strcmp(cmd_specs[i].alias, word) == 0))
            return (int)i;
    int found = -1;
    for (size_t i = 0; i < cmd_nspecs; i++) {
        if (strncmp(cmd_specs[i].name, word, n) == 0) {
            if (found >= 0)
                return -2;
            found = (int)i;
        }
    }
    return found;
}

const char *const sort_field_names[] = {"id", "live", "count", "change", "peak", "allocs", "kind", "site", "module"};
const size_t sort_nfields = sizeof sort_field_names / sizeof *sort_field_names;

static int by_name(const char *const *names, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return (int)i;
    return -1;
}

int sort_field_by_name(const char *s)
{
    if (strcmp(s, "bytes") == 0 || strcmp(s, "size") == 0)
        return 1;
    if (strcmp(s, "delta") == 0)
        return 3;
    return by_name(sort_field_names, sort_nfields, s);
}

int group_by_name(const char *s)
{
    return strcmp(s, "func") == 0 ? MODEL_GROUP_FUNCTION : model_group_by_name(s);
}
