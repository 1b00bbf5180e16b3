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

#define CLI_HELP {"help", 'h', NULL, "print this help and exit"}

struct cli_command {
    const char *name;     /* "check"; NULL: the console (culeak [OPTIONS] -- PROGRAM) */
    const char *summary;  /* one line, in `culeak --help`'s list of commands */
    const char *synopsis; /* after "culeak NAME ": "[OPTIONS] -- PROGRAM [ARGS]" */
    const char *about;    /* the paragraph after the usage line */
    const struct cli_option *options; /* ends with an entry whose name is NULL */
    int program;          /* the first operand starts a program: options end there */
    int (*run)(int argc, char **argv);
};

/* The handler of one parsed option (key from the table, arg its argument or NULL):
 * 0 to go on, -1 to stop with exit status 0 (--version), or the exit status after
 * printing an error with cli_error(). */
typedef int (*cli_handler)(void *ctx, int key, const char *arg);

/* Parses argv[1..argc) with getopt_long. Options may be --name=VALUE or --name VALUE,
 * -k VALUE or -kVALUE; `--` ends them. --help prints the help on stdout. Returns the
 * index of the first operand (argc when none; with a program command, operands start at
 * the program; otherwise getopt_long moves the operands after the options), or -1 with
 * the exit status in *status: 0 after --help, else 2 (the error printed). */
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
/* "--name" or "-k, --name" of the option with this key ("?" when none). */
const char *cli_option_name(const struct cli_command *c, int key, char *buf, size_t len);

/* Every command (the console first), for the dispatcher and the tests; NULL-terminated. */
extern const struct cli_command *const cli_commands[];
extern const struct cli_command cli_console, cli_record, cli_check, cli_report, cli_open, cli_dump;

#endif
