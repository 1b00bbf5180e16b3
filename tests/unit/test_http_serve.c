/* The scrape endpoint's HTTP server (common/http_serve.h) against well-behaved and hostile
 * clients, the server running in its own thread as the reader's loop runs it: answers
 * and keep-alive, 404/405/400, a head past the limit (431), a head sent a few bytes at a
 * time (408 once the head's time is up, while other clients are answered meanwhile), a
 * client that never reads a big answer, every slot taken by silent clients (the one
 * silent longest gives way), and the HOST:PORT forms.
 * The longest service pass is printed (a figure, not a threshold). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/http_serve.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct http_server *srv;
static volatile int stop;
static double longest_ms;
static unsigned port;
static size_t big_len = 1;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int handler(void *ctx, const struct http_request *rq, char **body, size_t *len, const char **type)
{
    (void)ctx;
    if (!strcmp(rq->path, "/big")) { /* an answer bigger than the socket's buffers */
        *len = big_len;
        *body = malloc(*len);
        memset(*body, 'x', *len);
        return 200;
    }
    if (strcmp(rq->path, "/metrics") != 0)
        return 404;
    *body = strdup(rq->accept[0] ? rq->accept : "no accept");
    *len = strlen(*body);
    *type = "text/plain; version=0.0.4";
    return 200;
}

static void *serve(void *arg)
{
    (void)arg;
    while (!stop) {
        struct pollfd fds[HTTP_SERVE_POLLFDS];
        poll(fds, http_server_pollfds(srv, fds, HTTP_SERVE_POLLFDS), 5);
        double t0 = now_ms();
        http_server_service(srv);
        if (now_ms() - t0 > longest_ms)
            longest_ms = now_ms() - t0;
    }
    return NULL;
}

