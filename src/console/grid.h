/* A screen-sized grid of characters with attributes: views draw into it, the curses
 * layer copies it to the terminal, tests read it as text. No curses here. */
#ifndef CULEAK_CONSOLE_GRID_H
#define CULEAK_CONSOLE_GRID_H

#include <stddef.h>
#include <stdint.h>

enum attr {
    AT_NORMAL, AT_BOLD, AT_DIM, AT_TITLE, AT_SELECT, AT_PAUSED, AT_GROW, AT_SHRINK, AT_OK, AT_BAD,
    AT_SUSPECT, /* a growth suspect's row in the table */
    AT_COUNT
};

struct cell {
    uint32_t ch; /* Unicode code point; 0: the right half of the wide character before it */
    uint8_t attr;
    uint8_t fg, bg, style; /* the job's own colours and style (output pane): see struct ocell */
};

struct grid {
    int h, w;
    struct cell *c;
    int cur_y, cur_x; /* where the terminal cursor goes (the prompt) */
};

struct rect {
    int y, x, h, w;
};

int grid_init(struct grid *g, int h, int w); /* 0, or -1 out of memory */
void grid_free(struct grid *g);
void grid_clear(struct grid *g);
void grid_fill(struct grid *g, struct rect r, uint32_t ch, uint8_t attr);
/* Writes UTF-8 text at (y, x) clipped to max columns (and to the grid); control
 * characters show as '?'. Returns the columns used. */
int grid_put(struct grid *g, int y, int x, int max, const char *utf8, uint8_t attr);
int grid_putf(struct grid *g, int y, int x, int max, uint8_t attr, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Text of row y, trailing blanks removed, as UTF-8 into buf. */
char *grid_row_text(const struct grid *g, int y, char *buf, size_t len);
/* Whole grid as text, rows separated by newlines (caller frees). */
char *grid_text(const struct grid *g);
/* Whether any row contains needle. */
int grid_contains(const struct grid *g, const char *needle);

/* Decodes one UTF-8 sequence; returns bytes used (>= 1), *cp gets U+FFFD when invalid. */
int utf8_decode(const char *s, size_t n, uint32_t *cp);
/* Writes cp as UTF-8 into out (room for 4 bytes): the bytes written. One encoder for the
 * grid and the output pane. */
size_t utf8_encode(uint32_t cp, char *out);

#endif
