/* The scrape endpoint over a model (metrics.h): GET /metrics answered with the
 * exposition the Accept header asks for, everything else 404. */
#include "metrics.h"
#include "common/http_serve.h"

#include <stdlib.h>
#include <string.h>

struct metrics_server {
    struct http_server *http;
    struct model *m;
    unsigned long scrapes;
};

static int on_request(void *ctx, const struct http_request *rq, char **body, size_t *len, const char **type)
{
    struct metrics_server *s = ctx;
    if (strcmp(rq->path, "/metrics") != 0)
        return 404;
    enum metrics_format fmt = metrics_negotiate(rq->accept);
    FILE *f = open_memstream(body, len);
    if (!f)
        return 500;
    int rc = report_metrics(f, s->m, fmt);
    if (fclose(f) != 0 || rc != 0) {
        free(*body);
        *body = NULL;
        return 500;
    }
    *type = fmt == METRICS_OPENMETRICS ? METRICS_TYPE_OPENMETRICS : METRICS_TYPE_PROMETHEUS;
    s->scrapes++;
    return 200;
}

struct metrics_server *metrics_server_new(const char *addr, struct model *m, char *err, size_t len)
{
    struct metrics_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    s->m = m;
    if (!(s->http = http_server_new(addr, on_request, s, err, len))) {
        free(s);
        return NULL;
    }
    return s;
}

const char *metrics_server_address(const struct metrics_server *s) { return http_server_address(s->http); }

size_t metrics_server_pollfds(const struct metrics_server *s, struct pollfd *fds, size_t max)
{
    return http_server_pollfds(s->http, fds, max);
}

void metrics_server_service(struct metrics_server *s) { http_server_service(s->http); }

unsigned long metrics_server_scrapes(const struct metrics_server *s) { return s->scrapes; }

void metrics_server_free(struct metrics_server *s)
{
    if (!s)
        return;
    http_server_free(s->http);
    free(s);
}
