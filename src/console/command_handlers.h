/* The handler of each console command, named for it: cmd_NAME runs `NAME ARGS...`
 * (argv[0] is the command as typed). cmdline.c's CMD rows refer to these by name. */
#ifndef CULEAK_CONSOLE_COMMAND_HANDLERS_H
#define CULEAK_CONSOLE_COMMAND_HANDLERS_H

struct console;

void cmd_help(struct console *c, int argc, char **argv);
void cmd_snapshot(struct console *c, int argc, char **argv);
void cmd_snapshots(struct console *c, int argc, char **argv);
void cmd_diff(struct console *c, int argc, char **argv);
void cmd_autosnapshot(struct console *c, int argc, char **argv);
void cmd_break(struct console *c, int argc, char **argv);
void cmd_tbreak(struct console *c, int argc, char **argv);
void cmd_info(struct console *c, int argc, char **argv);
void cmd_delete(struct console *c, int argc, char **argv);
void cmd_disable(struct console *c, int argc, char **argv);
void cmd_enable(struct console *c, int argc, char **argv);
void cmd_condition(struct console *c, int argc, char **argv);
void cmd_ignore(struct console *c, int argc, char **argv);
void cmd_commands(struct console *c, int argc, char **argv);
void cmd_continue(struct console *c, int argc, char **argv);
void cmd_step(struct console *c, int argc, char **argv);
void cmd_kill(struct console *c, int argc, char **argv);
void cmd_sort(struct console *c, int argc, char **argv);
void cmd_filter(struct console *c, int argc, char **argv);
void cmd_group(struct console *c, int argc, char **argv);
void cmd_show(struct console *c, int argc, char **argv);
void cmd_process(struct console *c, int argc, char **argv);
void cmd_suspects(struct console *c, int argc, char **argv);
void cmd_save(struct console *c, int argc, char **argv);
void cmd_export(struct console *c, int argc, char **argv);
void cmd_compare(struct console *c, int argc, char **argv);
void cmd_goto(struct console *c, int argc, char **argv);
void cmd_input(struct console *c, int argc, char **argv);
void cmd_search(struct console *c, int argc, char **argv);
void cmd_detach(struct console *c, int argc, char **argv);
void cmd_set(struct console *c, int argc, char **argv);
void cmd_holders(struct console *c, int argc, char **argv);
void cmd_quit(struct console *c, int argc, char **argv);

#endif
