/* Commands gdb users bring with them: one-shot breakpoints, conditions and ignore counts set
 * afterwards, commands run at a breakpoint, and the settings of `set`. */
#ifndef CULEAK_CONSOLE_GDB_CMDS_H
#define CULEAK_CONSOLE_GDB_CMDS_H

struct console;

/* A breakpoint number as typed: N, or $bpnum (the one set last, as gdb's). 0 with *id set,
 * or -1 with the message shown. */
int cmd_bp_number(struct console *c, const char *word, int *id);


#endif
