/* The culeak model: what the streams of one or many traced processes say about GPU
 * memory, kept current record by record. No curses, no I/O except reading recordings.
 *
 * Vocabulary
 *   process  one traced process = one stream (socket connection or recording file).
 *            Identified by a small index `proc` (0, 1, ... in order of HELLO).
 *   stack    a trace-tree leaf id of one process (FRAME ids, wire.h). Ids are per process.
 *   site     where the program asked for memory: the innermost frame of a stack that is
 *            not inside a looked-through module (CUDA libraries, libc, ...; see
 *            model_options.skip_modules) or function (the CUDA runtime linked into
 *            the program; model_options.skip_functions). Sites are shared by processes
 *            running the same binary: a site is (module path, offset), so rank 3's leak
 *            and rank 5's leak at the same line are one site.
 *   kind     memory kind (apis.h). Kinds are never added together, except in the pseudo
 *            kind MODEL_KIND_DEVICE_MEMORY (device-resident memory: device, managed, VMM
 *            physical, arrays, graph, external). Address reservations, mappings, pool
 *            objects, IPC views, user (culeak_alloc) blocks and pool blocks (kind block: the
 *            tensors of PyTorch's caching allocator, CuPy's pool) are never counted as
 *            device memory: the segments they are carved from are.
 *   leaked   live at exit (or at the end of a recording), or still live when its context
 *            was destroyed / its device reset (FREE_ALL): "leaked at reset". Pool blocks
 *            are never leaked: the pool holds them and frees its segments.
 *   cache    a leak whose stack passes through a known caching allocator (PyTorch's
 *            CUDACachingAllocator, CuPy's memory pool, XLA's BFC allocator): reported apart.
 *
 * Threads: a model is not thread-safe; feed and query it from one thread.
 * Strings returned by the model stay valid until model_free() unless said otherwise. */
#ifndef CULEAK_MODEL_H
#define CULEAK_MODEL_H

#include "common/apis.h"
#include "common/frameworks.h"
#include "common/decode.h"

#include <stddef.h>
#include <stdint.h>

struct model;
struct model_stream;
struct suppressions; /* suppress.h */

#define MODEL_ALL (-1)                           /* any process / any device */
#define MODEL_KIND_DEVICE_MEMORY CULEAK_KIND_COUNT /* pseudo kind: device-resident memory */
#define MODEL_KIND_SLOTS (CULEAK_KIND_COUNT + 1)

/* ------------------------------------------------------------------ setup */

struct model_options {
    /* Comma-separated globs of modules to look through, added to the defaults and to
     * $CULEAK_SKIP_MODULES. A glob without '/' matches the file name, with '/' the path. */
    const char *skip_modules;
    /* Comma-separated globs of functions to look through (the CUDA runtime linked into a
     * program: cudart_static), added to the defaults and to $CULEAK_SKIP_FUNCTIONS. A
     * glob matches the demangled name with or without its return type and parameters;
     * a glob with '/' matches the frame's source file instead (from DWARF). */
    const char *skip_functions;
    int no_default_skips;       /* only skip_modules, skip_functions and the environment */
    /* Path prefixes (comma or colon separated) of Python code that is the program's own
     * although installed (site-packages): added to $CULEAK_MY_CODE. */
    const char *my_code;
    unsigned timeline_capacity; /* samples kept per series; 0: 2048 */
    uint64_t timeline_step_ns;  /* the least sample interval once a series is full of changes
                                   kept one by one; 0: 1 ms (doubles when full again) */
    unsigned failure_snapshots; /* failed allocations whose live state is kept; 0: 16 */
};

struct model *model_new(const struct model_options *opt); /* NULL opt: defaults */
void model_free(struct model *m);

/* ------------------------------------------------------------------ feeding */

/* One stream per connection or file. The model owns a decoder for each stream;
 * callers either feed raw bytes, or drive their own decoder with model_stream_sink(). */
struct model_stream *model_stream_open(struct model *m);
const struct culeak_sink *model_stream_sink(struct model_stream *s);

