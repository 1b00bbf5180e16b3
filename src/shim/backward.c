/* Memory made for autograd's backward pass, charged to the line that called backward().
 *
 * PyTorch runs a backward pass on its own threads (one per device), which have no Python
 * frames: their allocations would have no Python line. python/sitecustomize.py wraps
 * torch.autograd.backward and torch.autograd.grad (Tensor.backward goes through the
 * first) and calls culeak_backward_enter / culeak_backward_leave around them (two ctypes
 * calls per backward()). Enter captures the calling thread's Python frames then, while
 * its frames cannot change (the thread waits inside the call); until leave, a thread
 * without Python frames that allocates gets, after its native frames, a marker frame
 * (PYFRAME flag BACKWARD) and those Python frames.
 *
 * Several Python threads inside backward() at once: when they all have the same Python
 * frames (threads running the same loop), those are borrowed; otherwise, since nothing
 * tells which call a native thread works for, only the marker is. A call beyond the
 * slots counts as one with other frames. */
#include "shim.h"

#include <string.h>

#define SLOTS 16
#define BORROWED_MAX 64 /* Python frames kept per call, innermost first */

struct call {
    uint32_t tid; /* 0: free */
    int n;
    uintptr_t ids[BORROWED_MAX];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct call calls[SLOTS];
static int overflow;     /* calls in flight that found no slot */
static int inflight;     /* calls in flight (atomic): the only cost to threads when 0 */
static uintptr_t marker; /* the marker's tagged id in this stream */

static CULEAK_TLS int my_depth;  /* this thread's nested calls */
static CULEAK_TLS int my_slot;   /* -1: no slot (overflow) */
static CULEAK_TLS unsigned my_gen;

CULEAK_EXPORT void culeak_backward_enter(void)
{
    unsigned gen = __atomic_load_n(&culeak_fork_gen, __ATOMIC_RELAXED);
    if (my_depth > 0 && my_gen == gen) { /* backward() inside backward(): the outer call's frames */
        my_depth++;
        return;
    }
    if (!culeak_enter())
        return;
    if (!culeak_py_enabled()) {
        culeak_leave();
        return;
    }
    struct call c = {culeak_tid(), 0, {0}};
    c.n = culeak_py_frames_now(c.ids, BORROWED_MAX);
    uintptr_t mk = culeak_py_backward_marker();
    pthread_mutex_lock(&mu);
    marker = mk;
    my_slot = -1;
    for (int i = 0; i < SLOTS && my_slot < 0; i++)
        if (!calls[i].tid) {
            calls[i] = c;
            my_slot = i;
        }
    if (my_slot < 0)
        overflow++;
    __atomic_add_fetch(&inflight, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mu);
    my_depth = 1;
    my_gen = gen;
    culeak_leave();
}

CULEAK_EXPORT void culeak_backward_leave(void)
{
    if (my_depth <= 0 || my_gen != __atomic_load_n(&culeak_fork_gen, __ATOMIC_RELAXED))
        return; /* not entered, or entered in the parent of this forked child */
    if (--my_depth > 0)
        return;
    pthread_mutex_lock(&mu);
    if (my_slot >= 0)
        calls[my_slot].tid = 0;
    else
        overflow--;
    __atomic_sub_fetch(&inflight, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mu);
}

int culeak_backward_borrow(uintptr_t *ips, int n, int max)
{
    if (!__atomic_load_n(&inflight, __ATOMIC_ACQUIRE) || max <= BORROWED_MAX + 1)
        return n;
    pthread_mutex_lock(&mu);
    const struct call *first = NULL;
    int same = overflow == 0;
    for (int i = 0; i < SLOTS; i++) {
        if (!calls[i].tid)
            continue;
        if (!first)
            first = &calls[i];
        else if (calls[i].n != first->n || memcmp(calls[i].ids, first->ids, (size_t)first->n * sizeof *first->ids))
            same = 0;
    }
    if (first || overflow) {
        int k = first && same ? first->n : 0;
        if (n > max - 1 - k) /* the outermost native frames (the thread's start) make room */
            n = max - 1 - k;
        ips[n++] = marker;
        memcpy(ips + n, first ? first->ids : ips, (size_t)k * sizeof *ips);
        n += k;
    }
    pthread_mutex_unlock(&mu);
    return n;
}

void culeak_backward_fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    mu = fresh; /* another thread of the parent may have held it */
    memset(calls, 0, sizeof calls);
    overflow = 0;
    marker = 0;
    __atomic_store_n(&inflight, 0, __ATOMIC_RELAXED);
}
