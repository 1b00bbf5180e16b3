/* The terminal through ncursesw: one full-screen window drawn from a grid; curses sends
 * only the cells that changed, so redraws do not flicker. */
#include "screen.h"
#include "ui.h"

#include <langinfo.h>
#include <locale.h>
#include <ncursesw/curses.h>
#include <ncursesw/term.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

static int use_color, utf8;
static attr_t attrs[AT_COUNT];

static char why[512];

const char *screen_why(void) { return why; }

/* Whether the terminal can draw the console: a terminfo entry that moves the cursor and
 * clears the screen. ncurses' initscr would exit the program on an unknown terminal. */
static int can_draw(void)
{
    const char *term = getenv("TERM");
    const char *advice = "; run it with culeak record -o FILE -- PROGRAM or culeak check -- PROGRAM, "
                         "or set TERM to your terminal (e.g. TERM=xterm-256color)";
    int err = 0;
    if (!term || !*term) {
        snprintf(why, sizeof why, "TERM is not set, so the console cannot draw%s", advice);
        return 0;
    }
    if (setupterm(NULL, STDOUT_FILENO, &err) != OK) {
        snprintf(why, sizeof why, "the terminal '%s' is unknown here (no terminfo entry), so the console cannot draw%s",
                 term, advice);
        return 0;
    }
    const char *cup = tigetstr("cup"), *clear = tigetstr("clear");
    int ok = cup && cup != (char *)-1 && clear && clear != (char *)-1;
    del_curterm(cur_term);
    if (!ok)
        snprintf(why, sizeof why, "the terminal '%s' cannot move the cursor, so the console cannot draw%s", term,
                 advice);
    return ok;
}

int screen_open(void)
{
    snprintf(why, sizeof why, "the console needs a terminal (use culeak record or culeak check)");
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
        return -1;
    setlocale(LC_ALL, "");
    utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    if (!can_draw())
        return -1;
    if (!initscr())
        return -1;
    raw(); /* Ctrl-C and Ctrl-Z are keys here, never signals */
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    const char *nc = getenv("NO_COLOR");
    use_color = has_colors() && !(nc && *nc);
    if (use_color) {
        start_color();
        use_default_colors();
        init_pair(1, COLOR_WHITE, COLOR_BLUE);
        init_pair(2, COLOR_WHITE, COLOR_RED);
        init_pair(3, COLOR_RED, -1);
        init_pair(4, COLOR_GREEN, -1);
        init_pair(5, COLOR_BLACK, COLOR_CYAN);
        init_pair(6, COLOR_MAGENTA, -1);
    }
    attrs[AT_NORMAL] = A_NORMAL;
    attrs[AT_BOLD] = A_BOLD;
    attrs[AT_DIM] = A_DIM;
    attrs[AT_TITLE] = use_color ? COLOR_PAIR(1) | A_BOLD : A_REVERSE;
    attrs[AT_SELECT] = use_color ? COLOR_PAIR(5) : A_REVERSE | A_BOLD;
    attrs[AT_PAUSED] = use_color ? COLOR_PAIR(2) | A_BOLD | A_BLINK : A_REVERSE | A_BOLD | A_BLINK;
    attrs[AT_GROW] = use_color ? COLOR_PAIR(3) | A_BOLD : A_BOLD;
    attrs[AT_SHRINK] = use_color ? COLOR_PAIR(4) : A_NORMAL;
    attrs[AT_OK] = use_color ? COLOR_PAIR(4) : A_NORMAL;
    attrs[AT_BAD] = use_color ? COLOR_PAIR(3) | A_BOLD : A_BOLD | A_UNDERLINE;
    attrs[AT_SUSPECT] = use_color ? COLOR_PAIR(6) | A_BOLD : A_BOLD;
    curs_set(1);
    return 0;
}

void screen_close(void)
{
    if (!isendwin())
        endwin();
}

void screen_size(int *rows, int *cols) { getmaxyx(stdscr, *rows, *cols); }

void screen_resize(int rows, int cols)
{
    resizeterm(rows, cols);
    clearok(curscr, TRUE);
}

void screen_redraw_all(void) { clearok(curscr, TRUE); }

static short pair_of(attr_t a) { return (short)PAIR_NUMBER(a); }

/* The job's colours (output pane): a pair per foreground/background combination, made on
 * first use; a terminal with 8 colours shows the bright ones as their normal ones. */
#define JOB_PAIR0 16
static unsigned char pair_made[17 * 17];

static short job_colour(int c)
{
    if (!c)
        return -1;
    c--;
    return (short)(c >= COLORS ? c % 8 : c);
}

static attr_t job_attr(const struct cell *c)
{
    attr_t a = A_NORMAL;
    if (c->style & 1)
        a |= A_BOLD;
    if (c->style & 2)
        a |= A_UNDERLINE;
    if (c->style & 4)
        a |= A_REVERSE;
    if (c->style & 8)
        a |= A_ITALIC;
    if (!use_color || (!c->fg && !c->bg) || c->fg > 16 || c->bg > 16)
        return a;
    int idx = c->fg * 17 + c->bg;
    if (JOB_PAIR0 + idx >= COLOR_PAIRS)
        return a;
    if (!pair_made[idx]) {
        init_pair((short)(JOB_PAIR0 + idx), job_colour(c->fg), job_colour(c->bg));
        pair_made[idx] = 1;
    }
    if (c->fg > 8 && COLORS < 16)
        a |= A_BOLD;
    return a | COLOR_PAIR(JOB_PAIR0 + idx);
}

