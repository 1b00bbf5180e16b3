/* Shared helpers of the report writers. */
#ifndef CULEAK_REPORT_INTERNAL_H
#define CULEAK_REPORT_INTERNAL_H

#include "apis.h"
#include "report.h"

#define REPORT_MAX_FRAMES 512

int report_query(struct model *m, const struct report_options *o, struct model_table *t);
void summarize_table(const struct model_table *t, struct report_summary *s);
size_t report_stack(struct model *m, int proc, uint64_t stack, struct model_frame *out, size_t max, size_t *hidden);

#endif
