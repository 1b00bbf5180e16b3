/* The CUDA prototypes the shim wraps, under their exported (versioned) names.
 * cuda.h maps unversioned names to the newest version with macros; the shim defines
 * functions under the literal exported names, so the few names that collide are
 * undefined here and the exported variants cuda.h does not declare are declared. */
#ifndef CULEAK_CUDA_API_H
#define CULEAK_CUDA_API_H

#include <cuda.h>
#include <cuda_runtime_api.h>

#undef cuGetProcAddress
CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                                unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                              CUstream hStream);
CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream);

#endif