#define MODEL_FEED_OK 0
#define MODEL_FEED_CORRUPT (-1)  /* model_stream_error() says why and where */
#define MODEL_FEED_STOPPED 1     /* a mark named by model_stop_at_mark() arrived */
int model_stream_feed(struct model_stream *s, const void *bytes, size_t n);
/* End of input: 0 clean, 1 cut off mid-record (the process is marked truncated). */
int model_stream_finish(struct model_stream *s);
const char *model_stream_error(const struct model_stream *s);
/* Frees the decoder; the process's data stays in the model. */
void model_stream_close(struct model_stream *s);

/* Reads a recording into a new stream: 0 clean, 1 cut off (read up to the cut) or a
 * process the model has already (the same pid, host and start: read once),
 * 2 stopped at a mark, -1 unreadable/corrupt/newer format (err says why; records before
 * a corruption stay in the model). */
int model_load_file(struct model *m, const char *path, char *err, size_t errlen);
/* Rolled recordings (record --roll): a part that ends naming the next one leaves its
 * stream open, and model_load_file of that next part goes on with it; the parts of a
 * process are given in order (a shell's sorted glob). The i-th process whose recording
 * goes on in a part not read (yet): its pid, and that part's file name; NULL past the
 * last. */
const char *model_unread_part(const struct model *m, size_t i, long *pid);

/* Streams stop (MODEL_FEED_STOPPED) right after a mark with this label; NULL: never. */
void model_stop_at_mark(struct model *m, const char *label);

struct model_holder_walk;
/* Optional: the console sees every record after the model has applied it. */
struct model_observer {
    void *ctx;
    void (*hello)(void *ctx, int proc);
    void (*event)(void *ctx, int proc, const struct culeak_event *e);
    /* an event the process holds for an answer (CULEAK_EVENT_HELD), before the model takes
     * it in: a console that cannot stop there answers without waiting for that work (a new
     * stack's site may read the module's symbols: milliseconds the first time) */
    void (*held)(void *ctx, int proc, const struct culeak_event *e);
    void (*new_stack)(void *ctx, int proc, uint64_t stack); /* first event with this stack */
    void (*mark)(void *ctx, int proc, const struct culeak_mark *mk);
    void (*exit)(void *ctx, int proc);
    void (*note)(void *ctx, int proc, const char *text, size_t len);
    void (*lost)(void *ctx, int proc, uint64_t count); /* a gap: events dropped */
    /* a walk of culeak's Python side ended (its HOLDER records are in the model) */
    void (*holders)(void *ctx, int proc, const struct model_holder_walk *w);
};
void model_set_observer(struct model *m, const struct model_observer *obs);

/* ------------------------------------------------------------------ processes */

struct model_process {
    int index;
    uint64_t pid, ppid;
    const char *host, *exe;
    int rank;                  /* from HELLO's culeak_rank_vars (common/outpath.h); -1 */
    size_t argc;
    char **argv;
    uint64_t start_realtime_ns, start_monotonic_ns;
    uint64_t last_t_ns, last_seq; /* the latest record's process time and seq */
    int exited;                /* EXIT record seen */
    uint64_t exit_reason;
    int exit_status;           /* wait status set by model_process_set_exit_status; -1 */
    int truncated, corrupt;    /* stream cut off / corrupt: data up to there is kept */
    int ended;                 /* its stream was closed: no more events will come (it ran to
                                * its exit, was cut off, or is a recording read to its end) */
    uint64_t events, frames;
    uint64_t failed_allocs, failed_frees;
    uint64_t unknown_frees;    /* frees of addresses not live (counted, otherwise ignored) */
    uint64_t replaced;         /* allocations at an address still live (old one ended) */
    uint64_t free_alls;
    uint64_t bad_frames;       /* FRAME records out of sequence or over the cap: ignored */
    uint64_t bad_stacks;       /* events naming an unknown stack id: counted at stack 0 */
    uint64_t notes;
    const char *last_note;
    uint64_t lost_events;      /* dropped while the reader was stopped (LOST records) */
    uint64_t untraced;         /* NOTEs "untraced: ...": a program it ran or started that
                                * culeak could not follow (a set-user-ID one) */
    const char *untraced_note; /* the first of them, without "untraced: " */
    uint64_t aggregated_ns;    /* an aggregated recording (record --aggregate): its interval;
                                * 0: every event was recorded */
    uint64_t folded;           /* allocations it folded (made and freed within an interval) */
};

