/* The job's output pane as a terminal: the pty's bytes go through a terminal emulator
 * (libvterm), so colours, wide characters, cursor movement and long lines come out as
 * they would in a terminal of the pane's size; the rows that scroll off its top are
 * kept as scrollback. The console's own lines are written into the same terminal, each
 * on a line of its own, without disturbing the job's colours. No curses. */
#ifndef CULEAK_CONSOLE_OUTBUF_H
#define CULEAK_CONSOLE_OUTBUF_H

#include <stddef.h>
#include <stdint.h>

#define OUTBUF_MAX_COLS 1024 /* wider panes are cut */

/* One character cell of the output. */
struct ocell {
    uint32_t ch;      /* code point; 0: the right half of the wide character before it */
    uint8_t fg, bg;   /* 0: the terminal's default, 1 to 16: ANSI colour 0 to 15 */
    uint8_t style;    /* OSTYLE_* */
};
enum { OSTYLE_BOLD = 1, OSTYLE_UNDERLINE = 2, OSTYLE_REVERSE = 4, OSTYLE_ITALIC = 8 };

struct orow {
    struct ocell *c;
    int n;            /* cells kept (trailing blanks dropped) */
    int full;         /* it filled the terminal's width: the line likely goes on below */
};

struct outbuf {
    void *vt;         /* VTerm */
    int rows, cols;   /* the emulated terminal */
    struct orow *sb;  /* ring of scrollback rows, oldest at head */
    size_t cap, head, count;
    uint64_t dropped; /* rows that left the ring: row numbers below stay stable */
    const int *reply_fd; /* where the terminal's answers go (the job's pty, when >= 0) */
    char text[OUTBUF_MAX_COLS * 4 + 1]; /* outbuf_line's result */
    struct ocell tmp[OUTBUF_MAX_COLS];
};

/* cap: scrollback rows kept. 0, or -1 when out of memory. */
int outbuf_init(struct outbuf *o, size_t cap);
void outbuf_free(struct outbuf *o);
/* The terminal's size (the pane's); rows that no longer fit go to the scrollback. */
void outbuf_resize(struct outbuf *o, int rows, int cols);
void outbuf_feed(struct outbuf *o, const char *bytes, size_t n);
/* Appends a whole line of the console's (bold: drawn bold) on a line of its own. */
void outbuf_add_line(struct outbuf *o, const char *line);
void outbuf_add_line_styled(struct outbuf *o, const char *line, int bold);
/* Rows available: the scrollback, then the terminal's rows down to the last one used. */
size_t outbuf_lines(const struct outbuf *o);
/* Row i (0 the oldest kept) as UTF-8 text, trailing blanks dropped; valid until the next
 * call. */
const char *outbuf_line(const struct outbuf *o, size_t i);
/* Row i's cells into out (at most max); returns how many. */
int outbuf_cells(const struct outbuf *o, size_t i, struct ocell *out, int max);
/* Where the job's cursor is: its row (an index as above) and column. */
void outbuf_cursor(const struct outbuf *o, size_t *row, int *col);
/* The newest row before `before` (an index as above) where needle starts, case ignored;
 * a row that fills the width is read on into the next, so that a wrapped line is found
 * whole. -1 when none. */
long outbuf_search(const struct outbuf *o, const char *needle, size_t before);

#endif
