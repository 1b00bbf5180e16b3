/* Command-line options (options.h): getopt_long and the help text from one table. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPTIONS 64
#define HELP_COLUMN 30 /* where an option's description starts */

const struct cli_command *const cli_commands[] = {&cli_console, &cli_record, &cli_attach, &cli_check,
                                                  &cli_report,  &cli_open,   &cli_dump,   &cli_aggregate, NULL};

const struct cli_option cli_help_only[] = {CLI_HELP, {0}};

static int parse_argc;
static char **parse_argv;

static const char *command_name(const struct cli_command *c, char *buf, size_t len)
{
    snprintf(buf, len, "culeak%s%s", c->name ? " " : "", c->name ? c->name : "");
    return buf;
}

static void vreport(const struct cli_command *c, const char *fmt, va_list ap)
{
    char name[64];
    fprintf(stderr, "%s: ", command_name(c, name, sizeof name));
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int cli_error(const struct cli_command *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(c, fmt, ap);
    va_end(ap);
    char name[64];
    fprintf(stderr, "Try '%s --help'.\n", command_name(c, name, sizeof name));
    return 2;
}

void cli_fail(const struct cli_command *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(c, fmt, ap);
    va_end(ap);
}

static const struct cli_option *by_key(const struct cli_command *c, int key)
{
    for (const struct cli_option *o = c->options; o->name; o++)
        if (o->key == key)
            return o;
    return NULL;
}

const char *cli_dash_name(const struct cli_command *c, const struct cli_option *o)
{
    for (const struct cli_dash_name *d = c->dash_names; d && d->dash; d++)
        if (!strcmp(d->name, o->name))
            return d->dash;
    return NULL;
}

const char *cli_option_name(const struct cli_command *c, int key, char *buf, size_t len)
{
    const struct cli_option *o = by_key(c, key);
    if (!o)
        snprintf(buf, len, "?");
    else if (cli_dash_name(c, o))
        snprintf(buf, len, "-%s, --%s", cli_dash_name(c, o), o->name);
    else if (o->key < 256)
        snprintf(buf, len, "-%c, --%s", o->key, o->name);
    else
        snprintf(buf, len, "--%s", o->name);
    return buf;
}

int cli_int(const struct cli_command *c, int key, const char *arg, long min, long max, long *out)
{
    const struct cli_option *o = by_key(c, key);
    char *end;
    errno = 0;
    long v = arg && *arg ? strtol(arg, &end, 10) : 0;
    if (!arg || !*arg || errno || *end || v < min || v > max)
        return cli_error(c, "--%s takes %ld to %ld, not '%s'", o ? o->name : "?", min, max, arg ? arg : "");
    *out = v;
    return 0;
}

const char *cli_next_arg(void)
{
    if (optind >= parse_argc || !parse_argv)
        return NULL;
    return parse_argv[optind++];
}

void cli_help(FILE *f, const struct cli_command *c)
{
    char name[64];
    fprintf(f, "usage: %s %s\n%s\noptions:\n", command_name(c, name, sizeof name), c->synopsis, c->about);
    for (const struct cli_option *o = c->options; o->name; o++) {
        char left[128];
        const char *dash = cli_dash_name(c, o);
        int w = dash ? snprintf(left, sizeof left, "  -%s, --%s", dash, o->name)
                : o->key < 256 ? snprintf(left, sizeof left, "  -%c, --%s", o->key, o->name)
                               : snprintf(left, sizeof left, "      --%s", o->name);
        if (o->arg && w > 0 && (size_t)w < sizeof left)
            snprintf(left + w, sizeof left - (size_t)w, " %s", o->arg);
        fputs(left, f);
        int col = (int)strlen(left);
        for (const char *h = o->help; *h;) {
            const char *nl = strchr(h, '\n');
            int n = nl ? (int)(nl - h) : (int)strlen(h);
            if (col >= HELP_COLUMN) { /* a long option: its text starts on the next line */
                fputc('\n', f);
                col = 0;
            }
            fprintf(f, "%*s%.*s\n", HELP_COLUMN - col, "", n, h);
            col = 0;
            h += n + (nl != NULL);
        }
    }
}

/* How many options of the table a long name given as PREFIX could mean. */
static int prefix_matches(const struct cli_command *c, const char *given)
{
    size_t n = strcspn(given, "=");
    int hits = 0;
    for (const struct cli_option *o = c->options; o->name; o++)
        if (!strncmp(o->name, given, n))
            hits += strlen(o->name) == n ? 100 : 1;
    return hits;
}

static int bad_option(const struct cli_command *c, int argc, char **argv)
{
    const char *given = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
    if (optopt) {
        const struct cli_option *o = by_key(c, optopt);
        if (o && !strncmp(given, "--", 2))
            return cli_error(c, "option '--%s' takes no argument", o->name);
        return cli_error(c, "unknown option '-%c'", optopt);
    }
    if (!strncmp(given, "--", 2) && prefix_matches(c, given + 2) > 1 && prefix_matches(c, given + 2) < 100)
        return cli_error(c, "option '%.*s' is ambiguous", (int)strcspn(given, "="), given);
    return cli_error(c, "unknown option '%.*s'", (int)strcspn(given, "="), given);
}

static const struct cli_option *by_long_name(const struct cli_command *c, const char *name, size_t n)
{
    for (const struct cli_option *o = c->options; o->name; o++)
        if (strlen(o->name) == n && !strncmp(o->name, name, n))
            return o;
    return NULL;
}

/* What single_dash_names put into argv, and what was typed there (for errors). */
static struct dash_given {
    const char *put, *typed;
} dash_given[MAX_OPTIONS];
static int ndash_given;

static const char *as_typed(const char *arg)
{
    for (int i = 0; i < ndash_given; i++)
        if (dash_given[i].put == arg)
            return dash_given[i].typed;
    return arg;
}

/* gdb's single-dash long names (-ex CMD): getopt_long would read -ex as -e x, so each is
 * replaced by its --name before parsing. Walks the options as getopt_long will, stepping
 * over their arguments, and stops where they end (`--`, or the program's name). */
static void single_dash_names(const struct cli_command *c, int argc, char **argv)
{
    static char rewritten[MAX_OPTIONS][64]; /* the --names put into argv, which keeps them */
    ndash_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--"))
            return;
        if (a[0] != '-' || !a[1]) {
            if (c->program)
                return;
            continue;
        }
        if (a[1] == '-') {
            size_t n = strcspn(a + 2, "=");
            const struct cli_option *o = by_long_name(c, a + 2, n);
            i += o && o->arg && !a[2 + n];
            continue;
        }
        const struct cli_option *o = c->options;
        while (o->name && !(cli_dash_name(c, o) && !strcmp(a + 1, cli_dash_name(c, o))))
            o++;
        if (o->name && (size_t)(o - c->options) < sizeof rewritten / sizeof *rewritten) {
            char *r = rewritten[o - c->options];
            snprintf(r, sizeof rewritten[0], "--%s", o->name);
            if (ndash_given < MAX_OPTIONS)
                dash_given[ndash_given++] = (struct dash_given){r, argv[i]};
            argv[i] = r;
            i += o->arg != NULL;
            continue;
        }
        const struct cli_option *k = by_key(c, (unsigned char)a[1]);
        i += k && k->arg && !a[2];
    }
}