/* The rank in a HELLO's environment, read as %r reads it (culeak_rank_vars); -1 none. */
int model_hello_rank(const struct culeak_hello *h);
int model_process_count(const struct model *m);
/* How many runs the processes make (runs.c): recordings of separate runs of a job opened
 * together are several; their live bytes add up, their peaks do not. 1 for one job. */
int model_runs(const struct model *m);
/* 1 when the processes ran on more than one host (pids are only unique per host). */
int model_several_hosts(const struct model *m);
const struct model_process *model_process(const struct model *m, int proc);
/* Still running as far as the stream says: neither exited nor ended (its stream closed or
 * its image replaced by exec). */
int model_process_running(const struct model_process *p);
void model_process_set_exit_status(struct model *m, int proc, int wstatus);
/* Its recording ends before it did, and nothing says it ended then (no EXIT record, no
 * wait status): it may have run on (a recording saved mid-run, a reader cut off), so what
 * is live at the end is not judged. */
int model_process_unended(const struct model_process *p);
/* The wait status of a process whose recording has no EXIT record (its EXIT was lost: the
 * process ended while its reader was stopped, or inside libc): its parent saw it exit, so
 * the recording holds all it did, as one with EXIT does. Sets exit_status; when the status
 * is an exit (not a signal), exited too. Returns 1 when it did. */
int model_process_exited_by_status(struct model *m, int proc, int wstatus);

/* ------------------------------------------------------------------ totals */

struct model_counter {
    uint64_t live_bytes, live_count;
    uint64_t peak_bytes, peak_t_ns, peak_seq;  /* peak of live_bytes */
    uint64_t allocs, frees, failed, failed_bytes;
    uint64_t reset_bytes, reset_count;         /* ended by FREE_ALL while live: leaked */
};

/* proc and device may be MODEL_ALL; kind is a culeak_kind or MODEL_KIND_DEVICE_MEMORY.
 * Peaks are exact for one process (any device or all) and for all processes with all
 * devices; for (all processes, one device) the peak is the sum of peaks (an upper bound). */
void model_totals(const struct model *m, int proc, int device, int kind, struct model_counter *out);
/* Devices a process (or MODEL_ALL) used, ascending; returns how many (may exceed max). */
int model_devices(const struct model *m, int proc, int *out, int max);
uint64_t model_event_count(const struct model *m); /* all processes */
/* A number that changes whenever what the model shows may have changed: a record fed, a
 * stream cut off or corrupt, an exit status set, a snapshot taken, copied, imported or
 * dropped, a site's name resolved. Never the same for two models (a view that keeps a
 * table may keep it while this stays the same). */
uint64_t model_generation(const struct model *m);

/* ------------------------------------------------------------------ timeline */

/* Device-memory live bytes over process time, per process and device (or MODEL_ALL).
 * While few changes were seen, each sample is one change at its own time (min = max =
 * live); a long series holds intervals (time buckets) with their extremes. */
struct model_sample {
    uint64_t t_ns;       /* start of the interval (process CLOCK_MONOTONIC) */
    uint64_t live_bytes; /* at the end of the interval */
    uint64_t max_bytes;  /* highest within it */
    uint64_t events;     /* events of the process so far (for rates) */
    uint64_t min_bytes;  /* lowest within it */
};
/* Copies up to max samples, oldest first; returns the number available. */
size_t model_timeline(const struct model *m, int proc, int device, struct model_sample *out, size_t max);
/* Events per second of process time over the last window_ns (0: 1 s). */
double model_event_rate(const struct model *m, int proc, uint64_t window_ns);

struct model_mark {
    uint64_t seq, t_ns, tid, flags; /* flags: CULEAK_MARK_PUSH / CULEAK_MARK_POP */
    uint64_t live_bytes;            /* process device memory at the mark */
    const char *label;
    int mem_device;                 /* the device's memory then (MARK's appended fields): */
    uint64_t mem_free, mem_total;   /* mem_total 0 when the mark did not carry it */
};
const struct model_mark *model_marks(const struct model *m, int proc, size_t *n);
/* The distinct mark labels of all processes nearest name (not name itself): of the same
 * pattern ("iteration #") by the distance of their numbers, then the others by edit
 * distance. Up to max into out; returns how many. */
