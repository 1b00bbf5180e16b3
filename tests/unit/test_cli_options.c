/* The command line: every option of every command's table is in its --help text, is
 * accepted by the parser as --name=VALUE, --name VALUE and -k VALUE, and is in
 * culeak(1)'s SYNOPSIS (and the SYNOPSIS names nothing else); errors and `--`. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../../src/cli/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct seen {
    int key[16];
    const char *arg[16];
    int n;
};

static int record_option(void *ctx, int key, const char *arg)
{
    struct seen *s = ctx;
    if (s->n < 16) {
        s->key[s->n] = key;
        s->arg[s->n++] = arg;
    }
    return 0;
}

/* Parses argv (NULL-terminated) with the table of c: the first operand's index, or -1. */
static int parse(const struct cli_command *c, struct seen *s, int *status, char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    memset(s, 0, sizeof *s);
    return cli_parse(c, argc, argv, record_option, s, status);
}

static char *help_text(const struct cli_command *c)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    cli_help(f, c);
    fclose(f);
    return buf;
}

static int is_help(const struct cli_option *o) { return !strcmp(o->name, "help"); }

static void test_help_lists_every_option(void **state)
{
    (void)state;
    for (const struct cli_command *const *c = cli_commands; *c; c++) {
        char *h = help_text(*c);
        for (const struct cli_option *o = (*c)->options; o->name; o++) {
            char want[160];
            if (cli_dash_name(*c, o))
                snprintf(want, sizeof want, "\n  -%s, --%s%s%s", cli_dash_name(*c, o), o->name, o->arg ? " " : "",
                         o->arg ? o->arg : "");
            else if (o->key < 256)
                snprintf(want, sizeof want, "\n  -%c, --%s%s%s", o->key, o->name, o->arg ? " " : "",
                         o->arg ? o->arg : "");
            else
                snprintf(want, sizeof want, "\n      --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
            if (!strstr(h, want))
                fail_msg("culeak %s --help lacks '%s'", (*c)->name ? (*c)->name : "", want + 1);
            char first_line[256]; /* and the first line of what it does */
            snprintf(first_line, sizeof first_line, "%.*s", (int)strcspn(o->help, "\n"), o->help);
            if (!strstr(h, first_line))
                fail_msg("culeak %s --help lacks the text of --%s", (*c)->name ? (*c)->name : "", o->name);
        }
        free(h);
    }
}

static void test_parser_accepts_every_option(void **state)
{
    (void)state;
    for (const struct cli_command *const *c = cli_commands; *c; c++) {
        for (const struct cli_option *o = (*c)->options; o->name; o++) {
            if (is_help(o))
                continue;
            struct seen s;
            int status = -7;
            char cmd[] = "cmd", value[] = "VAL", eq[160], name[160], shortname[4] = {'-', (char)o->key, 0, 0};
            snprintf(eq, sizeof eq, "--%s=VAL", o->name);
            snprintf(name, sizeof name, "--%s", o->name);
            if (o->arg) {
                char *forms[][4] = {{cmd, eq, NULL}, {cmd, name, value, NULL}, {cmd, shortname, value, NULL}};
                for (int k = 0; k < (o->key < 256 ? 3 : 2); k++) {
                    int i = parse(*c, &s, &status, forms[k]);
                    if (i < 0 || s.n != 1 || s.key[0] != o->key || strcmp(s.arg[0], "VAL"))
                        fail_msg("%s: form %d of --%s not parsed", (*c)->name ? (*c)->name : "culeak", k, o->name);
                }
                /* the argument is required */
                char *missing[] = {cmd, name, NULL};
                assert_int_equal(parse(*c, &s, &status, missing), -1);
                assert_int_equal(status, 2);
            } else {
                char *plain[] = {cmd, name, NULL}, *with[] = {cmd, eq, NULL};
                assert_true(parse(*c, &s, &status, plain) >= 0);
                assert_int_equal(s.n, 1);
                assert_int_equal(s.key[0], o->key);
                assert_int_equal(parse(*c, &s, &status, with), -1); /* --flag=VAL: an error */
                assert_int_equal(status, 2);
            }
        }
    }
}

/* gdb's -ex CMD: a single-dash name is the option's --name, in order with the others; the
 * same word among the program's arguments is the program's. */
static void test_single_dash_names(void **state)
{
    (void)state;
    struct seen s;
    int status;
    char *a[] = {"culeak", "-ex", "break a.c:1", "-x", "cmds", "--eval-command=info", "-ex", "-ex",
                 "--", "prog", "-ex", "x", NULL};
    assert_int_equal(parse(&cli_console, &s, &status, a), 9);
    assert_int_equal(s.n, 4);
    assert_string_equal(s.arg[0], "break a.c:1");
    assert_int_equal(s.key[0], s.key[2]);
    assert_int_equal(s.key[1], 'x');
    assert_string_equal(s.arg[1], "cmds");
    assert_string_equal(s.arg[2], "info");
    assert_string_equal(s.arg[3], "-ex"); /* an option's argument is not an option */
    assert_string_equal(a[10], "-ex");
    char *b[] = {"culeak", "prog", "-ex", "x", NULL}; /* the program's: no -- needed */
    assert_int_equal(parse(&cli_console, &s, &status, b), 1);
    assert_int_equal(s.n, 0);
    assert_string_equal(b[2], "-ex");
    char *h = help_text(&cli_console);
    assert_non_null(strstr(h, "\n  -ex, --eval-command COMMAND "));
    free(h);
}

/* The three ways into the console (a job, a running process, recordings) take gdb's -nx
 * and the suppressions of the leak report it writes alike. */
static void test_consoles_take_the_same_options(void **state)
{
    (void)state;
    const struct cli_command *consoles[] = {&cli_console, &cli_attach, &cli_open};
    for (size_t i = 0; i < sizeof consoles / sizeof *consoles; i++) {
        struct seen s;
        int status = 0;
        char *a[] = {"culeak", "-nx", "--suppressions", "mine.supp", "--no-default-suppressions", "--", "1234", NULL};
        if (parse(consoles[i], &s, &status, a) != 6)
            fail_msg("culeak %s does not take -nx, --suppressions FILE and --no-default-suppressions",
                     consoles[i]->name ? consoles[i]->name : "(console)");
        assert_int_equal(s.n, 3);
        assert_string_equal(s.arg[1], "mine.supp");
    }
}

static void test_program_and_double_dash(void **state)
{
    (void)state;
    struct seen s;
    int status;
    /* the program's own options are not culeak's, with or without -- */
    char *a[] = {"check", "--depth=3", "--", "prog", "--depth", "5", NULL};
    assert_int_equal(parse(&cli_check, &s, &status, a), 3);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.arg[0], "3");
    char *b[] = {"check", "-d", "4", "prog", "-o", "x", NULL};
    assert_int_equal(parse(&cli_check, &s, &status, b), 3);
    assert_int_equal(s.n, 1);
    /* report: options after the files too (getopt_long moves the files last) */
    char *c[] = {"report", "r0.culeak", "--format", "json", "r1.culeak", "-o", "out.json", NULL};
    int i = parse(&cli_report, &s, &status, c);
    assert_int_equal(i, 5);
    assert_string_equal(c[5], "r0.culeak");
    assert_string_equal(c[6], "r1.culeak");
    assert_int_equal(s.n, 2);
}

