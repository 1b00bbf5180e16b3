/* The CUDA prototypes the shim wraps, under their exported (versioned) names.
 * culeak_cuda.h, like cuda.h, maps unversioned names to the newest version with macros;
 * the shim defines functions under the literal exported names, so the one name that
 * collides (the legacy cuGetProcAddress) is undefined here and declared. */
#ifndef CULEAK_CUDA_API_H
#define CULEAK_CUDA_API_H

#include "cuda/culeak_cuda.h"
#include "cuda/culeak_cudart.h"

#undef cuGetProcAddress
CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);

#endif
