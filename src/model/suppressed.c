/* Suppression verdicts of the model's stacks (model_stack_suppression), cached per unit.
 *
 * A verdict needs the stack symbolized and matched against every block: ~30 us a stack,
 * which a table built every frame over thousands of stacks cannot pay each time. What
 * it depends on: the stack's frames (fixed once the FRAME records are in), the process's
 * module map (which module and offset an ip is in), the symbolizer and the looked-through
 * modules and functions (fixed for the model's life), and the blocks. So a unit keeps its
 * verdict with the process's epoch of the time; the epoch moves on when the module map
 * changes (modules_add) and, for every process, when the suppressions asked about are not
 * the ones the verdicts are for (another object, or blocks added: suppressions_stamp).
 *
 * The processes of a job run the same code: a stack of one process is often another's,
 * frame for frame, at other addresses. A verdict is also kept by its stack's frames as
 * modules and offsets (hashed), and a unit of another process with the same frames takes
 * it without symbolizing or matching: 10,000 processes judged each stack 10,000 times. */
#include "model_internal.h"
#include "suppress.h"
#include "common/wire.h"

#include <stdlib.h>

#define SUPP_MAX_FRAMES 512 /* frames of a stack matched (the reports print as many) */

/* Every verdict of every process is stale unless supp is what they were made for. */
static void sync_stamp(struct model *m, const struct suppressions *supp)
{
    uint64_t stamp = suppressions_stamp(supp);
    if (stamp == m->supp_stamp)
        return;
    m->supp_stamp = stamp;
    u64map_free(&m->supp_shared);
    for (int i = 0; i < m->nprocs; i++)
        suppressions_stale(m->procs[i]);
}

/* The verdict, computed: the stack's frames from the innermost, tried from there and from
 * its call site (the first frame outside looked-through code). */
static int judge(struct model *m, int proc, uint64_t stack, unsigned kind, const struct suppressions *supp)
{
    struct model_frame *frames = m->supp_frames;
    size_t n = model_stack_frames(m, proc, stack, frames, SUPP_MAX_FRAMES);
    if (n > SUPP_MAX_FRAMES)
        n = SUPP_MAX_FRAMES;
    size_t site = 0;
    while (site < n && frames[site].skipped)
        site++;
    return suppressions_match(supp, frames, n, site == n ? 0 : site, kind);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 29);
}

/* The stack's frames as (module, offset), hashed with its kind: 0, or -1 when a frame
 * is in no module or is a Python frame (whose meaning is the process's own). */
static int shared_key(const struct process *p, uint64_t stack, unsigned kind, uint64_t *key)
{
    uint64_t h = mix(0, kind), id = stack;
    for (int depth = 0; id != 0 && id < p->nframes && depth < MODEL_MAX_STACK_WALK; depth++, id = p->parent[id]) {
        uint64_t ip = p->ip[id];
        const struct range *r = (ip & CULEAK_PYFRAME_TAG) ? NULL : modules_find(p, ip);
        if (!r)
            return -1;
        h = mix(mix(h, r->module), ip - r->bias);
    }
    *key = h;
    return 0;
}

/* The verdict of a unit's stack: another process's with the same frames, or judged. */
static int verdict(struct model *m, struct process *p, struct unit *u, const struct suppressions *supp)
{
    uint64_t key;
    if (shared_key(p, u->stack, u->kind, &key) != 0)
        return judge(m, p->pub.index, u->stack, u->kind, supp);
    uint32_t v = u64map_get(&m->supp_shared, key);
    if (v != UINT32_MAX)
        return (int)v - 1;
    int b = judge(m, p->pub.index, u->stack, u->kind, supp);
    u64map_put(&m->supp_shared, key, (uint32_t)(b + 1)); /* out of memory: judged again next time */
    return b;
}

int unit_suppression(struct model *m, struct process *p, struct unit *u, const struct suppressions *supp)
{
    sync_stamp(m, supp);
    if (!m->supp_frames && !(m->supp_frames = malloc(SUPP_MAX_FRAMES * sizeof *m->supp_frames)))
        return -1; /* out of memory: nothing suppressed, nothing cached */
    if (u->supp_epoch != p->supp_epoch) {
        u->supp_block = verdict(m, p, u, supp);
        u->supp_epoch = p->supp_epoch;
    }
    return u->supp_block;
}

int unit_suppression_kept(struct model *m, struct process *p, struct unit *u, const struct suppressions *supp,
                          int which)
{
    int b = unit_suppression(m, p, u, supp);
    switch ((enum model_suppressed)which) {
    case MODEL_SUPP_LEFT_OUT: return b < 0;
    case MODEL_SUPP_ONLY: return b >= 0;
    case MODEL_SUPP_ONLY_USER: return b >= 0 && !suppressions_is_default(supp, (size_t)b);
    case MODEL_SUPP_ONLY_DEFAULT: return b >= 0 && suppressions_is_default(supp, (size_t)b);
    }
    return b < 0;
}

int model_stack_suppression(struct model *m, const struct suppressions *supp, int proc, uint64_t stack,
                            unsigned kind)
{
    struct process *p = model_proc(m, proc);
    if (!p || !supp)
        return -1;
    uint32_t ui = kind < CULEAK_KIND_COUNT ? u64map_get(&p->unit_index, stack << 5 | kind) : UINT32_MAX;
    if (ui != UINT32_MAX)
        return unit_suppression(m, p, &p->units[ui], supp);
    /* no allocation of that kind there yet: nothing to keep the verdict in */
    if (!m->supp_frames && !(m->supp_frames = malloc(SUPP_MAX_FRAMES * sizeof *m->supp_frames)))
        return -1;
    return judge(m, proc, stack, kind, supp);
}