size_t model_nearest_marks(const struct model *m, const char *name, const char **out, size_t max);

/* Moments: the live state of each process kept at each mark (NVTX range pushes and
 * culeak_mark; not range ends) and every tick of process time, for pictures (report
 * --format html). Off until model_keep_moments() is called, before the streams are fed.
 * At most max moments per process: when full, every other one is dropped (the newest
 * stays) and the tick interval doubles, so a long run keeps an even spread. The first
 * mark of a label an armed snapshot waits for (model_snapshot_at_mark) is never dropped. */
enum model_moment_kind { MODEL_MOMENT_MARK, MODEL_MOMENT_TICK };
void model_keep_moments(struct model *m, unsigned max, uint64_t first_tick_ns);
/* At most this many (unit, bytes) items in all moments of all processes (0: 4M, 64 MiB):
 * a process whose new moment goes past it is thinned (not below 2 moments). */
void model_limit_moment_items(struct model *m, size_t items);
struct model_moment {
    enum model_moment_kind kind;
    const char *label;   /* the mark's label; NULL for a tick */
    uint64_t t_ns, seq;  /* process time and the last event seq before it */
};
/* The moments kept for proc, oldest first; returns how many (copies up to max). */
size_t model_moments(const struct model *m, int proc, struct model_moment *out, size_t max);

/* ------------------------------------------------------------------ symbols */

struct model_frame {
    uint64_t ip;              /* as recorded (call address) */
    const char *module;       /* path; "?" when the address is in no known module */
    uint64_t offset;          /* ip relative to the module's load bias */
    const char *function;     /* demangled; NULL when unknown */
    uint64_t function_offset; /* ip - symbol start, when function comes from the symtab */
    const char *file;         /* NULL when no line info */
    unsigned line;
    int inlined;              /* this frame was inlined into the next one */
    int skipped;              /* inside a looked-through module */
    int runtime;              /* allocator or runtime code: never the site, even when every
                                 frame is looked through */
    int marker;               /* "[autograd backward]": the frames inside it were made on a
                                 thread without Python frames, those outside it are the
                                 Python frames of the backward() call it worked for */
};

/* The symbolized stack of (proc, stack), innermost first, inline frames expanded.
 * Copies up to max; returns the total depth. Pointers inside stay valid. */
size_t model_stack_frames(struct model *m, int proc, uint64_t stack, struct model_frame *out, size_t max);
/* Was (proc, stack) made for a backward() call: a thread without Python frames
 * (autograd's engine) that allocated while a Python thread was inside backward(), whose
 * Python frames the stack carries? Then 1, with *via the operation: the innermost frame
 * of that thread outside allocator and runtime code, "fn (libfoo.so)", or NULL when the
 * recorded frames do not reach it; 2 likewise when several backward() calls at different
 * lines were in flight (the stack has no Python frames after the marker); else 0. */
int model_stack_backward(struct model *m, int proc, uint64_t stack, const char **via);
/* "function at file:line", "function+0x1c (libfoo.so)" or "libfoo.so+0x1234" */
void model_frame_format(const struct model_frame *f, char *buf, size_t len);

/* ------------------------------------------------------------------ site table */

enum model_group {
    MODEL_GROUP_SITE,     /* the call site (file:line of the call) */
    MODEL_GROUP_FUNCTION, /* the function containing the site */
    MODEL_GROUP_FILE,
    MODEL_GROUP_MODULE,
    MODEL_GROUP_STACK,    /* whole stack: one row per (process, stack) */
    MODEL_GROUP_COUNT
};
const char *model_group_name(enum model_group g);   /* "site", "function", ... */
int model_group_by_name(const char *name);          /* -1 when unknown */

enum model_field {
    MODEL_FIELD_ID, MODEL_FIELD_LIVE_BYTES, MODEL_FIELD_LIVE_COUNT, MODEL_FIELD_PEAK_BYTES,
    MODEL_FIELD_ALLOCS, MODEL_FIELD_FREES, MODEL_FIELD_FAILED, MODEL_FIELD_FIRST_SEEN,
    MODEL_FIELD_LAST_SEEN, MODEL_FIELD_TEXT, MODEL_FIELD_MODULE, MODEL_FIELD_LEAKED_BYTES,
    MODEL_FIELD_DELTA_BYTES, /* diffs */
    MODEL_FIELD_COUNT
};
int model_field_by_name(const char *name);          /* -1 when unknown */

