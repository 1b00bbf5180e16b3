/* A grid of characters with attributes that views draw into. */
#include "grid.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int grid_init(struct grid *g, int h, int w)
{
    if (h < 1)
        h = 1;
    if (w < 1)
        w = 1;
    g->c = calloc((size_t)h * (size_t)w, sizeof *g->c);
    if (!g->c)
        return -1;
    g->h = h;
    g->w = w;
    grid_clear(g);
    return 0;
}

void grid_free(struct grid *g)
{
    free(g->c);
    g->c = NULL;
    g->h = g->w = 0;
}

void grid_clear(struct grid *g)
{
    for (int i = 0; i < g->h * g->w; i++)
        g->c[i] = (struct cell){.ch = ' ', .attr = AT_NORMAL};
    g->cur_y = g->h - 1;
    g->cur_x = 0;
}

void grid_fill(struct grid *g, struct rect r, uint32_t ch, uint8_t attr)
{
    for (int y = r.y; y < r.y + r.h && y < g->h; y++)
        for (int x = r.x; x < r.x + r.w && x < g->w; x++)
            if (y >= 0 && x >= 0)
                g->c[y * g->w + x] = (struct cell){.ch = ch, .attr = attr};
}

int utf8_decode(const char *s, size_t n, uint32_t *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    if (u[0] < 0x80) {
        *cp = u[0];
        return 1;
    }
    int len = u[0] >= 0xF0 && u[0] < 0xF8 ? 4 : u[0] >= 0xE0 ? 3 : u[0] >= 0xC2 && u[0] < 0xE0 ? 2 : 0;
    if (!len || (size_t)len > n) {
        *cp = 0xFFFD;
        return 1;
    }
    uint32_t v = u[0] & (0x7F >> len);
    for (int i = 1; i < len; i++) {
        if ((u[i] & 0xC0) != 0x80) {
            *cp = 0xFFFD;
            return 1;
        }
        v = (v << 6) | (u[i] & 0x3F);
    }
    *cp = v;
    return len;
}

size_t utf8_encode(uint32_t cp, char *o)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | ((cp >> 18) & 0x07)); /* a four-byte lead byte, even past U+1FFFFF */
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

int grid_put(struct grid *g, int y, int x, int max, const char *s, uint8_t attr)
{
    if (y < 0 || y >= g->h || x >= g->w || !s)
        return 0;
    size_t n = strlen(s);
    int col = 0;
    for (size_t i = 0; i < n && col < max && x + col < g->w;) {
        uint32_t cp;
        i += (size_t)utf8_decode(s + i, n - i, &cp);
        if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0))
            cp = '?';
        if (x + col >= 0)
            g->c[y * g->w + x + col] = (struct cell){.ch = cp, .attr = attr};
        col++;
    }
    return col;
}

int grid_putf(struct grid *g, int y, int x, int max, uint8_t attr, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return grid_put(g, y, x, max, buf, attr);
}

char *grid_row_text(const struct grid *g, int y, char *buf, size_t len)
{
    size_t n = 0;
    int last = g->w;
    while (last > 0 && g->c[y * g->w + last - 1].ch == ' ')
        last--;
    for (int x = 0; x < last && n + 5 < len; x++)
        if (g->c[y * g->w + x].ch)
            n += utf8_encode(g->c[y * g->w + x].ch, buf + n);
    buf[n] = 0;
    return buf;
}

char *grid_text(const struct grid *g)
{
    size_t cap = (size_t)g->h * ((size_t)g->w * 4 + 1) + 1;
    char *out = malloc(cap), *o = out;
    if (!out)
        return NULL;
    for (int y = 0; y < g->h; y++) {
        grid_row_text(g, y, o, (size_t)g->w * 4 + 1);
        o += strlen(o);
        *o++ = '\n';
    }
    *o = 0;
    return out;
}

int grid_contains(const struct grid *g, const char *needle)
{
    char *t = grid_text(g);
    int found = t && strstr(t, needle) != NULL;
    free(t);
    return found;
}
