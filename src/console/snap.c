/* Snapshots of every stack's live counters. */
#include "snap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct snapshot *snap_find(struct snap_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].name, name) == 0)
            return &l->v[i];
    return NULL;
}

struct snapshot *snap_take(struct snap_list *l, struct tracker *t, const char *name, double now, char *err,
                           size_t errlen)
{
    char auto_name[64];
    if (!name || !*name) {
        do
            snprintf(auto_name, sizeof auto_name, "s%u", ++l->auto_seq);
        while (snap_find(l, auto_name));
        name = auto_name;
    }
    if (strlen(name) >= sizeof l->v->name) {
        snprintf(err, errlen, "snapshot name too long");
        return NULL;
    }
    if (snap_find(l, name)) {
        snprintf(err, errlen, "there is already a snapshot named '%s'", name);
        return NULL;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        struct snapshot *v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        l->v = v;
        l->cap = cap;
    }
    struct snapshot *s = &l->v[l->n];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->t = now;
    s->live_bytes = t->live_bytes;
    s->live_count = t->live_count;
    s->procs = calloc(t->nprocs ? t->nprocs : 1, sizeof *s->procs);
    if (!s->procs) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->nprocs = t->nprocs;
    for (size_t i = 0; i < t->nprocs; i++) {
        struct proc *p = t->procs[i];
        struct snap_proc *sp = &s->procs[i];
        sp->n = p->nst;
        sp->bytes = malloc((p->nst ? p->nst : 1) * sizeof *sp->bytes);
        sp->count = malloc((p->nst ? p->nst : 1) * sizeof *sp->count);
        if (!sp->bytes || !sp->count) {
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        for (size_t k = 0; k < p->nst; k++) {
            sp->bytes[k] = p->st[k].live_bytes;
            sp->count[k] = p->st[k].live_count;
        }
    }
    l->n++;
    tracker_mark_base(t);
    return s;
}

uint64_t snap_bytes(const struct snapshot *s, int proc, size_t stat)
{
    if (proc < 0 || (size_t)proc >= s->nprocs || stat >= s->procs[proc].n)
        return 0;
    return s->procs[proc].bytes[stat];
}

uint64_t snap_count(const struct snapshot *s, int proc, size_t stat)
{
    if (proc < 0 || (size_t)proc >= s->nprocs || stat >= s->procs[proc].n)
        return 0;
    return s->procs[proc].count[stat];
}

void snap_free(struct snap_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        for (size_t k = 0; k < l->v[i].nprocs; k++) {
            free(l->v[i].procs[k].bytes);
            free(l->v[i].procs[k].count);
        }
        free(l->v[i].procs);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}