enum model_source {
    MODEL_SOURCE_NOW,      /* live now */
    MODEL_SOURCE_LEAKS,    /* live now + leaked at reset (the leak report) */
    MODEL_SOURCE_PEAK,     /* live at each process's device-memory peak */
    MODEL_SOURCE_SNAPSHOT, /* live in snapshot query.snapshot */
    MODEL_SOURCE_FAILURE,  /* live when failed allocation query.failure happened */
};

/* The frameworks' pools, by their row of common/frameworks.h. */
enum model_cache {
    MODEL_CACHE_NONE = CULEAK_FRAMEWORK_NONE,
    MODEL_CACHE_PYTORCH = CULEAK_FRAMEWORK_PYTORCH,
    MODEL_CACHE_CUPY = CULEAK_FRAMEWORK_CUPY,
    MODEL_CACHE_XLA = CULEAK_FRAMEWORK_XLA,
};
const char *model_cache_name(enum model_cache c);   /* "", "pytorch", "cupy", "xla" */
#define MODEL_POOLS 8 /* room for enum model_cache values */
/* "pytorch caching allocator", "cupy memory pool": the pool in words */
const char *model_pool_name(enum model_cache c);
/* The framework whose caching allocator the memory of kind at (proc, stack) came from (or
 * whose pool reported it, for blocks); MODEL_CACHE_NONE: CUDA's own allocation. */
enum model_cache model_stack_allocator(struct model *m, int proc, uint64_t stack, unsigned kind);

/* Tensor tracking: where a process reports a pool's blocks (kind block), the segments
 * that pool took (device memory whose stack goes through it) are the pool's own row,
 * "pytorch caching allocator: reserved", and no site's. Memory in PyTorch's words: */
struct model_memory {
    uint32_t pools;                     /* bit (1u << enum model_cache) of the tracked pools;
                                           0: no tensor tracking, the rest is 0 */
    uint64_t allocated_bytes, allocated_blocks;  /* live blocks: torch.cuda.memory_allocated() */
    uint64_t reserved_bytes, reserved_segments;  /* their segments: memory_reserved() */
    uint64_t other_bytes, other_count;           /* memory outside those pools */
};
/* Live now, in proc (or MODEL_ALL). O(units) when a pool is tracked, else O(processes). */
void model_memory_now(struct model *m, int proc, struct model_memory *out);

enum model_suppressed { MODEL_SUPP_LEFT_OUT, MODEL_SUPP_ONLY, MODEL_SUPP_ONLY_USER, MODEL_SUPP_ONLY_DEFAULT };

struct model_query {
    enum model_group group;
    int proc;              /* MODEL_ALL or one process */
    uint32_t kinds;        /* bit (1u << kind); 0: every kind */
    const char *filter;    /* case-insensitive substring of text or module; NULL: none */
    enum model_field sort;
    int ascending;
    int only_live;         /* drop rows with nothing live in the source */
    enum model_source source;
    const char *snapshot;  /* MODEL_SOURCE_SNAPSHOT */
    int failure;           /* MODEL_SOURCE_FAILURE: index into model_failures() */
    /* Leave sites not resolved yet unresolved (a libdw lookup is ~60 us a site): their rows
     * get "module+0xoffset" text, NULL function and file, and named 0; numbers and ids
     * are the same. Ignored (names resolved) when the query needs names: grouping by
     * function or file, a filter, sorting by text. */
    int lazy_names;
    /* Optional: a unit (a stack of a process, one kind) with something live in the source
     * is left out when keep() returns 0. */
    int (*keep)(void *ctx, struct model *m, int proc, uint64_t stack, unsigned kind);
    void *keep_ctx;
    /* Optional leak suppressions: a unit with something live in the source is left out
     * when a block suppresses it (suppressed MODEL_SUPP_LEFT_OUT, 0), or kept only when
     * one does (MODEL_SUPP_ONLY: any block; ..._ONLY_USER: one of the user's own blocks;
     * ..._ONLY_DEFAULT: one of the default suppressions, memory held by a library until
     * exit). The verdicts are the model's (model_stack_suppression): a table build
     * symbolizes and matches only the stacks it has not judged yet. */
    const struct suppressions *supp;
    int suppressed;
    int unsorted;          /* rows in no particular order (the caller sorts them its own way) */
    /* With lazy_names, grouped by site or stack: rows come without names (text, module,
     * function, file and via NULL, named 0) and the caller names the ones it shows with
     * model_row_name. Saves a big table's lookups of every site's names. */
    int unnamed;
    /* With lazy_names: rows come with text, module and via but no function, file or line
     * (NULL, 0): a caller that shows and orders texts only saves each row's frame read. */
    int texts_only;
};
/* Defaults: site grouping, all processes and kinds, sorted by live bytes, descending. */
void model_query_init(struct model_query *q);

