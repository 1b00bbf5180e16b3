/* The terminal through curses: set-up, copying a grid to the screen, reading keys. */
#ifndef CULEAK_CONSOLE_SCREEN_H
#define CULEAK_CONSOLE_SCREEN_H

#include "grid.h"

int screen_open(void);        /* 0, or -1 when stdin/stdout is not a terminal that can draw */
const char *screen_why(void); /* why screen_open failed, with what to do instead */
void screen_close(void);
void screen_size(int *rows, int *cols);
void screen_resize(int rows, int cols);
void screen_redraw_all(void);  /* Ctrl-L: repaint everything next time */
void screen_draw(const struct grid *g); /* wnoutrefresh + doupdate: only changed cells go out */

enum { SK_NONE, SK_CHAR, SK_NAV, SK_LEFT, SK_RIGHT, SK_BACKSPACE, SK_DELETE, SK_FOCUS, SK_RESIZE, SK_INTR,
       SK_REDRAW, SK_HELP /* F1 */, SK_ESC, SK_FKEY, SK_MOUSE };
/* Reads one key without waiting: SK_NONE when there is none. For SK_CHAR, utf8 holds the
 * bytes (NUL terminated); for SK_NAV, *nav is a ui_key; for SK_FKEY, *nav is N of FN (2 to
 * 12); for SK_MOUSE, screen_mouse_event() tells what happened. */
int screen_key(char *utf8, int *nav);
/* The mouse (ncurses' mouse support): on or off (the terminal selects text then). */
void screen_mouse(int on);
/* The last SK_MOUSE: cell, and enum ui_mouse_button. */
void screen_mouse_event(int *y, int *x, int *button);

#endif
