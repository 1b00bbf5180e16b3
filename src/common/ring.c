/* The shared ring (ring.h). */
#include "ring.h"
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int ring_attach(void *base, uint64_t size, struct culeak_ring *r)
{
    r->h = base;
    r->data = (uint8_t *)base + CULEAK_RING_HEADER;
    r->size = size;
    return 0;
}

int culeak_ring_create(size_t data_size, int *fd, struct culeak_ring *r)
{
    if (data_size < 4096 || (data_size & (data_size - 1))) {
        errno = EINVAL;
        return -1;
    }
    size_t total = CULEAK_RING_HEADER + data_size;
    void *p = MAP_FAILED;
    if (!fd) { /* a process's own ring: anonymous memory */
        p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return -1;
        struct culeak_ring_header *h = p;
        memcpy(h->magic, CULEAK_RING_MAGIC, sizeof h->magic);
        h->size = data_size;
        h->pad_at = UINT64_MAX;
        return ring_attach(p, data_size, r);
    }
    int f = (int)syscall(SYS_memfd_create, "culeak-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (f < 0)
        return -1;
    /* A file size limit (RLIMIT_FSIZE) holds for a memfd too: past it ftruncate must fail
     * with EFBIG, never kill the process with SIGXFSZ (a pending one it caused is taken back). */
    sigset_t xfsz, old;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, &old);
    int sized = ftruncate(f, (off_t)total) == 0;
    if (!sized && errno == EFBIG && !sigismember(&old, SIGXFSZ)) {
        struct timespec zero = {0, 0};
        sigtimedwait(&xfsz, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    /* its size for good: whoever holds the descriptor (a job, a reader) can never cut the
     * memory the other reads from under it (which would fault there) */
    if (sized && fcntl(f, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
        sized = 0;
    if (sized)
        p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        close(f);
        errno = e;
        return -1;
    }
    struct culeak_ring_header *h = p;
    memcpy(h->magic, CULEAK_RING_MAGIC, sizeof h->magic);
    h->size = data_size; /* pid 0: not claimed yet (a launcher's ring for its job) */
    h->pad_at = UINT64_MAX;
    *fd = f;
    return ring_attach(p, data_size, r);
}

int culeak_ring_is_ring(int fd)
{
    char link[64], target[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0)
        return 0;
    target[n] = 0;
    if (strncmp(target, "/memfd:culeak-ring", 18) != 0)
        return 0;
    char magic[8];
    return pread(fd, magic, sizeof magic, 0) == (ssize_t)sizeof magic &&
           memcmp(magic, CULEAK_RING_MAGIC, sizeof magic) == 0;
}

int culeak_ring_claim(struct culeak_ring *r, uint32_t pid)
{
    uint32_t none = 0;
    return __atomic_compare_exchange_n(&r->h->pid, &none, pid, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ? 0 : -1;
}

void culeak_ring_end(struct culeak_ring *r) { __atomic_store_n(&r->h->ended, 1, __ATOMIC_RELEASE); }

int culeak_ring_map(int fd, struct culeak_ring *r)
{
    struct culeak_ring_header head;
    if (pread(fd, &head, sizeof head, 0) != (ssize_t)sizeof head)
        return -1;
    uint64_t size = head.size;
    struct stat st;
    /* the file holds all the header says, and cannot shrink (culeak_ring_create seals it):
     * the mapping never faults, whatever the other process does */
    int seals = fcntl(fd, F_GET_SEALS);
    if (memcmp(head.magic, CULEAK_RING_MAGIC, sizeof head.magic) != 0 || size < 4096 || (size & (size - 1)) ||
        size > (1ull << 34) || fstat(fd, &st) != 0 || (uint64_t)st.st_size < CULEAK_RING_HEADER + size ||
        seals < 0 || !(seals & F_SEAL_SHRINK)) {
        errno = EINVAL;
        return -1;
    }
    void *p = mmap(NULL, CULEAK_RING_HEADER + size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return -1;
    return ring_attach(p, size, r);
}

void culeak_ring_unmap(struct culeak_ring *r)
{
    if (r->h)
        munmap(r->h, CULEAK_RING_HEADER + r->size);
    r->h = NULL;
}

static void futex_wait(uint32_t *word, uint32_t val, long ns)
{
    struct timespec t = {ns / 1000000000L, ns % 1000000000L};
    syscall(SYS_futex, word, FUTEX_WAIT, val, &t, NULL, 0);
}

static void futex_wake(uint32_t *word) { syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0); }

int (*culeak_ring_clock)(clockid_t, struct timespec *) = clock_gettime;
void (*culeak_ring_sleep)(uint32_t *word, uint32_t val, long ns) = futex_wait;

static long elapsed_ns(const struct timespec *since)
{
    struct timespec now;
    culeak_ring_clock(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000000000L + (now.tv_nsec - since->tv_nsec);
}

uint8_t *culeak_ring_reserve(struct culeak_ring *r, size_t len, int wait_ms)
{
    struct culeak_ring_header *h = r->h;
    uint64_t head = h->head, off = head & (r->size - 1), to_end = r->size - off;
    uint64_t need = len < to_end ? len : to_end + len; /* a record never wraps */
    if (len >= r->size)
        return NULL;
    struct timespec start = {0, 0};
    while (head + need - __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE) > r->size) {
        if (!start.tv_sec && !start.tv_nsec)
            culeak_ring_clock(CLOCK_MONOTONIC, &start);
        long left = (long)wait_ms * 1000000L - elapsed_ns(&start);
        if (left <= 0)
            return NULL;
        uint32_t gen = __atomic_load_n(&h->tail_gen, __ATOMIC_ACQUIRE);
        __atomic_store_n(&h->waiting, 1, __ATOMIC_SEQ_CST);
        if (head + need - __atomic_load_n(&h->tail, __ATOMIC_SEQ_CST) > r->size)
            culeak_ring_sleep(&h->tail_gen, gen, left);
        __atomic_store_n(&h->waiting, 0, __ATOMIC_RELAXED);
    }
    if (len >= to_end) { /* the rest of the area is filler: one PAD byte says so */
        __atomic_store_n(&h->pad_at, head, __ATOMIC_RELAXED); /* the reader finds it there, walking no record */
        r->data[off] = CULEAK_REC_PAD;
        h->head = head + to_end;
        off = 0;
    }
    return r->data + off;
}

void culeak_ring_commit(struct culeak_ring *r, size_t len)
{
    r->h->head += len;
    __atomic_store_n(&r->h->commit, r->h->head, __ATOMIC_RELEASE);
}

void culeak_ring_drop(struct culeak_ring *r, uint64_t seq)
{
    struct culeak_ring_header *h = r->h;
    if (h->lost == h->lost_told)
        h->lost_first = seq;
    h->lost_last = seq;
    __atomic_store_n(&h->lost, h->lost + 1, __ATOMIC_RELEASE);
}

uint64_t culeak_ring_untold(const struct culeak_ring *r, uint64_t *first, uint64_t *last)
{
    *first = r->h->lost_first;
    *last = r->h->lost_last;
    return r->h->lost - r->h->lost_told;
}

void culeak_ring_told(struct culeak_ring *r) { r->h->lost_told = r->h->lost; }

size_t culeak_ring_peek(struct culeak_ring *r, const uint8_t **p)
{
    struct culeak_ring_header *h = r->h;
    for (;;) {
        uint64_t tail = h->tail, commit = __atomic_load_n(&h->commit, __ATOMIC_ACQUIRE);
        if (tail >= commit)
            return 0;
        uint64_t off = tail & (r->size - 1), end = off + (commit - tail);
        if (end > r->size)
            end = r->size;
        /* Committed bytes are whole records, up to the PAD of this lap if there is one:
         * pad_at was stored before the commit that covers it, and the writer cannot
         * pad again before the reader has passed it. */
        uint64_t pad = __atomic_load_n(&h->pad_at, __ATOMIC_RELAXED);
        if (pad == tail) { /* the writer went back to the start */
            culeak_ring_consume(r, (size_t)(r->size - off));
            continue;
        }
        if (pad > tail && pad - tail < end - off)
            end = off + (pad - tail);
        *p = r->data + off;
        return (size_t)(end - off);
    }
}

void culeak_ring_consume(struct culeak_ring *r, size_t n)
{
    struct culeak_ring_header *h = r->h;
    __atomic_store_n(&h->tail, h->tail + n, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&h->tail_gen, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&h->waiting, __ATOMIC_SEQ_CST))
        futex_wake(&h->tail_gen);
}

size_t culeak_ring_cmd_take(struct culeak_ring *r, uint8_t *buf, size_t cap)
{
    struct culeak_ring_header *h = r->h;
    uint64_t tail = h->cmd_tail, head = __atomic_load_n(&h->cmd_head, __ATOMIC_ACQUIRE);
    if (head == tail)
        return 0;
    if (head - tail > CULEAK_RING_CMD || head < tail) { /* not the reader's doing: start afresh */
        __atomic_store_n(&h->cmd_tail, head, __ATOMIC_RELEASE);
        return 0;
    }
    size_t n = (size_t)(head - tail) < cap ? (size_t)(head - tail) : cap;
    for (size_t i = 0; i < n; i++)
        buf[i] = h->cmd[(tail + i) % CULEAK_RING_CMD];
    __atomic_store_n(&h->cmd_tail, tail + n, __ATOMIC_RELEASE);
    return n;
}

int culeak_ring_cmd_put(struct culeak_ring *r, const uint8_t *rec, size_t len)
{
    struct culeak_ring_header *h = r->h;
    uint64_t head = h->cmd_head, tail = __atomic_load_n(&h->cmd_tail, __ATOMIC_ACQUIRE);
    if (tail > head || head - tail + len > CULEAK_RING_CMD)
        return -1;
    for (size_t i = 0; i < len; i++)
        h->cmd[(head + i) % CULEAK_RING_CMD] = rec[i];
    __atomic_store_n(&h->cmd_head, head + len, __ATOMIC_RELEASE);
    return 0;
}

int culeak_ring_reader_alive(const struct culeak_ring *r)
{
    if (__atomic_load_n(&r->h->reader_gone, __ATOMIC_ACQUIRE))
        return 0;
    uint32_t pid = __atomic_load_n(&r->h->reader_pid, __ATOMIC_ACQUIRE);
    return pid == 0 || pid > INT_MAX || kill((pid_t)pid, 0) == 0 || errno != ESRCH;
}

void culeak_ring_wait_released(struct culeak_ring *r, uint32_t gen, int ms)
{
    futex_wait(&r->h->released, gen, (long)ms * 1000000L);
}

void culeak_ring_wake_released(struct culeak_ring *r)
{
    __atomic_add_fetch(&r->h->released, 1, __ATOMIC_SEQ_CST);
    futex_wake(&r->h->released);
}

int culeak_ring_send_fd(int sock, int fd)
{
    char byte = 'R', ctl[CMSG_SPACE(sizeof(int))];
    memset(ctl, 0, sizeof ctl);
    struct iovec iov = {&byte, 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof fd);
    ssize_t k;
    while ((k = sendmsg(sock, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    return k == 1 ? 0 : -1;
}
