/* Splitting a typed command into words, and the table of command names (no curses). */
#ifndef CULEAK_CONSOLE_CMDLINE_H
#define CULEAK_CONSOLE_CMDLINE_H

#include <stddef.h>

#define CMD_MAX_ARGS 16

/* Splits line into at most CMD_MAX_ARGS words (whitespace separated; "double" or 'single'
 * quotes group). Words point into buf (a copy of line). Returns the count, or -1 when a
 * quote is not closed or there are too many words. */
int cmd_split(const char *line, char *buf, size_t buflen, char **argv);

/* What a command's arguments are, for completion. */
enum cmd_arg {
    ARG_NONE, ARG_SITE, ARG_SNAPSHOT, ARG_SORT, ARG_GROUP, ARG_FILE, ARG_GOTO, ARG_PROCESS,
    ARG_COMMAND, ARG_BREAKPOINT, ARG_AUTOSNAP, ARG_TEXT,
};

struct console;
typedef void (*cmd_fn)(struct console *c, int argc, char **argv);

enum cmd_flag {
    CMD_NEEDS_JOB = 1, /* acts on the job: refused before a launched job has started (-ex) */
};

/* One console command: a row of cmd_specs (cmdline.c), with its handler. */
struct cmd_spec {
    const char *name;
    const char *alias;   /* gdb-style short form ("c", "b") or NULL */
    enum cmd_arg arg;
    const char *usage;
    const char *help;
    cmd_fn run;          /* cmd_NAME (command_handlers.h) */
    unsigned flags;      /* enum cmd_flag */
};

extern const struct cmd_spec cmd_specs[];
extern const size_t cmd_nspecs;

/* Finds a command by full name, alias or unique prefix. Returns its index, -1 when
 * unknown, -2 when the prefix is ambiguous. */
int cmd_lookup(const char *word);

/* Sort fields, in the order the table shows them. The groupings are the model's
 * (model_group_name); group_by_name also takes "func". */
extern const char *const sort_field_names[];
extern const size_t sort_nfields;
int sort_field_by_name(const char *s); /* -1 when unknown */
int group_by_name(const char *s);      /* -1 when unknown */

#endif
