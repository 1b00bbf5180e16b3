/* Breakpoints against the model: which stacks one covers, and their live memory. */
#include "ui.h"
#include "model/view_support.h"

#include <stdlib.h>

int ui_bp_covers(struct ui *u, const struct breakpoint *b, int proc, uint64_t stack)
{
    if (b->by_row)
        return model_stack_row(u->m, proc, stack, (enum model_group)b->group) == b->row;
    return model_stack_matches(u->m, proc, stack, b->spec.site, 1);
}

void ui_bp_live(struct ui *u, const struct breakpoint *b, uint64_t *bytes, uint64_t *count)
{
    *bytes = *count = 0;
    /* a site that hands out a pool's blocks counts them: its segments are the same memory */
    uint32_t kinds = 0;
    for (size_t i = 0; i < b->nmembers && !kinds; i++)
        if (model_stack_has_blocks(u->m, b->members[i].proc, b->members[i].stack))
            kinds = 1u << CULEAK_KIND_BLOCK;
    for (size_t i = 0; i < b->nmembers; i++) {
        uint64_t x, y;
        model_stack_live(u->m, b->members[i].proc, b->members[i].stack, kinds, &x, &y);
        *bytes += x;
        *count += y;
    }
}

static size_t stacks(struct ui *u, const struct breakpoint *b, uint64_t *st, int *pr, size_t max)
{
    if (b->by_row)
        return model_row_stacks(u->m, (enum model_group)b->group, b->row, MODEL_ALL, st, pr, max);
    return model_find_stacks(u->m, MODEL_ALL, b->spec.site, 1, st, pr, max);
}

void ui_bp_collect(struct ui *u, struct breakpoint *b)
{
    b->nmembers = 0;
    size_t n = stacks(u, b, NULL, NULL, 0);
    uint64_t *st = malloc((n ? n : 1) * sizeof *st);
    int *pr = malloc((n ? n : 1) * sizeof *pr);
    if (st && pr) {
        n = stacks(u, b, st, pr, n);
        for (size_t i = 0; i < n; i++)
            bp_add_member(b, pr[i], st[i]);
    }
    free(st);
    free(pr);
    uint64_t count;
    ui_bp_live(u, b, &b->base, &count);
    b->grown = 0;
}
