/* Private structures of the model, shared by its files. */
#ifndef CULEAK_MODEL_INTERNAL_H
#define CULEAK_MODEL_INTERNAL_H

#include "common/apis.h"
#include "live_table.h"
#include "model.h"
#include "common/strpool.h"
#include "symbols/symbols.h"
#include "common/u64map.h"

#define MODEL_MAX_FRAMES (1u << 24)   /* trace-tree nodes per process */
#define MODEL_MAX_PROCESSES 65535     /* the live table keeps 16 bits of process index */
#define MODEL_MAX_DEVICES 32          /* device slots per process; more count in "all" only */
#define MODEL_MAX_RANGES 65536        /* module segments per process */
#define MODEL_MAX_CONTEXTS 65534
#define MODEL_MAX_STACK_WALK 4096
#define MODEL_NO_ROW UINT32_MAX

/* One (process, stack, kind): the finest aggregate every query is built from. */
struct unit {
    uint64_t stack;
    uint32_t site;
    uint32_t stack_row;   /* MODEL_GROUP_STACK id */
    uint8_t kind;
    uint8_t cache;        /* 0: not classified yet, else enum model_cache + 1 */
    uint64_t live_bytes, live_count, peak_bytes;
    uint64_t allocs, frees, failed, failed_bytes, reset_bytes, reset_count;
    uint64_t alloc_bytes; /* of every allocation made here (pprof's alloc_space) */
    uint64_t first_t, last_t;
    /* live at the process's latest device-memory peak (see process_touch_unit) */
    uint64_t at_peak_bytes, at_peak_count, at_peak_epoch;
    /* suppressed.c: the suppression block of this unit (-1: none), valid while supp_epoch
     * is the process's */
    int32_t supp_block;
    uint32_t supp_epoch;
    /* suspects.c: 1 + the unit's site aggregate (0: none yet), and the next unit in it + 1 */
    uint32_t growth_agg, growth_next;
    uint64_t tid;         /* the thread of its first allocation */
    uint8_t threads;      /* 0: none yet, 1: all on tid, 2: on several threads */
};

struct range {
    uint64_t start, end, bias;
    uint32_t module;
};

struct series {
    struct model_sample *s;
    size_t n, cap;
    uint64_t step;
};

/* Per-stack live state at one moment (snapshots, failures): only units with live > 0. */
struct state_item {
    uint32_t unit;
    uint32_t count;
    uint64_t bytes;
};
struct state {
    int present;
    uint64_t seq, t_ns;
    struct state_item *items;
    size_t n;
};

struct process {
    struct model_process pub;
    /* trace tree, indexed by FRAME id; 0 is the root */
    uint32_t *parent;
    uint64_t *ip;
    size_t nframes, frames_cap;
    /* units */
    struct unit *units;
    size_t nunits, units_cap;
    struct u64map unit_index;  /* stack << 5 | kind -> unit */
    uint64_t unit_last_key;    /* unit_get's last key and its unit + 1 (0: none): a repeated */
    uint32_t unit_last;        /* allocation asks the map nothing */
    /* module map */
    struct range *ranges;
    size_t nranges, ranges_cap;
    /* per device slot (0: all devices), per kind slot */
    int ndev;
    int devices[MODEL_MAX_DEVICES];
    struct model_counter (*counters)[MODEL_KIND_SLOTS]; /* ndev + 1 rows: all devices, then each */
    struct series series[MODEL_MAX_DEVICES + 1];
    uint64_t peak_epoch;
    struct u64map ctx_index;   /* ctx -> small index */
    struct u64map live_count;  /* live entries per (device, context) and per device */
    int live_count_lost;       /* a count could not be kept: FREE_ALL always walks */
    uint64_t count_key;        /* live_count's change not yet in the map (count_delta), */
    int64_t count_delta;       /* kept while events stay in one (device, context) */
    uint32_t nctx;
    struct u64map retains;     /* VMM handle -> extra references */
    struct model_mark *marks;
    size_t nmarks, marks_cap;
    struct growth *growth;     /* suspects.c: live bytes per site at the latest marks */
    uint32_t supp_epoch;       /* suppressed.c: bumped when cached verdicts go stale (>= 1) */
    /* moments.c: states kept at marks and at regular times (model_keep_moments) */
    struct moment *moments;
    size_t nmoments;
    uint64_t tick_step, next_tick;
    /* runs.c: the run of processes it belongs to, and whether its stream was closed (not
     * only its image replaced by exec, which pub.ended also says: the next image is of the
     * same run) */
    uint32_t run;
    int stream_ended;
    /* bit (1u << enum model_cache) of the pools whose blocks this process reports (tensor
     * tracking on): their segments are the pool's own row (pools.c), not sites' */
    uint32_t pools_tracked;
    /* holders.c: the number of its walk under way (HOLDER records), and where its
     * entries may begin */
    uint32_t holder_walk;
    size_t holder_walk_from;
};

