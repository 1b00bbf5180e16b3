/* The shim's life cycle: configuration from the environment, the lazy start of the
 * stream at the first traced call (MAGIC, HELLO, MODULES), fork children, and exit.
 *
 * Environment:
 *   CULEAK_OUTPUT=PATH   record to this file.
 *                        %p: pid, %h: host name, %r: rank (the first of RANK,
 *                        OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, MV2_COMM_WORLD_RANK,
 *                        SLURM_PROCID, LOCAL_RANK that is set, else 0), %%: a percent
 *                        sign; missing directories are made. A forked child writes its
 *                        own file: when PATH has no %p, ".<pid>" is appended for it.
 *   CULEAK_OUTPUT_EXCL=1 (set by `culeak record`) no process overwrites an existing file:
 *                        with no %p in PATH, the first process of the job takes PATH and
 *                        every other one (an exec'd rank too) writes PATH.<pid>.
 *   CULEAK_DEPTH=N       stack frames kept per event, 1..256 (default 48)
 *   CULEAK_FREE_STACKS=1 frees carry their stack, device and context too
 *   CULEAK_UNWIND_CHECK=1 every stack is also taken by libunwind alone; a NOTE at exit
 *                        says how many differed (for tests)
 *   CULEAK_RING_FD=N     (set by culeak for the program it starts) the descriptor of a
 *                        ring shared with culeak's reader: mapped, claimed and closed
 *                        at load, before the program runs (culeak-stream(5), The ring)
 *   CULEAK_RING_SOCKET=PATH  where a process without such a ring (a forked child, an
 *                        exec'd program) hands over a ring of its own, at its start
 *   CULEAK_RING_SIZE=N   a ring's data area in bytes (a power of two; default 1 MiB)
 *   CULEAK_HOLD_AT_START=1 (set by the console) allocations at new stacks wait until the
 *                        console has answered HELLO (culeak-stream(5), Commands)
 * No CULEAK_OUTPUT and no ring: the shim only passes calls through. With a ring, the
 * recording at CULEAK_OUTPUT is written by culeak's reader, not the shim; a ring without
 * a recording is the console's. A process culeak attaches to is configured by
 * culeak_attach_configure instead: a ring it hands over to the attaching culeak. */
#include "common/outpath.h"
#include "common/ring.h"
#include "shim.h"
#include "common/wire.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int culeak_state;
unsigned culeak_depth_limit = CULEAK_DEFAULT_DEPTH;
unsigned culeak_fork_gen;
int culeak_free_stacks;
int culeak_hold_at_start;
int culeak_attached;

static const char *output_path, *ring_socket;
static struct culeak_ring given; /* CULEAK_RING_FD's ring, claimed at load; h NULL: none */
static size_t ring_size = 1u << 20; /* as culeak's own (src/launch/collect.c) */
static int output_exclusive; /* CULEAK_OUTPUT_EXCL */
static int forked_child;
static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;

static const char *const rank_vars[] = {
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE", "SLURM_PROCID", "SLURM_LOCALID",
    "SLURM_NTASKS", "PMI_RANK", "PMI_SIZE", "PMIX_RANK", "MV2_COMM_WORLD_RANK", "CUDA_VISIBLE_DEVICES",
};

CULEAK_TLS uint32_t culeak_tid_known;
CULEAK_TLS unsigned culeak_tid_gen;

uint32_t culeak_tid_ask(void)
{
    culeak_tid_known = (uint32_t)syscall(SYS_gettid);
    culeak_tid_gen = __atomic_load_n(&culeak_fork_gen, __ATOMIC_RELAXED);
    return culeak_tid_known;
}

