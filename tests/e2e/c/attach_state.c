/* The job of tests/e2e/attach_state.sh: threads whose every register and every blocking
 * system call must come through culeak's attaches untouched.
 *   attach_state DIR   runs until the file DIR/end exists, then prints what it checked
 *                      (the same lines traced or not) and exits 0, or 1 on any fault;
 *                      its figures (calls, lateness) go to DIR/figures.
 * Two victim threads make, in turn, blocking calls (read on a pipe, nanosleep,
 * clock_nanosleep relative and absolute, futex wait with and without a timeout, poll with
 * and without one, epoll_wait, accept) with known values in every register class the CPU
 * has (attach_state_regs.S: general, x87, MXCSR, YMM, ZMM and opmask with AVX-512, AMX
 * tiles when the kernel grants them) and check them after each; each result is checked
 * (EINTR or a restart code is a fault), each read gets the bytes its feeder thread wrote,
 * their signal mask stays as they set it,
 * no sleep ends early. A feeder per victim wakes it; the main thread waits in ppoll with a
 * signal mask; another thread allocates and frees on the (fake) driver. */
#define _GNU_SOURCE
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

long guarded_syscall(const long args[7], const uint8_t *in, uint8_t *out, long flags);

enum { F_AVX = 1, F_AVX512 = 2, F_AMX = 4 };
enum { K_READ, K_NANOSLEEP, K_CLOCK_REL, K_CLOCK_ABS, K_FUTEX, K_FUTEX_TIMED, K_POLL, K_POLL_TIMED, K_EPOLL,
       K_ACCEPT, K_COUNT };
static const char *const kind_name[K_COUNT] = {"read", "nanosleep", "clock_nanosleep", "clock_nanosleep-abs",
                                               "futex", "futex-timeout", "poll", "poll-timeout", "epoll_wait",
                                               "accept"};
#define SLEEP_NS (40 * 1000 * 1000L)
#define AREA 12288

static long flags;
static atomic_int stop;
static const char *dir;

struct victim {
    int id;
    int pipe_r, pipe_w, idle_r, idle_w, epfd, listen_fd;
    char sock[108];
    uint32_t futex_word;
    uint64_t rng;
    _Alignas(64) uint8_t in[AREA];
    _Alignas(64) uint8_t out[AREA];
    /* the victim's announce to its feeder */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int want_kind;
    uint64_t want_seq;
    int announced;
    /* results */
    long calls[K_COUNT], corrupt, unexpected, early, wrong_read;
    double late_ms[K_COUNT];
};

static struct victim victims[2];

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void cpu_features(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)) || !(c & (1u << 28)))
        return;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 6) == 6)
        flags |= F_AVX;
    __cpuid_count(7, 0, a, b, c, d);
    if ((b & (1u << 16)) && (lo & 0xe6) == 0xe6)
        flags |= F_AVX512;
    if (d & (1u << 24)) { /* AMX-TILE: the kernel must grant the tile data first */
        if (syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) == 0)
            flags |= F_AMX;
    }
}

