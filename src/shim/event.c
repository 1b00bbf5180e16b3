/* One traced call = one event: the thread-local nesting guard (a runtime call and the
 * driver calls it makes are one event; the shim's own work is never traced) and the
 * capture of the caller's stack, done before any lock is taken. */
#include "shim.h"
#include "hooks.h"
#include "cuda_api.h"
#include "common/apis.h"

#include <sched.h>

static CULEAK_TLS int depth;

int culeak_enter(void)
{
    if (depth)
        return 0;
    depth = 1; /* from here on, CUDA calls the shim itself makes pass through */
    int s = __atomic_load_n(&culeak_state, __ATOMIC_ACQUIRE);
    if (s == CULEAK_ACTIVE || (s == CULEAK_IDLE && culeak_ensure_started()))
        return 1;
    depth = 0;
    return 0;
}

void culeak_leave(void) { depth = 0; }

/* A context's device never changes: each thread keeps the device of the last context it
 * asked about, until a context may have been destroyed (another may then be made at the
 * same address, on another device). */
static unsigned ctx_epoch; /* moves on around every call that may destroy a context */
static CULEAK_TLS struct {
    uint64_t ctx;
    int device;
    unsigned epoch;
} ctx_seen;

void culeak_ctx_forget(void) { __atomic_add_fetch(&ctx_epoch, 1, __ATOMIC_ACQ_REL); }

void culeak_fill_ctx(struct culeak_ev *e)
{
    e->device = -1;
    e->ctx = 0;
    __typeof__(&cuCtxGetCurrent) get_ctx = CULEAK_REAL(cuCtxGetCurrent);
    CUcontext ctx = NULL;
    if (get_ctx && get_ctx(&ctx) == CUDA_SUCCESS && ctx) {
        e->ctx = (uint64_t)(uintptr_t)ctx;
        unsigned epoch = __atomic_load_n(&ctx_epoch, __ATOMIC_ACQUIRE);
        if (ctx_seen.ctx == e->ctx && ctx_seen.epoch == epoch) {
            e->device = ctx_seen.device;
            return;
        }
        __typeof__(&cuCtxGetDevice) get_dev = CULEAK_REAL(cuCtxGetDevice);
        CUdevice dev;
        if (get_dev && get_dev(&dev) == CUDA_SUCCESS) {
            e->device = dev;
            ctx_seen.ctx = e->ctx;
            ctx_seen.device = dev;
            ctx_seen.epoch = epoch;
        }
    }
}

/* noinline keeps the unwinder's start inside the shim, whose frames are then dropped. */
__attribute__((noinline)) void culeak_emit(const struct culeak_ev *e)
{
    if (e->op == CULEAK_OP_FREE && !culeak_free_stacks) {
        culeak_stream_event(e, NULL, 0, 0);
        return;
    }
    uintptr_t ips[CULEAK_MAX_DEPTH];
    uint64_t tag = 0;
    int n;
    if (culeak_py_enabled()) /* the Python caller may sit deeper than the depth limit */
        n = culeak_py_stack(ips, culeak_unwind(ips, CULEAK_MAX_DEPTH, NULL), CULEAK_MAX_DEPTH);
    else
        n = culeak_unwind(ips, (int)culeak_depth_limit, &tag);
    if (__atomic_load_n(&culeak_torch_waiting, __ATOMIC_RELAXED) && e->op == CULEAK_OP_ALLOC && e->result == 0)
        culeak_torch_segment(e, ips, n);
    culeak_stream_event(e, ips, n, tag);
}

/* A free is recorded after the real call (so it carries the real result), but the
 * driver may hand the address out again at once: an allocation that returns an address
 * whose free is still being recorded waits for it, so the stream keeps free-then-alloc
 * order. Each thread that frees has a slot holding the address it is freeing (0: none),
 * written with plain stores: the driver orders its free before its allocation of the
 * same address, so a store made before the real free is seen by the thread the address
 * goes to next. An allocation looks through the slots handed out. Threads beyond the
 * slots count in shared counters per address bucket instead. */
