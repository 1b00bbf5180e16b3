/* The caller's stack, called before any lock of the shim is taken (libunwind may take the
 * loader lock).
 *
 * Fast path: a frame-pointer walk, each step checked against what libunwind (DWARF CFI)
 * says about the code it leaves. Following the saved rbp from a frame record to the
 * caller's is right exactly when, at the return address, the caller's rbp is its frame
 * record (rbp == its CFA - 16): a property of that instruction, so it is learnt once
 * per return address, from one libunwind walk, and kept in a table shared by the
 * threads. A return address learnt to lack a frame record (code built without frame
 * pointers, glibc's start-up frames) ends the walk there; the frames above it come from
 * the thread's cache of such tails, taken from libunwind, used only while every return
 * address of the tail is still in its stack slot. Anything else (an address not learnt
 * yet, a frame record outside the thread's stack, a tail not cached) takes libunwind's
 * stack for the event. The result is libunwind's stack, frame for frame
 * (CULEAK_UNWIND_CHECK=1 compares the two on every event and says how many differed).
 *
 * The table forgets everything when a library is unloaded (culeak_unwind_forget, from
 * the shim's dlclose): another library may later sit at the same addresses.
 *
 * libunwind checks each address it reads through a pipe it opens at start (it writes a
 * byte from the address into the pipe): that pipe sits on the program's descriptor
 * numbers, and a program that closes them and makes its own files there would have them
 * read from, written to or closed under it. The shim reads memory for libunwind instead
 * (checked_access_mem: the check asks the kernel to copy the word, with no descriptor)
 * and closes libunwind's pipe at start. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "libunwind_load.h"

#include "shim.h"
#include "common/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { UNKNOWN = 0, WALK = 1, STOP = 2 };

/* ---- the table of return addresses: state per address, for one generation ---- */

#define TABLE_SIZE (1u << 15)
#define TABLE_PROBES 32

struct entry {
    uintptr_t ra;   /* 0: free */
    uint64_t word;  /* generation << 2 | state */
};

static struct entry table[TABLE_SIZE];
static uint64_t generation = 1;

void culeak_unwind_forget(void) { __atomic_add_fetch(&generation, 1, __ATOMIC_ACQ_REL); }

static unsigned slot_of(uintptr_t ra) { return (unsigned)((ra * 0x9e3779b97f4a7c15ull) >> 49) & (TABLE_SIZE - 1); }

static int table_get(uintptr_t ra, uint64_t gen)
{
    unsigned j = slot_of(ra);
    for (int i = 0; i < TABLE_PROBES; i++, j = (j + 1) & (TABLE_SIZE - 1)) {
        uintptr_t k = __atomic_load_n(&table[j].ra, __ATOMIC_ACQUIRE);
        if (k == ra) {
            uint64_t w = __atomic_load_n(&table[j].word, __ATOMIC_ACQUIRE);
            return w >> 2 == gen ? (int)(w & 3) : UNKNOWN;
        }
        if (!k)
            return UNKNOWN;
    }
    return UNKNOWN;
}

