/* GNU readline through its callback interface, drawn by the console (no terminal I/O of
 * its own): history under $XDG_STATE_HOME/culeak/history, completion of commands, sites,
 * snapshots. */
#ifndef CULEAK_CONSOLE_PROMPT_H
#define CULEAK_CONSOLE_PROMPT_H

struct console;

void prompt_open(struct console *c);
void prompt_close(void);
void prompt_feed(const char *bytes);   /* typed bytes */
void prompt_move(int delta);           /* cursor left (-1) / right (+1) */
void prompt_delete(void);              /* the character under the cursor */
void prompt_clear(void);               /* Ctrl-C: forget the line */
void prompt_sync(struct console *c);   /* hands the line and cursor to the prompt view */
int prompt_empty(void);                /* nothing typed on the line */
/* Up/Down while the line holds text: the previous/next command of the history; 0 when
 * the line is empty (the arrows are the table's). */
int prompt_recall(int up);
/* The history file path ($XDG_STATE_HOME/culeak/history or ~/.local/state/...). */
const char *prompt_history_path(void);

#endif
