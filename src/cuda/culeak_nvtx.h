/* The part of NVTX (nvtx3/nvToolsExt.h and its injection interface, nvtxDetail/
 * nvtxTypes.h) that the shim uses as an NVTX injection library, declared here like
 * culeak_cuda.h (read its comment) and checked against the toolkit's nvtx3 by
 * tests/checks/cuda_abi.sh. */
#ifndef CULEAK_NVTX_H
#define CULEAK_NVTX_H

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

typedef void (*NvtxFunctionPointer)(void);
typedef NvtxFunctionPointer **NvtxFunctionTable;

#ifndef CULEAK_CUDA_DECLARATIONS_ONLY

#define NVTX_API
#define NVTX_VERSION 3

enum nvtxMessageType_t {
    NVTX_MESSAGE_UNKNOWN = 0,
    NVTX_MESSAGE_TYPE_ASCII = 1,
    NVTX_MESSAGE_TYPE_UNICODE = 2,
    NVTX_MESSAGE_TYPE_REGISTERED = 3,
};

union nvtxMessageValue_t {
    const char *ascii;
    const wchar_t *unicode;
    struct nvtxStringRegistration_st *registered;
};

struct nvtxEventAttributes_v2 {
    uint16_t version;
    uint16_t size;
    uint32_t category;
    int32_t colorType;
    uint32_t color;
    int32_t payloadType;
    int32_t reserved0;
    union payload_t {
        uint64_t ullValue;
        int64_t llValue;
        double dValue;
        uint32_t uiValue;
        int32_t iValue;
        float fValue;
    } payload;
    int32_t messageType;
    union nvtxMessageValue_t message;
};

#define NVTX_EVENT_ATTRIB_STRUCT_SIZE ((uint16_t)sizeof(nvtxEventAttributes_t))

enum NvtxCallbackModule {
    NVTX_CB_MODULE_INVALID = 0,
    NVTX_CB_MODULE_CORE = 1,
};

enum NvtxCallbackIdCore {
    NVTX_CBID_CORE_INVALID = 0,
    NVTX_CBID_CORE_MarkEx = 1,
    NVTX_CBID_CORE_MarkA = 2,
    NVTX_CBID_CORE_MarkW = 3,
    NVTX_CBID_CORE_RangePushEx = 8,
    NVTX_CBID_CORE_RangePushA = 9,
    NVTX_CBID_CORE_RangePushW = 10,
    NVTX_CBID_CORE_RangePop = 11,
};

enum NvtxExportTableID {
    NVTX_ETID_INVALID = 0,
    NVTX_ETID_CALLBACKS = 1,
};

struct NvtxExportTableCallbacks {
    size_t struct_size;
    int (*GetModuleFunctionTable)(enum NvtxCallbackModule callback_module, NvtxFunctionTable *out_table,
                                  unsigned int *out_size);
};

#endif /* CULEAK_CUDA_DECLARATIONS_ONLY */

typedef struct nvtxStringRegistration_st nvtxStringRegistration;
typedef nvtxStringRegistration *nvtxStringHandle_t;
typedef enum nvtxMessageType_t nvtxMessageType_t;
typedef union nvtxMessageValue_t nvtxMessageValue_t;
typedef struct nvtxEventAttributes_v2 nvtxEventAttributes_t;
typedef enum NvtxCallbackModule NvtxCallbackModule;
typedef enum NvtxCallbackIdCore NvtxCallbackIdCore;
typedef enum NvtxExportTableID NvtxExportTableID;
typedef struct NvtxExportTableCallbacks NvtxExportTableCallbacks;
typedef const void *(*NvtxGetExportTableFunc_t)(uint32_t exportTableId);
typedef int (*NvtxInitializeInjectionNvtxFunc_t)(NvtxGetExportTableFunc_t exportTable);

#endif
