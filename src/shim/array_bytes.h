/* The bytes of a CUDA array, driver's or runtime's: each extent at least 1, and a
 * mipmapped array's levels each halving every extent (never below 1). */
#ifndef CULEAK_ARRAY_BYTES_H
#define CULEAK_ARRAY_BYTES_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t array_dim(size_t v) { return v ? v : 1; }

static inline uint64_t array_bytes(size_t width, size_t height, size_t depth, uint64_t element, unsigned levels)
{
    uint64_t total = 0, w = array_dim(width), h = array_dim(height), z = array_dim(depth);
    for (unsigned l = 0; l < (levels ? levels : 1); l++) {
        total += w * h * z * element;
        w = w > 1 ? w / 2 : 1;
        h = h > 1 ? h / 2 : 1;
        z = z > 1 ? z / 2 : 1;
    }
    return total;
}

#endif
