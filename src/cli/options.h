/* Command-line options: one table per command drives both its getopt_long parser and its
 * --help text, so the two cannot disagree. Errors read
 *   culeak check: unknown option '--x'
 *   Try 'culeak check --help'. */
#ifndef CULEAK_CLI_OPTIONS_H
#define CULEAK_CLI_OPTIONS_H

#include <stdio.h>

struct cli_option {
    const char *name; /* long name, without "--" */
    int key;          /* the short letter, or a value >= 256 for a long-only option */
    const char *arg;  /* the argument's name in help ("N", "FILE"); NULL: no argument */
    const char *help; /* what it does; '\n' continues on the next help line */
};

/* A long option also taken with one dash under a short name of its own, as gdb takes
 * -ex for --eval-command. */
struct cli_dash_name {
    const char *dash; /* "ex" */
    const char *name; /* the option's long name */
};

#define CLI_HELP {"help", 'h', NULL, "print this help and exit"}

/* Rows that several commands' tables share, each with the command's own key. */
/* the commands that run a job under the shim (the console, record, check) */
#define CLI_RECORD_DEPTH(key) {"depth", key, "N", "record at most N frames per stack (1 to 256, default 48)"}
/* the commands that report leaks (check, report, the console, open) */
#define CLI_NO_DEFAULT_SUPPRESSIONS(key)                                                                    \
    {"no-default-suppressions", key, NULL, "report what culeak's default suppressions match (memory the\n"  \
                                           "CUDA libraries hold until exit) as leaks"}
#define CLI_NO_POOL(key) {"no-pool", key, NULL, "turn the frameworks' caching allocators off for the job"}
#define CLI_HOLDERS(key)                                                                                    \
    {"holders", key, NULL, "at each mark of a Python job, find who holds its tensors (the\n"                  \
                           "reports say how the holders changed from mark to mark)"}
#define CLI_HOLDERS_ENV() setenv("CULEAK_HOLDERS", "marks", 1)
#define CLI_FREE_STACKS(key)                                                                                \
    {"free-stacks", key, NULL, "record the stack, device and context of every free too\n"                   \
                               "(by default a free carries its address only)"}
/* console commands given first, gdb's -ex and -x (the console, open); WHEN: "before the
 * job starts" */
#define CLI_CONSOLE_SCRIPT(eval_key, file_key, when)                                                        \
    {"eval-command", eval_key, "COMMAND", "run the console command COMMAND\n" when "; repeatable"},         \
    {"command", file_key, "FILE", "run the console commands of FILE (one a line, # comments)\n"              \
                                  when "; repeatable, in order with -ex"}
/* gdb's -nx: the console reads no init file */
#define CLI_NO_INIT(key) {"nx", key, NULL, "read no init file (~/.config/culeak/init, ./.culeakinit)"}
/* where call sites are (check, report): struct cli_call_sites in report_io.h keeps them */
#define CLI_CALL_SITE_OPTIONS(skip, skip_function, my_code)                                                 \
    {"skip", skip, "GLOB", "also look through modules matching GLOB to find call sites"},                   \
    {"skip-function", skip_function, "GLOB", "also look through functions (or source files, a GLOB with '/')"}, \
    {"my-code", my_code, "PREFIX", "Python files under PREFIX are the program's own, even installed\n"       \
                                   "(site-packages): their lines can be call sites; repeatable"}

/* attaching to a running process (attach, record --pid): each step of the debugger's */
#define CLI_ATTACH_TIMEOUT_S 30
#define CLI_ATTACH_TIMEOUT(key)                                                                               \
    {"timeout", key, "SECONDS", "give each step of the attach SECONDS (default 30), then\n"                  \
                                "resume the process and give up"}

struct cli_command {
    const char *name;     /* "check"; NULL: the console (culeak [OPTIONS] -- PROGRAM) */
    const char *summary;  /* one line, in `culeak --help`'s list of commands */
    const char *synopsis; /* after "culeak NAME ": "[OPTIONS] -- PROGRAM [ARGS]" */
    const char *about;    /* the paragraph after the usage line */
    const struct cli_option *options; /* ends with an entry whose name is NULL */
    int program;          /* the first operand starts a program: options end there */
    const struct cli_dash_name *dash_names; /* NULL, or ends with an entry whose dash is NULL */
    int (*run)(int argc, char **argv);
};

/* The handler of one parsed option (key from the table, arg its argument or NULL):
 * 0 to go on, -1 to stop with exit status 0 (--version), or the exit status after
 * printing an error with cli_error(). */
typedef int (*cli_handler)(void *ctx, int key, const char *arg);

/* Parses argv[1..argc) with getopt_long (h NULL: a table with --help only). Options may
 * be --name=VALUE or --name VALUE, -k VALUE or -kVALUE, or -NAME VALUE for an option with
 * a single-dash name (that argv entry is replaced by --name); `--` ends them. --help prints
 * the help on stdout. Returns the index of the first operand (argc when none; with a
 * program command, operands start at the program; otherwise getopt_long moves the
 * operands after the options), or -1 with the exit status in *status: 0 after --help,
 * else 2 (the error printed). */
int cli_parse(const struct cli_command *c, int argc, char **argv, cli_handler h, void *ctx, int *status);

/* The next argument after the one being parsed, for an option that takes two
 * (--diff A B); NULL when there is none. Only from inside a handler. */
const char *cli_next_arg(void);

/* "culeak CMD: MESSAGE" and "Try 'culeak CMD --help'." on stderr; returns 2. */
int cli_error(const struct cli_command *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "culeak CMD: MESSAGE" on stderr (no usage hint: an error of the run, not of usage). */
void cli_fail(const struct cli_command *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An integer argument in [min, max] into *out: 0, or 2 after "--NAME takes MIN to MAX". */
int cli_int(const struct cli_command *c, int key, const char *arg, long min, long max, long *out);

/* The help text: usage line, about, then one line per option of the table. */
void cli_help(FILE *f, const struct cli_command *c);
/* The single-dash name of o in c's table ("ex"), or NULL. */
const char *cli_dash_name(const struct cli_command *c, const struct cli_option *o);
/* "--name" or "-k, --name" of the option with this key ("?" when none). */
const char *cli_option_name(const struct cli_command *c, int key, char *buf, size_t len);

/* The table of a command whose operands are files and whose only option is --help (open,
 * dump), parsed with cli_parse_files(). */
extern const struct cli_option cli_help_only[];
/* cli_parse() for such a command: the index of the first file, or -1 with the exit status
 * in *status (0 after --help; 2 after a bad option, or no file: "missing WHAT (culeak
 * NAME FILE...)"). */
int cli_parse_files(const struct cli_command *c, int argc, char **argv, const char *what, int *status);

/* Every command (the console first), for the dispatcher and the tests; NULL-terminated. */
extern const struct cli_command *const cli_commands[];
extern const struct cli_command cli_console, cli_record, cli_check, cli_report, cli_open, cli_dump, cli_attach,
    cli_aggregate;

#endif