/* known values for every register class, new at each call */
static void fill(struct victim *v)
{
    uint8_t *in = v->in;
    for (int i = 0; i < 8; i++) { /* normal 80-bit numbers: a random mantissa with its integer bit */
        uint64_t m = next(&v->rng) | (1ull << 63);
        uint16_t e = (uint16_t)(0x3fff + (next(&v->rng) % 64) - 32) | (uint16_t)((next(&v->rng) & 1) << 15);
        memcpy(in + i * 10, &m, 8);
        memcpy(in + i * 10 + 8, &e, 2);
    }
    uint16_t fcw = 0x0c7f ^ (uint16_t)((next(&v->rng) & 3) << 10); /* a rounding mode, precision 64 */
    uint32_t mxcsr = 0x1f80 | (uint32_t)((next(&v->rng) & 3) << 13) | ((next(&v->rng) & 1) ? 0x8040 : 0);
    memcpy(in + 80, &fcw, 2);
    memcpy(in + 84, &mxcsr, 4);
    for (int i = 96; i < 144; i += 8) {
        uint64_t x = next(&v->rng);
        memcpy(in + i, &x, 8);
    }
    for (int i = 192; i < 2816; i += 8) {
        uint64_t x = next(&v->rng);
        memcpy(in + i, &x, 8);
    }
    memset(in + 2816, 0, 64); /* the tile configuration: palette 1, 8 tiles of 16 rows x 64 bytes */
    in[2816] = 1;
    for (int t = 0; t < 8; t++) {
        uint16_t colsb = 64;
        memcpy(in + 2816 + 16 + 2 * t, &colsb, 2);
        in[2816 + 48 + t] = 16;
    }
    for (int i = 2880; i < 2880 + 8 * 1024; i += 8) {
        uint64_t x = next(&v->rng);
        memcpy(in + i, &x, 8);
    }
}

/* the registers that came back unlike they went in, counted by class */
static int check_regs(struct victim *v, const long args[7], int kind)
{
    const uint8_t *in = v->in, *out = v->out;
    int bad = 0;
    struct {
        const char *name;
        int at, len, need;
    } classes[] = {
        {"x87", 0, 80, 0},     {"FCW", 80, 2, 0},        {"MXCSR", 84, 4, 0},
        {"rbx..r15", 96, 48, 0}, {"ymm", 192, 512, F_AVX}, {"zmm", 704, 2048, F_AVX512},
        {"tiles", 2880, 8192, F_AMX},
    };
    for (size_t c = 0; c < sizeof classes / sizeof classes[0]; c++) {
        if (classes[c].need && !(flags & classes[c].need))
            continue;
        if (classes[c].need == F_AVX && (flags & F_AVX512))
            continue; /* zmm0-15 hold them */
        if (memcmp(in + classes[c].at, out + classes[c].at, (size_t)classes[c].len) != 0) {
            fprintf(stderr, "victim %d: %s registers changed across %s\n", v->id, classes[c].name, kind_name[kind]);
            bad++;
        }
    }
    if (flags & F_AVX512)
        for (int k = 0; k < 8; k++)
            if (memcmp(in + 2752 + k * 8, out + 2752 + k * 8, 2) != 0) {
                fprintf(stderr, "victim %d: k%d changed across %s\n", v->id, k, kind_name[kind]);
                bad++;
            }
    /* the arguments' registers, which the kernel keeps: rdi rsi rdx r10 r8 r9 */
    for (int i = 0; i < 6; i++)
        if (memcmp(out + 144 + i * 8, &args[i + 1], 8) != 0) {
            fprintf(stderr, "victim %d: argument register %d changed across %s\n", v->id, i, kind_name[kind]);
            bad++;
        }
    return bad;
}

/* the signal mask every victim keeps (SIGUSR1 blocked): the injector changes it while it
 * borrows the thread, and must give it back */
static sigset_t victim_mask;

static long call(struct victim *v, int kind, long nr, long a1, long a2, long a3, long a4)
{
    long args[7] = {nr, a1, a2, a3, a4, 0, 0};
    fill(v);
    long r = guarded_syscall(args, v->in, v->out, flags);
    v->corrupt += check_regs(v, args, kind);
    sigset_t now;
    pthread_sigmask(SIG_BLOCK, NULL, &now);
    for (int sig = 1; sig < 32; sig++)
        if (sigismember(&now, sig) != sigismember(&victim_mask, sig)) {
            fprintf(stderr, "victim %d: signal mask changed across %s (signal %d)\n", v->id, kind_name[kind], sig);
            v->corrupt++;
            break;
        }
    return r;
}

static void unexpected(struct victim *v, int kind, long r)
{
    fprintf(stderr, "victim %d: %s returned %ld (%s)\n", v->id, kind_name[kind], r, r < 0 ? strerror((int)-r) : "");
    v->unexpected++;
}

