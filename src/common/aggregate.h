/* The aggregated recording (culeak record --aggregate): a filter between a process's
 * stream and its recording, run by culeak (never by the job). An allocation made and
 * freed between two flush points (a mark, an exit, a failed allocation, any record other
 * than an allocation or a free, the interval's tick) is not written: it is counted in the
 * next CHURN record, per call site, with the sites' and the process's high-water marks.
 * Everything else is written as it came, in its order, with its own seq and time, so the
 * live allocations at every flush point, the marks and the stacks are those of the full
 * recording. culeak-stream(5), "Aggregated recordings". */
#ifndef CULEAK_AGGREGATE_H
#define CULEAK_AGGREGATE_H

#include <stddef.h>
#include <stdint.h>

struct culeak_agg;

/* record --aggregate's default interval: 10 s */
#define CULEAK_AGGREGATE_INTERVAL_NS (UINT64_C(10) * 1000000000)

/* Where the filtered stream goes (records from HELLO on, as the ring gave them). */
typedef void (*culeak_agg_write)(void *ctx, const void *p, size_t n);

/* interval_ns: the longest time between CHURN records (by the process's clock);
 * max_pending: allocations and frees held back before they are written (the memory a
 * flush point bounds), 0: the default. NULL when out of memory. */
struct culeak_agg *culeak_agg_new(uint64_t interval_ns, size_t max_pending, culeak_agg_write w, void *ctx);
/* Stream bytes (no MAGIC: a ring starts at HELLO), any cut. 0, or -1 when the stream
 * stopped making sense: a NOTE saying so was written and the rest is dropped. */
int culeak_agg_feed(struct culeak_agg *a, const void *p, size_t n);
/* The end of the stream: what is held back is written, and the last CHURN. */
void culeak_agg_finish(struct culeak_agg *a);
void culeak_agg_free(struct culeak_agg *a);
/* The ctx given to culeak_agg_new (its owner frees it). */
void *culeak_agg_ctx(const struct culeak_agg *a);

/* Figures for the bench: bytes in and out, allocations folded into CHURN records. */
struct culeak_agg_stats {
    uint64_t bytes_in, bytes_out, folded, churn_records;
    size_t live, units, pending_cap;
};
void culeak_agg_stats(const struct culeak_agg *a, struct culeak_agg_stats *st);

/* The kinds counted as device memory, by this filter and by the model. */
int culeak_agg_kind_is_device_memory(unsigned kind);

#endif