#define SLOTS 256
#define INFLIGHT_BUCKETS 256
static uint64_t slot_addr[SLOTS];
static unsigned slots_used;
static unsigned inflight[INFLIGHT_BUCKETS];
static int buckets_used;
static CULEAK_TLS int my_slot = -1; /* -2: no slot left, the buckets count this thread */

static unsigned bucket(uint64_t addr)
{
    return (unsigned)((addr * 0x9e3779b97f4a7c15ull) >> 56) & (INFLIGHT_BUCKETS - 1);
}

void culeak_inflight_reset(void)
{
    for (unsigned i = 0; i < SLOTS; i++)
        __atomic_store_n(&slot_addr[i], 0, __ATOMIC_RELAXED);
    for (unsigned i = 0; i < INFLIGHT_BUCKETS; i++)
        __atomic_store_n(&inflight[i], 0, __ATOMIC_RELAXED);
}

static int thread_slot(void)
{
    if (my_slot == -1) {
        unsigned s = __atomic_fetch_add(&slots_used, 1, __ATOMIC_ACQ_REL);
        my_slot = s < SLOTS ? (int)s : -2;
        if (my_slot == -2)
            __atomic_store_n(&buckets_used, 1, __ATOMIC_RELEASE);
    }
    return my_slot;
}

void culeak_free_begin(const struct culeak_ev *e)
{
    if (!e->addr)
        return;
    int s = thread_slot();
    if (s >= 0)
        __atomic_store_n(&slot_addr[s], e->addr, __ATOMIC_RELEASE);
    else
        __atomic_add_fetch(&inflight[bucket(e->addr)], 1, __ATOMIC_ACQ_REL);
}

void culeak_free_end(const struct culeak_ev *e)
{
    if (culeak_free_stacks)
        culeak_emit(e);
    else /* a bare free: no stack, straight to the stream */
        culeak_stream_event(e, NULL, 0, 0);
    if (e->addr) {
        if (my_slot >= 0)
            __atomic_store_n(&slot_addr[my_slot], 0, __ATOMIC_RELEASE);
        else
            __atomic_sub_fetch(&inflight[bucket(e->addr)], 1, __ATOMIC_ACQ_REL);
    }
    culeak_leave();
}

/* Waits while another thread records a free of addr. */
__attribute__((noinline)) static void wait_for_free(uint64_t addr)
{
    unsigned n = __atomic_load_n(&slots_used, __ATOMIC_ACQUIRE);
    n = n < SLOTS ? n : SLOTS;
    for (unsigned i = 0; i < n; i++)
        while (__atomic_load_n(&slot_addr[i], __ATOMIC_ACQUIRE) == addr)
            sched_yield();
    if (__atomic_load_n(&buckets_used, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&inflight[bucket(addr)], __ATOMIC_ACQUIRE))
            sched_yield();
}

/* Whether another thread may be recording a free: no slot but this thread's was handed
 * out, and none counts in the buckets. */
static inline int others_free(void)
{
    unsigned n = __atomic_load_n(&slots_used, __ATOMIC_ACQUIRE);
    return (n > 1 || (n == 1 && my_slot != 0)) || __atomic_load_n(&buckets_used, __ATOMIC_ACQUIRE);
}

static inline void wait_inflight(struct culeak_ev *e)
{
    if (e->result != 0 && e->op == CULEAK_OP_ALLOC)
        e->addr = 0;
    if (e->op == CULEAK_OP_ALLOC && e->addr && others_free())
        wait_for_free(e->addr);
}

void culeak_after(struct culeak_ev *e)
{
    wait_inflight(e);
    culeak_emit(e);
    culeak_leave();
}

void culeak_after_stack(struct culeak_ev *e, const uintptr_t *ips, int n, uint64_t tag)
{
    wait_inflight(e);
    culeak_stream_event(e, ips, n, tag);
    culeak_leave();
}