/* One kept moment of a process: its per-unit live state at a mark or a tick. */
struct moment {
    unsigned kind;             /* MODEL_MOMENT_MARK or MODEL_MOMENT_TICK */
    const char *label;         /* the mark's label (interned), NULL for ticks */
    int pinned;                /* an armed snapshot's mark: never thinned */
    struct state st;
};

struct module_info {
    const char *path, *name;   /* interned; name = file name */
    int skip;
    int runtime;               /* allocator or runtime code: never a call site (modules.c) */
    int cache;                 /* enum model_cache of allocations through it */
};

struct site {
    uint32_t module;
    uint64_t offset;
    int symbolized;            /* sym and text resolved; before, text is NULL or module+0xoffset */
    unsigned frame;            /* the site's frame in sym's inline chain (CUDA headers inlined) */
    int bare;                  /* an address in no module yet (site_rehome.c) */
    const struct sym_result *sym;
    const char *text;
    uint32_t group_id[MODEL_GROUP_COUNT];
    uint64_t live[CULEAK_KIND_COUNT], peak[CULEAK_KIND_COUNT]; /* all processes */
};

struct site_name {
    const char *text;
    uint32_t module;
    int symbolized;
};

struct snapshot {
    const char *name;
    const char *trigger;       /* armed: mark label; NULL once taken by hand */
    int trigger_is_seq;
    uint64_t trigger_seq;
    struct state *parts;       /* per process */
    int nparts;
    uint64_t stamp;            /* model_snapshot_stamp() */
};

struct failure_rec {
    struct model_failure pub;
    struct state state;
};

