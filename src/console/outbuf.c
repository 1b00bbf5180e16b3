/* The job's output as a ring of lines. */
#include "outbuf.h"

#include <stdlib.h>
#include <string.h>

int outbuf_init(struct outbuf *o, size_t cap)
{
    memset(o, 0, sizeof *o);
    o->lines = calloc(cap, sizeof *o->lines);
    if (!o->lines)
        return -1;
    o->cap = cap;
    return 0;
}

void outbuf_free(struct outbuf *o)
{
    for (size_t i = 0; i < o->cap; i++)
        free(o->lines[i]);
    free(o->lines);
    memset(o, 0, sizeof *o);
}

static void push(struct outbuf *o, const char *s, size_t n)
{
    char *l = malloc(n + 1);
    if (!l)
        return;
    memcpy(l, s, n);
    l[n] = 0;
    size_t slot = (o->head + o->count) % o->cap;
    if (o->count == o->cap) {
        free(o->lines[o->head]);
        o->lines[o->head] = l;
        o->head = (o->head + 1) % o->cap;
    } else {
        o->lines[slot] = l;
        o->count++;
    }
    o->total++;
}

static void end_line(struct outbuf *o)
{
    push(o, o->cur, o->curlen);
    o->curlen = o->curcol = 0;
}

static void put(struct outbuf *o, char c)
{
    if (o->curcol >= OUTBUF_LINE_MAX)
        end_line(o); /* wrap very long lines */
    if (o->curcol < o->curlen) {
        o->cur[o->curcol++] = c; /* overwrite after a carriage return */
        return;
    }
    o->cur[o->curlen++] = c;
    o->curcol = o->curlen;
}

void outbuf_feed(struct outbuf *o, const char *bytes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)bytes[i];
        switch (o->esc) {
        case 1: /* after ESC */
            o->esc = c == '[' ? 2 : c == ']' ? 3 : (c == '(' || c == ')') ? 4 : 0;
            continue;
        case 2: /* CSI: parameters until a final byte */
            if (c >= 0x40 && c <= 0x7E)
                o->esc = 0;
            continue;
        case 3: /* OSC: until BEL or ESC \ */
            if (c == 7)
                o->esc = 0;
            else if (c == 0x1b)
                o->esc = 1;
            continue;
        case 4: /* charset designation: one byte */
            o->esc = 0;
            continue;
        }
        if (c == 0x1b)
            o->esc = 1;
        else if (c == '\n')
            end_line(o);
        else if (c == '\r')
            o->curcol = 0;
        else if (c == '\b') {
            if (o->curcol)
                o->curcol--;
        } else if (c == '\t') {
            do
                put(o, ' ');
            while (o->curcol % 8);
        } else if (c >= 0x20 || c >= 0x80)
            put(o, (char)c);
    }
}

size_t outbuf_lines(const struct outbuf *o) { return o->count + (o->curlen > 0); }

const char *outbuf_line(const struct outbuf *o, size_t i)
{
    if (i < o->count)
        return o->lines[(o->head + i) % o->cap];
    if (i == o->count && o->curlen) {
        ((struct outbuf *)o)->cur[o->curlen] = 0;
        return o->cur;
    }
    return "";
}

void outbuf_add_line(struct outbuf *o, const char *line)
{
    if (o->curlen)
        end_line(o);
    push(o, line, strlen(line));
}
