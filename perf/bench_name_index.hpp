#pragma once
// Benchmark names to positions, for matching the entries of result files with many benchmarks
// (or many repetitions of one): O(log n) name comparisons a lookup, and a count of the comparisons
// made, so that a test can bound the work of a matching rather than its time.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace cplab::perf {

class NameIndex {
 public:
  NameIndex();
  NameIndex(NameIndex&&) noexcept = default;
  NameIndex& operator=(NameIndex&&) noexcept = default;
  NameIndex(const NameIndex&) = delete;
  NameIndex& operator=(const NameIndex&) = delete;

  // The position of `name`, or nullopt.
  std::optional<std::size_t> find(const std::string& name) const;
  // Adds `name` at `position` unless it is there; returns the position it has.
  std::size_t insert(const std::string& name, std::size_t position);
  std::size_t size() const { return positions_.size(); }
  // Name comparisons made by every find and insert so far.
  std::uint64_t comparisons() const { return comparisons_ ? *comparisons_ : 0; }

 private:
  struct CountingLess {
    std::uint64_t* count;
    bool operator()(const std::string& a, const std::string& b) const {
      ++*count;
      return a < b;
    }
  };
  // On the heap: the map's comparator points at it, and a move must not leave it dangling.
  std::unique_ptr<std::uint64_t> comparisons_;
  std::map<std::string, std::size_t, CountingLess> positions_;
};

}  // namespace cplab::perf