struct model {
    struct model_options opt;
    char **skip_globs;
    size_t nskip;
    char **skip_fn_globs;          /* functions, or source files when the glob has '/' */
    size_t nskip_fn;
    struct strpool strings;
    struct strpool module_paths;   /* path -> module id */
    struct module_info *modules;
    size_t modules_cap;
    struct symbolizer *sym;
    struct site *sites;
    size_t nsites, sites_cap;
    /* per site, [2 * site]: the sum of its peaks (site.peak) of memory kinds but blocks;
     * [2 * site + 1]: of blocks. A site table row's peak, read from 16 bytes a site */
    uint64_t *site_peaks;
    /* per site, a copy of its text, module and symbolized (kept with them: sites.c): what
     * a row of a table that needs texts only reads (16 bytes a site; a site spans lines) */
    struct site_name *site_names;
    size_t nnamed;                 /* sites symbolized */
    size_t name_cursor;            /* model_resolve_names: every site below is symbolized */
    struct u64map site_index;      /* module << 44 | offset -> site */
    struct u64map proc_starts;     /* stream.c: a process's (pid, start) hashed -> its index */
    struct model_stream **parked;  /* stream.c: rolled recordings read up to a part whose next is to come */
    size_t nparked;
    struct u64map site_index_abs;  /* addresses in no module (module 0) -> site */
    size_t nbare;                  /* sites with bare set */
    struct strpool group_keys[MODEL_GROUP_COUNT];
    struct u64map stack_rows;      /* proc << 32 | stack -> stack row id */
    uint64_t *stack_row_keys;
    size_t nstack_rows, stack_rows_cap;
    struct process **procs;
    int nprocs;
    int several_hosts;          /* a process ran on another host than the first */
    struct live_table live;
    struct model_counter global[MODEL_KIND_SLOTS];
    uint64_t events;
    uint64_t free_all_visits;  /* live entries FREE_ALLs looked at (tests: no more than they free) */
    struct snapshot *snaps;
    int nsnaps;
    int seq_triggers;              /* armed snapshots waiting for a seq */
    struct holding *holdings;  /* holders.c: HOLDER records, by the block's stack */
    size_t nholdings, holdings_cap;
    struct model_holder_walk *walks; /* holders.c: the walks that ended, in order */
    size_t nwalks, walks_cap;
    struct failure_rec *failures;
    size_t nfailures, failures_cap;
    struct model_failure *failures_pub;
    struct model_observer obs;
    char *stop_label;
    unsigned moments_max;          /* moments kept per process; 0: none (model_keep_moments) */
    uint64_t moments_tick0;        /* first tick interval */
    size_t moment_items, moment_items_max; /* state items kept in all moments, and the bound */
    struct pyframes *py;           /* Python frames (pyframes.h); NULL until the first */
    uint64_t supp_stamp;           /* suppressed.c: suppressions_stamp() the verdicts are for */
    struct model_frame *supp_frames; /* ... and the frames of the stack being judged */
    struct u64map supp_shared;     /* ... and the verdict + 1 of a stack by its frames' modules and offsets */
    struct u64map frame_skips;     /* sites.c: sym_frame address -> modules_skips_frame() */
    int growth_walk_all;           /* suspects.c, for tests: every mark sums every site again */
    uint64_t generation;           /* model_generation() */
    /* runs.c: processes that never ran at the same time (two runs of a job opened
     * together) do not add up in peaks: the current run's counters, the best peaks of
     * the runs before it, and each site's live bytes when the current run began */
    uint32_t nruns;
    struct model_counter run_now[MODEL_KIND_SLOTS], run_best[MODEL_KIND_SLOTS];
    uint64_t *site_run_base;       /* [site * CULEAK_KIND_COUNT + kind]; NULL in a first run */
    size_t site_run_base_sites;
    uint32_t *row_slots;           /* table.c: row id << 1 | part -> row of the table being
                                      built; UINT32_MAX (empty) between uses */
    size_t nrow_slots;
    uint32_t pool_sites[MODEL_POOLS]; /* pools.c: the site standing for each pool's segments + 1 */
    uint32_t before_attach_site;   /* before_attach.c: the site of what was live at an attach + 1 */
};

/* Something a view may show changed (model_generation). */
static inline void model_changed(struct model *m) { m->generation++; }

/* A site's pool blocks and the rest of its memory (the segments they come from) are rows
 * apart: bit 0 of a row key, under the row id. */
static inline uint64_t unit_part(const struct unit *u) { return u->kind == CULEAK_KIND_BLOCK; }

/* model.c */
static inline struct process *model_proc(const struct model *m, int proc)
{
    return proc >= 0 && proc < m->nprocs ? m->procs[proc] : NULL;
}
struct process *model_add_process(struct model *m);
int model_kind_is_device_memory(unsigned kind);

/* modules.c */
void modules_configure(struct model *m);
void modules_add(struct model *m, struct process *p, const struct culeak_modules *mods);
/* The range holding ip, or NULL. */
const struct range *modules_find(const struct process *p, uint64_t ip);
uint32_t modules_site_of_stack(struct model *m, struct process *p, uint64_t stack);
/* site_rehome.c: the site of a stack's frame at ip, which is in no module yet. */
uint32_t sites_bare(struct model *m, uint32_t site);
/* site_rehome.c: bare sites inside r (just added) named by r's module from now on. */
void sites_rehome(struct model *m, const struct range *r);
/* Is a symbolized frame inside a looked-through function or CUDA header? */
int modules_skips_frame(const struct model *m, const struct sym_frame *f);
/* Is a symbolized frame in an allocator or runtime function (at::detail::empty_generic)? */
int modules_runtime_frame(const struct model *m, const struct sym_frame *f);
/* Is the frame at ip allocator or runtime code (or the autograd backward marker)? Sets
 * *module and *off (0 and ip outside every module) and, in an inline chain, *frame: the
 * first of its frames outside such code. */
int modules_runtime_ip(struct model *m, const struct process *p, uint64_t ip, uint32_t *module, uint64_t *off,
                       unsigned *frame);
