/* Everything the screen shows, as plain data: the views render it into a grid, the
 * commands change it. No curses, no sockets here, so all of it is unit-tested. */
#ifndef CULEAK_CONSOLE_UI_H
#define CULEAK_CONSOLE_UI_H

#include "breakpoints.h"
#include "grid.h"
#include "model/model.h"
#include "outbuf.h"

#include <stddef.h>
#include <stdint.h>

enum job_state { JOB_NONE /* a recording */, JOB_STARTING, JOB_RUNNING, JOB_PAUSED, JOB_EXITED };

enum sort_field { SORT_ID, SORT_LIVE, SORT_COUNT, SORT_CHANGE, SORT_PEAK, SORT_ALLOCS, SORT_KIND, SORT_SITE,
                  SORT_MODULE };
/* Columns whose natural order is ascending (ids, texts: A to Z); the others show the
 * largest first. sort_reverse turns either around. */
static inline int sort_ascends(enum sort_field f)
{
    return f == SORT_ID || f == SORT_KIND || f == SORT_SITE || f == SORT_MODULE;
}

/* One table row: a model row plus what the console adds (change since the latest
 * snapshot, or the diff's A side). */
struct row {
    uint32_t id;           /* the model's row id in the current grouping */
    uint64_t live, count, peak, allocs, a_bytes;
    int64_t change, count_change;
    uint32_t kinds, nstacks;
    const char *text, *module;
    int named;             /* text is resolved; else module+0xoffset (ui_name_row resolves it) */
    int stack_proc;        /* the member stack with the most bytes */
    uint64_t stack;
};

/* Buffers of the table's sort (row_order.h), kept from one frame to the next. */
struct row_sort_scratch {
    uint64_t *keys;   /* 5 arrays of cap keys */
    size_t cap;
    int nk, f, reverse; /* the keys made last (rows_keys); nk 0: text, by the comparator */
    const struct row *rows; /* ... of these rows */
    unsigned w[3];
    int multi_pass; /* tests: a pass per key even where packed keys would fit */
    struct row *spare; /* the rows are gathered into it, then it takes the rows' place */
    size_t spare_cap;
    /* The text columns' keys: every text pointer seen (site and module texts; NULL reads
     * as ""), in text order (texts[]), and its place among the distinct texts (rank_of,
     * a hash by pointer). A pointer's text must not change while the scratch keeps it:
     * the model's strings never do. Grows by merging when new texts (names resolved, new
     * sites) appear; made again from the rows' texts when most of it is stale. */
    const char **texts;
    size_t ntexts, texts_cap;
    const char **hash_ptr; /* open addressing, hash_cap a power of 2; rank UINT32_MAX: empty */
    uint32_t *hash_rank;
    size_t hash_cap;
    int text_merges;       /* how often new texts were merged in (ranks changed) */
    const char **slot_ptr; /* by row id << 1 | blocks row: the text last ranked, its rank */
    uint32_t *slot_rank;   /* (UINT32_MAX: none since the ranks last changed) */
    size_t slots_cap;
    int slots_merges;      /* text_merges when the slots were emptied */
};

/* The allocation the job is paused in. */
struct held {
    int proc;
    uint64_t seq, tid, size, leaf;
    uint32_t api, kind;
    int device;
    int bp_id;        /* 0: a step */
    uint64_t bp_hits; /* the breakpoint's hits, this one included */
    int64_t growth;   /* the site's growth since the breakpoint was set */
    uint64_t site_live;
};

/* Which state of the model the table shows: live now, or (recordings) the state at the
 * peak, at a failed allocation or in a snapshot (marks, start). */
struct view_source {
    enum model_source kind;
    char snapshot[80];
    int failure;
};

#define SPARK_N 48
#define UI_SUSPECTS_MARKED 32
#define UI_HTML_MOMENTS 256 /* moments kept per process for `export FILE.html` */

