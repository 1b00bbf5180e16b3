/* The scrape endpoint's HTTP/1.1 server (http_serve.h): a state per connection (reading
 * the head, writing the answer), advanced by whatever the socket allows at each pass. */
#include "http_serve.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct conn {
    int fd;          /* -1: a free slot */
    double since;    /* ms: the head's first byte (or the accept); the answer's start */
    char head[HTTP_SERVE_HEAD_MAX + 1];
    size_t got;
    char *out;       /* the answer, while it is written */
    size_t out_len, out_done;
    int close_after; /* Connection: close, HTTP/1.0, or an error answer */
    int draining;    /* answered and shut for writing: what the client still sends is read
                      * and dropped until it closes, so the answer is not cut by a reset */
};

struct http_server {
    int fd;
    struct conn conns[HTTP_SERVE_CONNS];
    http_handler handler;
    void *ctx;
    char address[300];
    unsigned long answered;
};

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int http_split_address(const char *addr, char *host, size_t hostlen, unsigned *port)
{
    const char *colon = strrchr(addr, ':');
    if (!colon || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) || strlen(colon + 1) > 5)
        return -1;
    unsigned long p = strtoul(colon + 1, NULL, 10);
    size_t n = (size_t)(colon - addr);
    if (p > 65535)
        return -1;
    if (n >= 2 && addr[0] == '[' && addr[n - 1] == ']') { /* [v6]:PORT */
        addr++;
        n -= 2;
    } else if (memchr(addr, ':', n))
        return -1; /* a v6 address goes in brackets */
    if (n >= hostlen)
        return -1;
    memcpy(host, addr, n);
    host[n] = 0;
    *port = (unsigned)p;
    return 0;
}

static int listen_on(struct http_server *s, const char *addr, char *err, size_t len)
{
    char host[256], port[8];
    unsigned p;
    if (http_split_address(addr, host, sizeof host, &p) != 0) {
        snprintf(err, len, "%s: not HOST:PORT (127.0.0.1:9400, [::1]:9400, :9400)", addr);
        return -1;
    }
    snprintf(port, sizeof port, "%u", p);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE},
                    *res;
    int rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
    if (rc != 0) {
        snprintf(err, len, "%s: %s", addr, gai_strerror(rc));
        return -1;
    }
    int e = 0;
    for (struct addrinfo *a = res; a && s->fd < 0; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
        if (fd < 0) {
            e = errno;
            continue;
        }
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, 16) == 0)
            s->fd = fd;
        else {
            e = errno;
            close(fd);
        }
    }
    freeaddrinfo(res);
    if (s->fd < 0) {
        snprintf(err, len, "cannot listen on %s: %s", addr, strerror(e));
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char h[NI_MAXHOST], sv[NI_MAXSERV];
    if (getsockname(s->fd, (struct sockaddr *)&ss, &sl) == 0 &&
        getnameinfo((struct sockaddr *)&ss, sl, h, sizeof h, sv, sizeof sv, NI_NUMERICHOST | NI_NUMERICSERV) == 0)
        snprintf(s->address, sizeof s->address, strchr(h, ':') ? "[%s]:%s" : "%s:%s", h, sv);
    else
        snprintf(s->address, sizeof s->address, "%s", addr);
    return 0;
}

struct http_server *http_server_new(const char *addr, http_handler h, void *ctx, char *err, size_t len)
{
    struct http_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    s->fd = -1;
    s->handler = h;
    s->ctx = ctx;
    for (int i = 0; i < HTTP_SERVE_CONNS; i++)
        s->conns[i].fd = -1;
    if (listen_on(s, addr, err, len) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

const char *http_server_address(const struct http_server *s) { return s->address; }

unsigned long http_server_answered(const struct http_server *s) { return s->answered; }

size_t http_server_pollfds(const struct http_server *s, struct pollfd *fds, size_t max)
{
    size_t n = 0;
    if (n < max)
        fds[n++] = (struct pollfd){.fd = s->fd, .events = POLLIN};
    for (int i = 0; i < HTTP_SERVE_CONNS && n < max; i++)
        if (s->conns[i].fd >= 0)
            fds[n++] = (struct pollfd){.fd = s->conns[i].fd, .events = s->conns[i].out ? POLLOUT : POLLIN};
    return n;
}

static void drop(struct conn *c)
{
    close(c->fd);
    free(c->out);
    c->fd = -1;
    c->out = NULL;
    c->got = 0;
    c->draining = 0;
}

/* Closing with unread input would reset the connection, and a reset can destroy the
 * answer before the client read it (an answer to a request too big, sent whole). */
static void linger(struct conn *c)
{
    shutdown(c->fd, SHUT_WR);
    c->draining = 1;
    c->since = now_ms();
}

static void drain_input(struct conn *c)
{
    char sink[4096];
    ssize_t n = read(c->fd, sink, sizeof sink);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
        drop(c);
}

static const char *reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default: return "Internal Server Error";
    }
}

