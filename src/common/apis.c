/* Names of the op, kind and api vocabularies (apis.h). */
#include "apis.h"

#include <string.h>

static const char *const api_names[] = {
#define CULEAK_API_NAME(id, name, op, kind) name,
    CULEAK_API_LIST(CULEAK_API_NAME)
#undef CULEAK_API_NAME
};

static const char *const op_names[CULEAK_OP_COUNT] = {
    [0] = "none", [CULEAK_OP_ALLOC] = "alloc", [CULEAK_OP_FREE] = "free",
    [CULEAK_OP_FREE_ALL] = "free_all", [CULEAK_OP_RETAIN] = "retain",
    [CULEAK_OP_TRIM] = "trim", [CULEAK_OP_CTX_CREATE] = "ctx_create",
};

static const char *const kind_names[CULEAK_KIND_COUNT] = {
    [CULEAK_KIND_NONE] = "none",
    [CULEAK_KIND_DEVICE] = "device",
    [CULEAK_KIND_MANAGED] = "managed",
    [CULEAK_KIND_HOST_PINNED] = "pinned",
    [CULEAK_KIND_HOST_REGISTERED] = "registered",
    [CULEAK_KIND_VMM_PHYSICAL] = "vmm-physical",
    [CULEAK_KIND_VMM_MAPPED] = "vmm-mapped",
    [CULEAK_KIND_ADDRESS_RESERVE] = "va-reserve",
    [CULEAK_KIND_ARRAY] = "array",
    [CULEAK_KIND_IPC] = "ipc",
    [CULEAK_KIND_EXTERNAL] = "external",
    [CULEAK_KIND_POOL] = "pool",
    [CULEAK_KIND_GRAPH] = "graph",
    [CULEAK_KIND_USER] = "user",
    [CULEAK_KIND_BLOCK] = "block",
};

const char *culeak_api_name(unsigned api) { return api < CULEAK_API_COUNT ? api_names[api] : "unknown"; }

const char *culeak_op_name(unsigned op) { return op < CULEAK_OP_COUNT ? op_names[op] : "unknown"; }

const char *culeak_kind_name(unsigned kind) { return kind < CULEAK_KIND_COUNT ? kind_names[kind] : "unknown"; }

int culeak_kind_by_name(const char *name)
{
    for (unsigned i = 0; i < CULEAK_KIND_COUNT; i++)
        if (strcmp(kind_names[i], name) == 0)
            return (int)i;
    return -1;
}

int culeak_kind_is_memory(unsigned kind)
{
    switch (kind) {
    case CULEAK_KIND_DEVICE: case CULEAK_KIND_MANAGED: case CULEAK_KIND_HOST_PINNED:
    case CULEAK_KIND_HOST_REGISTERED: case CULEAK_KIND_VMM_PHYSICAL: case CULEAK_KIND_ARRAY:
    case CULEAK_KIND_EXTERNAL: case CULEAK_KIND_GRAPH: case CULEAK_KIND_USER: case CULEAK_KIND_BLOCK:
        return 1;
    default:
        return 0;  /* mapped VA, reservations, IPC views and pool objects are not new memory */
    }
}