static void test_errors(void **state)
{
    (void)state;
    struct seen s;
    int status = 0;
    char *unknown[] = {"check", "--x", "--", "prog", NULL};
    assert_int_equal(parse(&cli_check, &s, &status, unknown), -1);
    assert_int_equal(status, 2);
    char *unknown_short[] = {"record", "-Z", NULL};
    assert_int_equal(parse(&cli_record, &s, &status, unknown_short), -1);
    assert_int_equal(status, 2);
    char *help[] = {"dump", "--help", NULL};
    FILE *saved = stdout;
    stdout = fopen("/dev/null", "w");
    assert_int_equal(parse(&cli_dump, &s, &status, help), -1);
    fclose(stdout);
    stdout = saved;
    assert_int_equal(status, 0);
    /* a unique prefix is the option, as with every getopt_long program */
    char *prefix[] = {"report", "--merge", "f", NULL};
    assert_int_equal(parse(&cli_report, &s, &status, prefix), 2);
    assert_int_equal(s.n, 1);
}

/* open and dump: files, --help and nothing else; no file is a usage error */
static void test_file_commands(void **state)
{
    (void)state;
    int status = -1;
    char *files[] = {"dump", "a.culeak", "b.culeak", NULL};
    assert_int_equal(cli_parse_files(&cli_dump, 3, files, "the recordings to print", &status), 1);
    FILE *saved = stderr;
    stderr = fopen("/dev/null", "w");
    char *none[] = {"open", NULL};
    assert_int_equal(cli_parse_files(&cli_open, 1, none, "the recordings to open", &status), -1);
    assert_int_equal(status, 2);
    char *bad[] = {"open", "--frames", "a.culeak", NULL};
    status = -1;
    assert_int_equal(cli_parse_files(&cli_open, 3, bad, "the recordings to open", &status), -1);
    assert_int_equal(status, 2);
    fclose(stderr);
    stderr = saved;
    FILE *out = stdout;
    stdout = fopen("/dev/null", "w");
    char *help[] = {"dump", "--help", NULL};
    assert_int_equal(cli_parse_files(&cli_dump, 2, help, "the recordings to print", &status), -1);
    fclose(stdout);
    stdout = out;
    assert_int_equal(status, 0);
}