int cli_parse(const struct cli_command *c, int argc, char **argv, cli_handler h, void *ctx, int *status)
{
    single_dash_names(c, argc, argv);
    struct option lo[MAX_OPTIONS + 1];
    char shorts[3 * MAX_OPTIONS + 3];
    size_t n = 0, s = 0;
    if (c->program)
        shorts[s++] = '+'; /* the program's own options are not ours */
    shorts[s++] = ':';     /* ':' for a missing argument: our message, not getopt's */
    for (const struct cli_option *o = c->options; o->name && n < MAX_OPTIONS; o++, n++) {
        lo[n] = (struct option){o->name, o->arg ? required_argument : no_argument, NULL, o->key};
        if (o->key < 256) {
            shorts[s++] = (char)o->key;
            if (o->arg)
                shorts[s++] = ':';
        }
    }
    shorts[s] = 0;
    memset(&lo[n], 0, sizeof lo[n]);
    parse_argc = argc;
    parse_argv = argv;
    optind = 0; /* a full reinitialisation of getopt: commands may be parsed more than once */
    opterr = 0;
    int key, rc = 0;
    while (rc == 0 && (key = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        const struct cli_option *o = key == '?' || key == ':' ? NULL : by_key(c, key);
        if (key == '?') {
            rc = bad_option(c, argc, argv);
        } else if (key == ':') {
            const struct cli_option *m = by_key(c, optopt);
            const char *given = optind > 0 && optind <= argc ? as_typed(argv[optind - 1]) : "?";
            rc = cli_error(c, "option '%.*s' needs an argument (%s)", (int)strcspn(given, "="), given,
                           m && m->arg ? m->arg : "?");
        } else if (o && !strcmp(o->name, "help")) {
            cli_help(stdout, c);
            *status = 0;
            parse_argv = NULL;
            return -1;
        } else {
            rc = h ? h(ctx, key, optarg) : cli_error(c, "option %d is not handled", key);
        }
    }
    parse_argv = NULL;
    if (rc) {
        *status = rc < 0 ? 0 : rc;
        return -1;
    }
    return optind;
}

int cli_parse_files(const struct cli_command *c, int argc, char **argv, const char *what, int *status)
{
    int first = cli_parse(c, argc, argv, NULL, NULL, status);
    if (first >= 0 && first >= argc) {
        *status = cli_error(c, "missing %s (culeak %s %s)", what, c->name, c->synopsis);
        return -1;
    }
    return first;
}
