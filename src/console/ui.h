/* Everything the screen shows, as plain data: the views render it into a grid, the
 * commands change it. No curses, no sockets here, so all of it is unit-tested. */
#ifndef CULEAK_CONSOLE_UI_H
#define CULEAK_CONSOLE_UI_H

#include "breakpoints.h"
#include "grid.h"
#include "outbuf.h"
#include "snap.h"
#include "track.h"

#include <stddef.h>
#include <stdint.h>

enum job_state { JOB_NONE /* a recording */, JOB_STARTING, JOB_RUNNING, JOB_PAUSED, JOB_EXITED };

enum sort_field { SORT_ID, SORT_LIVE, SORT_COUNT, SORT_CHANGE, SORT_PEAK, SORT_ALLOCS, SORT_KIND, SORT_SITE,
                  SORT_MODULE };

struct row {
    uint32_t site;
    uint64_t live, count, peak, allocs, a_bytes;
    int64_t change, count_change;
    uint32_t kinds;
};

/* The allocation the job is paused in. */
struct held {
    int proc;
    uint64_t seq, tid, size, leaf;
    uint32_t api, kind, stat;
    int device;
    int bp_id;        /* 0: a step */
    int64_t growth;   /* the site's growth since the breakpoint was set */
    uint64_t site_live;
};

#define SPARK_N 48

struct ui {
    struct tracker tr;
    struct snap_list snaps;
    struct bp_list bps;
    struct outbuf out;

    char title[512];       /* the job's command or the recordings' names */
    enum job_state state;
    int exit_status;       /* wait status when EXITED */
    double now;            /* seconds since the session began */
    double rate;           /* events per second */
    uint64_t spark[SPARK_N];
    size_t nspark;
    char timeline[160];    /* recordings: where the timeline stands */

    enum sort_field sort;
    int sort_reverse;
    char filter[256];
    int proc_filter;       /* process index, -1: all */
    int diff_active;
    int diff_a, diff_b;    /* snapshot indexes; diff_b -1: now */
    struct row *rows;
    size_t nrows, caprows;
    size_t sel, top;
    uint32_t sel_site;     /* keeps the selection on its site when rows move */
    int sel_valid;

    int focus_output;      /* arrows scroll the output pane instead of the table */
    size_t out_scroll;     /* lines scrolled back from the newest */

    char msg[512];
    int msg_error;
    struct held held;

    /* the prompt, handed in by the readline glue */
    const char *prompt, *line;
    int point;
    char completions[512];
};

void ui_init(struct ui *u);
void ui_free(struct ui *u);
void ui_message(struct ui *u, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Recomputes the table's rows (filter, process, diff, sort), keeping the selection. */
void ui_rows(struct ui *u);
/* Table id of a site (its index + 1) and back. */
static inline unsigned ui_site_id(uint32_t site) { return site + 1; }
/* Resolves SITE text (an id or a pattern) to a site index among the current sites;
 * -1 when nothing matches. */
long ui_find_site(struct ui *u, const char *spec);
/* Adds a sample to the live-bytes history. */
void ui_sample(struct ui *u);
/* Kind names of a mask: "device", "device+managed". */
char *ui_kinds(uint32_t kinds, char *buf, size_t len);

/* ---- views ---- */
enum ui_key { UK_UP = 1, UK_DOWN, UK_PGUP, UK_PGDN, UK_HOME, UK_END };

struct view {
    const char *name;
    void (*render)(struct ui *u, struct grid *g, struct rect r);
    int (*key)(struct ui *u, int key, struct rect r); /* 1 when handled */
};

extern const struct view header_view, table_view, stack_view, output_view, status_view, prompt_view;

struct layout {
    struct rect header, table, stack, output, status, prompt;
};
void layout_compute(int h, int w, struct layout *l);
/* Renders the whole screen into g (sized h x w by the caller). */
void ui_render(struct ui *u, struct grid *g, const struct layout *l);
/* Sends a navigation key to the focused pane. */
void ui_key(struct ui *u, int key, const struct layout *l);

#endif
