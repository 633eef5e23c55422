#include "reference/types/layout_spec.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "reference/plan.hpp"
#include "reference/types/error.hpp"
#include "reference/types/limits.hpp"

namespace cplab {

void validate_spec(const LayoutSpec& spec) {
  CPLAB_CHECK(spec.cp >= 1, "CP size must be at least 1, got cp={}", spec.cp);
  CPLAB_CHECK(spec.pad_multiple >= 1, "pad multiple must be at least 1, got pad_multiple={}",
              spec.pad_multiple);
  CPLAB_CHECK(spec.chunk_size >= 1, "magi chunk size must be at least 1, got chunk_size={}",
              spec.chunk_size);
  CPLAB_CHECK(spec.microbatches >= 1,
              "pipeline microbatches must be at least 1, got microbatches={}", spec.microbatches);
  CPLAB_CHECK(spec.ring_degree >= 1, "ring degree must be at least 1, got ring_degree={}",
              spec.ring_degree);
  CPLAB_CHECK(spec.block_size >= 1, "ptrr block size must be at least 1, got block_size={}",
              spec.block_size);
  limits::check_spec(spec);  // upper bounds, so that C·m and K·C cannot overflow
  // The registry is the one list of layout names; an unknown name lists the known ones.
  const std::vector<std::string> names = reference::layout_names();
  CPLAB_CHECK(std::find(names.begin(), names.end(), spec.layout) != names.end(),
              "unknown layout '{}'; known layouts: {}", spec.layout, fmt::join(names, ", "));
}

std::string spec_brief(const LayoutSpec& spec) {
  const LayoutSpec defaults;
  std::string brief = fmt::format("{} cp={}", spec.layout, spec.cp);
  if (spec.pad_multiple != defaults.pad_multiple)
    brief += fmt::format(" pad_multiple={}", spec.pad_multiple);
  if (spec.chunk_size != defaults.chunk_size)
    brief += fmt::format(" chunk_size={}", spec.chunk_size);
  if (spec.chunk_pad_at_cp1) brief += " chunk_pad_at_cp1";
  if (spec.microbatches != defaults.microbatches)
    brief += fmt::format(" microbatches={}", spec.microbatches);
  if (spec.shard_primary != defaults.shard_primary) brief += " shard_primary=false";
  if (spec.pad_policy != defaults.pad_policy) brief += " pad_policy=zero";
  if (spec.pad_token_id != defaults.pad_token_id)
    brief += fmt::format(" pad_token_id={}", spec.pad_token_id);
  if (spec.ring_degree != defaults.ring_degree)
    brief += fmt::format(" ring_degree={}", spec.ring_degree);
  if (spec.block_size != defaults.block_size)
    brief += fmt::format(" block_size={}", spec.block_size);
  return brief;
}

}  // namespace cplab
