/* Minimal graphs: memory nodes only. An alloc node reserves a device address for the
 * graph's lifetime (no memory until launch, which the fake does not do). */
#include "fake.h"

#include <stdlib.h>

#define GRAPH_MAX_NODES 64

struct CUgraphNode_st {
    CUdeviceptr dptr;
};

struct CUgraph_st {
    size_t n;
    struct CUgraphNode_st nodes[GRAPH_MAX_NODES];
};

CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    FAKE_NEED_INIT();
    if (!phGraph || flags)
        return CUDA_ERROR_INVALID_VALUE;
    *phGraph = calloc(1, sizeof **phGraph);
    return *phGraph ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* Graph allocations end with their graph. */
CUresult cuGraphDestroy(CUgraph hGraph)
{
    FAKE_NEED_INIT();
    if (!hGraph)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fake_lock);
    for (size_t i = 0; i < hGraph->n; i++) {
        struct fake_block *b = fake_find(hGraph->nodes[i].dptr, FK_GRAPH);
        if (b && b->aux == (uintptr_t)hGraph)
            fake_release(b);
    }
    pthread_mutex_unlock(&fake_lock);
    free(hGraph);
    return CUDA_SUCCESS;
}

static CUresult add_node(CUgraphNode *ph, CUgraph g, CUdeviceptr dptr)
{
    if (g->n == GRAPH_MAX_NODES)
        return CUDA_ERROR_OUT_OF_MEMORY;
    g->nodes[g->n].dptr = dptr;
    *ph = &g->nodes[g->n++];
    return CUDA_SUCCESS;
}

CUresult cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
    FAKE_NEED_INIT();
    if (!phGraphNode || !hGraph || !nodeParams || !nodeParams->bytesize)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fake_lock);
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    struct fake_block *b = fake_track(FK_GRAPH, nodeParams->poolProps.location.id, NULL, fake_new_handle(),
                                      nodeParams->bytesize, NULL);
    if (b) {
        b->aux = (uintptr_t)hGraph;
        r = add_node(phGraphNode, hGraph, b->addr);
        if (r == CUDA_SUCCESS) {
            nodeParams->dptr = b->addr;
            fake_log("alloc", "cuGraphAddMemAllocNode", b->addr, b->size);
        } else
            fake_release(b);
    }
    pthread_mutex_unlock(&fake_lock);
    return r;
}

CUresult cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                               size_t numDependencies, CUdeviceptr dptr)
{
    FAKE_NEED_INIT();
    if (!phGraphNode || !hGraph)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_find(dptr, FK_GRAPH);
    CUresult r = b ? add_node(phGraphNode, hGraph, 0) : CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        fake_log("free", "cuGraphAddMemFreeNode", dptr, b->size);
        fake_release(b);
    }
    pthread_mutex_unlock(&fake_lock);
    return r;
}

CUresult cuDeviceGraphMemTrim(CUdevice device)
{
    FAKE_NEED_INIT();
    return fake_valid_device(device) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}