/* Growth suspects for the header line (suspects_view.c), recomputed when marks arrive. */
struct ui_suspects {
    const struct model *m; /* computed on this model, process filter, mark count ... */
    int proc;
    uint64_t marks;
    uint64_t ended;        /* ... and count of processes that ended */
    size_t n;
    size_t sites, procs;   /* distinct call sites and processes among them (a site of two
                            * runs opened together is one site) */
    double growth;         /* bytes per iteration of them all */
    double fastest;        /* ... and of the fastest one */
    int forecast, device;  /* the one that fills its device soonest, of a running process: */
    double fill_marks, fill_s, interval_s;
    int sproc[UI_SUSPECTS_MARKED];      /* the first ones' stacks: their rows are marked */
    uint64_t sstack[UI_SUSPECTS_MARKED];
};

/* A snapshot's bytes and count per row id (id << 1 | a site's blocks row), kept by the
 * frames for the change column and diffs while the snapshot, the grouping, the process
 * and the table's source stay the same. */
struct base_cache {
    struct model *m;
    uint64_t stamp;        /* model_snapshot_stamp; 0: nothing kept */
    char name[80], source_snapshot[80];
    enum model_group group;
    enum model_source source;
    int proc;
    uint64_t *bytes, *count;
    size_t n;
};

/* What a table's rows were made from (ui_rows_refresh). */
struct rows_key {
    struct model *m;
    uint64_t generation;
    enum model_group group;
    enum model_source src_kind;
    int failure, proc_filter, diff_active;
    enum sort_field sort;
    int sort_reverse;
    char snapshot[80], base[80], diff_a[80], diff_b[80], filter[256];
};

struct ui {
    struct model *m;       /* the one picture of the job: every view reads it */
    struct bp_list bps;
    enum model_group group;
    struct view_source src;
    char base[80];         /* the latest snapshot: the change column counts from it */
    unsigned auto_snap;    /* automatic snapshot names s1, s2, ... */
    uint8_t *gone;         /* by process: its connection closed without EXIT */
    size_t ngone;
    struct outbuf out;

    char title[512];       /* the job's command or the recordings' names */
    char cwd[1024];        /* the job's working directory: paths under it are shown relative */
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
    enum sort_field sort_before_diff; /* diff off puts the order back */
    int sort_reverse_before_diff;
    char diff_a[80], diff_b[80]; /* snapshot names; diff_b empty: now */
    struct row *rows;
    size_t nrows, caprows;
    struct row_sort_scratch sort_scratch;
    struct base_cache base_cache;
    struct rows_key rows_key; /* what the rows were made from, while rows_kept */
    int rows_kept;
    /* rows[sorted_lo..sorted_hi) are in their places, the others around them in no order:
     * a frame of a big table orders no more rows than it shows (ui_rows_need orders all) */
    size_t sorted_lo, sorted_hi;
    size_t table_rows;     /* rows the table pane shows (set by ui_render) */
    uint64_t total_bytes, total_count; /* every row of the source, before the filter */
    struct model_memory memory; /* the rows in PyTorch's words (memory.pools 0: untracked) */
    size_t sel, top;
    uint32_t sel_site;     /* the selected row's id: keeps the selection when rows move */
    int sel_valid;

    int focus_output;      /* arrows scroll the output pane instead of the table */
    int mouse_off;         /* set mouse off: the terminal keeps its own selection */
    int keyboard_job;      /* keys go to the job's terminal (input, Ctrl-]) */
    size_t out_scroll;     /* lines scrolled back from the newest */
    uint64_t out_hit;      /* the output row search found (out.dropped + index + 1); 0: none */
    uint64_t out_seen;     /* output rows ever (out.dropped + rows) at the last frame */
    char out_search[128];  /* the text searched for last */

    int help_open;         /* the help view covers the panes */
    size_t help_top;
    char help_topic[32];   /* help COMMAND; empty: everything */

    struct ui_suspects suspects;

    char msg[512];
    int msg_error;
    struct held held;
    /* holders SITE (holders_cmd.c): the row asked about, and the processes whose answer
     * has not come yet (the stack pane says it waits) */
    uint32_t holders_row;
    int holders_waiting;

    /* the prompt, handed in by the readline glue */
    const char *prompt, *line;
    int point;
    char completions[512];
};

