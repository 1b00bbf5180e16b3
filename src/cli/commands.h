/* Subcommands of the culeak executable; each takes the arguments after its name
 * (argv[0] is the subcommand) and returns the process exit status. */
#ifndef CULEAK_COMMANDS_H
#define CULEAK_COMMANDS_H

/* CULEAK_VERSION, the text of the VERSION file, comes from the Makefile. */

int cmd_record(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_open(int argc, char **argv);
int cmd_console(int argc, char **argv); /* culeak [options] -- PROGRAM [ARGS] */
int cmd_attach(int argc, char **argv);
int cmd_aggregate(int argc, char **argv);

/* -ex COMMAND (file 0) or -x FILE (file 1) of command c into s: 0, or 2 after an error. */
struct cli_command;
struct script;
int cli_script_option(const struct cli_command *c, struct script *s, int file, const char *arg);

#endif
