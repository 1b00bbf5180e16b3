/* An ordinary driver-API program: linked against libcuda.so.1, calling the exported
 * versioned symbols through the dynamic linker (so an LD_PRELOADed library that exports
 * the same names takes the calls). */
#include "client_api.h"
#include "fakecuda.h"

/* cuda.h maps these names to their _v2 versions; here they must mean the v1 exports. */
#undef cuMemAlloc
#undef cuMemFree
#undef cuMemcpyHtoD
#undef cuMemcpyDtoH
CUresult cuMemAlloc(unsigned int *dptr, unsigned int bytesize);
CUresult cuMemFree(unsigned int dptr);
CUresult cuMemcpyHtoD(unsigned int dst, const void *src, unsigned int n);
CUresult cuMemcpyDtoH(void *dst, unsigned int src, unsigned int n);
/* the per-thread variants are declared by cuda.h only for per-thread builds */
CUresult cuStreamSynchronize_ptsz(CUstream hStream);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream);

const char *client_name = "client_driver";

int main(int argc, char **argv)
{
#define LINK(field, sym, type, base, ver, flags) D.field = (type)&sym;
    CLIENT_DRIVER_API(LINK)
#undef LINK
    D.live_bytes = fakecuda_live_bytes;
    D.alloc_count = fakecuda_alloc_count;
    D.free_count = fakecuda_free_count;
    return client_run(argc, argv);
}