struct model_row {
    uint32_t id;           /* stable per grouping for the life of the model: usable in commands */
    uint64_t live_bytes, live_count; /* in the query's source (LEAKS: incl. leaked at reset) */
    uint64_t peak_bytes;   /* exact for SITE and STACK rows, sum of member peaks otherwise */
    uint64_t allocs, frees, failed, failed_bytes;
    uint64_t alloc_bytes;  /* the bytes of every allocation made here (allocs of them) */
    uint64_t reset_bytes, reset_count;
    uint64_t first_t_ns, last_t_ns;
    uint32_t kinds;        /* bit (1u << kind) of every kind allocated here; a site's pool
                              blocks (kind block) and its other kinds are rows apart */
    uint32_t nstacks;      /* member stacks */
    enum model_cache cache;/* LEAKS source: the memory is a caching allocator's */
    /* LEAKS source: memory live since before culeak attached, outside any pool ("(before
     * attach)"): culeak saw neither where nor why it was made, so it is never judged a
     * leak; reports count it apart (report_summary.before_*) */
    int before_attach;
    /* LEAKS source: live when the recording ends, in a process with no exit record (a
     * recording saved while the job ran, or cut): what it would have freed is unknown, so
     * it is not judged; reports count it apart (report_summary.end_*) */
    int unended;
    int proc;              /* STACK rows: the process; otherwise -1 */
    uint64_t stack;        /* STACK rows: the stack; otherwise the member with most bytes */
    int stack_proc;        /* ... and its process */
    const char *text;      /* site text / function / file / module / leaf site text */
    const char *module;
    const char *function, *file; /* of the site frame; NULL when unknown */
    unsigned line;
    /* SITE and STACK rows: the innermost line of an installed package the representative
     * stack passed through below its site ("transformers/models/gpt2/modeling_gpt2.py:697");
     * text then ends with ", via " and it. NULL when none. */
    const char *via;
    /* SITE and STACK rows: the representative stack was made for a backward() call at the
     * site (model_stack_backward); text then has " (autograd backward)" after the site,
     * and via is the operation when it is known. */
    int autograd_backward;
    int named;             /* the site's names are resolved (0 only from lazy_names) */
    enum model_cache pool; /* the row is a tracked pool's segments (its text says so) */
    /* The threads that allocated here: threads 0 none yet, 1 all on thread tid (the main
     * thread when main_thread: the main thread of each process counts as one), 2 several
     * (tid: the first) */
    int threads, main_thread;
    uint64_t tid;
};

struct model_table {
    struct model_row *rows;
    size_t n;
    enum model_group group;
    uint64_t total_bytes, total_count; /* sum over rows, but rows of pool blocks (which lie
                                          inside memory other rows count) */
    struct model_memory memory;        /* the rows in PyTorch's words (pools 0: untracked) */
};
int model_table_build(struct model *m, const struct model_query *q, struct model_table *t);
void model_table_sort(struct model_table *t, enum model_field f, int ascending);
void model_table_free(struct model_table *t);

/* Site names, resolved a little at a time (lazy_names tables). A site's id and grouping
 * never change when its name resolves. */
size_t model_names_pending(const struct model *m);  /* sites not resolved yet */
/* Resolves pending sites, oldest first, until none is left, `max` are done or budget_ns
 * has passed (0: no time limit; at least one is done); returns how many were resolved. */
size_t model_resolve_names(struct model *m, size_t max, uint64_t budget_ns);
/* Gives one row of a lazy_names table (built with grouping g) its names: 1 resolved now,
 * 0 it had them, -1 its representative stack is unknown. */