void culeak_stop(const char *why)
{
    int s = __atomic_load_n(&culeak_state, __ATOMIC_ACQUIRE);
    while (s == CULEAK_IDLE || s == CULEAK_ACTIVE) {
        if (__atomic_compare_exchange_n(&culeak_state, &s, CULEAK_STOPPED, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            if (why && !__atomic_load_n(&culeak_attached, __ATOMIC_ACQUIRE))
                fprintf(stderr, "culeak: %s\n", why);
            culeak_stream_release_all();
            return;
        }
    }
}

/* Returns whether the path names the pid (each process then has its own path). */
static int expand_path(const char *tmpl, char *out, size_t cap)
{
    int has_pid = culeak_expand_path(tmpl, (long)getpid(), NULL, NULL, out, cap);
    if (has_pid < 0) { /* too long: no file rather than one under a cut name */
        out[0] = 0;
        return 1;
    }
    size_t n = strlen(out);
    if (forked_child && !has_pid)
        snprintf(out + n, cap - n, ".%d", (int)getpid());
    return has_pid || forked_child;
}

static int open_output(void)
{
    char path[4096], made[4200];
    int shared = !expand_path(output_path, path, sizeof path) && output_exclusive;
    return culeak_create_recording(path, shared, (long)getpid(), made, sizeof made);
}

/* A ring of this process's own, handed over once to the reader listening at
 * ring_socket (SCM_RIGHTS; the reader must be this user, SO_PEERCRED); neither
 * descriptor stays open. 0, or -1 (no ring). */
static int ring_handover(struct culeak_ring *r)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(ring_socket) >= sizeof a.sun_path)
        return -1;
    strcpy(a.sun_path, ring_socket);
    int rfd = -1;
    if (culeak_ring_create(ring_size, &rfd, r) != 0)
        return -1;
    culeak_ring_claim(r, (uint32_t)getpid());
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), ok = 0;
    if (fd >= 0) {
        int c;
        while ((c = connect(fd, (struct sockaddr *)&a, sizeof a)) < 0 && errno == EINTR)
            ;
        struct ucred cr;
        socklen_t crl = sizeof cr;
        if (c == 0 && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl) == 0 && cr.uid == geteuid()) {
            __atomic_store_n(&r->h->reader_pid, (uint32_t)cr.pid, __ATOMIC_RELEASE);
            ok = culeak_ring_send_fd(fd, rfd) == 0;
        }
        close(fd);
    }
    close(rfd);
    if (!ok)
        culeak_ring_unmap(r);
    return ok ? 0 : -1;
}

/* The ring shared with culeak's reader, when there is one: the one given at load, else
 * one handed over now; the recording's path written in its header. 0, or -1. */
static int shared_ring(struct culeak_ring *r)
{
    if (given.h) {
        *r = given;
        given.h = NULL;
    } else if (!ring_socket || ring_handover(r) != 0) {
        return -1;
    }
    if (output_path) {
        char path[CULEAK_RING_PATH_MAX];
        int own = expand_path(output_path, path, sizeof path);
        memcpy(r->h->path, path, sizeof path);
        r->h->path_shared = !own && output_exclusive;
    }
    return 0;
}

/* A growable HELLO payload: only the shim's start uses it, so plain malloc is fine. */
struct hello {
    uint8_t *p;
    size_t len, cap;
    int failed;
};

static int hello_room(struct hello *h, size_t n)
{
    if (h->failed)
        return -1;
    if (h->len + n <= h->cap)
        return 0;
    size_t cap = h->cap ? h->cap : 4096;
    while (cap < h->len + n)
        cap *= 2;
    uint8_t *p = realloc(h->p, cap);
    if (!p) {
        h->failed = 1;
        return -1;
    }
    h->p = p;
    h->cap = cap;
    return 0;
}

static void hello_u(struct hello *h, uint64_t v)
{
    if (hello_room(h, CULEAK_UVARINT_MAX) == 0)
        h->len += culeak_put_u(h->p + h->len, v);
}

static void hello_s(struct hello *h, const char *s, size_t n)
{
    if (hello_room(h, CULEAK_UVARINT_MAX + n) == 0)
        h->len += culeak_put_s(h->p + h->len, s, n);
}

static void hello_argv(struct hello *h)
{
    static char cmd[65536];
    ssize_t n = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t k;
        while (n < (ssize_t)sizeof cmd && (k = read(fd, cmd + n, sizeof cmd - (size_t)n)) > 0)
            n += k;
        close(fd);
    }
    uint64_t argc = 0;
    for (ssize_t i = 0; i < n; i++)
        argc += cmd[i] == 0;
    if (n > 0 && cmd[n - 1] != 0)
        argc++;
    hello_u(h, argc);
    for (ssize_t i = 0; i < n;) {
        size_t len = strnlen(cmd + i, (size_t)(n - i));
        hello_s(h, cmd + i, len);
        i += (ssize_t)len + 1;
    }
}

