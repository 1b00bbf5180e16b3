/* The console's `compare FILE`: the job (or recordings) shown against a baseline run. */
#ifndef CULEAK_CONSOLE_COMPARE_CMD_H
#define CULEAK_CONSOLE_COMPARE_CMD_H

struct console;

/* compare FILE: the comparison of report --baseline FILE, in the output pane. */
void cmd_compare(struct console *c, int argc, char **argv);

#endif
