/* The console's live picture of a job, updated record by record (no curses, no I/O):
 * processes, their trace trees and modules, every live allocation, per-stack counters,
 * and the sites those stacks are grouped into. */
#ifndef CULEAK_CONSOLE_TRACK_H
#define CULEAK_CONSOLE_TRACK_H

#include "decode.h"
#include "symcache.h"

#include <stddef.h>
#include <stdint.h>

#define TRACK_MAX_DEV 16 /* devices 0..15 shown separately; host kinds and others in slot 16 */

enum group_by { GROUP_SITE, GROUP_FUNCTION, GROUP_FILE, GROUP_MODULE, GROUP_STACK };

struct alloc_ent {
    uint64_t addr, size;
    uint32_t stat;  /* index in proc->st; UINT32_MAX: empty slot */
    uint8_t cls, kind;
    int16_t device;
};

struct stackstat {
    uint64_t leaf;  /* trace-tree node id of the allocating frame */
    uint64_t live_bytes, live_count, peak_bytes, allocs, failed;
    uint64_t base_bytes, base_count; /* at the latest snapshot */
    uint32_t site;  /* index in tracker->sites for the current grouping */
    uint32_t kinds; /* bit per culeak_kind seen */
};

struct module_map {
    uint32_t sym;   /* symbolizer module id */
    uint64_t base, lo, hi;
};

enum proc_state { PROC_RUNNING, PROC_EXITED, PROC_GONE /* connection closed without EXIT */ };

struct proc {
    int idx;
    uint64_t pid, ppid;
    char exe[256], cmd[512];
    enum proc_state state;
    uint64_t *fparent, *fip;
    size_t nframes, fcap;
    struct module_map *mods;
    size_t nmods, capmods;
    struct stackstat *st;
    size_t nst, capst;
    uint32_t *sthash; /* leaf -> index + 1 */
    size_t sthcap;
    struct alloc_ent *al;
    size_t alcap, alcount;
    uint64_t events, live_bytes, live_count;
    uint64_t t0_mono, t0_real, t_last;
};

struct site {
    char *key, *label, *module;
    uint64_t live_bytes, live_count, peak_bytes, allocs, base_bytes;
    uint32_t kinds;
    int proc;       /* a representative stack: process index and leaf */
    uint64_t leaf;
    size_t nstacks;
};

struct tracker {
    struct proc **procs;
    size_t nprocs, capprocs;
    enum group_by group;
    struct site *sites;
    size_t nsites, capsites;
    uint32_t *sitehash; /* key hash -> index + 1 */
    size_t sitehcap;
    uint64_t dev_live[TRACK_MAX_DEV + 1], dev_peak[TRACK_MAX_DEV + 1];
    unsigned dev_seen; /* bit per slot that ever held memory */
    uint64_t live_bytes, peak_bytes, live_count, events, failed;
    struct symbolizer *sym;
};

void tracker_init(struct tracker *t);
void tracker_free(struct tracker *t);
/* Forgets every allocation and counter, keeping processes' trees and modules (timeline). */
void tracker_reset_counts(struct tracker *t);

struct proc *tracker_add_proc(struct tracker *t);
void track_hello(struct tracker *t, struct proc *p, const struct culeak_hello *h);
void track_modules(struct tracker *t, struct proc *p, const struct culeak_modules *m);
void track_frame(struct proc *p, uint64_t id, uint64_t parent, uint64_t ip);
/* Returns the stackstat index the event was counted in (UINT32_MAX when none). */
uint32_t track_event(struct tracker *t, struct proc *p, const struct culeak_event *e);

/* The stat of a leaf, created (and given a site) when new. */
uint32_t track_stat(struct tracker *t, struct proc *p, uint64_t leaf);
void tracker_regroup(struct tracker *t, enum group_by g);
/* Copies every stack's live counters into its snapshot base. */
void tracker_mark_base(struct tracker *t);

/* Frames of a stack, leaf first; returns how many were written (at most max). */
size_t track_stack(const struct proc *p, uint64_t leaf, uint64_t *ips, size_t max);
/* Describes one frame: "func (file:line)  module+0xoff". */
void track_frame_info(struct tracker *t, const struct proc *p, uint64_t ip, struct sym_info *out);
char *track_frame_label(struct tracker *t, const struct proc *p, uint64_t ip, char *buf, size_t len);
/* Whether any frame of the stack matches pattern: a function name (exact or substring),
 * "file:line" or "file". */
int track_stack_matches(struct tracker *t, const struct proc *p, uint64_t leaf, const char *pattern);

/* Device slot for a device number and kind. */
int track_dev_slot(int device, unsigned kind);

#endif