/* "at::TensorBase at::detail::empty_generic<long>(...)" -> "at::detail::empty_generic<long>" */
void modules_function_base(const char *fn, char *out, size_t len);
/* The site's frame of a symbolized site (frames[site->frame]), or NULL. */
static inline const struct sym_frame *site_frame(const struct site *s)
{
    return s->sym && s->frame < s->sym->n ? &s->sym->frames[s->frame] : NULL;
}

/* apply.c */
int apply_frame(struct model *m, struct process *p, uint64_t id, uint64_t parent, uint64_t ip);
void apply_event(struct model *m, struct process *p, const struct culeak_event *e);
void apply_mark(struct model *m, struct process *p, const struct culeak_mark *mk);
/* holders.c: a HOLDER record: words for the live block of p that contains addr. */
void holders_add(struct model *m, struct process *p, uint64_t addr, const char *words, size_t n);
struct unit *unit_get(struct model *m, struct process *p, uint64_t stack, unsigned kind);
/* The unit of a kind's allocations made before culeak attached (no stack; their own site,
 * "(before attach)"): before_attach.c. */
struct unit *unit_before_attach(struct model *m, struct process *p, unsigned kind, unsigned pool);
/* A pool's before-attach event for what is live already (the inventory found it): it moves
 * to that pool's before-attach unit. */
/* 1 when u is what was live at an attach, outside the pools: no stack, never a leak. */
int unit_before_attach_unjudged(const struct model *m, const struct unit *u);
/* What the inventory found live before the attach was live at every mark and snapshot the
 * process had since, though its record came after them: added to each. */
void before_attach_backdate(struct model *m, struct process *p, uint32_t unit, uint64_t bytes);
void before_attach_claim(struct model *m, struct process *p, struct live_entry *le, unsigned pool);
/* The unit behind key (stack << 5 | kind, or a before-attach key) with its site: apply.c. */
struct unit *unit_keyed(struct process *p, uint64_t key, uint64_t stack, unsigned kind, uint32_t site);

/* The device slot of a process's device (1 + its index; -1 past MODEL_MAX_DEVICES), and
 * the counters an allocation of kind on slot ds counts in (at most 7): apply.c. */
int device_slot_for(struct process *p, int device);
size_t counters_of(struct model *m, struct process *p, int ds, unsigned kind, struct model_counter **out);
/* churn.c: a CHURN record of an aggregated recording. */
void apply_churn(struct model *m, struct process *p, const struct culeak_churn *c);

/* timeline.c */
void series_add(struct series *s, uint64_t t, uint64_t live, uint64_t events, unsigned cap, uint64_t step0);
void series_free(struct series *s);

/* snapshot.c */
int state_capture(const struct model *m, const struct process *p, struct state *st);
void state_free(struct state *st);
void snapshots_on_mark(struct model *m, struct process *p, const char *label);
void snapshots_on_seq(struct model *m, struct process *p, uint64_t seq);
void snapshots_free(struct model *m);

/* moments.c */
void moments_on_mark(struct model *m, struct process *p, const char *label);
void moments_on_time(struct model *m, struct process *p, uint64_t t_ns);
void moments_free(struct process *p);

/* runs.c */
/* p, just started (its HELLO applied): in the current run, or the first of a new one
 * when every process before it had ended before it started. */
void runs_on_start(struct model *m, struct process *p);
/* The live bytes of a site of kind when the current run began (0 in a first run). */
static inline uint64_t runs_site_base(const struct model *m, uint32_t site, unsigned kind)
{
    return site < m->site_run_base_sites ? m->site_run_base[(size_t)site * CULEAK_KIND_COUNT + kind] : 0;
}
/* The peak of all processes' counters of kind: the best run's. */
void runs_peak(const struct model *m, int kind, struct model_counter *out);
/* Peaks of one device over all processes: summed within a run, the best run's. */
void runs_device_peak(const struct model *m, int device, int kind, struct model_counter *out);

/* suspects.c */
void growth_on_mark(struct model *m, struct process *p, const struct model_mark *mk);
/* The live bytes of u changed (call only while p->growth is set). */
void growth_on_change(struct process *p, struct unit *u);
void growth_free(struct growth *g);

/* suppressed.c */
/* The cached suppression block of a unit of p (model_stack_suppression), or -1. */
int unit_suppression(struct model *m, struct process *p, struct unit *u, const struct suppressions *supp);
/* Whether a table of query.suppressed `which` (enum model_suppressed) keeps the unit. */
int unit_suppression_kept(struct model *m, struct process *p, struct unit *u, const struct suppressions *supp,
                          int which);