int model_row_name(struct model *m, enum model_group g, struct model_row *r);

/* Per-process stack ids belonging to row `id` of grouping g (e.g. breakpoints: tell the
 * shim to WATCH them). proc may be MODEL_ALL: then out_proc gets each one's process.
 * Returns how many exist (copies up to max). */
size_t model_row_stacks(struct model *m, enum model_group g, uint32_t id, int proc, uint64_t *out,
                        int *out_proc, size_t max);
/* Does the stack match a pattern? Patterns: a function name glob ("train_*", "ns::f"),
 * "file:line" or "file" (path suffix), "module.so". The site frame (with its inline
 * chain) is matched, or every frame when any_frame. */
int model_stack_matches(struct model *m, int proc, uint64_t stack, const char *pattern, int any_frame);
/* Has line of file (a path suffix) code in a module of the processes? 1 yes; 0 some
 * module has the file but no code at that line (*next: the next line that has, 0 none);
 * -1 no module has the file (or none can be read). */
int model_source_line(struct model *m, const char *file, unsigned line, unsigned *next);
/* Stacks of proc (or all) matching; returns how many exist (copies up to max). */
size_t model_find_stacks(struct model *m, int proc, const char *pattern, int any_frame, uint64_t *out,
                         int *out_proc, size_t max);
/* The first block of supp (suppress.h) that suppresses an allocation of kind with this
 * stack, or -1. Verdicts are cached per (process, stack, kind), for the suppressions last
 * asked about: a stack's frames never change, so a verdict holds until blocks are added
 * to supp, other suppressions are asked about, or the process's module map changes. */
int model_stack_suppression(struct model *m, const struct suppressions *supp, int proc, uint64_t stack,
                            unsigned kind);
/* Who holds a row's live blocks (HOLDER records, from culeak's Python side): each distinct
 * chain of references, with the blocks and bytes it holds, most bytes first; at most max of them
 * (the first max met), returns how many were written. g MODEL_GROUP_COUNT: of every block. */
struct model_holders {
    const char *words;
    uint64_t blocks, bytes;
};
/* Of each process, its latest walk: of every tensor (at a mark, at exit), or the
 * console's question about the row. */
size_t model_row_holders(struct model *m, enum model_group g, uint32_t id, struct model_holders *out,
                         size_t max);
/* The walks of culeak's Python side that ended (a HOLDER record of address 0), in the order
 * they came: at the job's exit, at a mark (with walks at marks on), or the console's
 * question about a site. */
struct model_holder_walk {
    int proc;
    uint32_t walk;        /* its number among its process's walks, from 0 */
    const char *kind;     /* "exit", "mark", "ask" */
    const char *why;      /* why it brought nothing ("": it ran) */
    const char *mark;     /* the process's last mark when it ended (NULL: none yet) */
    uint64_t mark_seq;
};
const struct model_holder_walk *model_holder_walks(const struct model *m, size_t *n);
/* The row's holders in one walk of proc (as model_row_holders). */
size_t model_row_holders_walk(struct model *m, enum model_group g, uint32_t id, int proc, uint32_t walk,
                              struct model_holders *out, size_t max);
/* The walks at marks whose holders of the row differ from those of the walk at a mark
 * before (of its process; its first that said anything of the row counts): the latest
 * max of them, oldest first, into out; returns how many were written, *total how many
 * there are. */
size_t model_row_holder_changes(struct model *m, enum model_group g, uint32_t id,
                                const struct model_holder_walk **out, size_t max, size_t *total);
/* The live blocks of the row in process proc (what to ask who holds): up to max addresses
 * and sizes, the biggest first; returns how many were written. */
size_t model_row_blocks(struct model *m, enum model_group g, uint32_t id, int proc, uint64_t *addr, uint64_t *size,
                        size_t max);
/* Row id of a stack under grouping g (UINT32_MAX if the stack has no events yet). */
uint32_t model_stack_row(struct model *m, int proc, uint64_t stack, enum model_group g);

/* ------------------------------------------------------------------ snapshots & diffs */

