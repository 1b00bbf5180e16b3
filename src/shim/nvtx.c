/* The shim as an NVTX injection library: with NVTX_INJECTION64_PATH naming libculeak.so,
 * every NVTX user in the process (nvtx3's header-only code, libnvToolsExt, PyTorch's
 * torch.cuda.nvtx) hands us its core function table, and ranges and marks become MARK
 * records: nvtxRangePush* -> a mark with the range's label and flag PUSH, nvtxRangePop ->
 * an unlabeled mark with flag POP, nvtxMark* -> a plain mark. Registered strings (domain
 * API) are not looked up: such labels read "(registered string)". */
#include "shim.h"
#include "common/wire.h"

#include "cuda/culeak_nvtx.h"
#include <stdlib.h>
#include <wchar.h>

#define LABEL_MAX 1024

static CULEAK_TLS int range_depth; /* per thread, as nvtxRangePush/Pop return it */

static void mark(const char *label, unsigned flags)
{
    if (!culeak_enter())
        return;
    culeak_stream_mark(label, flags);
    culeak_leave();
    if (flags == 0 || ((flags & CULEAK_MARK_PUSH) && range_depth == 0)) /* not at every inner range */
        culeak_holders_at_mark();
}

/* wchar_t is UTF-32 on Linux. */
static const char *from_wide(const wchar_t *w, char *buf, size_t cap)
{
    size_t n = 0;
    for (; w && *w && n + 4 < cap; w++) {
        uint32_t c = (uint32_t)*w;
        if (c < 0x80) {
            buf[n++] = (char)c;
        } else if (c < 0x800) {
            buf[n++] = (char)(0xc0 | c >> 6);
            buf[n++] = (char)(0x80 | (c & 0x3f));
        } else if (c < 0x10000) {
            buf[n++] = (char)(0xe0 | c >> 12);
            buf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
            buf[n++] = (char)(0x80 | (c & 0x3f));
        } else {
            buf[n++] = (char)(0xf0 | (c >> 18 & 7));
            buf[n++] = (char)(0x80 | ((c >> 12) & 0x3f));
            buf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
            buf[n++] = (char)(0x80 | (c & 0x3f));
        }
    }
    buf[n] = 0;
    return buf;
}

static const char *attr_label(const nvtxEventAttributes_t *a, char *buf, size_t cap)
{
    if (!a)
        return "";
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return a->message.ascii ? a->message.ascii : "";
    case NVTX_MESSAGE_TYPE_UNICODE: return from_wide(a->message.unicode, buf, cap);
    case NVTX_MESSAGE_TYPE_REGISTERED: return "(registered string)";
    default: return "";
    }
}

static int push(const char *label)
{
    mark(label, CULEAK_MARK_PUSH);
    return range_depth++;
}

static void NVTX_API mark_a(const char *msg) { mark(msg ? msg : "", 0); }
static void NVTX_API mark_w(const wchar_t *msg)
{
    char buf[LABEL_MAX];
    mark(from_wide(msg, buf, sizeof buf), 0);
}
static void NVTX_API mark_ex(const nvtxEventAttributes_t *a)
{
    char buf[LABEL_MAX];
    mark(attr_label(a, buf, sizeof buf), 0);
}
static int NVTX_API push_a(const char *msg) { return push(msg ? msg : ""); }
static int NVTX_API push_w(const wchar_t *msg)
{
    char buf[LABEL_MAX];
    return push(from_wide(msg, buf, sizeof buf));
}
static int NVTX_API push_ex(const nvtxEventAttributes_t *a)
{
    char buf[LABEL_MAX];
    return push(attr_label(a, buf, sizeof buf));
}
static int NVTX_API pop(void)
{
    if (range_depth == 0)
        return -1; /* like NVTX: a pop without a push is an error */
    mark("", CULEAK_MARK_POP);
    return --range_depth;
}

static void set(NvtxFunctionTable t, unsigned size, unsigned id, NvtxFunctionPointer fn)
{
    if (id <= size && t[id])
        *t[id] = fn;
}

/* Called by each NVTX instance (one per library using the header-only nvtx3) once. */
CULEAK_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table)
{
    const NvtxExportTableCallbacks *cb = get_table ? get_table(NVTX_ETID_CALLBACKS) : NULL;
    NvtxFunctionTable t = NULL;
    unsigned size = 0;
    if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable ||
        !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &size) || !t)
        return 0;
    set(t, size, NVTX_CBID_CORE_MarkA, (NvtxFunctionPointer)mark_a);
    set(t, size, NVTX_CBID_CORE_MarkW, (NvtxFunctionPointer)mark_w);
    set(t, size, NVTX_CBID_CORE_MarkEx, (NvtxFunctionPointer)mark_ex);
    set(t, size, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)push_a);
    set(t, size, NVTX_CBID_CORE_RangePushW, (NvtxFunctionPointer)push_w);
    set(t, size, NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)push_ex);
    set(t, size, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)pop);
    return 1;
}
