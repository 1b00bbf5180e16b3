/* A picture of a model: what `report --format html` draws, aggregated so that a page
 * of a few MB holds a run of millions of events. Per process: the moments (marks and
 * ticks kept by model_keep_moments, failed allocations, the peak, the end, the leaks),
 * each a list of (stack, bytes); the stacks as leaves of one frame tree (looked-through
 * runs folded, a root per process when there are several); and the call sites. */
#ifndef CULEAK_PICTURE_H
#define CULEAK_PICTURE_H

#include "model/model.h"

#include <stddef.h>
#include <stdint.h>

enum picture_moment_kind {
    PICTURE_MARK, PICTURE_TICK, PICTURE_OOM, PICTURE_PEAK, PICTURE_END, PICTURE_LEAKS,
};
const char *picture_moment_kind_name(enum picture_moment_kind k); /* "mark", "tick", ... */

struct picture_value {
    uint32_t key;            /* index into picture.stacks, or into picture.sites */
    uint64_t bytes, count;
};

/* Every moment has its bytes per site; the stacks (the flame graph) are kept for the
 * end, the peak, the leaks, failed allocations, the marks named in the options, and an
 * even spread of the other moments, so the page stays small with many stacks. */
struct picture_moment {
    int proc;
    enum picture_moment_kind kind;
    const char *label;       /* marks; NULL otherwise */
    uint64_t t_ns;           /* process time */
    int has_stacks;
    size_t first, n;         /* values[first .. first+n): per stack, when has_stacks */
    size_t site_first, site_n; /* values[...]: per site */
    uint64_t bytes;          /* their sum: memory, not counting ... */
    uint64_t pool_bytes;     /* ... the pools' blocks, summed apart (none are leaks) */
    uint64_t held_bytes;     /* the leaks moment: what the default suppressions match, held
                              * by a library until exit (left out of it, as what the user's
                              * own suppressions match) */
    uint64_t reserved_bytes; /* of bytes: the segments of pools whose blocks are tracked */
};

struct picture_stack {
    int proc;
    uint64_t stack;          /* the process's stack id; UINT64_MAX: the smaller stacks merged */
    uint32_t leaf;           /* node of its innermost frame */
    uint32_t site;           /* index into picture.sites */
    int pool;                /* blocks a pool handed out (tensors; culeak_alloc): drawn apart,
                              * they lie inside memory the pool holds */
};

struct picture_node {
    uint32_t parent;         /* node 0 is the root; its parent is 0 */
    uint32_t name;           /* index into picture.names */
    int folded;              /* a run of looked-through frames */
    int site;                /* the call site's frame of some stack */
};

struct picture_site {
    uint32_t id;             /* the site's row id (MODEL_GROUP_SITE) */
    const char *text, *function, *file, *module;
    unsigned line;
    int pool;                /* the site's pool blocks (a site of both has two entries) */
    int autograd_backward;   /* some of its stacks were made for a backward() at the site
                                (model_stack_backward): text ends with " (autograd backward)" */
};

struct picture_options {
    size_t max_stacks;       /* stacks drawn per picture; the smaller ones are merged. 0: 4000 */
    size_t stack_moments;    /* marks and ticks per process with stacks kept. 0: 16 */
    const char *labels[2];   /* marks whose stacks are always kept (a diff's A and B) */
    const struct suppressions *supp; /* what these suppress is no leak (suppress.h); NULL: none */
};

struct picture {
    struct picture_moment *moments;  /* by process, then time */
    size_t nmoments;
    struct picture_value *values;
    size_t nvalues;
    struct picture_stack *stacks;
    size_t nstacks;
    struct picture_node *nodes;
    size_t nnodes;
    const char **names;              /* frame names; owned by the picture */
    size_t nnames;
    struct picture_site *sites;
    size_t nsites;
};

/* Builds the picture of every process of m; 0, or -1 when out of memory. */
int picture_build(struct model *m, const struct picture_options *o, struct picture *p);
void picture_free(struct picture *p);

#endif