/* Copies every process's per-stack live state now (replacing one of the same name). */
int model_snapshot_take(struct model *m, const char *name);
/* Arms a snapshot taken, process by process, when a mark with this label arrives
 * (label all digits: when that process's event seq passes the number). */
int model_snapshot_at_mark(struct model *m, const char *label, const char *name);
/* A label of digits only (not empty): it names an event seq rather than a mark. */
int model_label_is_seq(const char *label);
int model_snapshot_count(const struct model *m);
/* Snapshots taken by name: those armed at a mark of their own name and the positions
 * named "@..." (a recording's start, a time) left out, so that opening a recording, which
 * arms its marks, counts none. */
int model_snapshot_named_count(const struct model *m);
const char *model_snapshot_name(const struct model *m, int i);
int model_snapshot_find(const struct model *m, const char *name); /* index or -1 */
/* A number that changes whenever snapshot `name` is taken again or filled in further (an
 * armed one, at each process's mark), never the same for two versions (as
 * model_generation); 0 when there is no such snapshot. */
uint64_t model_snapshot_stamp(const struct model *m, const char *name);
void model_snapshot_drop(struct model *m, const char *name);
/* Snapshot `to` as a copy of snapshot `from` (replacing one named `to`). 0, or -1 when
 * `from` does not exist or memory runs out. */
int model_snapshot_copy(struct model *m, const char *from, const char *to);
/* Snapshot `name` of m from the state now of src, a model of the same recordings loaded
 * in the same order up to an earlier point (so its processes and their stacks are a
 * prefix of m's). 0, or -1 when src is not such a prefix or memory runs out. */
int model_snapshot_import(struct model *m, const char *name, const struct model *src);
/* Snapshot `name` of m as a copy of snapshot `from` of src, a model of the same recordings
 * loaded as model_snapshot_import() asks. 0, or -1 (no such snapshot, not a prefix, out
 * of memory). */
int model_snapshot_adopt(struct model *m, const char *name, const struct model *src, const char *from);

struct model_diff_row {
    uint32_t id;
    const char *text, *module;
    uint64_t bytes_a, count_a, bytes_b, count_b;
    int64_t delta_bytes, delta_count;
    uint64_t stack;        /* representative member */
    int stack_proc;
    int named;             /* as model_row.named */
    const char *via;       /* as model_row.via */
    int autograd_backward; /* as model_row.autograd_backward */
    int blocks;            /* the row counts a pool's blocks (kind block); a site's blocks
                              and its other memory are rows apart */
    enum model_cache pool; /* the row is a tracked pool's segments (text: its name) */
};
/* Allocations made after A and still live at B, aggregated per stack. */
struct model_diff_new {
    int proc;
    uint64_t stack, count, bytes, first_seq;
    int blocks;            /* a pool's blocks (kind block), apart from the stack's other memory */
};
struct model_diff {
    struct model_diff_row *rows;  /* rows whose bytes or count changed, most growth first */
    size_t n;
    struct model_diff_new *news;  /* biggest first */
    size_t nnew;
    uint64_t new_bytes, new_count;              /* news of memory, blocks apart: */
    int64_t delta_bytes;                        /* rows of memory (blocks lie inside it) */
    uint64_t new_block_bytes, new_block_count;  /* news of pool blocks */
    int64_t delta_block_bytes;                  /* rows of pool blocks */
    /* With tensor tracking (a.pools != 0): each side in PyTorch's words, and the pools'
     * segments made after A and live at B (not in news, new_bytes or new_count) */
    struct model_memory a, b;
    uint64_t new_reserved_bytes, new_reserved_count;
};
/* b NULL: A vs now. A snapshot missing a process leaves that process out. Returns -1 if
 * a snapshot does not exist. With b a past snapshot, "new" counts allocations made in
 * (A, B] that are still live now (a lower bound); report --diff stops at B to be exact. */
int model_diff(struct model *m, const char *a, const char *b, const struct model_query *q, struct model_diff *d);
void model_diff_free(struct model_diff *d);

/* ------------------------------------------------------------------ failures */

struct model_failure {
    int proc;
    uint64_t seq, t_ns, size, result, stack;
    uint32_t api, kind;
    int device;
    int has_state;         /* the live state at that moment was kept (first N failures) */
};
const struct model_failure *model_failures(const struct model *m, size_t *n);

#endif
