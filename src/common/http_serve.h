/* A small HTTP/1.1 server for a scrape endpoint (record --metrics, the console's set
 * metrics): one listening socket and a few connections, all non-blocking, serviced from
 * the caller's own poll loop; a service pass never waits. A request head is at most
 * HTTP_SERVE_HEAD_MAX bytes (431 past it), must be complete within HTTP_SERVE_HEAD_MS
 * of the connection's first byte or accept (408 then), and a response the client does
 * not read within HTTP_SERVE_WRITE_MS is dropped: a slow or hostile client costs a
 * connection slot until a newer one needs it, never the caller's time. Keep-alive as HTTP/1.1 says. */
#ifndef CULEAK_HTTP_SERVE_H
#define CULEAK_HTTP_SERVE_H

#include <poll.h>
#include <stddef.h>

#define HTTP_SERVE_HEAD_MAX 8192
#define HTTP_SERVE_HEAD_MS 5000
#define HTTP_SERVE_WRITE_MS 10000
#define HTTP_SERVE_CONNS 16 /* at once; one more takes the slot of the request waiting
                              * longest (503 when all are being answered) */
#define HTTP_SERVE_POLLFDS (1 + HTTP_SERVE_CONNS)

struct http_server;

/* What a GET of path asks (query string cut off): the handler fills *body (malloc'd, the
 * server frees it) and *type, and returns the status (200), or 404 with no body. */
struct http_request {
    const char *path;   /* "/metrics" */
    const char *accept; /* the Accept header's value, "" when none */
};
typedef int (*http_handler)(void *ctx, const struct http_request *rq, char **body, size_t *len,
                            const char **type);

/* Listens on "HOST:PORT" (HOST a name or address; "[::1]:PORT"; ":PORT" is every
 * address; PORT 0 takes a free one). NULL with why in err. */
struct http_server *http_server_new(const char *addr, http_handler h, void *ctx, char *err, size_t len);
/* The address it listens on, as "HOST:PORT" with the port taken. */
const char *http_server_address(const struct http_server *s);
/* The descriptors to poll (listening socket, connections), at most max; how many. */
size_t http_server_pollfds(const struct http_server *s, struct pollfd *fds, size_t max);
/* Accepts, reads, answers and writes what can be done now, without waiting. */
void http_server_service(struct http_server *s);
/* Requests answered so far (any status), for messages and tests. */
unsigned long http_server_answered(const struct http_server *s);
void http_server_free(struct http_server *s);

/* Splits "HOST:PORT" ("[v6]:PORT", ":PORT"): 0, or -1 when it is not of that form or the
 * port is not 0..65535. host gets "" for ":PORT". */
int http_split_address(const char *addr, char *host, size_t hostlen, unsigned *port);

#endif
