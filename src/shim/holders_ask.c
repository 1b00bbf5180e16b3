/* Who holds the blocks, asked of the job's Python side while it runs: at each mark (with
 * CULEAK_HOLDERS=marks, or after the console's HOLDERS command turned walks at marks on)
 * and when the console asks about a site's blocks. The shim never runs Python itself: it
 * asks the interpreter (Py_AddPendingCall, which any thread may call without the GIL) to
 * run python/culeak_holders_ask.py on its main thread at its next safe point, between two
 * bytecodes, never from a signal handler. That file takes the request back
 * (culeak_holders_request), walks, and sends HOLDER records, then one with address 0
 * that ends the walk (culeak-stream(5)). Requests that come while one waits are merged:
 * a job marking faster than it walks gets one walk per safe point, not a queue. */
#include "shim.h"
#include "common/wire.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ASK_RANGES 64

enum { ASK_KIND_MARK = 1, ASK_KIND_SITE = 2 };
enum { HOLDERS_CMD_ASK = 0, HOLDERS_CMD_MARKS_ON = 1, HOLDERS_CMD_MARKS_OFF = 2 };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int at_marks;        /* walks at marks on */
static int scheduled;       /* a pending call is queued and has not found the queue empty */
static int want_mark;       /* a walk at a mark waits */
static int want_site;       /* the console's question waits: its ranges */
static int site_asked;      /* ... and is not queued yet (atomic access) */
static uint64_t site_ranges[2 * ASK_RANGES];
static size_t nsite_ranges;
static char code[3 * PATH_MAX + 256];

void culeak_holders_init(void)
{
    const char *h = getenv("CULEAK_HOLDERS");
    at_marks = h && strcmp(h, "marks") == 0;
}

static int run_ask_file(void *arg)
{
    (void)arg;
    int (*run)(const char *, void *) = (int (*)(const char *, void *))dlsym(RTLD_DEFAULT, "PyRun_SimpleStringFlags");
    if (run)
        run(code, NULL); /* the file catches its own errors */
    return 0;            /* never an exception for the job's code to see */
}

/* The line the pending call runs, made once: culeak_holders_ask.py beside the shim, run
 * in a namespace of its own (no name left in __main__). -1 when it cannot be. */
static int make_code(void)
{
    if (code[0])
        return 0;
    Dl_info self;
    char file[PATH_MAX];
    if (!dladdr((void *)culeak_holders_init, &self) || !self.dli_fname ||
        culeak_python_file(self.dli_fname, "culeak_holders_ask.py", file, sizeof file) != 0 ||
        strpbrk(file, "'\\\n") || strpbrk(self.dli_fname, "'\\\n"))
        return -1;
    int n = snprintf(code, sizeof code,
                     "exec(compile(__import__('pathlib').Path('%s').read_bytes(), '%s', 'exec'), "
                     "{'__name__': '_culeak_holders_ask', '__builtins__': __import__('builtins'), 'SHIM': '%s'})\n",
                     file, file, self.dli_fname);
    if (n < 0 || (size_t)n >= sizeof code) {
        code[0] = 0;
        return -1;
    }
    return 0;
}

/* Queues the pending call unless one is queued; with mu held. NULL, or why it cannot. */
static const char *schedule(void)
{
    if (scheduled)
        return NULL;
    int (*add)(int (*)(void *), void *) = (int (*)(int (*)(void *), void *))dlsym(RTLD_DEFAULT, "Py_AddPendingCall");
    int (*initialized)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    if (!add || !initialized || !initialized())
        return "not a Python process: who holds a block is known in Python jobs only";
    if (make_code() != 0)
        return "culeak_holders_ask.py was not found beside the shim";
    if (add(run_ask_file, NULL) != 0)
        return "Python's queue of pending calls is full";
    scheduled = 1;
    return NULL;
}

void culeak_holders_at_mark(void)
{
    pthread_mutex_lock(&mu);
    if (at_marks) {
        want_mark = 1;
        if (schedule()) /* a process without Python has no holders at its marks */
            want_mark = 0;
    }
    pthread_mutex_unlock(&mu);
}

/* The console's question about some blocks: addr, size pairs (none: every tensor). It
 * is queued by the flush thread (culeak_holders_tick): the stream's lock is held here, and
 * dlsym takes the loader's. */
static void ask(struct culeak_cursor *c)
{
    uint64_t count = culeak_get_u(c);
    pthread_mutex_lock(&mu);
    nsite_ranges = 0;
    for (uint64_t i = 0; i < count && !c->bad && culeak_cursor_more(c); i++) {
        uint64_t addr = culeak_get_u(c), size = culeak_get_u(c);
        if (!c->bad && nsite_ranges < ASK_RANGES) {
            site_ranges[2 * nsite_ranges] = addr;
            site_ranges[2 * nsite_ranges + 1] = addr + (size ? size : 1);
            nsite_ranges++;
        }
    }
    want_site = site_asked = 1;
    pthread_mutex_unlock(&mu);
}

void culeak_holders_command(const uint8_t *payload, size_t len)
{
    struct culeak_cursor c = {payload, payload + len, 0};
    uint64_t what = culeak_get_u(&c);
    if (c.bad)
        return;
    if (what == HOLDERS_CMD_ASK) {
        ask(&c);
        return;
    }
    if (what == HOLDERS_CMD_MARKS_ON || what == HOLDERS_CMD_MARKS_OFF) {
        pthread_mutex_lock(&mu);
        at_marks = what == HOLDERS_CMD_MARKS_ON;
        pthread_mutex_unlock(&mu);
    }
}

void culeak_holders_tick(void)
{
    if (!__atomic_load_n(&site_asked, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&mu);
    site_asked = 0;
    const char *why = want_site ? schedule() : NULL;
    if (why)
        want_site = 0;
    pthread_mutex_unlock(&mu);
    if (why) {
        char words[256];
        snprintf(words, sizeof words, "ask: %s", why);
        culeak_report_holder(0, words);
    }
}

/* culeak_holders_ask.py takes the next request: out[0] its kind (1: every tensor, at a
 * mark; 2: the console's question), then (start, end) pairs of the blocks asked about
 * (none: every tensor). Returns how many words it wrote, 0 when nothing waits (the
 * pending call is then over: the next request queues another). */
CULEAK_EXPORT size_t culeak_holders_request(uint64_t *out, size_t cap)
{
    size_t n = 0;
    pthread_mutex_lock(&mu);
    if (cap >= 1 && want_mark) {
        want_mark = 0;
        out[n++] = ASK_KIND_MARK;
    } else if (cap >= 1 && want_site) {
        want_site = 0;
        out[n++] = ASK_KIND_SITE;
        for (size_t i = 0; i < 2 * nsite_ranges && n < cap; i++)
            out[n++] = site_ranges[i];
    } else {
        scheduled = 0;
    }
    pthread_mutex_unlock(&mu);
    return n;
}