/* The module map of p changed: its stacks' frames, and so their verdicts, may differ. */
static inline void suppressions_stale(struct process *p)
{
    if (++p->supp_epoch == 0) /* 0 is a new unit's: never judged */
        p->supp_epoch = 1;
}

/* table.c */
/* An index from row keys to rows of one table (a build, a baseline). Keys are
 * id << 4 | cache << 1 | part. Without cache classes (cached 0: every source but LEAKS)
 * ids are small and dense, and the model's row_slots array stands in for a hash map (a
 * dense index ignores the cache bits: rows that differ only there share a slot);
 * row_index_done() empties the slots of the ids of the n rows put. */
struct row_index {
    struct model *m;
    int dense;
    size_t used;      /* dense: slots below this may be set */
    struct u64map map;
};
int row_index_init(struct row_index *x, struct model *m, int cached, size_t n);
uint32_t row_index_get(const struct row_index *x, uint64_t key);
int row_index_put(struct row_index *x, uint64_t key, uint32_t row);
void row_index_done(struct row_index *x, const struct model_row *rows, size_t n);
static inline uint64_t row_key(uint32_t id, enum model_cache cache, uint64_t part)
{
    return (uint64_t)id << 4 | (uint64_t)cache << 1 | part;
}
/* Live bytes and count of a unit in a source; dense holds snapshot/failure values. */
void unit_value(const struct process *p, const struct unit *u, size_t ui, enum model_source src,
                const struct state_item *dense, uint64_t *bytes, uint64_t *count);
struct state_item *state_dense(const struct state *st, size_t nunits); /* indexed by unit */
int unit_in_query(const struct unit *u, const struct model_query *q);
int query_lazy(const struct model_query *q); /* lazy_names applies to this query */
/* lazy: a site not resolved yet keeps its module+0xoffset text (r->named 0);
 * ROW_TEXTS_ONLY: that, and function, file and line are left out (no frame is read) */
#define ROW_TEXTS_ONLY 2
void row_describe(struct model *m, enum model_group g, uint32_t id, int rep_proc, const struct unit *rep,
                  struct model_row *r, int lazy);

/* pools.c: a tracked pool's segments (the device memory it reserved while its blocks are
 * events of their own) are one row of the pool, never a second site of the same growth. */
/* The pool whose segment u is (MODEL_CACHE_NONE: not one): a device-memory unit whose
 * stack goes through a caching allocator (unit_cache) whose blocks p reports. */
enum model_cache unit_pool(struct model *m, int proc, struct unit *u);
void pools_on_block(struct process *p, unsigned api);
/* The row id of a pool's segments under grouping g (a site of its own for MODEL_GROUP_SITE,
 * whose text is model_pool_text()); 0 out of memory. */
uint32_t pool_row_id(struct model *m, enum model_cache pool, enum model_group g);
/* Row texts of a pool row. */
void pool_describe(struct model *m, enum model_cache pool, struct model_row *r);
/* Adds a unit's bytes and count to allocated, reserved or other. */
void model_memory_add(struct model *m, int proc, struct unit *u, uint64_t bytes, uint64_t count,
                      struct model_memory *mm);
uint32_t model_site_new(struct model *m, uint64_t abs_key); /* modules.c: a site of no module */

/* sites.c */
void site_symbolize(struct model *m, struct site *s);
/* Sets the text of a site not symbolized yet to "module+0xoffset"; no libdw. */
void site_plain_text(struct model *m, struct site *s);
uint32_t site_group_id(struct model *m, uint32_t site, enum model_group g);
uint32_t unit_row_id(struct model *m, int proc, struct unit *u, enum model_group g);
/* The stack row of a key (proc << 32 | stack), made when new; UINT32_MAX out of memory. */
uint32_t stack_row_id(struct model *m, uint64_t key);
enum model_cache unit_cache(struct model *m, int proc, struct unit *u);
/* Symbolized frames of the site of a stack (inline chain of its site address). */

/* stream.c: the streams of rolled recordings whose next part never came, closed. */
void streams_parked_free(struct model *m);

#endif