/* The answer's bytes into c->out: status line, headers, body (not for HEAD). */
static void answer(struct http_server *s, struct conn *c, int status, const char *type, const char *body,
                   size_t len, int head_only)
{
    char hdr[512];
    int n = snprintf(hdr, sizeof hdr,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s%s\r\n", status,
                     reason(status), type, len, status == 405 ? "Allow: GET, HEAD\r\n" : "",
                     c->close_after ? "Connection: close\r\n" : "");
    size_t body_len = head_only ? 0 : len;
    free(c->out);
    c->out = malloc((size_t)n + body_len);
    c->out_len = c->out_done = 0;
    s->answered++;
    if (!c->out) {
        c->close_after = 1;
        return;
    }
    memcpy(c->out, hdr, (size_t)n);
    if (body_len)
        memcpy(c->out + n, body, body_len);
    c->out_len = (size_t)n + body_len;
    c->since = now_ms();
}

static void error_answer(struct http_server *s, struct conn *c, int status)
{
    char body[80];
    int n = snprintf(body, sizeof body, "%d %s\n", status, reason(status));
    c->close_after = 1;
    answer(s, c, status, "text/plain; charset=utf-8", body, (size_t)n, 0);
}

/* The header's value in the head (lines after the first), "" when absent. */
static const char *header(char *head, const char *name, char *val, size_t len)
{
    size_t nl = strlen(name);
    val[0] = 0;
    for (char *l = strstr(head, "\r\n"); l; l = strstr(l, "\r\n")) {
        l += 2;
        if (strncasecmp(l, name, nl) == 0 && l[nl] == ':') {
            const char *v = l + nl + 1;
            v += strspn(v, " \t");
            size_t k = strcspn(v, "\r\n");
            snprintf(val, len, "%.*s", (int)(k < len ? k : len - 1), v);
            break;
        }
    }
    return val;
}

/* A whole head is in c->head (ending at end): its answer made. */
static void handle(struct http_server *s, struct conn *c, char *end)
{
    *end = 0;
    char method[16], target[2048], version[16], conn_hdr[64], accept[512];
    if (sscanf(c->head, "%15s %2047s %15s", method, target, version) != 3 || strncmp(version, "HTTP/1.", 7) != 0) {
        error_answer(s, c, 400);
        return;
    }
    header(c->head, "Connection", conn_hdr, sizeof conn_hdr);
    c->close_after = !strcasecmp(conn_hdr, "close") || (!strcmp(version, "HTTP/1.0") && strcasecmp(conn_hdr, "keep-alive"));
    int head_only = !strcmp(method, "HEAD");
    if (strcmp(method, "GET") != 0 && !head_only) {
        error_answer(s, c, 405);
        return;
    }
    target[strcspn(target, "?#")] = 0;
    struct http_request rq = {.path = target, .accept = header(c->head, "Accept", accept, sizeof accept)};
    char *body = NULL;
    size_t len = 0;
    const char *type = "text/plain; charset=utf-8";
    int status = s->handler(s->ctx, &rq, &body, &len, &type);
    if (status == 200 && body)
        answer(s, c, 200, type, body, len, head_only);
    else
        error_answer(s, c, status == 200 ? 500 : status);
    free(body);
}

/* Reads what came (one read: a client that keeps sending gets its turn at the next
 * pass); answers once the head is whole. */
