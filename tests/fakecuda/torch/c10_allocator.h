// The stand-in's c10::Allocator (tests/fakecuda/torch): as in torch, its out-of-line
// virtuals live in libc10.so, so the caching allocator's vtable in libc10_cuda.so has
// slots that point into another library.
#pragma once

#define EXPORT __attribute__((visibility("default")))

namespace c10 {
struct EXPORT Allocator {
    virtual ~Allocator();                                 // libc10.so, two vtable slots
    virtual bool is_simple_data_ptr(const void *p) const; // libc10.so
};
} // namespace c10