/* The option names culeak(1)'s SYNOPSIS gives a command: the words after each "Fl". */
static int man_synopsis(const char *command, char names[][64], int max)
{
    FILE *f = fopen("man/culeak.1", "r");
    assert_non_null(f);
    char line[512];
    int in_synopsis = 0, in_block = 0, n = 0, first = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (!strncmp(line, ".Sh ", 4)) {
            in_synopsis = !strcmp(line, ".Sh SYNOPSIS");
            in_block = 0;
            continue;
        }
        if (!in_synopsis)
            continue;
        if (!strcmp(line, ".Nm")) {
            first = 1;
            in_block = 0;
            continue;
        }
        if (first) { /* the line after .Nm: ".Cm NAME" for a command, else the console's options */
            first = 0;
            const char *name = !strncmp(line, ".Cm ", 4) ? line + 4 : NULL;
            in_block = command ? name && !strcmp(name, command) : !name;
        }
        if (!in_block)
            continue;
        char *save = NULL, *prev = NULL;
        for (char *w = strtok_r(line, " ", &save); w; prev = w, w = strtok_r(NULL, " ", &save))
            if (prev && (!strcmp(prev, "Fl") || !strcmp(prev, ".Fl")) && strcmp(w, "-") && n < max)
                snprintf(names[n++], 64, "%s", w);
    }
    fclose(f);
    return n;
}

static void test_man_synopsis_matches_tables(void **state)
{
    (void)state;
    for (const struct cli_command *const *c = cli_commands; *c; c++) {
        char names[64][64];
        int n = man_synopsis((*c)->name, names, 64);
        const char *cmd = (*c)->name ? (*c)->name : "(console)";
        for (const struct cli_option *o = (*c)->options; o->name; o++) {
            if (is_help(o) || !strcmp(o->name, "version"))
                continue; /* in the page's DESCRIPTION, as usual */
            int found = 0;
            for (int k = 0; k < n; k++)
                found |= (names[k][0] == '-' && !strcmp(names[k] + 1, o->name)) ||
                         (o->key < 256 && names[k][0] == (char)o->key && !names[k][1]);
            if (!found)
                fail_msg("culeak(1) SYNOPSIS of %s lacks --%s", cmd, o->name);
        }
        for (int k = 0; k < n; k++) {
            int found = 0;
            for (const struct cli_option *o = (*c)->options; o->name; o++)
                found |= (names[k][0] == '-' && !strcmp(names[k] + 1, o->name)) ||
                         (o->key < 256 && names[k][0] == (char)o->key && !names[k][1]);
            if (!found)
                fail_msg("culeak(1) SYNOPSIS of %s names -%s, which the parser does not take", cmd, names[k]);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_lists_every_option),
        cmocka_unit_test(test_parser_accepts_every_option),
        cmocka_unit_test(test_program_and_double_dash),
        cmocka_unit_test(test_single_dash_names),
        cmocka_unit_test(test_consoles_take_the_same_options),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_file_commands),
        cmocka_unit_test(test_man_synopsis_matches_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
