/* What the console's live views need beyond model.h: a table's values in a snapshot
 * (the change column, diffs) without walking live allocations, and one stack's live
 * memory (breakpoint conditions, checked while the job waits). */
#ifndef CULEAK_VIEW_SUPPORT_H
#define CULEAK_VIEW_SUPPORT_H

#include "model.h"

/* For each row of t (built with q), the bytes and count its units held in `snapshot`
 * (0 for processes the snapshot lacks). Costs O(units live in the snapshot).
 * Returns -1 (arrays zeroed) when there is no such snapshot. */
int model_table_baseline(struct model *m, const struct model_query *q, const char *snapshot,
                         const struct model_table *t, uint64_t *bytes, uint64_t *count);

/* Live bytes and count of one (process, stack) over the kinds in mask (0: every memory
 * kind, like model_query.kinds). O(kinds). */
void model_stack_live(const struct model *m, int proc, uint64_t stack, uint32_t kinds, uint64_t *bytes,
                      uint64_t *count);
/* Did this (process, stack) ever hand out a pool's blocks (kind block)? */
int model_stack_has_blocks(const struct model *m, int proc, uint64_t stack);

#endif
