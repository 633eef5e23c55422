#include "perf/bench_name_index.hpp"

namespace cplab::perf {

NameIndex::NameIndex()
    : comparisons_(std::make_unique<std::uint64_t>(0)),
      positions_(CountingLess{comparisons_.get()}) {}

std::optional<std::size_t> NameIndex::find(const std::string& name) const {
  const auto it = positions_.find(name);
  if (it == positions_.end()) return std::nullopt;
  return it->second;
}

std::size_t NameIndex::insert(const std::string& name, std::size_t position) {
  return positions_.try_emplace(name, position).first->second;
}

}  // namespace cplab::perf
