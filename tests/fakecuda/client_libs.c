/* A program on the stand-ins of the CUDA libraries (tests/fakecuda/libs) and of the
 * frameworks over them: what XLA's set-up, PyTorch's cuBLAS handle pool and NCCL's own
 * thread allocate is held by a library until exit (culeak's default suppressions); the
 * cuBLAS handles this program creates itself, one per step and never destroyed, are its
 * own leak. "clean" leaves the steps out. Lines marked SITE-* are looked for by
 * tests/e2e/default_suppressions.sh. */
#include "cuda/culeak_cudart.h"

#include <stdio.h>
#include <string.h>

int fake_xla_init(void);
int fake_torch_blas_handle(void);
int cublasCreate_v2(void **handle);
int ncclCommInitRank(void **comm, int nranks, const void *id, int rank);

int main(int argc, char **argv)
{
    int clean = argc > 1 && !strcmp(argv[1], "clean");
    void *comm = NULL;
    if (cudaFree(NULL) != cudaSuccess || fake_xla_init() != 0 || fake_torch_blas_handle() != 0 ||
        fake_torch_blas_handle() != 0 || ncclCommInitRank(&comm, 1, NULL, 0) != 0) {
        fprintf(stderr, "client_libs: set-up failed\n");
        return 3;
    }
    for (int step = 0; step < 3 && !clean; step++) {
        void *handle;
        if (cublasCreate_v2(&handle) != 0) /* SITE-USER-HANDLE */
            return 3;
    }
    printf("client_libs: done\n");
    return 0;
}
