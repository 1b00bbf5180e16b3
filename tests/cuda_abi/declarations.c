/* Built against the CUDA toolkit's headers by tests/checks/cuda_abi.sh: every typedef and
 * prototype of src/cuda is declared again after the toolkit's own. C11 accepts a typedef
 * twice only for the same type, and a function redeclared only with a compatible type,
 * so a wrong type, tag or parameter is a compile error here. The driver header is read
 * as the driver's own build reads it (every versioned export under its own name). */
#define __CUDA_API_VERSION_INTERNAL 1
#define NVTX_NO_IMPL
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#define CULEAK_CUDA_DECLARATIONS_ONLY
#include "cuda/culeak_cuda.h"
#include "cuda/culeak_cudart.h"
#include "cuda/culeak_nvtx.h"