static void timed(struct victim *v, int kind, double t0, double asked_ms)
{
    double took = now_ms() - t0;
    if (took < asked_ms - 0.001) {
        fprintf(stderr, "victim %d: %s ended early: %.3f ms of %.3f\n", v->id, kind_name[kind], took, asked_ms);
        v->early++;
    } else if (took - asked_ms > v->late_ms[kind])
        v->late_ms[kind] = took - asked_ms;
}

static void read_seq(struct victim *v, int kind, uint64_t seq)
{
    uint64_t got = 0;
    ssize_t n = read(v->pipe_r, &got, sizeof got);
    if (n != (ssize_t)sizeof got || got != seq) {
        fprintf(stderr, "victim %d: %s got %zd bytes, %llu, want %llu\n", v->id, kind_name[kind], n,
                (unsigned long long)got, (unsigned long long)seq);
        v->wrong_read++;
    }
}

static void announce(struct victim *v, int kind, uint64_t seq)
{
    pthread_mutex_lock(&v->mu);
    v->want_kind = kind;
    v->want_seq = seq;
    v->announced = 1;
    pthread_cond_signal(&v->cv);
    pthread_mutex_unlock(&v->mu);
}

static void one_call(struct victim *v, int kind, uint64_t seq)
{
    struct timespec ts = {0, SLEEP_NS}, rem;
    double t0 = now_ms();
    long r;
    v->calls[kind]++;
    switch (kind) {
    case K_READ: {
        uint64_t got = 0;
        announce(v, kind, seq);
        r = call(v, kind, SYS_read, v->pipe_r, (long)&got, sizeof got, 0);
        if (r != (long)sizeof got)
            unexpected(v, kind, r);
        else if (got != seq) {
            fprintf(stderr, "victim %d: read %llu, want %llu\n", v->id, (unsigned long long)got,
                    (unsigned long long)seq);
            v->wrong_read++;
        }
        return;
    }
    case K_NANOSLEEP:
        r = call(v, kind, SYS_nanosleep, (long)&ts, (long)&rem, 0, 0);
        break;
    case K_CLOCK_REL:
        r = call(v, kind, SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, (long)&ts, (long)&rem);
        break;
    case K_CLOCK_ABS: {
        struct timespec at;
        clock_gettime(CLOCK_MONOTONIC, &at);
        t0 = at.tv_sec * 1e3 + at.tv_nsec / 1e6;
        at.tv_nsec += SLEEP_NS;
        at.tv_sec += at.tv_nsec / 1000000000L;
        at.tv_nsec %= 1000000000L;
        r = call(v, kind, SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, (long)&at, 0);
        break;
    }
    case K_FUTEX:
        atomic_store((_Atomic uint32_t *)&v->futex_word, 0);
        announce(v, kind, seq);
        do /* the feeder may have woken it before it waited */
            r = call(v, kind, SYS_futex, (long)&v->futex_word, FUTEX_WAIT_PRIVATE, 0, 0);
        while (r == -EAGAIN && atomic_load((_Atomic uint32_t *)&v->futex_word) == 0);
        if (r != 0 && r != -EAGAIN)
            unexpected(v, kind, r);
        return;
    case K_FUTEX_TIMED:
        v->futex_word = 0;
        r = call(v, kind, SYS_futex, (long)&v->futex_word, FUTEX_WAIT_PRIVATE, 0, (long)&ts);
        if (r != -ETIMEDOUT)
            unexpected(v, kind, r);
        timed(v, kind, t0, SLEEP_NS / 1e6);
        return;
    case K_POLL:
    case K_POLL_TIMED: {
        struct pollfd p = {kind == K_POLL ? v->pipe_r : v->idle_r, POLLIN, 0};
        if (kind == K_POLL)
            announce(v, kind, seq);
        r = call(v, kind, SYS_poll, (long)&p, 1, kind == K_POLL ? -1 : SLEEP_NS / 1000000, 0);
        if (r != (kind == K_POLL))
            unexpected(v, kind, r);
        if (kind == K_POLL)
            read_seq(v, kind, seq);
        else
            timed(v, kind, t0, SLEEP_NS / 1e6);
        return;
    }
    case K_EPOLL: {
        struct epoll_event ev;
        announce(v, kind, seq);
        r = call(v, kind, SYS_epoll_wait, v->epfd, (long)&ev, 1, -1);
        if (r != 1)
            unexpected(v, kind, r);
        read_seq(v, kind, seq);
        return;
    }
    case K_ACCEPT:
        announce(v, kind, seq);
        r = call(v, kind, SYS_accept, v->listen_fd, 0, 0, 0);
        if (r < 0)
            unexpected(v, kind, r);
        else
            close((int)r);
        return;
    default:
        return;
    }
    if (r != 0)
        unexpected(v, kind, r);
    timed(v, kind, t0, SLEEP_NS / 1e6);
}

