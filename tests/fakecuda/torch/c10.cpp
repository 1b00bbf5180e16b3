// libc10.so of the stand-in torch: the out-of-line members of c10::Allocator.
#include "c10_allocator.h"

namespace c10 {
Allocator::~Allocator() = default;
bool Allocator::is_simple_data_ptr(const void *p) const { return p != nullptr; }
} // namespace c10
