/* `culeak record --metrics HOST:PORT`: the job's streams read into a model as the
 * recordings are written (a tap on the reader's rings), and that model's numbers served
 * on /metrics from the record process, never from inside the job. */
#ifndef CULEAK_CLI_RECORD_METRICS_H
#define CULEAK_CLI_RECORD_METRICS_H

#include "launch/collect.h"

#include <stddef.h>

struct record_metrics;

/* Listens on addr; NULL with why in err. */
struct record_metrics *record_metrics_new(const char *addr, char *err, size_t len);
const char *record_metrics_address(const struct record_metrics *r);
/* The tap to give the reader (culeak_run_traced_tap): it feeds the model and, at each
 * turn of the reader's loop, answers the scrapes that came. */
const struct culeak_collect_tap *record_metrics_tap(struct record_metrics *r);
void record_metrics_free(struct record_metrics *r);

#endif