static void *victim_main(void *arg)
{
    struct victim *v = arg;
    pthread_sigmask(SIG_SETMASK, &victim_mask, NULL);
    for (uint64_t seq = 1; !atomic_load(&stop); seq++)
        one_call(v, (int)(seq % K_COUNT), seq);
    announce(v, -1, 0); /* the feeder's end */
    return NULL;
}

/* wakes its victim after a moment (1-30 ms) in the way its call waits for */
static void *feeder_main(void *arg)
{
    struct victim *v = arg;
    uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(v->id + 3);
    int conn = -1;
    for (;;) {
        pthread_mutex_lock(&v->mu);
        while (!v->announced)
            pthread_cond_wait(&v->cv, &v->mu);
        v->announced = 0;
        int kind = v->want_kind;
        uint64_t seq = v->want_seq;
        pthread_mutex_unlock(&v->mu);
        if (kind < 0)
            break;
        struct timespec ts = {0, (long)(1 + next(&rng) % 30) * 1000000L};
        while (nanosleep(&ts, &ts) != 0)
            ;
        if (kind == K_FUTEX) {
            atomic_store((_Atomic uint32_t *)&v->futex_word, 1);
            syscall(SYS_futex, &v->futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        } else if (kind == K_ACCEPT) {
            if (conn >= 0)
                close(conn);
            conn = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
            struct sockaddr_un a = {.sun_family = AF_UNIX};
            snprintf(a.sun_path, sizeof a.sun_path, "%s", v->sock);
            if (connect(conn, (struct sockaddr *)&a, sizeof a) != 0)
                fprintf(stderr, "feeder %d: connect: %s\n", v->id, strerror(errno));
        } else if (write(v->pipe_w, &seq, sizeof seq) != (ssize_t)sizeof seq)
            fprintf(stderr, "feeder %d: write: %s\n", v->id, strerror(errno));
    }
    if (conn >= 0)
        close(conn);
    return NULL;
}

/* the fake driver's allocations, alongside: each freed, none failing */
typedef int CUresult;
CUresult cuInit(unsigned);
CUresult cuDeviceGet(int *, int);
CUresult cuDevicePrimaryCtxRetain(void **, int);
CUresult cuCtxSetCurrent(void *);
CUresult cuMemAlloc_v2(unsigned long long *, size_t);
CUresult cuMemFree_v2(unsigned long long);
static long allocs, alloc_failures;

static void *allocator_main(void *arg)
{
    (void)arg;
    int dev;
    void *ctx;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
        alloc_failures++;
        return NULL;
    }
    while (!atomic_load(&stop)) {
        unsigned long long d;
        if (cuMemAlloc_v2(&d, 4096 * (size_t)(1 + allocs % 8)) || cuMemFree_v2(d))
            alloc_failures++;
        allocs++;
        struct timespec ts = {0, 2000000};
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    return NULL;
}

static void setup(struct victim *v, int id)
{
    int p[2], q[2];
    v->id = id;
    v->rng = 0x2545f4914f6cdd1dull + (uint64_t)id;
    if (pipe2(p, O_CLOEXEC) || pipe2(q, O_CLOEXEC))
        exit(2);
    v->pipe_r = p[0], v->pipe_w = p[1], v->idle_r = q[0], v->idle_w = q[1];
    v->epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN};
    epoll_ctl(v->epfd, EPOLL_CTL_ADD, v->pipe_r, &ev);
    snprintf(v->sock, sizeof v->sock, "%s/sock%d", dir, id);
    unlink(v->sock);
    v->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", v->sock);
    if (bind(v->listen_fd, (struct sockaddr *)&a, sizeof a) || listen(v->listen_fd, 4))
        exit(2);
    pthread_mutex_init(&v->mu, NULL);
    pthread_cond_init(&v->cv, NULL);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    dir = argv[1];
    char end[4096], figures[4096];
    snprintf(end, sizeof end, "%s/end", dir);
    snprintf(figures, sizeof figures, "%s/figures", dir);
    cpu_features();
    sigemptyset(&victim_mask);
    sigaddset(&victim_mask, SIGUSR1);
    pthread_t vt[2], ft[2], at;
    for (int i = 0; i < 2; i++)
        setup(&victims[i], i);
    for (int i = 0; i < 2; i++) /* the victims first: the lowest thread ids after main */
        pthread_create(&vt[i], NULL, victim_main, &victims[i]);
    for (int i = 0; i < 2; i++)
        pthread_create(&ft[i], NULL, feeder_main, &victims[i]);
    pthread_create(&at, NULL, allocator_main, NULL);
    printf("attach_state: running (registers: general, x87, MXCSR%s%s%s)\n", flags & F_AVX ? ", YMM" : "",
           flags & F_AVX512 ? ", ZMM, opmask" : "", flags & F_AMX ? ", AMX tiles" : "");
    fflush(stdout);
    /* the main thread waits in ppoll with a signal mask (never borrowed: its mask would not
     * come back), checking each wait's result */
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR2);
    long main_unexpected = 0;
    while (access(end, F_OK) != 0) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        int r = ppoll(NULL, 0, &ts, &mask);
        if (r != 0) {
            fprintf(stderr, "main: ppoll returned %d (%s)\n", r, strerror(errno));
            main_unexpected++;
        }
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++) {
        /* a victim waiting for its feeder's last wake gets it: the feeder ends after */
        pthread_join(vt[i], NULL);
        pthread_join(ft[i], NULL);
    }
    pthread_join(at, NULL);
    FILE *f = fopen(figures, "w");
    int bad = main_unexpected != 0 || alloc_failures != 0;
    for (int i = 0; i < 2; i++) {
        struct victim *v = &victims[i];
        long total = 0;
        double late = 0;
        for (int k = 0; k < K_COUNT; k++) {
            total += v->calls[k];
            late = v->late_ms[k] > late ? v->late_ms[k] : late;
            if (f)
                fprintf(f, "victim %d %s calls %ld late_ms %.3f\n", i, kind_name[k], v->calls[k], v->late_ms[k]);
        }
        if (f)
            fprintf(f, "victim %d calls %ld max_late_ms %.3f\n", i, total, late);
        printf("victim %d: %ld corrupted registers, %ld unexpected results, %ld sleeps ended early, %ld wrong reads\n",
               i, v->corrupt, v->unexpected, v->early, v->wrong_read);
        bad |= v->corrupt || v->unexpected || v->early || v->wrong_read;
        unlink(v->sock);
    }
    if (f) {
        fprintf(f, "allocations %ld\n", allocs);
        fclose(f);
    }
    printf("main: %ld unexpected results; allocator: %ld failures\n", main_unexpected, alloc_failures);
    return bad;
}
