/* Console commands given on the command line, gdb's way: -ex CMD and -x FILE (one command
 * a line, blank lines and # comments skipped), kept in the order given and run before the
 * job starts or once `culeak open` has read its recordings (no curses: unit-tested). */
#ifndef CULEAK_CONSOLE_SCRIPT_H
#define CULEAK_CONSOLE_SCRIPT_H

#include <stddef.h>

struct script_line {
    char *text;  /* the command */
    char *where; /* for its error: "-ex" or "FILE:LINE" */
    int source;  /* 0: an -ex; else the number of its -x file (an error skips the rest of it) */
};

struct script {
    struct script_line *v;
    size_t n, cap;
    int nfiles;
};

/* -ex CMD: 0, or -1 out of memory. */
int script_add_command(struct script *s, const char *cmd);
/* The lines of a command file's text, named name in errors: 0, or -1 out of memory. */
int script_add_text(struct script *s, const char *name, const char *text, size_t len);
/* -x FILE: 0, or -1 with the reason in err ("FILE: No such file or directory"). */
int script_add_file(struct script *s, const char *path, char *err, size_t errlen);
void script_free(struct script *s);

#endif
