/* The output pane's terminal: libvterm does the emulation; this keeps its scrollback and
 * reads its cells. */
#include "outbuf.h"
#include "grid.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <vterm.h>

#define DEFAULT_ROWS 24
#define DEFAULT_COLS 200 /* until the pane says its size: wide, so nothing wraps early */

/* xterm's first 16 colours: true colour and the 256-colour cube map to the nearest */
static const uint8_t ansi16[16][3] = {
    {0, 0, 0},     {205, 0, 0},   {0, 205, 0},   {205, 205, 0},   {0, 0, 238},   {205, 0, 205},
    {0, 205, 205}, {229, 229, 229}, {127, 127, 127}, {255, 0, 0}, {0, 255, 0},   {255, 255, 0},
    {92, 92, 255}, {255, 0, 255}, {0, 255, 255}, {255, 255, 255},
};

static VTerm *vt_of(const struct outbuf *o) { return o->vt; }

static uint8_t colour_of(VTermScreen *s, VTermColor c, int fg)
{
    if (fg ? VTERM_COLOR_IS_DEFAULT_FG(&c) : VTERM_COLOR_IS_DEFAULT_BG(&c))
        return 0;
    if (VTERM_COLOR_IS_INDEXED(&c) && c.indexed.idx < 16)
        return (uint8_t)(c.indexed.idx + 1);
    vterm_screen_convert_color_to_rgb(s, &c);
    int best = 0;
    long bestd = -1;
    for (int i = 0; i < 16; i++) {
        long dr = (long)c.rgb.red - ansi16[i][0], dg = (long)c.rgb.green - ansi16[i][1],
             db = (long)c.rgb.blue - ansi16[i][2];
        long d = dr * dr + dg * dg + db * db;
        if (bestd < 0 || d < bestd) {
            bestd = d;
            best = i;
        }
    }
    return (uint8_t)(best + 1);
}

static struct ocell cell_of(VTermScreen *s, const VTermScreenCell *v)
{
    struct ocell c = {.ch = v->chars[0]};
    if (c.ch == (uint32_t)-1)
        c.ch = 0; /* the right half of a wide character */
    else if (c.ch == 0)
        c.ch = ' ';
    c.fg = colour_of(s, v->fg, 1);
    c.bg = colour_of(s, v->bg, 0);
    c.style = (uint8_t)((v->attrs.bold ? OSTYLE_BOLD : 0) | (v->attrs.underline ? OSTYLE_UNDERLINE : 0) |
                        (v->attrs.reverse ? OSTYLE_REVERSE : 0) | (v->attrs.italic ? OSTYLE_ITALIC : 0));
    return c;
}

static int blank(const struct ocell *c) { return c->ch == ' ' && !c->bg && !(c->style & ~OSTYLE_BOLD); }

static int trimmed(const struct ocell *c, int n)
{
    while (n > 0 && blank(&c[n - 1]))
        n--;
    return n;
}

static void push_row(struct outbuf *o, const struct ocell *c, int n)
{
    struct orow r = {NULL, n, n >= o->cols};
    if (n && !(r.c = malloc((size_t)n * sizeof *r.c)))
        r.n = 0;
    if (r.c)
        memcpy(r.c, c, (size_t)n * sizeof *c);
    if (o->count == o->cap) {
        free(o->sb[o->head].c);
        o->sb[o->head] = r;
        o->head = (o->head + 1) % o->cap;
        o->dropped++;
    } else {
        o->sb[(o->head + o->count) % o->cap] = r;
        o->count++;
    }
}

static int sb_pushline(int cols, const VTermScreenCell *cells, void *user)
{
    struct outbuf *o = user;
    VTermScreen *s = vterm_obtain_screen(o->vt);
    if (cols > OUTBUF_MAX_COLS)
        cols = OUTBUF_MAX_COLS;
    for (int i = 0; i < cols; i++)
        o->tmp[i] = cell_of(s, &cells[i]);
    push_row(o, o->tmp, trimmed(o->tmp, cols));
    return 1;
}

/* The terminal grew taller: the newest scrollback rows come back onto it. */
static int sb_popline(int cols, VTermScreenCell *cells, void *user)
{
    struct outbuf *o = user;
    if (!o->count)
        return 0;
    size_t slot = (o->head + o->count - 1) % o->cap;
    struct orow *r = &o->sb[slot];
    for (int i = 0; i < cols; i++) {
        VTermScreenCell *v = &cells[i];
        memset(v, 0, sizeof *v);
        v->width = 1;
        vterm_color_indexed(&v->fg, 7);
        v->fg.type |= VTERM_COLOR_DEFAULT_FG;
        vterm_color_indexed(&v->bg, 0);
        v->bg.type |= VTERM_COLOR_DEFAULT_BG;
        if (i >= r->n)
            continue;
        const struct ocell *c = &r->c[i];
        v->chars[0] = c->ch ? c->ch : (uint32_t)-1;
        if (c->fg) {
            vterm_color_indexed(&v->fg, (uint8_t)(c->fg - 1));
        }
        if (c->bg) {
            vterm_color_indexed(&v->bg, (uint8_t)(c->bg - 1));
        }
        v->attrs.bold = !!(c->style & OSTYLE_BOLD);
        v->attrs.underline = !!(c->style & OSTYLE_UNDERLINE);
        v->attrs.reverse = !!(c->style & OSTYLE_REVERSE);
        v->attrs.italic = !!(c->style & OSTYLE_ITALIC);
    }
    free(r->c);
    o->count--;
    return 1;
}