/* The HELLO record in a malloc'd buffer, or NULL. */
static uint8_t *hello_record(uint64_t t0, int is_file, size_t *len)
{
    struct hello h = {NULL, 0, 0, 0};
    if (hello_room(&h, CULEAK_REC_HEADROOM) < 0)
        return NULL;
    h.len = CULEAK_REC_HEADROOM;
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    char host[256] = "", exe[4096] = "";
    gethostname(host, sizeof host - 1);
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    hello_u(&h, CULEAK_FORMAT_VERSION);
    hello_u(&h, (uint64_t)getpid());
    hello_u(&h, (uint64_t)getppid());
    hello_u(&h, (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec);
    hello_u(&h, t0);
    hello_s(&h, host, strlen(host));
    hello_s(&h, exe, strlen(exe));
    hello_argv(&h);
    uint64_t nenv = 0;
    for (size_t i = 0; i < sizeof rank_vars / sizeof *rank_vars; i++)
        nenv += getenv(rank_vars[i]) != NULL;
    hello_u(&h, nenv);
    for (size_t i = 0; i < sizeof rank_vars / sizeof *rank_vars; i++) {
        const char *v = getenv(rank_vars[i]);
        if (!v)
            continue;
        char kv[512];
        int k = snprintf(kv, sizeof kv, "%s=%s", rank_vars[i], v);
        hello_s(&h, kv, k < (int)sizeof kv ? (size_t)k : sizeof kv - 1);
    }
    hello_u(&h, culeak_depth_limit);
    hello_u(&h, (is_file ? CULEAK_HELLO_FILE : 0) | (culeak_free_stacks ? 0 : CULEAK_HELLO_BARE_FREES) |
                    (culeak_attached ? CULEAK_HELLO_ATTACHED : 0));
    if (h.failed) {
        free(h.p);
        return NULL;
    }
    *len = culeak_rec_finish(h.p, CULEAK_REC_HELLO, h.len - CULEAK_REC_HEADROOM);
    return h.p;
}

int culeak_ensure_started(void)
{
    /* Built before taking any lock: dl_iterate_phdr takes the loader lock. */
    size_t mlen = 0;
    uint8_t *modules = culeak_modules_record(&mlen);
    pthread_mutex_lock(&start_mu);
    if (__atomic_load_n(&culeak_state, __ATOMIC_ACQUIRE) == CULEAK_IDLE) {
        uint64_t t0 = culeak_now_ns();
        struct culeak_ring r;
        int shared = shared_ring(&r) == 0;
        /* without culeak's reader (gone, or never there) the shim writes the file itself;
         * a console's process (a ring and no file) then runs untraced */
        errno = ECONNREFUSED;
        int fd = shared ? INT_MAX : output_path ? open_output() : -1;
        size_t hlen = 0;
        uint8_t *hello = fd >= 0 ? hello_record(t0, 1, &hlen) : NULL;
        char why[600];
        if (shared && (!hello || !modules || culeak_stream_open_shared(&r, t0) < 0)) {
            culeak_ring_unmap(&r);
            culeak_stop("out of memory at start; the program runs untraced");
        } else if (shared) {
            __atomic_store_n(&culeak_state, CULEAK_ACTIVE, __ATOMIC_RELEASE);
            culeak_stream_append(hello, hlen);
            culeak_stream_append(modules, mlen);
            culeak_stream_start_flusher();
            culeak_abrupt_end_arm();
        } else if (fd < 0) {
            if (!output_path)
                snprintf(why, sizeof why, "cannot hand a ring to the console at %s (%s); the program runs untraced",
                         ring_socket ? ring_socket : "(none)", strerror(errno));
            else
                snprintf(why, sizeof why, "cannot create %s (%s); the program runs untraced", output_path,
                         strerror(errno));
            culeak_stop(why);
        } else if (!hello || !modules || culeak_stream_open(fd, t0) < 0) {
            close(fd);
            culeak_stop("out of memory at start; the program runs untraced");
        } else {
            __atomic_store_n(&culeak_state, CULEAK_ACTIVE, __ATOMIC_RELEASE);
            culeak_stream_append(hello, hlen);
            culeak_stream_append(modules, mlen);
            culeak_stream_start_flusher();
            culeak_abrupt_end_arm();
        }
        free(hello);
    }
    pthread_mutex_unlock(&start_mu);
    free(modules);
    return __atomic_load_n(&culeak_state, __ATOMIC_ACQUIRE) == CULEAK_ACTIVE;
}

void culeak_stop_stream(const void *s, const char *why)
{
    pthread_mutex_lock(&start_mu);
    if (culeak_stream_is(s))
        culeak_stop(why);
    pthread_mutex_unlock(&start_mu);
}

static void fork_child(void)
{
    __atomic_add_fetch(&culeak_fork_gen, 1, __ATOMIC_RELAXED);
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    start_mu = fresh; /* the parent's may have been held by another thread */
    culeak_inflight_reset(); /* frees other threads had in flight never end here */
    culeak_ctx_forget();
    culeak_py_fork_child();
    culeak_backward_fork_child();
    int s = __atomic_load_n(&culeak_state, __ATOMIC_ACQUIRE);
    if (given.h) /* the parent's, unused: never this process's */
        culeak_ring_unmap(&given);
    if (s == CULEAK_ACTIVE || s == CULEAK_IDLE) {
        culeak_stream_reset_child();
        forked_child = 1;
        /* the attaching culeak follows the one process it attached to */
        __atomic_store_n(&culeak_state, culeak_attached ? CULEAK_STOPPED : CULEAK_IDLE, __ATOMIC_RELEASE);
    }
}

/* CULEAK_RING_FD: the ring culeak made for the program it starts. Mapped, claimed (a
 * program exec'd later must make its own) and closed before the program runs; a number
 * that is not culeak's ring is the program's and left alone. */
static void take_ring(void)
{
    const char *rs = getenv("CULEAK_RING_SIZE"), *rf = getenv("CULEAK_RING_FD"), *sock = getenv("CULEAK_RING_SOCKET");
    unsigned long long size = rs && *rs ? strtoull(rs, NULL, 10) : 0;
    if (size >= 4096 && size <= (1ull << 30) && !(size & (size - 1)))
        ring_size = (size_t)size;
    ring_socket = sock && *sock ? strdup(sock) : NULL;
    if (!rf || !*rf)
        return;
    char *end;
    long fd = strtol(rf, &end, 10);
    unsetenv("CULEAK_RING_FD");
    if (*end || fd < 3 || fd > INT_MAX || !culeak_ring_is_ring((int)fd))
        return;
    if (culeak_ring_map((int)fd, &given) == 0 && culeak_ring_claim(&given, (uint32_t)getpid()) != 0)
        culeak_ring_unmap(&given);
    close((int)fd);
}

/* Tracing is set up: it starts at the next traced call (culeak_ensure_started). */
static void arm(void)
{
    static int armed;
    if (!armed++)
        pthread_atfork(NULL, NULL, fork_child);
    __atomic_store_n(&culeak_state, CULEAK_IDLE, __ATOMIC_RELEASE);
}

int culeak_attach_configure(const char *endpoint)
{
    /* "ring:PATH": the hand-over socket of the attaching culeak (console or record) */
    if (strncmp(endpoint, "ring:", 5) != 0)
        return -1;
    char *copy = strdup(endpoint + 5);
    if (!copy)
        return -1;
    pthread_mutex_lock(&start_mu);
    int s = __atomic_load_n(&culeak_state, __ATOMIC_ACQUIRE);
    /* a culeak that detached, quit or died: its stream is ended here rather
     * than at the flush thread's next look (up to a second for a reader that died) */
    if (s == CULEAK_ACTIVE && culeak_stream_unread()) {
        culeak_stop(NULL);
        culeak_stream_forget();
        s = __atomic_load_n(&culeak_state, __ATOMIC_ACQUIRE);
    }
    if (s == CULEAK_IDLE || s == CULEAK_ACTIVE) {
        pthread_mutex_unlock(&start_mu);
        free(copy);
        return 1;
    }
    culeak_py_new_stream();
    /* only the start, under start_mu, reads them */
    free((char *)output_path);
    free((char *)ring_socket);
    ring_socket = copy;
    output_path = NULL;
    culeak_hold_at_start = 0;
    __atomic_store_n(&culeak_attached, 1, __ATOMIC_RELEASE);
    arm();
    pthread_mutex_unlock(&start_mu);
    return 0;
}

__attribute__((constructor)) static void culeak_init(void)
{
    culeak_self_range_init();
    culeak_unwind_init();
    culeak_holders_init();
    const char *d = getenv("CULEAK_DEPTH");
    if (d && *d) {
        long v = strtol(d, NULL, 10);
        culeak_depth_limit = v < 1 ? 1 : v > CULEAK_MAX_DEPTH ? CULEAK_MAX_DEPTH : (unsigned)v;
    }
    /* Copies: the program may change its environment later. */
    const char *op = getenv("CULEAK_OUTPUT");
    output_path = op && *op ? strdup(op) : NULL;
    const char *fs = getenv("CULEAK_FREE_STACKS");
    culeak_free_stacks = fs && strcmp(fs, "1") == 0;
    const char *hs = getenv("CULEAK_HOLD_AT_START");
    culeak_hold_at_start = hs && strcmp(hs, "1") == 0;
    const char *excl = getenv("CULEAK_OUTPUT_EXCL");
    output_exclusive = excl && strcmp(excl, "1") == 0;
    take_ring();
    if (!output_path && !given.h && !ring_socket) {
        culeak_ring_unmap(&given);
        return;
    }
    culeak_exec_env_init();
    arm();
}

__attribute__((destructor)) static void culeak_fini(void)
{
    if (__atomic_load_n(&culeak_state, __ATOMIC_ACQUIRE) != CULEAK_ACTIVE)
        return;
    culeak_unwind_check_note();
    culeak_stream_exit();
    culeak_stop(NULL);
}