void screen_draw(const struct grid *g)
{
    int rows, cols;
    getmaxyx(stdscr, rows, cols);
    cchar_t line[1024];
    for (int y = 0; y < g->h && y < rows; y++) {
        int n = g->w < cols ? g->w : cols;
        if (n > 1024)
            n = 1024;
        int k = 0, prev_wide = 0;
        for (int x = 0; x < n; x++) {
            const struct cell *c = &g->c[y * g->w + x];
            wchar_t wc[2] = {(wchar_t)c->ch, 0};
            if (!c->ch) {
                if (prev_wide) {
                    prev_wide = 0;
                    continue; /* covered by the wide character before it */
                }
                wc[0] = ' ';
            }
            if (!utf8 && c->ch >= 0x80)
                wc[0] = c->ch >= 0x2581 && c->ch <= 0x2588 ? (wchar_t)" .:-=+*#"[c->ch - 0x2581] : '?';
            int width = wcwidth(wc[0]);
            /* a wide character needs its right half next to it, inside the screen */
            if (width == 2 && !(x + 1 < n && g->c[y * g->w + x + 1].ch == 0))
                width = -1;
            if (width != 1 && width != 2)
                wc[0] = '?';
            prev_wide = width == 2;
            attr_t a = attrs[c->attr < AT_COUNT ? c->attr : 0];
            if (c->attr == AT_NORMAL && (c->fg || c->bg || c->style))
                a = job_attr(c);
            setcchar(&line[k++], wc, a & ~A_COLOR, pair_of(a), NULL);
        }
        mvwadd_wchnstr(stdscr, y, 0, line, k);
    }
    if (g->cur_y >= 0 && g->cur_y < rows && g->cur_x >= 0 && g->cur_x < cols)
        wmove(stdscr, g->cur_y, g->cur_x);
    wnoutrefresh(stdscr);
    doupdate();
}

static int mouse_on = -1, mouse_y, mouse_x, mouse_button;

void screen_mouse(int on)
{
    if (on == mouse_on)
        return;
    mouse_on = on;
    /* a press is a click at once (no wait for its release); the release is asked for too,
     * else ncurses holds it back and hands it out late, in place of the next press */
    mouseinterval(0);
    mousemask(on ? BUTTON1_PRESSED | BUTTON1_RELEASED | BUTTON4_PRESSED | BUTTON5_PRESSED : 0, NULL);
}

void screen_mouse_event(int *y, int *x, int *button)
{
    *y = mouse_y;
    *x = mouse_x;
    *button = mouse_button;
}

static int read_mouse(void)
{
    MEVENT ev;
    if (getmouse(&ev) != OK)
        return SK_NONE;
    mouse_y = ev.y;
    mouse_x = ev.x;
    mouse_button = ev.bstate & BUTTON4_PRESSED   ? UM_WHEEL_UP
                   : ev.bstate & BUTTON5_PRESSED ? UM_WHEEL_DOWN
                   : ev.bstate & BUTTON1_PRESSED ? UM_CLICK : 0;
    return mouse_button ? SK_MOUSE : SK_NONE;
}

int screen_key(char *utf8buf, int *nav)
{
    wint_t wch;
    int r = wget_wch(stdscr, &wch);
    if (r == ERR)
        return SK_NONE;
    if (r == KEY_CODE_YES) {
        switch (wch) {
        case KEY_UP: *nav = UK_UP; return SK_NAV;
        case KEY_DOWN: *nav = UK_DOWN; return SK_NAV;
        case KEY_PPAGE: *nav = UK_PGUP; return SK_NAV;
        case KEY_NPAGE: *nav = UK_PGDN; return SK_NAV;
        case KEY_HOME: *nav = UK_HOME; return SK_NAV;
        case KEY_END: *nav = UK_END; return SK_NAV;
        case KEY_LEFT: return SK_LEFT;
        case KEY_RIGHT: return SK_RIGHT;
        case KEY_BACKSPACE: return SK_BACKSPACE;
        case KEY_DC: return SK_DELETE;
        case KEY_BTAB: return SK_FOCUS;
        case KEY_F(1): return SK_HELP;
        case KEY_MOUSE: return read_mouse();
        case KEY_RESIZE: return SK_RESIZE;
        case KEY_ENTER: strcpy(utf8buf, "\r"); return SK_CHAR;
        default:
            if (wch >= KEY_F(2) && wch <= KEY_F(12)) {
                *nav = (int)(wch - KEY_F0);
                return SK_FKEY;
            }
            return SK_NONE;
        }
    }
    if (wch == 3)
        return SK_INTR;
    if (wch == 12)
        return SK_REDRAW;
    if (wch == 27)
        return SK_ESC;
    mbstate_t st;
    memset(&st, 0, sizeof st);
    size_t n = wcrtomb(utf8buf, (wchar_t)wch, &st);
    if (n == (size_t)-1)
        return SK_NONE;
    utf8buf[n] = 0;
    return SK_CHAR;
}