static const VTermScreenCallbacks callbacks = {.sb_pushline = sb_pushline, .sb_popline = sb_popline};

/* What a terminal answers (the cursor position a program asks for with ESC [ 6 n, its
 * identity) goes back to the job, as a terminal would send it: a program that waits for
 * the answer must not hang. */
static void reply(const char *bytes, size_t len, void *user)
{
    struct outbuf *o = user;
    int fd = o->reply_fd ? *o->reply_fd : -1;
    while (fd >= 0 && len) {
        ssize_t w = write(fd, bytes, len);
        if (w <= 0 && errno != EINTR)
            return; /* the job reads nothing: dropped, as a full terminal buffer would */
        if (w > 0) {
            bytes += w;
            len -= (size_t)w;
        }
    }
}

int outbuf_init(struct outbuf *o, size_t cap)
{
    memset(o, 0, sizeof *o);
    if (!cap)
        cap = 1;
    o->sb = calloc(cap, sizeof *o->sb);
    VTerm *vt = vterm_new(DEFAULT_ROWS, DEFAULT_COLS);
    if (!o->sb || !vt) {
        free(o->sb);
        if (vt)
            vterm_free(vt);
        memset(o, 0, sizeof *o);
        return -1;
    }
    o->vt = vt;
    o->cap = cap;
    o->rows = DEFAULT_ROWS;
    o->cols = DEFAULT_COLS;
    vterm_set_utf8(vt, 1);
    vterm_output_set_callback(vt, reply, o);
    VTermScreen *s = vterm_obtain_screen(vt);
    vterm_screen_set_callbacks(s, &callbacks, o);
    vterm_screen_enable_altscreen(s, 1);
    vterm_screen_reset(s, 1);
    return 0;
}

void outbuf_free(struct outbuf *o)
{
    for (size_t i = 0; i < o->count; i++)
        free(o->sb[(o->head + i) % o->cap].c);
    free(o->sb);
    if (o->vt)
        vterm_free(vt_of(o));
    memset(o, 0, sizeof *o);
}

void outbuf_resize(struct outbuf *o, int rows, int cols)
{
    if (cols > OUTBUF_MAX_COLS)
        cols = OUTBUF_MAX_COLS;
    if (!o->vt || rows < 1 || cols < 1 || (rows == o->rows && cols == o->cols))
        return;
    vterm_set_size(vt_of(o), rows, cols);
    o->rows = rows;
    o->cols = cols;
}

void outbuf_feed(struct outbuf *o, const char *bytes, size_t n)
{
    if (o->vt && n)
        vterm_input_write(vt_of(o), bytes, n);
}

/* The job's pen (SGR state) as an SGR sequence, to put back after a console line. */
static void pen_sgr(VTermState *st, char *buf, size_t len)
{
    VTermValue v;
    size_t n = (size_t)snprintf(buf, len, "\x1b[0");
    static const struct {
        VTermAttr a;
        const char *sgr;
    } flags[] = {{VTERM_ATTR_BOLD, ";1"},  {VTERM_ATTR_ITALIC, ";3"},  {VTERM_ATTR_UNDERLINE, ";4"},
                 {VTERM_ATTR_BLINK, ";5"}, {VTERM_ATTR_REVERSE, ";7"}, {VTERM_ATTR_STRIKE, ";9"}};
    for (size_t i = 0; i < sizeof flags / sizeof *flags && n < len; i++)
        if (vterm_state_get_penattr(st, flags[i].a, &v) && v.number)
            n += (size_t)snprintf(buf + n, len - n, "%s", flags[i].sgr);
    for (int fg = 1; fg >= 0 && n < len; fg--) {
        if (!vterm_state_get_penattr(st, fg ? VTERM_ATTR_FOREGROUND : VTERM_ATTR_BACKGROUND, &v))
            continue;
        VTermColor c = v.color;
        if (fg ? VTERM_COLOR_IS_DEFAULT_FG(&c) : VTERM_COLOR_IS_DEFAULT_BG(&c))
            continue;
        if (VTERM_COLOR_IS_INDEXED(&c))
            n += (size_t)snprintf(buf + n, len - n, ";%d;5;%u", fg ? 38 : 48, c.indexed.idx);
        else
            n += (size_t)snprintf(buf + n, len - n, ";%d;2;%u;%u;%u", fg ? 38 : 48, c.rgb.red, c.rgb.green,
                                  c.rgb.blue);
    }
    if (n < len)
        snprintf(buf + n, len - n, "m");
}

