#include "core/block_cache.hpp"

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace cplab::block_cache {
namespace {

// Sizes round up to 64 KiB, so a block freed with its requested size is found again by the
// rounded size without a table of real sizes.
constexpr std::size_t kGranule = std::size_t{64} << 10;

std::size_t rounded(std::size_t bytes) { return (bytes + kGranule - 1) / kGranule * kGranule; }

struct Block {
  void* data;
  std::size_t bytes;  // rounded
};

struct Cache {
  std::mutex mutex;
  std::vector<Block> free;  // oldest first
  std::size_t total = 0;
};

// Never destroyed: tensors with static storage may be freed after any destructor would run.
Cache& cache() {
  static Cache* const instance = new Cache;
  return *instance;
}

}  // namespace

void* acquire(std::size_t bytes) {
  const std::size_t size = rounded(bytes);
  Cache& c = cache();
  {
    std::lock_guard lock(c.mutex);
    for (auto it = c.free.rbegin(); it != c.free.rend(); ++it) {  // newest first: still warm
      if (it->bytes != size) continue;
      void* data = it->data;
      c.total -= size;
      c.free.erase(std::next(it).base());
      return data;
    }
  }
  void* data = std::aligned_alloc(64, size);
  if (data == nullptr) throw std::bad_alloc();
  return data;
}

void release(void* block, std::size_t bytes) noexcept {
  const std::size_t size = rounded(bytes);
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  if (size > kMaxCachedBytes) return std::free(block);
  try {
    c.free.push_back({block, size});
  } catch (...) {  // no room to remember it: it goes back to the system
    return std::free(block);
  }
  c.total += size;
  std::size_t drop = 0;
  while (c.total > kMaxCachedBytes) {
    c.total -= c.free[drop].bytes;
    std::free(c.free[drop++].data);
  }
  c.free.erase(c.free.begin(), c.free.begin() + static_cast<std::ptrdiff_t>(drop));
}

std::size_t cached_bytes() {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  return c.total;
}

}  // namespace cplab::block_cache