static void table_put(uintptr_t ra, uint64_t gen, int state)
{
    unsigned j = slot_of(ra);
    for (int i = 0; i < TABLE_PROBES; i++, j = (j + 1) & (TABLE_SIZE - 1)) {
        uintptr_t k = __atomic_load_n(&table[j].ra, __ATOMIC_ACQUIRE);
        if (!k && __atomic_compare_exchange_n(&table[j].ra, &k, ra, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            k = ra;
        if (k == ra) {
            __atomic_store_n(&table[j].word, gen << 2 | (uint64_t)state, __ATOMIC_RELEASE);
            return;
        }
    }
    /* full around here: the address stays unknown (libunwind takes such stacks) */
}

/* ---- per thread: its stack's top, the last walk, and the tails above STOP frames ---- */

/* A frame record's two words (saved rbp, return address), compared at once. */
typedef uintptr_t record_words __attribute__((vector_size(2 * sizeof(uintptr_t))));

static inline record_words record_at(uintptr_t rec)
{
    record_words v;
    __builtin_memcpy(&v, (const void *)rec, sizeof v);
    return v;
}

static inline int any_set(record_words v) { return (v[0] | v[1]) != 0; }

#define TAILS 8
#define TAIL_MAX 64
#define SHIM_FRAMES 16

struct tail {
    uint64_t gen;
    uintptr_t key_slot, key_ra; /* the STOP return address and where it was read */
    int n, complete;            /* complete: the stack ends after these n frames */
    uintptr_t slot[TAIL_MAX], ra[TAIL_MAX], ip[TAIL_MAX]; /* ip: ra less one */
};

struct walker {
    uintptr_t stack_lo, stack_hi; /* the thread's stack; hi 0: unknown (libunwind only) */
    int stack_known;
    int n;                /* the last fast walk: frame records and return addresses */
    uintptr_t rec[CULEAK_MAX_DEPTH], ra[CULEAK_MAX_DEPTH];
    unsigned char state[CULEAK_MAX_DEPTH];
    /* what each frame record held: the saved rbp and the return address, as the record
     * lies in memory (one 16-byte comparison per frame checks it again) */
    record_words held[CULEAK_MAX_DEPTH];
    uintptr_t ip[CULEAK_MAX_DEPTH]; /* the return addresses less one: the stack's ips */
    /* the shim's own frames of the last walk, from its start */
    uintptr_t start, srec[SHIM_FRAMES];
    record_words sheld[SHIM_FRAMES];
    int ns;
    int max, stopped;     /* its depth limit; whether it ended at a STOP frame */
    uint64_t gen;
    unsigned next_tail, tail_misses;
    int tail_too_long;    /* the last tail learnt was longer than a tail is kept */
    struct tail tails[TAILS];
    /* What the last stack handed out was made of (culeak_unwind's tag): the chain and
     * tails as they stood (their versions move on whenever they are written), the tail
     * used, the depth limit and the count. The same again is the same stack. */
    uint64_t chain_ver, tails_ver;
    struct out_key {
        uint64_t chain_ver, tails_ver;
        const struct tail *tail;
        int max, n;
    } out;
    uint64_t tag;
    /* CULEAK_UNWIND_CHECK=1: the last tagged stack handed out */
    uint64_t check_tag;
    int check_n;
    uintptr_t check_ips[CULEAK_MAX_DEPTH];
};

/* Tags of this thread's stacks: a new one whenever a stack may differ from the last
 * (thread-local, not the walker's: a walker made again at thread exit must not hand
 * out a tag the thread's trace-tree cache already holds for another stack). */
static CULEAK_TLS uint64_t tags_made;

static int check_mode;
static unsigned long checked, differed;

static struct walker *thread_walker(void)
{
    struct walker *walker = culeak_thread_block(CULEAK_TB_WALKER, sizeof(struct walker));
    if (!walker)
        return NULL;
    if (!walker->stack_known) {
        walker->stack_known = 1;
        pthread_attr_t a;
        void *lo;
        size_t size;
        if (pthread_getattr_np(pthread_self(), &a) == 0) {
            if (pthread_attr_getstack(&a, &lo, &size) == 0) {
                walker->stack_lo = (uintptr_t)lo;
                walker->stack_hi = (uintptr_t)lo + size;
            }
            pthread_attr_destroy(&a);
        }
    }
    return walker;
}

/* ---- memory reads for libunwind, checked without a descriptor ---- */

#define GOOD_PAGES 8
#define PAGE_OF(a) ((a) & ~(uintptr_t)4095)

/* Pages found readable by this thread, for one generation (an unload may unmap them). */
static CULEAK_TLS uintptr_t good_page[GOOD_PAGES];
static CULEAK_TLS uint64_t good_gen;
static CULEAK_TLS unsigned good_next;

static int page_known(uintptr_t page)
{
    for (int i = 0; i < GOOD_PAGES; i++)
        if (good_page[i] == page)
            return 1;
    return 0;
}

/* Whether the word at addr can be read: the kernel copies it as a signal set for a
 * sigprocmask with an invalid `how`, which fails with EFAULT when it cannot be read and
 * with EINVAL (nothing changed) when it can. */
static int readable(uintptr_t addr)
{
    uint64_t gen = __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
    if (good_gen != gen) {
        memset(good_page, 0, sizeof good_page);
        good_gen = gen;
    }
    uintptr_t first = PAGE_OF(addr), last = PAGE_OF(addr + sizeof(unw_word_t) - 1);
    if (!first)
        return 0;
    if (page_known(first) && page_known(last))
        return 1;
    int saved = errno;
    long r = syscall(SYS_rt_sigprocmask, -1, (const void *)addr, NULL, (size_t)8);
    int ok = r < 0 && errno == EINVAL;
    errno = saved;
    if (!ok)
        return 0;
    good_page[good_next++ % GOOD_PAGES] = first;
    if (last != first)
        good_page[good_next++ % GOOD_PAGES] = last;
    return 1;
}

static int checked_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
    (void)as;
    (void)arg;
    if (write) {
        *(unw_word_t *)addr = *val;
        return 0;
    }
    if (!readable(addr))
        return -UNW_EINVAL;
    *val = *(const unw_word_t *)addr;
    return 0;
}

/* libunwind's pipe, opened at its start on the two lowest free numbers: they are found
 * before (taken and given back), and closed after when they are a non-blocking pipe. */
static void start_libunwind_without_pipe(void)
{
    int a = open("/dev/null", O_RDONLY | O_CLOEXEC), b = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (a >= 0)
        close(a);
    if (b >= 0)
        close(b);
    culeak_unw.set_caching_policy(*culeak_unw.local_addr_space, UNW_CACHE_PER_THREAD); /* opens the pipe */
    unw_accessors_t *acc = culeak_unw.get_accessors(*culeak_unw.local_addr_space);
    if (!acc)
        return;
    acc->access_mem = checked_access_mem;
    int fds[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        struct stat st;
        int fl = fds[i] >= 0 ? fcntl(fds[i], F_GETFL) : -1;
        if (fl >= 0 && (fl & O_NONBLOCK) && fstat(fds[i], &st) == 0 && S_ISFIFO(st.st_mode))
            close(fds[i]);
    }
}

void culeak_unwind_init(void)
{
    char why[256];
    if (culeak_libunwind_load(why, sizeof why) != 0)
        fprintf(stderr, "culeak: cannot load libunwind (%s): allocations are recorded without stacks\n", why);
    else
        start_libunwind_without_pipe();
    const char *c = getenv("CULEAK_UNWIND_CHECK");
    check_mode = c && strcmp(c, "1") == 0;
}

static int in_self(uintptr_t ip) { return ip >= culeak_self_lo && ip < culeak_self_hi; }

/* libunwind's fast trace (its own cache per thread), the shim's frames dropped. */
static int libunwind_trace(uintptr_t *ips, int max)
{
    void *raw[CULEAK_MAX_DEPTH + 8];
    if (!culeak_unw.backtrace)
        return 0;
    int cap = max + 8 <= CULEAK_MAX_DEPTH + 8 ? max + 8 : CULEAK_MAX_DEPTH + 8;
    int n = culeak_unw.backtrace(raw, cap);
    if (n > cap) /* never more than asked for, whatever answered */
        n = cap;
    int skip = 0;
    while (skip < n && in_self((uintptr_t)raw[skip]))
        skip++;
    int out = 0;
    for (int i = skip; i < n && out < max; i++)
        ips[out++] = (uintptr_t)raw[i] - 1; /* the call, not the return address */
    return out;
}

/* Whether the slots of a tail's n return addresses (under the CFAs cfa[0..n)) lie in the
 * thread's stack above key_slot: only such tails are kept, so that using one reads
 * memory that is mapped, whatever the stack holds then. */
static int tail_in_stack(const struct walker *w, uintptr_t key_slot, const uintptr_t *cfa, int n)
{
    for (int k = 0; k < n; k++)
        if (cfa[k] - 8 <= key_slot || cfa[k] > w->stack_hi)
            return 0;
    return 1;
}

/* libunwind frame by frame: the stack for the event, and what each return address says
 * about the frame-pointer walk; the tail above the first STOP goes to the thread's cache. */
__attribute__((noinline)) static int learn(struct walker *w, uint64_t gen, uintptr_t *ips, int max)
{
    unw_context_t uc;
    unw_cursor_t cur;
    if (!culeak_unw.getcontext)
        return 0;
    if (culeak_unw.getcontext(&uc) < 0 || culeak_unw.init_local(&cur, &uc) < 0)
        return libunwind_trace(ips, max);
    /* frame i: ip, sp (the CFA of frame i-1) and rbp, for the frames from the first
     * return address outside the shim */
    uintptr_t ip[CULEAK_MAX_DEPTH + 2], sp[CULEAK_MAX_DEPTH + 2], bp[CULEAK_MAX_DEPTH + 2];
    int n = 0, ended = 0, first = 1;
    for (;;) {
        int r = first ? 1 : culeak_unw.step(&cur);
        first = 0;
        if (r <= 0) {
            ended = 1;
            break;
        }
        unw_word_t vip, vsp, vbp;
        if (culeak_unw.get_reg(&cur, UNW_REG_IP, &vip) < 0 || culeak_unw.get_reg(&cur, UNW_REG_SP, &vsp) < 0 ||
            culeak_unw.get_reg(&cur, UNW_X86_64_RBP, &vbp) < 0) {
            ended = 1;
            break;
        }
        if (n == 0 && (in_self(vip) || vip == 0))
            continue; /* frame 0 (here) and the shim's frames */
        if (vip == 0) {
            ended = 1;
            break;
        }
        ip[n] = vip;
        sp[n] = vsp;
        bp[n] = vbp;
        if (++n == max + 1 || n == CULEAK_MAX_DEPTH + 2)
            break; /* one more than needed: it decides the last one's state */
    }
    int out = n < max ? n : max;
    for (int i = 0; i < out; i++)
        ips[i] = ip[i] - 1;
    /* frame i's caller is frame i+1: following rbp is right iff rbp_i == CFA_i - 16 */
    int stop = -1;
    for (int i = 0; i < n; i++) {
        int state;
        if (i + 1 < n)
            state = bp[i] + 16 == sp[i + 1] ? WALK : STOP;
        else if (ended)
            state = STOP;
        else
            break; /* cut at max: not known */
        table_put(ip[i], gen, state);
        if (state == STOP && stop < 0)
            stop = i;
    }
    if (w && stop >= 0)
        w->tail_too_long = n - 1 - stop > TAIL_MAX;
    if (stop >= 0 && stop < out && w && n - 1 - stop <= TAIL_MAX && (ended || n - 1 - stop > 0) &&
        tail_in_stack(w, sp[stop] - 8, sp + stop + 1, n - 1 - stop)) {
        struct tail *t = &w->tails[w->next_tail++ % TAILS];
        w->tails_ver++;
        t->gen = gen;
        t->key_ra = ip[stop];
        t->key_slot = sp[stop] - 8; /* the return address sits under its caller's CFA */
        t->n = n - 1 - stop;
        t->complete = ended;
        for (int k = 0; k < t->n; k++) {
            t->ra[k] = ip[stop + 1 + k];
            t->ip[k] = ip[stop + 1 + k] - 1;
            t->slot[k] = sp[stop + 1 + k] - 8;
        }
    }
    return out;
}

/* The cached tail above a STOP return address read from `slot`, when every return
 * address of it is still in place; appended to ips[n..max). -2: none. */
static int use_tail(struct walker *w, uint64_t gen, uintptr_t slot, uintptr_t ra, uintptr_t *ips, int n, int max,
                    const struct tail **used)
{
    for (int i = 0; i < TAILS; i++) {
        struct tail *t = &w->tails[i];
        if (t->gen != gen || t->key_slot != slot || t->key_ra != ra)
            continue;
        if (!t->complete && n + t->n < max)
            return -2; /* cut shorter than needed now */
        /* slots within the stack (tail_in_stack); none read past the first that changed
         * (what lies above it may be another frame's, an ASan redzone included) */
        int k = 0;
        while (k < t->n && *(const uintptr_t *)t->slot[k] == t->ra[k])
            k++;
        if (k < t->n)
            continue;
        int m = t->n < max - n ? t->n : max - n;
        __builtin_memcpy(ips + n, t->ip, (size_t)m * sizeof *ips);
        *used = t;
        return n + m;
    }
    return -2;
}

/* The last walk's chain again, when every frame record of it still holds what it held
 * (the loads are independent: checking is faster than walking); -1 when not, -2 when
 * it is but its tail is not cached. */
static int same_chain(struct walker *w, uint64_t gen, uintptr_t *ips, int max, const struct tail **used)
{
    int last = w->n - 1;
    record_words bad = {0, 0};
    for (int j = 0; j < last; j++)
        bad |= record_at(w->rec[j]) ^ w->held[j];
    if (any_set(bad) || ((const uintptr_t *)w->rec[last])[1] != w->ra[last])
        return -1;
    __builtin_memcpy(ips, w->ip, (size_t)w->n * sizeof *ips);
    if (w->stopped)
        return use_tail(w, gen, w->rec[last] + 8, w->ra[last], ips, w->n, max, used);
    return w->n;
}

/* The frame-pointer walk; -1 when libunwind must decide, -2 when only the tail above a
 * STOP frame is not cached. */
static int fast_walk(struct walker *w, uint64_t gen, uintptr_t *ips, int max, const struct tail **used)
{
    uintptr_t lo = (uintptr_t)__builtin_frame_address(0), hi = w->stack_hi;
    uintptr_t rec = lo;
    int n = 0, k = 0, same = w->gen == gen, ns = 0;
    /* Frame records are read between here and the stack's top, all mapped; on another
     * stack (a signal's alternate stack, a coroutine's) libunwind decides. */
    if (!hi || lo < w->stack_lo || lo >= hi)
        return -1;
    if (same && w->n > 0 && w->ns > 0 && w->max == max && w->start == lo) {
        /* called the same way as last time: the shim's frames are checked at once too */
        record_words bad = {0, 0};
        for (int j = 0; j < w->ns; j++)
            bad |= record_at(w->srec[j]) ^ w->sheld[j];
        if (!any_set(bad)) {
            int m = same_chain(w, gen, ips, max, used);
            if (m >= 0 || m == -2)
                return m;
        }
    }
    w->chain_ver++; /* the chain is written again from here */
    for (;;) {
        if (rec < lo || rec + 16 > hi || (rec & 7))
            return -1;
        const uintptr_t *r = (const uintptr_t *)rec;
        uintptr_t ra = r[1], next = r[0];
        if (n == 0 && in_self(ra)) { /* the shim's own frames: built with frame pointers */
            if (ns < SHIM_FRAMES) {
                w->srec[ns] = rec;
                w->sheld[ns] = (record_words){next, ra};
            }
            ns++;
            lo = rec + 16;
            rec = next;
            continue;
        }
        if (n == max)
            break;
        if (n == 0 && same && w->n > 0 && w->max == max && w->rec[0] == rec) {
            /* the chain of the last walk from the same first frame: the frame records
             * lie above this one, in the part of the stack that is still live */
            int m = same_chain(w, gen, ips, max, used);
            if (m >= 0 || m == -2)
                return m;
        }
        int state;
        if (same && k < w->n && w->rec[k] == rec && w->ra[k] == ra) {
            state = w->state[k];
        } else {
            same = 0;
            state = table_get(ra, gen);
            if (state == UNKNOWN)
                return -1;
            w->rec[k] = rec;
            w->ra[k] = ra;
            w->state[k] = (unsigned char)state;
        }
        w->held[k] = (record_words){next, ra};
        w->ip[k] = ra - 1;
        k++;
        ips[n++] = ra - 1;
        if (state == STOP) {
            w->n = k;
            w->gen = gen;
            w->max = max;
            w->stopped = 1;
            w->ns = ns <= SHIM_FRAMES ? ns : 0;
            w->start = (uintptr_t)__builtin_frame_address(0);
            return use_tail(w, gen, rec + 8, ra, ips, n, max, used);
        }
        if (next <= rec)
            return -1;
        lo = rec + 16;
        rec = next;
    }
    w->n = k;
    w->gen = gen;
    w->max = max;
    w->stopped = 0;
    w->ns = ns <= SHIM_FRAMES ? ns : 0;
    w->start = (uintptr_t)__builtin_frame_address(0);
    return n;
}

/* The tag of a stack the frame-pointer walk made (n frames, tail: the cached tail it
 * ends with, or none): the last one's when it was made of the same chain and tail. */
static uint64_t tag_of(struct walker *w, const struct tail *tail, int max, int n)
{
    struct out_key *o = &w->out;
    if (!w->tag || o->chain_ver != w->chain_ver || o->tails_ver != w->tails_ver || o->tail != tail ||
        o->max != max || o->n != n) {
        *o = (struct out_key){w->chain_ver, w->tails_ver, tail, max, n};
        w->tag = ++tags_made;
    }
    return w->tag;
}

__attribute__((noinline)) int culeak_unwind(uintptr_t *ips, int max, uint64_t *tag)
{
    uint64_t gen = __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
    struct walker *w = thread_walker();
    const struct tail *used = NULL;
    int n = w ? fast_walk(w, gen, ips, max, &used) : -1;
    if (tag)
        *tag = n >= 0 ? tag_of(w, used, max, n) : 0;
    if (n < 0 && w)
        w->tag = 0; /* libunwind's stack: the next one from the walk gets a new tag */
    if (n == -2 && (w->tail_too_long || (w->tail_misses++ & 15) != 0)) {
        /* Tails that change or are too long to keep (a Python interpreter's) would be
         * learnt frame by frame at every event: libunwind's own trace is cheaper. One
         * miss in 16 of a short tail learns it, so a tail that settles is cached. */
        n = libunwind_trace(ips, max);
    } else if (n < 0) {
        if (w)
            w->n = 0;
        n = learn(w, gen, ips, max);
    }
    if (check_mode) {
        uintptr_t ref[CULEAK_MAX_DEPTH];
        int m = libunwind_trace(ref, max);
        __atomic_add_fetch(&checked, 1, __ATOMIC_RELAXED);
        /* and a tag seen before stands for the very stack it stood for */
        int tag_wrong = w && tag && *tag && *tag == w->check_tag &&
                        (n != w->check_n || memcmp(w->check_ips, ips, (size_t)n * sizeof *ips) != 0);
        if (m != n || memcmp(ref, ips, (size_t)n * sizeof *ips) != 0 || tag_wrong)
            __atomic_add_fetch(&differed, 1, __ATOMIC_RELAXED);
        if (w && tag && n >= 0) {
            w->check_tag = *tag;
            w->check_n = n;
            memcpy(w->check_ips, ips, (size_t)n * sizeof *ips);
        }
    }
    return n;
}

void culeak_unwind_check_note(void)
{
    if (!check_mode)
        return;
    char text[160];
    int len = snprintf(text, sizeof text, "unwind check: %lu stacks compared with libunwind's, %lu differed",
                       __atomic_load_n(&checked, __ATOMIC_RELAXED), __atomic_load_n(&differed, __ATOMIC_RELAXED));
    culeak_stream_note(text, len < (int)sizeof text ? (size_t)len : sizeof text - 1);
}