void outbuf_add_line_styled(struct outbuf *o, const char *line, int bold)
{
    if (!o->vt)
        return;
    VTerm *vt = vt_of(o);
    VTermState *st = vterm_obtain_state(vt);
    VTermPos pos;
    vterm_state_get_cursorpos(st, &pos);
    char pen[160];
    pen_sgr(st, pen, sizeof pen);
    /* a line of its own: after the job's unfinished line, and the job goes on below */
    if (pos.col > 0)
        vterm_input_write(vt, "\r\n", 2);
    vterm_input_write(vt, bold ? "\x1b[0;1m" : "\x1b[0m", bold ? 6 : 4);
    size_t n = strlen(line), from = 0;
    for (size_t i = 0; i <= n; i++) {
        unsigned char ch = (unsigned char)line[i];
        if (i < n && ch >= 0x20 && ch != 0x7f)
            continue;
        vterm_input_write(vt, line + from, i - from);
        if (i < n)
            vterm_input_write(vt, "?", 1); /* control characters never reach the emulator */
        from = i + 1;
    }
    vterm_input_write(vt, "\r\n", 2);
    vterm_input_write(vt, pen, strlen(pen));
}

void outbuf_add_line(struct outbuf *o, const char *line) { outbuf_add_line_styled(o, line, 0); }

/* Rows of the terminal in use: down to the last written one or the cursor's. */
static int screen_used(const struct outbuf *o)
{
    VTerm *vt = vt_of(o);
    VTermScreen *s = vterm_obtain_screen(vt);
    VTermPos cur;
    vterm_state_get_cursorpos(vterm_obtain_state(vt), &cur);
    int used = cur.row + (cur.col > 0);
    for (int r = o->rows - 1; r >= used; r--) {
        for (int c = 0; c < o->cols; c++) {
            VTermScreenCell v;
            if (vterm_screen_get_cell(s, (VTermPos){r, c}, &v) && v.chars[0] && v.chars[0] != ' ')
                return r + 1;
        }
    }
    return used;
}

void outbuf_cursor(const struct outbuf *o, size_t *row, int *col)
{
    VTermPos cur = {0, 0};
    if (o->vt)
        vterm_state_get_cursorpos(vterm_obtain_state(vt_of(o)), &cur);
    *row = o->count + (size_t)cur.row;
    *col = cur.col;
}

size_t outbuf_lines(const struct outbuf *o)
{
    if (!o->vt)
        return 0;
    return o->count + (size_t)screen_used(o);
}

int outbuf_cells(const struct outbuf *o, size_t i, struct ocell *out, int max)
{
    if (!o->vt)
        return 0;
    if (i < o->count) {
        const struct orow *r = &o->sb[(o->head + i) % o->cap];
        int n = r->n < max ? r->n : max;
        memcpy(out, r->c, (size_t)n * sizeof *out);
        return n;
    }
    i -= o->count;
    if (i >= (size_t)o->rows)
        return 0;
    VTermScreen *s = vterm_obtain_screen(vt_of(o));
    int n = o->cols < max ? o->cols : max;
    for (int c = 0; c < n; c++) {
        VTermScreenCell v;
        if (!vterm_screen_get_cell(s, (VTermPos){(int)i, c}, &v)) {
            n = c;
            break;
        }
        out[c] = cell_of(s, &v);
    }
    return trimmed(out, n);
}

const char *outbuf_line(const struct outbuf *o, size_t i)
{
    struct outbuf *w = (struct outbuf *)o; /* the text and cell buffers are scratch space */
    int n = outbuf_cells(o, i, w->tmp, OUTBUF_MAX_COLS);
    size_t len = 0;
    for (int k = 0; k < n; k++)
        if (w->tmp[k].ch)
            len += utf8_encode(w->tmp[k].ch, w->text + len);
    w->text[len] = 0;
    return w->text;
}

/* Whether row i filled the terminal's width. */
static int row_full(const struct outbuf *o, size_t i)
{
    if (i < o->count)
        return o->sb[(o->head + i) % o->cap].full;
    struct outbuf *w = (struct outbuf *)o;
    return outbuf_cells(o, i, w->tmp, OUTBUF_MAX_COLS) >= o->cols;
}

long outbuf_search(const struct outbuf *o, const char *needle, size_t before)
{
    size_t total = outbuf_lines(o);
    if (before > total)
        before = total;
    size_t cap = 4 * (size_t)OUTBUF_MAX_COLS * 4 + 1;
    char *text = malloc(cap);
    if (!text)
        return -1;
    long found = -1;
    for (size_t i = before; i-- > 0 && found < 0;) {
        /* row i and, while a row fills the width, the rows it wraps into (a few at most) */
        size_t len = 0;
        for (size_t j = i; j < total && j < i + 4; j++) {
            const char *t = outbuf_line(o, j);
            size_t n = strlen(t);
            if (len + n + 1 > cap)
                break;
            memcpy(text + len, t, n);
            len += n;
            if (!row_full(o, j))
                break;
        }
        text[len] = 0;
        if (strcasestr(text, needle))
            found = (long)i; /* the newer rows did not match: the match starts here */
    }
    free(text);
    return found;
}
