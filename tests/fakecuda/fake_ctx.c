/* Contexts (a per-thread stack; one refcounted primary context per device) and streams.
 * Destroying a context or resetting a primary context frees every block it owns. */
#include "fake.h"

#include <stdlib.h>

#define FAKE_CTX_STACK 16

static __thread CUcontext ctx_stack[FAKE_CTX_STACK];
static __thread int ctx_depth;
static struct CUctx_st primaries[FAKE_MAX_DEVICES];
static int primary_refs[FAKE_MAX_DEVICES];
static struct CUctx_st *dead_contexts;

CUcontext fake_current(void) { return ctx_depth ? ctx_stack[ctx_depth - 1] : NULL; }

struct CUctx_st *fake_primary(int dev) { return &primaries[dev]; }

static void set_current(CUcontext c)
{
    if (ctx_depth)
        ctx_stack[ctx_depth - 1] = c;
    else if (c)
        ctx_stack[ctx_depth++] = c;
}

/* Forget c on this thread (other threads keep a stale handle, as with the real driver). */
static void drop_current(CUcontext c)
{
    for (int i = 0; i < ctx_depth; i++)
        if (ctx_stack[i] == c)
            ctx_stack[i] = NULL;
    while (ctx_depth && !ctx_stack[ctx_depth - 1])
        ctx_depth--;
}

static CUresult ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    FAKE_NEED_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fake_valid_device(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    if (ctx_depth == FAKE_CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct CUctx_st *c = calloc(1, sizeof *c);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    c->device = dev;
    c->alive = 1;
    c->flags = flags;
    ctx_stack[ctx_depth++] = c; /* a created context is pushed */
    *pctx = c;
    return CUDA_SUCCESS;
}

CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev) { return ctx_create(pctx, flags, dev); }
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev) { return ctx_create(pctx, flags, dev); }

CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                        unsigned int flags, CUdevice dev)
{
    return ctx_create(pctx, flags, dev);
}

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags,
                        CUdevice dev)
{
    return ctx_create(pctx, flags, dev);
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    FAKE_NEED_INIT();
    if (!ctx || !ctx->alive || ctx->primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    fake_free_ctx(ctx);
    drop_current(ctx);
    /* never freed, so a stale handle stays detectable instead of aliasing a new context */
    pthread_mutex_lock(&fake_lock);
    ctx->alive = 0;
    ctx->next_dead = dead_contexts;
    dead_contexts = ctx;
    pthread_mutex_unlock(&fake_lock);
    return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
    FAKE_NEED_INIT();
    if (ctx && !ctx->alive)
        return CUDA_ERROR_INVALID_CONTEXT;
    set_current(ctx);
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    FAKE_NEED_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = fake_current();
    return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    FAKE_NEED_INIT();
    if (!ctx || !ctx->alive)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (ctx_depth == FAKE_CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    ctx_stack[ctx_depth++] = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    FAKE_NEED_INIT();
    if (!ctx_depth)
        return CUDA_ERROR_INVALID_CONTEXT;
    CUcontext c = ctx_stack[--ctx_depth];
    if (pctx)
        *pctx = c;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *device)
{
    FAKE_NEED_INIT();
    CUcontext c = fake_current();
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    *device = c->device;
    return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
    FAKE_NEED_INIT();
    return fake_current() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* ---- primary contexts ---- */

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    FAKE_NEED_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fake_valid_device(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&fake_lock);
    struct CUctx_st *p = &primaries[dev];
    p->device = dev;
    p->primary = 1;
    p->alive = 1;
    primary_refs[dev]++;
    pthread_mutex_unlock(&fake_lock);
    *pctx = p;
    return CUDA_SUCCESS;
}

/* Frees the primary context's memory; the handle stays usable after a new retain. */
static void primary_teardown(CUdevice dev)
{
    fake_free_ctx(&primaries[dev]);
    pthread_mutex_lock(&fake_lock);
    primary_refs[dev] = 0;
    primaries[dev].alive = 0;
    pthread_mutex_unlock(&fake_lock);
}

static CUresult primary_release(CUdevice dev)
{
    FAKE_NEED_INIT();
    if (!fake_valid_device(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&fake_lock);
    int refs = primary_refs[dev];
    if (refs > 0)
        primary_refs[dev]--;
    pthread_mutex_unlock(&fake_lock);
    if (refs <= 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (refs == 1)
        primary_teardown(dev);
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return primary_release(dev); }
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) { return primary_release(dev); }

static CUresult primary_reset(CUdevice dev)
{
    FAKE_NEED_INIT();
    if (!fake_valid_device(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    primary_teardown(dev);
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxReset(CUdevice dev) { return primary_reset(dev); }
CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) { return primary_reset(dev); }

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    FAKE_NEED_INIT();
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fake_valid_device(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&fake_lock);
    *flags = primaries[dev].flags;
    *active = primaries[dev].alive && primary_refs[dev] > 0;
    pthread_mutex_unlock(&fake_lock);
    return CUDA_SUCCESS;
}

static CUresult primary_set_flags(CUdevice dev, unsigned int flags)
{
    FAKE_NEED_INIT();
    if (!fake_valid_device(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&fake_lock);
    primaries[dev].flags = flags;
    pthread_mutex_unlock(&fake_lock);
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) { return primary_set_flags(dev, flags); }
CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) { return primary_set_flags(dev, flags); }

/* ---- streams: a handle remembering its context; work is synchronous ---- */

struct CUstream_st {
    CUcontext ctx;
};

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    FAKE_NEED_INIT();
    CUcontext c = fake_current();
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!phStream)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUstream_st *s = malloc(sizeof *s);
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->ctx = c;
    *phStream = s;
    return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(CUstream hStream)
{
    FAKE_NEED_INIT();
    if (!hStream)
        return CUDA_ERROR_INVALID_HANDLE;
    free(hStream);
    return CUDA_SUCCESS;
}

static CUresult stream_sync(CUstream s)
{
    FAKE_NEED_INIT();
    return s || fake_current() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuStreamSynchronize(CUstream hStream) { return stream_sync(hStream); }
CUresult cuStreamSynchronize_ptsz(CUstream hStream) { return stream_sync(hStream); }

static CUresult stream_is_capturing(CUstream s, CUstreamCaptureStatus *st)
{
    FAKE_NEED_INIT();
    if (!st)
        return CUDA_ERROR_INVALID_VALUE;
    *st = CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}

CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    return stream_is_capturing(hStream, captureStatus);
}

CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    return stream_is_capturing(hStream, captureStatus);
}
