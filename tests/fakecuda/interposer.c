/* A library that exports a driver name, loaded RTLD_GLOBAL before the fake driver by
 * test_fakecuda: cuGetProcAddress must still hand out the fake's own definition. */
#include "cuda/culeak_cuda.h"

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    (void)dptr;
    (void)bytesize;
    return CUDA_ERROR_NOT_SUPPORTED;
}
