/* Breakpoints on call sites: parsing, conditions, the list (no curses, no sockets). */
#ifndef CULEAK_CONSOLE_BREAKPOINTS_H
#define CULEAK_CONSOLE_BREAKPOINTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum bp_cond {
    BP_ANY,         /* any new allocation at the site */
    BP_LIVE_ABOVE,  /* the site's live bytes > value */
    BP_GROWS,       /* the site's live bytes >= base + value */
    BP_COUNT_ABOVE, /* the site's live count > value */
};

struct bp_spec {
    char site[256];  /* as typed: a table id, a function name, file:line */
    enum bp_cond cond;
    uint64_t value;
};

/* Parses "SITE [CONDITION]" from argv (words after `break`). 0, or -1 with err set. */
int bp_parse(int argc, char **argv, struct bp_spec *out, char *err, size_t errlen);
/* Parses a CONDITION alone ("live > 1GiB", "if count > 3"; empty: any allocation) into
 * out->cond and out->value, as `condition N` takes it. 0, or -1 with err set. */
int bp_parse_cond(const char *text, struct bp_spec *out, char *err, size_t errlen);

/* Whether the condition holds for a site now holding live_bytes/live_count (the
 * allocation being made included); base: the site's live bytes when the breakpoint was set. */
int bp_cond_met(enum bp_cond cond, uint64_t value, uint64_t base, uint64_t live_bytes, uint64_t live_count);

/* "live > 64.0 MiB", "grows 10.0 MiB", "count > 100", "any allocation". */
char *bp_cond_describe(char *buf, size_t len, enum bp_cond cond, uint64_t value);

/* A (process, stack) a breakpoint covers: the shim is told to WATCH it. */
struct bp_member {
    int proc;
    uint64_t stack;
};

struct breakpoint {
    int id;
    int enabled;
    struct bp_spec spec;
    char what[256];   /* resolved description: the row's text, or the pattern */
    int by_row;       /* set by table id: covers the row (group, row) of the model */
    int group;        /* enum model_group when it was set */
    uint32_t row;
    uint64_t base;    /* live bytes of what it covers when set (grows SIZE) */
    uint64_t grown;   /* grows SIZE: the growth (a multiple of SIZE) it last paused at */
    uint64_t hits;
    int temporary;    /* tbreak: deleted when it pauses */
    uint64_t ignore;  /* ignore N COUNT: pauses it lets pass before it pauses again */
    char *commands;   /* commands N ... end: console commands, one a line, run when it pauses */
    struct bp_member *members;
    size_t nmembers, capmembers;
};

struct bp_list {
    struct breakpoint *v;
    size_t n, cap;
    int next_id;
};

/* Whether b pauses an allocation that leaves what it covers holding live_bytes/live_count
 * (that allocation included). A pause is counted in hits; `grows SIZE` then waits for the
 * next multiple: it pauses at base + SIZE, base + 2 SIZE, ... (a jump past several pauses once).
 * While b->ignore is above 0, a hit is counted and lets the allocation go (ignore goes down
 * by one), as gdb's ignore count. */
int bp_hit(struct breakpoint *b, uint64_t live_bytes, uint64_t live_count);

struct breakpoint *bp_add(struct bp_list *l, const struct bp_spec *spec);
struct breakpoint *bp_find(struct bp_list *l, int id);
int bp_delete(struct bp_list *l, int id); /* 0, or -1 when there is no such breakpoint */
void bp_clear(struct bp_list *l);
void bp_free(struct bp_list *l);
size_t bp_count_enabled(const struct bp_list *l);
/* Adds a covered stack (once); 1 when it was new, 0 when known, -1 out of memory. */
int bp_add_member(struct breakpoint *b, int proc, uint64_t stack);
int bp_has_member(const struct breakpoint *b, int proc, uint64_t stack);
/* Replaces b's commands with text (lines joined by '\n'; NULL or "": none). 0, or -1 out of memory. */
int bp_set_commands(struct breakpoint *b, const char *text);
/* Writes the breakpoints as console commands that set them again (save breakpoints FILE,
 * read back with -x FILE): each as typed where it was set by a name or file:line, by its
 * site's text where it was set by a table id (ids differ from one run to the next), then
 * its ignore count, commands and whether it is disabled, on $bpnum (the one set last). */
void bp_write_commands(FILE *f, const struct bp_list *l);

#endif