/* 0, or -1 when out of memory. The ui owns its model. */
int ui_init(struct ui *u);
void ui_free(struct ui *u);
void ui_message(struct ui *u, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Recomputes the table's rows (source, filter, process, diff, sort), keeping the
 * selection. Costs O(stacks), never O(live allocations). */
void ui_rows(struct ui *u);
/* What each frame calls: the same, but keeps the rows (and only puts the selection
 * right) when neither the model (model_generation) nor anything of the ui that they
 * depend on has changed since they were made; and the rows it makes may come without
 * names (text and module NULL, named 0) where neither the filter nor the sort reads them:
 * the views name the rows they show (ui_name_row). */
void ui_rows_refresh(struct ui *u);
/* Orders the rows if a frame left rows[lo..hi) out of order; 1 when it sorted (the
 * selection stays on its row, maybe at another index). Call before reading a row outside
 * [sorted_lo, sorted_hi). */
int ui_rows_need(struct ui *u, size_t lo, size_t hi);
/* Tables of at least this many rows: frames order only the rows on screen. */
#define UI_PARTIAL_MIN 4096
/* The first row the table shows, from the last one, the selection, the rows that fit
 * and the rows there are: the selection stays in view, the view moves as little as it can. */
size_t ui_table_top(size_t top, size_t sel, size_t fit, size_t n);
/* Site names (a libdw lookup each, ~60 us) are resolved lazily, so that a table of 100k
 * new sites costs tens of milliseconds: rows come with module+0xoffset text, the rows
 * on screen are resolved before they are drawn (ui_name_row), and the console resolves
 * the rest in bounded slices between frames (ui_resolve_names). Commands that need
 * every name (filter TEXT, sort site, group function|file, export) resolve all pending
 * names when typed and say how many; sites that appear afterwards are filtered and
 * sorted by their module+0xoffset text until their turn comes a moment later (grouping
 * by function or file always resolves: its row ids come from names). */
void ui_name_row(struct ui *u, struct row *r);
/* Resolves pending names for at most budget_s seconds (0: all); returns how many. */
size_t ui_resolve_names(struct ui *u, double budget_s);
/* Table id of a row as shown and typed (the model's id + 1). */
static inline unsigned ui_site_id(uint32_t id) { return id + 1; }
/* Resolves SITE text (a table id or a pattern) to a row of the current grouping (the
 * biggest match); 0 with *row filled, -1 when nothing matches. */
int ui_find_site(struct ui *u, const char *spec, struct row *row);
/* A row of the current grouping by model id, live now; 0, or -1 when unknown. */
int ui_row_by_id(struct ui *u, uint32_t id, struct row *row);
/* Live memory of the table's source (all processes, or the process filter). */
void ui_totals(struct ui *u, uint64_t *bytes, uint64_t *count);
/* With tensor tracking (out->pools != 0): allocated, reserved and other, as ui_totals. */
void ui_memory(struct ui *u, struct model_memory *out);
/* Breakpoints against the model (bp_model.c): the stacks b covers now and its base (the
 * live bytes of what it covers); whether it covers a stack; its live memory now, in
 * O(its stacks), never O(live allocations). */
void ui_bp_collect(struct ui *u, struct breakpoint *b);
int ui_bp_covers(struct ui *u, const struct breakpoint *b, int proc, uint64_t stack);
void ui_bp_live(struct ui *u, const struct breakpoint *b, uint64_t *bytes, uint64_t *count);
/* Sort key name of enum sort_field. */
const char *ui_sort_name(enum sort_field f);
/* Adds a sample to the live-bytes history. */
void ui_sample(struct ui *u);
/* The allocations made after snapshot A still live now (made up to B when b is not NULL:
 * a lower bound, see model_diff), grouped by stack, listed in the output pane with their
 * stacks; their total in *bytes and *count. O(live allocations): commands only.
 * 0, or -1 when a snapshot does not exist. */
int ui_diff_new(struct ui *u, const char *a, const char *b, uint64_t *bytes, uint64_t *count);
/* A stack in the output pane, folded, at most max_lines lines (stack_list.c). */
void ui_list_stack(struct ui *u, int proc, uint64_t stack, size_t max_lines);
/* Marks seen (the ends of NVTX ranges are no marks), over all processes. */
size_t ui_mark_count(const struct ui *u);
/* " 20 marks, 20 snapshots " for the header; empty when there are none. */
char *ui_marks_text(const struct ui *u, char *buf, size_t len);
/* Kind names of a mask: "device", "device+managed". */
char *ui_kinds(uint32_t kinds, char *buf, size_t len);

/* Growth suspects (suspects_view.c): refresh the header's figures (cheap when no mark
 * arrived); the header line; list them in the output pane (returns how many, -1 when
 * out of memory). */
void ui_suspects_refresh(struct ui *u);
void ui_suspects_line(const struct ui *u, char *buf, size_t len);
int ui_suspects_list(struct ui *u);
/* Whether row r of the table holds a growth suspect (marked '*' and highlighted). */
int ui_row_is_suspect(const struct ui *u, const struct row *r);

/* ---- views ---- */
enum ui_key { UK_UP = 1, UK_DOWN, UK_PGUP, UK_PGDN, UK_HOME, UK_END };

struct view {
    const char *name;
    void (*render)(struct ui *u, struct grid *g, struct rect r);
    int (*key)(struct ui *u, int key, struct rect r); /* 1 when handled */
};

extern const struct view header_view, table_view, stack_view, output_view, status_view, prompt_view, help_view,
    keybar_view;
/* The key bar's function key at column x of a bar w wide (keybar_view.c); 0: none. */
int keybar_key_at(int x, int w);
/* The sort field of the table's column title at column x of a table w wide, or -1 (table_view.c). */
int table_column_at(const struct ui *u, int w, int x);
/* htop's single keys on an empty prompt: '>' the next column, '<' the one before (as a
 * table w columns wide shows them), 'I' the other way. The `sort` command that does it
 * into cmd: 1, or 0 when key is none of them. */
int ui_sort_key(const struct ui *u, int w, int key, char *cmd, size_t len);
/* Opens the help view on a topic (NULL: every command and key); whether a topic names a
 * command (a unique prefix, or a prefix of several). */
void ui_help_open(struct ui *u, const char *topic);
int help_topic_known(const char *topic);
/* Keys for the help view (screen.h's SK_*): F1 opens and closes it, ? opens it from an
 * empty prompt; while open, q (on an empty prompt) and Esc close it and any other typed
 * character closes it and goes on to the prompt. 1 when the key was used up. */
int help_key(struct ui *u, int sk, const char *utf8, int prompt_empty);

struct layout {
    struct rect header, table, stack, output, status, prompt;
    struct rect keys; /* the key bar, h 0 on screens of fewer than LAYOUT_KEYS_MIN_ROWS rows */
    int too_small; /* below LAYOUT_MIN_ROWS x LAYOUT_MIN_COLS: one line says so, and the prompt */
};
enum { LAYOUT_MIN_ROWS = 8, LAYOUT_MIN_COLS = 20, LAYOUT_KEYS_MIN_ROWS = 12 };
/* The panes of an h x w screen; every rect lies inside it. */
void layout_compute(int h, int w, struct layout *l);
/* Renders the whole screen into g (sized h x w by the caller). */
void ui_render(struct ui *u, struct grid *g, const struct layout *l);
/* Sends a navigation key to the focused pane. */
void ui_key(struct ui *u, int key, const struct layout *l);
/* The table pane as drawn (a line of growth suspects takes its first row). */
void ui_table_rect(const struct ui *u, const struct layout *l, struct rect *tab);

/* The mouse (mouse.c). A click on a column title sorts by it (again: the other way), on a
 * row selects it (on the selected row: `show` lists its stack), on the key bar presses the
 * key; the wheel scrolls the pane under it. Returns UM_NONE, UM_DRAWN (the screen changed),
 * UM_COMMAND (run cmd) or UM_FKEY (press function key *fkey). */
enum { UM_CLICK = 1, UM_WHEEL_UP, UM_WHEEL_DOWN };
enum { UM_NONE, UM_DRAWN, UM_COMMAND, UM_FKEY };
int ui_mouse(struct ui *u, const struct layout *l, int y, int x, int button, char *cmd, size_t len, int *fkey);

#endif
