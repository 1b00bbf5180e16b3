/* The table of frameworks (frameworks.h). */
#include "frameworks.h"
#include "apis.h"

#include <stddef.h>

static const char *const torch_modules[] = {"libc10_cuda*", NULL};
/* its device allocator and its pinned-host one (CachingHostAllocatorImpl; before torch
 * 2.3, CUDAHostAllocator) */
static const char *const torch_functions[] = {"CUDACachingAllocator", "CachingHostAllocator", "CUDAHostAllocator",
                                              NULL};
static const char *const torch_no_pool[] = {"PYTORCH_NO_CUDA_MEMORY_CACHING=1", NULL};

static const char *const cupy_modules[] = {"*cupy/cuda/memory*", "*cupy/cuda/_memory*", "*cupy/cuda/pinned_memory*",
                                           NULL};
/* its memory and pinned-memory pools, as Cython, C++ and mangled names */
static const char *const cupy_functions[] = {"cupy.cuda.memory",        "4cupy_4cuda_6memory",
                                             "cupy::cuda::memory",      "cupy.cuda.pinned_memory",
                                             "4cupy_4cuda_13pinned_memory", "cupy::cuda::pinned_memory",
                                             NULL};
/* culeak.no_pool() (python/culeak.py), run by sitecustomize.py, turns CuPy's pools off */
static const char *const cupy_no_pool[] = {"CULEAK_NO_POOL=1", NULL};

static const char *const none[] = {NULL};
static const char *const xla_functions[] = {"BFCAllocator", "CudaMallocAsyncAllocator", NULL};
static const char *const xla_no_pool[] = {"XLA_PYTHON_CLIENT_PREALLOCATE=false", "XLA_PYTHON_CLIENT_ALLOCATOR=platform",
                                          NULL};

static const struct culeak_framework frameworks[CULEAK_FRAMEWORK_COUNT] = {
    [CULEAK_FRAMEWORK_PYTORCH] = {"pytorch", "pytorch caching allocator", torch_modules, torch_functions,
                                  CULEAK_API_TORCH_BLOCK_ALLOC, torch_no_pool, CULEAK_API_TORCH_BLOCK_FREE},
    [CULEAK_FRAMEWORK_CUPY] = {"cupy", "cupy memory pool", cupy_modules, cupy_functions, CULEAK_API_CUPY_BLOCK_ALLOC,
                               cupy_no_pool, CULEAK_API_CUPY_BLOCK_FREE},
    [CULEAK_FRAMEWORK_XLA] = {"xla", "xla allocator", none, xla_functions, 0, xla_no_pool, 0},
};

const struct culeak_framework *culeak_framework(unsigned id)
{
    return id > CULEAK_FRAMEWORK_NONE && id < CULEAK_FRAMEWORK_COUNT ? &frameworks[id] : NULL;
}
