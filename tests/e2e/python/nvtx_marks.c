/* NVTX through the header-only nvtx3: under culeak the shim is the injection library
 * (NVTX_INJECTION64_PATH), so these ranges and marks become culeak marks. */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>

int main(void)
{
    for (int i = 0; i < 3; i++) {
        char label[32];
        snprintf(label, sizeof label, "iteration %d", i);
        nvtxRangePushA(label);
        nvtxMarkA("inside");
        nvtxRangePop();
    }
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "attributes";
    nvtxRangePushEx(&a);
    nvtxRangePop();
    nvtxRangePushW(L"wide \u00e9");
    return nvtxRangePop() == 0 ? 0 : 1;
}