static void on_readable(struct http_server *s, struct conn *c)
{
    ssize_t n = read(c->fd, c->head + c->got, HTTP_SERVE_HEAD_MAX - c->got);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        drop(c);
        return;
    }
    if (n < 0)
        return;
    if (c->got == 0)
        c->since = now_ms(); /* a kept-alive connection's next request starts its clock here */
    c->got += (size_t)n;
    c->head[c->got] = 0;
    char *end = strstr(c->head, "\r\n\r\n");
    if (end)
        handle(s, c, end); /* a body or a pipelined request after the head is not read */
    else if (c->got >= HTTP_SERVE_HEAD_MAX)
        error_answer(s, c, 431);
}

static void on_writable(struct conn *c)
{
    ssize_t n = send(c->fd, c->out + c->out_done, c->out_len - c->out_done, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        drop(c);
        return;
    }
    c->out_done += (size_t)n;
    if (c->out_done < c->out_len)
        return;
    free(c->out);
    c->out = NULL;
    c->got = 0;
    c->since = now_ms();
    if (c->close_after)
        linger(c);
}

/* A free slot; all taken: the one whose request has been waiting longest (a slow or
 * silent client) makes room, so a few hostile connections cannot keep a scraper out.
 * NULL when every slot is writing an answer. */
static struct conn *slot_for_new(struct http_server *s)
{
    struct conn *oldest = NULL;
    for (int i = 0; i < HTTP_SERVE_CONNS; i++) {
        struct conn *c = &s->conns[i];
        if (c->fd < 0)
            return c;
        if (!c->out && (!oldest || c->since < oldest->since))
            oldest = c;
    }
    if (oldest)
        drop(oldest);
    return oldest;
}

static void accept_new(struct http_server *s)
{
    for (int k = 0; k < 4; k++) { /* a few a pass: a flood of connections waits its turn */
        int fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        struct conn *c = slot_for_new(s);
        if (!c) { /* every slot writing: said at once, never waited on */
            static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                                       "Connection: close\r\n\r\n";
            if (send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
                /* nothing to do: the connection is closed either way */
            }
            close(fd);
            continue;
        }
        *c = (struct conn){.fd = fd, .since = now_ms()};
    }
}

void http_server_service(struct http_server *s)
{
    struct pollfd fds[HTTP_SERVE_POLLFDS];
    size_t n = http_server_pollfds(s, fds, HTTP_SERVE_POLLFDS);
    if (poll(fds, n, 0) <= 0 && n == 1)
        return;
    int fds_of[HTTP_SERVE_CONNS] = {0}; /* each slot's descriptor at the poll */
    for (int i = 0; i < HTTP_SERVE_CONNS; i++)
        fds_of[i] = s->conns[i].fd;
    if (fds[0].revents & POLLIN)
        accept_new(s);
    double now = now_ms();
    for (int i = 0; i < HTTP_SERVE_CONNS; i++) {
        struct conn *c = &s->conns[i];
        if (c->fd < 0)
            continue;
        short ev = 0;
        int fresh = fds_of[i] != c->fd; /* accepted now: its request may be there already */
        for (size_t k = 1; k < n && !fresh; k++)
            if (fds[k].fd == c->fd)
                ev = fds[k].revents;
        if (c->draining) {
            if (ev & (POLLIN | POLLERR | POLLHUP))
                drain_input(c);
            if (c->fd >= 0 && now - c->since > 1000)
                drop(c);
            continue;
        }
        if (c->out && (ev & (POLLOUT | POLLERR | POLLHUP)))
            on_writable(c);
        else if (!c->out && ((ev & (POLLIN | POLLERR | POLLHUP)) || fresh))
            on_readable(s, c);
        if (c->fd >= 0 && c->out && c->out_done == 0)
            on_writable(c); /* answered now: most answers go at once */
        if (c->fd < 0)
            continue;
        if (c->out && now - c->since > HTTP_SERVE_WRITE_MS)
            drop(c); /* the client does not read its answer */
        else if (!c->out && c->got && now - c->since > HTTP_SERVE_HEAD_MS) {
            error_answer(s, c, 408); /* a head sent a byte at a time */
            on_writable(c);
        } else if (!c->out && !c->got && now - c->since > HTTP_SERVE_WRITE_MS)
            drop(c); /* idle: connected and silent, or kept alive and never asked again */
    }
}

void http_server_free(struct http_server *s)
{
    if (!s)
        return;
    for (int i = 0; i < HTTP_SERVE_CONNS; i++)
        if (s->conns[i].fd >= 0)
            drop(&s->conns[i]);
    close(s->fd);
    free(s);
}
