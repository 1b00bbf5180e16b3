/* The console session: the screen, the prompt, the job, its ring readers and (for
 * `culeak open`) the timeline of recordings. */
#ifndef CULEAK_CONSOLE_CONSOLE_H
#define CULEAK_CONSOLE_CONSOLE_H

#include "grid.h"
#include "pty.h"
#include "ring_reader.h"
#include "timeline.h"
#include "script.h"
#include "ui.h"

struct console_options {
    char **argv;             /* the job (NULL with recordings) */
    char **files;            /* recordings for `culeak open` */
    int nfiles;
    int depth;
    double snapshot_every;   /* seconds; 0: off */
    int snapshot_at_marks;
    const struct suppressions *supp; /* the exit leak report leaves out what these suppress */
    const char *log_file;    /* the exit leak report is also written there (%p, %h, %r) */
    const struct script *script; /* -ex and -x: commands run before the job starts, or NULL */
    int no_init;             /* -nx: no init file is read */
    int attach_pid;          /* culeak attach: the running process (0: start argv) */
    int attach_timeout;      /* seconds per step of the attach */
};

struct pending_hold {
    struct ring_reader *reader;
    struct held h;
};

struct console {
    struct ui u;
    struct console_options opt;
    struct ring_readers rings;
    int live;                /* a job runs under this console */
    struct job job;
    double kill_deadline;    /* SIGKILL after SIGTERM at this time; 0: none */
    struct ring_reader **readers;
    size_t nreaders, capreaders;
    struct ring_reader **by_proc;   /* the connection of each model process */
    size_t nby_proc;
    struct ring_reader *feeding;    /* the connection whose bytes the model is reading */
    struct pending_hold *pending; /* held events waiting while the job is paused */
    size_t npending, cappending;
    struct ring_reader *paused_reader;
    struct ring_reader *released_early; /* o_held released its event of this seq */
    uint64_t released_early_seq;
    int stepping;
    /* gdb's habits (bp_commands.c, init_file.c) */
    int cmds_for;            /* `commands N` takes the lines typed until `end` for breakpoint N */
    char *cmds_text;         /* ... those lines so far */
    char *cmds_due;          /* the commands of the breakpoint that paused: run from the loop */
    int cmds_due_bp;
    char safe_path[1024];    /* set auto-load safe-path: where ./.culeakinit may be read */
    double autosnap_every, next_autosnap;
    int autosnap_marks;
    uint64_t rate_events;
    double rate_t, last_sample;
    struct timeline tl;      /* recordings */
    struct grid grid;
    struct layout lay;
    int rows, cols;
    int dirty, quit;
    double t0;
    /* a question waits for y or n: the next line answers it (see console_confirm) */
    void (*confirm_yes)(struct console *c);
    char detach_to[1100];    /* `detach FILE`: where the job's further output goes */
    char start_err[512];     /* why the job could not start: said once the screen closed */
    struct metrics_server *metrics; /* set metrics HOST:PORT: the scrape endpoint; NULL: off */
    /* processes the hub could not take ("pid N: not traced: why"), said again in the exit
     * report: the output pane's scrollback may have lost them by then */
    char **refused;
    size_t nrefused, caprefused;
    int holders_marks;       /* set holders on: every process walks at each mark */
};

/* set metrics (metrics_set.c): serve the model on HOST:PORT, or "off"; the loop answers
 * the scrapes; closed at the end. */
void console_set_metrics(struct console *c, const char *addr);
void console_metrics_service(struct console *c);
void console_metrics_close(struct console *c);

/* Runs the console until `quit`; returns the exit status for the shell. */
int console_main(const struct console_options *opt);

double console_clock(void); /* monotonic seconds */

/* The job's streams (streams.c): the model's observer that fills the output pane and
 * hands held allocations to the pause logic, the rings taken as they come, and reading
 * what reader i holds (dropped at its end). */
void console_observe(struct console *c);
void console_accept_rings(struct console *c);
int console_read_ring(struct console *c, size_t i, int end_check);
/* The pause at breakpoints (bp_pause.c): a held allocation from reader k pauses the job
 * or goes back; the observer's new_stack and held callbacks; a reader gone ends its
 * holds; what reader k's process is told to watch. */
void console_on_held(struct console *c, struct ring_reader *k, int proc, const struct culeak_event *e);
void console_o_new_stack(void *ctx, int proc, uint64_t stack);
void console_o_held(void *ctx, int proc, const struct culeak_event *e);
void console_forget_holds(struct console *c, struct ring_reader *k);
void console_push_watches(struct console *c, struct ring_reader *k);
/* Who holds a site's blocks (holders_cmd.c): the observer's end of a walk; a process that
 * connects is told to walk at marks when `set holders on` is. */
void console_o_holders(void *ctx, int proc, const struct model_holder_walk *w);
void console_holders_hello(struct console *c, struct ring_reader *k);
/* set holders on|off */
void console_set_holders(struct console *c, const char *on_off);

/* Commands (commands.c): executes one typed line. */
void console_exec(struct console *c, const char *line);
/* Breakpoint commands (bp_commands.c): `commands N` starts taking lines; a line while it
 * does is taken (1) until `end`; a pause at a breakpoint with commands makes them due, and
 * the loop runs them (never the model's callbacks), up to one that resumes the job. */
void console_commands_begin(struct console *c, int bp_id);
int console_commands_take(struct console *c, const char *line);
void console_commands_due(struct console *c, const struct breakpoint *b);
void console_commands_run(struct console *c);
/* The init files and -ex/-x before the job starts or once recordings are read (init_file.c). */
void console_run_startup(struct console *c);
/* htop's keys and the mouse (fkeys.c): function key N (F1 help, F3 search, F5 group, F6
 * sort, F9 kill, F10 quit); a sort key on an empty prompt (1 when it was one); the mouse. */
void console_fkey(struct console *c, int n);
int console_sort_key(struct console *c, const char *typed);
void console_mouse(struct console *c, int y, int x, int button);

/* Job control used by commands: continue and step (bp_pause.c), kill (source_job.c). */
void console_resume(struct console *c, int step);
void console_kill(struct console *c);
/* Kills the job and waits for it (SIGTERM, SIGKILL 3 s later): quit's `y`. */
void console_kill_now(struct console *c);
/* Asks a question (printf-style, ending in "(y or n)"); `y` runs yes, `n` does nothing. */
void console_confirm(struct console *c, void (*yes)(struct console *c), const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The job's end, once reaped (source_job.c); the rows of its terminal, the output pane's. */
void console_check_job(struct console *c);
int console_job_rows(const struct layout *l);
void console_update_watches(struct console *c);
/* The leak report at the job's end, into the output pane and --log-file (exit_report.c);
 * the options of the console's reports (its stacks 8 deep, its suppressions). */
void console_leak_report(struct console *c);
/* Keeps a process the hub could not take ("pid N: not traced: why") for the exit report. */
void console_note_refusal(struct console *c, const char *text);
struct report_options;
void console_report_options(const struct console *c, struct report_options *o);
/* Takes a snapshot of the model now (name NULL or taken: the next "sN"); it becomes the
 * base of the change column. 0 with the name in out, or -1. */
int console_snapshot(struct console *c, const char *name, char *out, size_t outlen);
/* Recordings: the sparkline from the model's timelines (source_open.c). */
void console_history(struct console *c);
/* Writes the session's recordings to path, one per process (save.c). */
int console_save(struct console *c, const char *path, char *msg, size_t msglen);
/* `export FILE.html`: the page of report --format html, of what the console holds now. */
struct report_format;
void console_export_report(struct console *c, const struct report_format *format, const char *path);

#endif
