#!/usr/bin/env bash
# culeak's own CUDA declarations (src/cuda, used instead of the toolkit's headers) agree
# with the CUDA toolkit's, where one is installed (CUDA_HOME, default /usr/local/cuda):
# - typedefs and prototypes: tests/cuda_abi/declarations.c declares them again after the
#   toolkit's own, which compiles only if each is the same, and every function declared
#   is one the toolkit declares;
# - enumerator and macro values, struct and union sizes, alignments, member offsets and
#   sizes, and the versioned name each unversioned one maps to: the program that
#   tests/cuda_abi/layout.py writes prints the same built against either set of headers.
# Without a toolkit there is nothing to compare with: a test that cannot run fails, and
# says which header is missing (install the CUDA toolkit, or set CUDA_HOME).
set -euo pipefail
. "$(dirname "$0")/../e2e/lib.sh"
cd "$ROOT"
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
inc=$CUDA_HOME/include
for h in cuda.h cuda_runtime_api.h nvtx3/nvToolsExt.h; do
    [ -f "$inc/$h" ] || fail "no $inc/$h: no CUDA toolkit to compare with (set CUDA_HOME to one)"
done

cc -std=c11 -Wall -Werror -fsyntax-only -I"$inc" -Isrc tests/cuda_abi/declarations.c ||
    fail "a typedef or prototype of src/cuda differs from $inc (compiler errors above)"
# ... and each function it declares is one the toolkit declares too (no misspelt export).
functions=$(sed -nE 's/^(CUresult CUDAAPI|cudaError_t|const char \*) *(cu[A-Za-z0-9_]+)\(.*/\2/p' src/cuda/*.h)
[ "$(wc -w <<<"$functions")" -gt 50 ] || fail "too few functions found in src/cuda: $functions"
{
    printf '#define __CUDA_API_VERSION_INTERNAL 1\n#include <cuda.h>\n#include <cuda_runtime_api.h>\n'
    printf 'void (*const declared[])(void) = {\n'
    printf '    (void (*)(void))%s,\n' $functions
    printf '};\n'
} >"$T/functions.c"
cc -std=c11 -w -fsyntax-only -I"$inc" "$T/functions.c" ||
    fail "src/cuda declares a function that $inc does not (errors above)"

python3 tests/cuda_abi/layout.py src/cuda/*.h >"$T/layout.c"
mkdir "$T/ours" "$T/toolkit"
printf '#include "culeak_cuda.h"\n#include "culeak_cudart.h"\n#include "culeak_nvtx.h"\n' >"$T/ours/layout_headers.h"
printf '#define NVTX_NO_IMPL\n#include <cuda.h>\n#include <cuda_runtime_api.h>\n#include <nvtx3/nvToolsExt.h>\n' \
    >"$T/toolkit/layout_headers.h"
cc -std=c11 -w -I"$T/ours" -Isrc/cuda -o "$T/ours.bin" "$T/layout.c" || fail "layout program (src/cuda)"
cc -std=c11 -w -I"$T/toolkit" -I"$inc" -o "$T/toolkit.bin" "$T/layout.c" ||
    fail "layout program ($inc): a name src/cuda declares is missing there (errors above)"
"$T/ours.bin" >"$T/ours.txt"
"$T/toolkit.bin" >"$T/toolkit.txt"
diff "$T/ours.txt" "$T/toolkit.txt" >"$T/diff" || { cat "$T/diff"; fail "src/cuda (<) differs from $inc (>)"; }
n() { grep -c "^$1 " "$T/ours.txt" || true; }
[ "$(n value)" -gt 50 ] && [ "$(n size)" -gt 10 ] && [ "$(n maps)" -gt 10 ] || fail "too little compared: $(wc -l <"$T/ours.txt") lines"
echo "cuda_abi: $(wc -w <<<"$functions") functions, $(n value) values, $(n size) structs and unions ($(n member) members), $(n maps) name mappings agree with $inc"
