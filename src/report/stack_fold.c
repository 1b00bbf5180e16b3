/* Folding looked-through frames out of stacks (stack_fold.h). */
#include "stack_fold.h"

#include <stdio.h>
#include <string.h>

#define FOLD_NAMES 3 /* module names listed in a fold line; more become "..." */

size_t stack_site(const struct model_frame *f, size_t n, int *all_skipped)
{
    size_t site = 0;
    while (site < n && f[site].skipped)
        site++;
    *all_skipped = site == n;
    if (site < n)
        return site;
    /* all looked through: the first frame outside allocator and runtime code, else the
     * outermost (as the model decides a site) */
    for (site = 0; site < n && f[site].runtime; site++)
        ;
    return site < n ? site : n ? n - 1 : 0;
}

size_t stack_lines(const struct model_frame *f, size_t n, int fold, struct stack_line *out)
{
    int all;
    size_t site = stack_site(f, n, &all);
    if (all) /* nothing folded: the site is among looked-through frames */
        fold = 0;
    size_t nl = 0;
    for (size_t i = 0; i < n;) {
        size_t run = 0;
        while (fold && i + run < n && f[i + run].skipped && !f[i + run].marker)
            run++;
        if (run >= 2) { /* one folded frame would take the line its fold line takes */
            out[nl++] = (struct stack_line){i, run, 0};
            i += run;
        } else {
            out[nl++] = (struct stack_line){i, 0, i == site};
            i++;
        }
    }
    return nl;
}

static const char *base_name(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path ? path : "?";
}

char *stack_line_text(const struct stack_line *l, const struct model_frame *f, char *buf, size_t len)
{
    if (!l->count) {
        const struct model_frame *fr = &f[l->frame];
        char label[1024];
        model_frame_format(fr, label, sizeof label);
        snprintf(buf, len, "%s #%-2zu %s%s", l->site ? ">" : " ", l->frame, label,
                 fr->inlined ? " (inlined)" : "");
        return buf;
    }
    char fold[1024];
    snprintf(buf, len, "  ... %s (looked through)", stack_fold_text(f + l->frame, l->count, fold, sizeof fold));
    return buf;
}

char *stack_fold_text(const struct model_frame *f, size_t count, char *buf, size_t len)
{
    /* the run's modules, each once, in the order the frames name them */
    const char *names[FOLD_NAMES];
    size_t nnames = 0, more = 0;
    for (size_t i = 0; i < count; i++) {
        const char *name = base_name(f[i].module);
        size_t k = 0;
        while (k < nnames && strcmp(names[k], name) != 0)
            k++;
        if (k < nnames)
            continue;
        if (nnames < FOLD_NAMES)
            names[nnames++] = name;
        else
            more = 1;
    }
    int w = snprintf(buf, len, "%zu frames in", count);
    for (size_t k = 0; k < nnames && w >= 0 && (size_t)w < len; k++)
        w += snprintf(buf + w, len - (size_t)w, "%s %s", k ? "," : "", names[k]);
    if (more && w >= 0 && (size_t)w < len)
        snprintf(buf + w, len - (size_t)w, ", ...");
    return buf;
}