static int setup(void **state)
{
    (void)state;
    char err[256];
    srv = http_server_new("127.0.0.1:0", handler, NULL, err, sizeof err);
    assert_non_null(srv);
    const char *a = http_server_address(srv);
    assert_int_equal(strncmp(a, "127.0.0.1:", 10), 0);
    port = (unsigned)atoi(a + 10);
    assert_true(port > 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    http_server_free(srv);
    return 0;
}

static int client(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    struct timeval tv = {20, 0}; /* a test that hangs fails instead */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

static void send_all(int fd, const char *s) { assert_int_equal(send(fd, s, strlen(s), MSG_NOSIGNAL), (ssize_t)strlen(s)); }

static int head_only; /* the answer to read is a HEAD's: no body */

/* One answer: its head and body into buf (the body as long as Content-Length says). */
static void read_answer(int fd, char *buf, size_t cap)
{
    size_t got = 0;
    char *end = NULL;
    long clen = -1;
    while (got < cap - 1) {
        ssize_t n = read(fd, buf + got, cap - 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
        buf[got] = 0;
        if (!end && (end = strstr(buf, "\r\n\r\n"))) {
            const char *cl = strstr(buf, "Content-Length: ");
            clen = cl && !head_only ? atol(cl + 16) : 0;
        }
        if (end && (long)(got - (size_t)(end + 4 - buf)) >= clen)
            break;
    }
    buf[got] = 0;
}

static void ask(int fd, const char *request, char *buf, size_t cap)
{
    send_all(fd, request);
    head_only = !strncmp(request, "HEAD ", 5);
    read_answer(fd, buf, cap);
    head_only = 0;
}

/* 1 when the server closed the connection (read gives 0). */
static int closed(int fd)
{
    char c;
    return read(fd, &c, 1) == 0;
}

static void start(pthread_t *t)
{
    stop = 0;
    longest_ms = 0;
    assert_int_equal(pthread_create(t, NULL, serve, NULL), 0);
}

static void finish(pthread_t t, const char *what)
{
    stop = 1;
    pthread_join(t, NULL);
    printf("# %s: longest service pass %.3f ms\n", what, longest_ms);
}

static void test_answers(void **state)
{
    (void)state;
    pthread_t t;
    start(&t);
    char buf[4096];
    int fd = client();
    ask(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: application/openmetrics-text\r\n\r\n", buf, sizeof buf);
    assert_non_null(strstr(buf, "HTTP/1.1 200 OK\r\n"));
    assert_non_null(strstr(buf, "Content-Type: text/plain; version=0.0.4\r\n"));
    assert_non_null(strstr(buf, "\r\n\r\napplication/openmetrics-text"));
    /* kept alive: the next request on the same connection, a query string cut off */
    ask(fd, "GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n", buf, sizeof buf);
    assert_non_null(strstr(buf, "HTTP/1.1 200 OK\r\n"));
    assert_non_null(strstr(buf, "\r\n\r\nno accept"));
    ask(fd, "HEAD /metrics HTTP/1.1\r\n\r\n", buf, sizeof buf);
    assert_non_null(strstr(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: 9\r\n"));
    ask(fd, "GET / HTTP/1.1\r\n\r\n", buf, sizeof buf);
    assert_non_null(strstr(buf, "HTTP/1.1 404 Not Found\r\n"));
    assert_true(closed(fd));
    close(fd);
    fd = client();
    ask(fd, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", buf, sizeof buf);
    assert_non_null(strstr(buf, "HTTP/1.1 405 Method Not Allowed\r\n"));
    assert_non_null(strstr(buf, "Allow: GET, HEAD\r\n"));
    close(fd);
    fd = client();
    ask(fd, "hello\r\n\r\n", buf, sizeof buf);
    assert_non_null(strstr(buf, "HTTP/1.1 400 Bad Request\r\n"));
    close(fd);
    fd = client(); /* HTTP/1.0 without keep-alive: closed after the answer */
    ask(fd, "GET /metrics HTTP/1.0\r\n\r\n", buf, sizeof buf);
    assert_non_null(strstr(buf, "HTTP/1.1 200 OK\r\n"));
    assert_true(closed(fd));
    close(fd);
    finish(t, "answers");
}

/* A head past the limit, sent in one go: 431 and closed, no matter what follows. */
static void test_huge_request(void **state)
{
    (void)state;
    pthread_t t;
    start(&t);
    int fd = client();
    size_t n = 1 << 20;
    char *huge = malloc(n + 1);
    memcpy(huge, "GET /metrics HTTP/1.1\r\nX-Junk: ", 31);
    memset(huge + 31, 'a', n - 31);
    huge[n] = 0;
    send(fd, huge, HTTP_SERVE_HEAD_MAX + 100, MSG_NOSIGNAL);
    char buf[4096];
    read_answer(fd, buf, sizeof buf);
    assert_non_null(strstr(buf, "HTTP/1.1 431 Request Header Fields Too Large\r\n"));
    assert_true(closed(fd));
    close(fd);
    free(huge);
    fd = client(); /* and the next client is answered */
    ask(fd, "GET /metrics HTTP/1.1\r\n\r\n", buf, sizeof buf);
    assert_non_null(strstr(buf, "HTTP/1.1 200 OK\r\n"));
    close(fd);
    finish(t, "huge request");
}

/* A slow loris: a head a few bytes at a time, never finished. Others are answered while
 * it dribbles; it gets 408 once the head's time is up. */
static void test_slow_loris(void **state)
{
    (void)state;
    pthread_t t;
    start(&t);
    int loris = client(), idle = client();
    send_all(loris, "GET /met");
    char buf[4096];
    double t0 = now_ms();
    int answered = 0;
    while (now_ms() - t0 < HTTP_SERVE_HEAD_MS - 1000) {
        send_all(loris, "X");
        int fd = client();
        ask(fd, "GET /metrics HTTP/1.1\r\n\r\n", buf, sizeof buf);
        assert_non_null(strstr(buf, "HTTP/1.1 200 OK\r\n"));
        answered++;
        close(fd);
        usleep(200000);
    }
    printf("# %d requests answered while the slow client dribbled\n", answered);
    read_answer(loris, buf, sizeof buf);
    assert_non_null(strstr(buf, "HTTP/1.1 408 Request Timeout\r\n"));
    printf("# the slow client's 408 came %.1f s after its first byte\n", (now_ms() - t0) / 1000);
    assert_true(closed(loris));
    close(loris);
    close(idle);
    finish(t, "slow loris");
}

/* A client that asks for a big answer and never reads it: the server's passes go on
 * (the others are answered) with the answer half written. */
static void test_client_that_never_reads(void **state)
{
    (void)state;
    pthread_t t;
    big_len = 8 << 20;
    start(&t);
    int sloth = client();
    int small = 4096;
    setsockopt(sloth, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    send_all(sloth, "GET /big HTTP/1.1\r\n\r\n");
    char buf[4096];
    for (int i = 0; i < 20; i++) {
        int fd = client();
        ask(fd, "GET /metrics HTTP/1.1\r\n\r\n", buf, sizeof buf);
        assert_non_null(strstr(buf, "HTTP/1.1 200 OK\r\n"));
        close(fd);
    }
    close(sloth);
    finish(t, "client that never reads 8 MiB");
    big_len = 1;
}

/* Every slot taken by silent clients: the one silent longest makes room for a new
 * client, which is answered. */
static void test_slots_full(void **state)
{
    (void)state;
    pthread_t t;
    start(&t);
    int fds[HTTP_SERVE_CONNS];
    char buf[4096];
    for (int i = 0; i < HTTP_SERVE_CONNS; i++) {
        fds[i] = client();
        send_all(fds[i], "G"); /* a byte: accepted and waiting for the rest */
        usleep(20000);
    }
    int fd = client();
    ask(fd, "GET /metrics HTTP/1.1\r\n\r\n", buf, sizeof buf);
    assert_non_null(strstr(buf, "HTTP/1.1 200 OK\r\n"));
    close(fd);
    assert_true(closed(fds[0])); /* the first, silent longest, was dropped */
    for (int i = 0; i < HTTP_SERVE_CONNS; i++)
        close(fds[i]);
    finish(t, "slots full");
}

static void test_addresses(void **state)
{
    (void)state;
    char host[64], err[256];
    unsigned p;
    assert_int_equal(http_split_address("127.0.0.1:9400", host, sizeof host, &p), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(p, 9400);
    assert_int_equal(http_split_address("[::1]:80", host, sizeof host, &p), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(http_split_address(":0", host, sizeof host, &p), 0);
    assert_string_equal(host, "");
    assert_int_equal(p, 0);
    assert_int_equal(http_split_address("localhost", host, sizeof host, &p), -1);
    assert_int_equal(http_split_address("h:65536", host, sizeof host, &p), -1);
    assert_int_equal(http_split_address("h:12a", host, sizeof host, &p), -1);
    assert_int_equal(http_split_address("::1:80", host, sizeof host, &p), -1);
    assert_null(http_server_new("nine-four-hundred", handler, NULL, err, sizeof err));
    assert_non_null(strstr(err, "not HOST:PORT"));
    char taken[64];
    snprintf(taken, sizeof taken, "127.0.0.1:%u", port);
    assert_null(http_server_new(taken, handler, NULL, err, sizeof err));
    assert_non_null(strstr(err, "Address already in use"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_answers),        cmocka_unit_test(test_huge_request),
        cmocka_unit_test(test_slow_loris),     cmocka_unit_test(test_client_that_never_reads),
        cmocka_unit_test(test_slots_full),     cmocka_unit_test(test_addresses),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
