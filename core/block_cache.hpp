#pragma once
// Large host buffers (tensors, comm messages) come from here. The verbs make and drop tensors of
// the same large sizes over and over; glibc serves such blocks with fresh mmaps, so every one
// would cost a page fault and a kernel zero fill per 4 KiB (token moves of a 32 MiB row ran at an
// eighth of memcpy speed). A freed large block is kept instead, up to a bounded total, and handed
// out again for the next request of its size. This leaves the process's allocator settings alone.
#include <cstddef>

namespace cplab::block_cache {

// Requests from this size up are served from the cache (smaller ones stay with malloc, which
// reuses them itself).
inline constexpr std::size_t kMinBytes = std::size_t{256} << 10;
// At most this many bytes of freed blocks are kept; the oldest are returned to the system first.
inline constexpr std::size_t kMaxCachedBytes = std::size_t{1} << 30;

// A block of at least `bytes` (>= kMinBytes), 64-byte aligned; throws std::bad_alloc.
void* acquire(std::size_t bytes);
// Gives back a block from acquire(bytes), with the same `bytes`.
void release(void* block, std::size_t bytes) noexcept;

// Bytes of freed blocks kept now (for tests).
std::size_t cached_bytes();

}  // namespace cplab::block_cache
