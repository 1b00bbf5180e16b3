/* The live numbers of a model as a scrape answer: the OpenMetrics text format (1.0.0)
 * or Prometheus' text format (0.0.4), one metric family per quantity, labelled host,
 * rank (omitted when the process has none), device and allocator, never by call site,
 * so the series stay as many as the job's ranks and devices. Processes of one host and
 * rank (a rank's helper processes) add up into that rank's series; their peaks then add
 * up too, an upper bound. The families are listed in culeak(1), METRICS. */
#ifndef CULEAK_REPORT_METRICS_H
#define CULEAK_REPORT_METRICS_H

#include "model/model.h"

#include <poll.h>
#include <stdio.h>

enum metrics_format { METRICS_PROMETHEUS, METRICS_OPENMETRICS };

#define METRICS_TYPE_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"
#define METRICS_TYPE_PROMETHEUS "text/plain; version=0.0.4; charset=utf-8"

/* The format an Accept header asks for: OpenMetrics where it names
 * application/openmetrics-text, else Prometheus' text format. */
enum metrics_format metrics_negotiate(const char *accept);
/* The exposition of m now: 0, or -1 out of memory (f may hold part of it). */
int report_metrics(FILE *f, struct model *m, enum metrics_format fmt);

/* The exposition served on GET /metrics (http_serve.h; 404 elsewhere) from a model the
 * caller keeps feeding: it is read at each scrape, in the caller's thread, when the
 * caller services the server. addr: "HOST:PORT". NULL with why in err. */
struct metrics_server;
struct metrics_server *metrics_server_new(const char *addr, struct model *m, char *err, size_t len);
/* Where it listens ("127.0.0.1:9400", the port taken when 0 was asked). */
const char *metrics_server_address(const struct metrics_server *s);
size_t metrics_server_pollfds(const struct metrics_server *s, struct pollfd *fds, size_t max);
/* Answers what came, never waiting (http_server_service). */
void metrics_server_service(struct metrics_server *s);
unsigned long metrics_server_scrapes(const struct metrics_server *s);
void metrics_server_free(struct metrics_server *s);

#endif
