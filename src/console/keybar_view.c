/* The key bar, as htop's: the function keys on the last line, each a key and its word. */
#include "ui.h"

#include <stdio.h>

static const struct {
    int key;
    const char *word;
} keys[] = {{1, "Help"}, {3, "Search"}, {5, "Group"}, {6, "Sort"}, {9, "Kill"}, {10, "Quit"}};
#define NKEYS (int)(sizeof keys / sizeof *keys)

/* Each key takes an equal share of the line, at most 10 columns: "F1" then its word. */
static int slot_width(int w)
{
    int s = w / NKEYS;
    return s > 10 ? 10 : s;
}

static void render(struct ui *u, struct grid *g, struct rect r)
{
    (void)u;
    int s = slot_width(r.w);
    grid_fill(g, r, ' ', AT_SELECT);
    for (int i = 0; i < NKEYS && s >= 3; i++) {
        char k[8];
        int x = r.x + i * s;
        int n = snprintf(k, sizeof k, "F%d", keys[i].key);
        grid_fill(g, (struct rect){r.y, x, 1, n}, ' ', AT_NORMAL);
        grid_put(g, r.y, x, n, k, AT_NORMAL);
        grid_put(g, r.y, x + n, s - n, keys[i].word, AT_SELECT);
    }
}

int keybar_key_at(int x, int w)
{
    int s = slot_width(w), i = s >= 3 && x >= 0 ? x / s : NKEYS;
    return i < NKEYS ? keys[i].key : 0;
}

static int no_key(struct ui *u, int k, struct rect r)
{
    (void)u;
    (void)k;
    (void)r;
    return 0;
}

const struct view keybar_view = {"keys", render, no_key};
