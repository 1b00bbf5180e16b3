/* Commands about the panes rather than the job's memory: searching the output, the help
 * view, handing the keyboard to the job. */
#ifndef CULEAK_CONSOLE_PANE_CMDS_H
#define CULEAK_CONSOLE_PANE_CMDS_H

struct console;

/* search [TEXT]: the newest output line containing TEXT (the rest of the line), or the
 * next older match of the last search. */
void cmd_search(struct console *c, int argc, char **argv);

#endif
