/* The job's output: a ring of lines fed with raw terminal bytes (escape sequences
 * dropped, carriage returns and tabs handled). No curses. */
#ifndef CULEAK_CONSOLE_OUTBUF_H
#define CULEAK_CONSOLE_OUTBUF_H

#include <stddef.h>
#include <stdint.h>

#define OUTBUF_LINE_MAX 512

struct outbuf {
    char **lines;      /* ring of complete lines */
    size_t cap, head, count;
    char cur[OUTBUF_LINE_MAX + 1]; /* the line being written */
    size_t curlen, curcol;
    int esc;           /* escape-sequence state */
    uint64_t total;    /* lines ever completed */
};

int outbuf_init(struct outbuf *o, size_t cap);
void outbuf_free(struct outbuf *o);
void outbuf_feed(struct outbuf *o, const char *bytes, size_t n);
/* Lines available, counting the unfinished one when not empty. */
size_t outbuf_lines(const struct outbuf *o);
/* Line i, 0 the oldest kept. */
const char *outbuf_line(const struct outbuf *o, size_t i);
/* Appends a whole line (console messages). */
void outbuf_add_line(struct outbuf *o, const char *line);

#endif
