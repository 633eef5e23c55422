#pragma once
// What the property files share: the harness, the comparisons, the case data and the reference.
#include <fmt/format.h>

#include "core/error.hpp"
#include "properties/case_data.hpp"
#include "properties/compare.hpp"
#include "properties/generators.hpp"
#include "properties/harness.hpp"
#include "properties/layout_table.hpp"
#include "properties/property.hpp"
#include "reference/plan.hpp"
#include "reference/verbs.hpp"

namespace cplab::properties {

// A token-aligned tensor as [outer, rows, seq, inner] around its seq dim.
struct TokenDims {
  std::int64_t outer = 1, rows = 1, seq = 1, inner = 1;
  std::int64_t flat(std::int64_t o, std::int64_t b, std::int64_t s, std::int64_t e) const {
    return ((o * rows + b) * seq + s) * inner + e;
  }
};
inline TokenDims token_dims(const Shape& shape, std::int64_t seq_dim) {
  CPLAB_CHECK(seq_dim >= 1 && seq_dim < static_cast<std::int64_t>(shape.size()),
              "seq dim {} of shape {}", seq_dim, shape_str(shape));
  TokenDims d;
  for (std::int64_t i = 0; i < seq_dim - 1; ++i) d.outer *= shape[static_cast<std::size_t>(i)];
  d.rows = shape[static_cast<std::size_t>(seq_dim - 1)];
  d.seq = shape[static_cast<std::size_t>(seq_dim)];
  for (std::size_t i = static_cast<std::size_t>(seq_dim) + 1; i < shape.size(); ++i)
    d.inner *= shape[i];
  return d;
}

// shards[r][m], checking that the implementation returned one RankShard per microbatch.
inline const RankShard& shard_of(const std::vector<std::vector<RankShard>>& shards, std::int64_t r,
                                 std::int64_t m) {
  const auto& of_rank = shards[static_cast<std::size_t>(r)];
  CPLAB_CHECK(m < static_cast<std::int64_t>(of_rank.size()),
              "rank {} returned {} microbatch shards, expected more than {}", r, of_rank.size(), m);
  return of_rank[static_cast<std::size_t>(m)];
}

// The shifted loss check (SPEC §6, §6.1) at depths first..last on every microbatch: each rank's
// loss, count and gradient against the reference at that depth (shifted_loss.cpp).
std::string check_loss_depths(const Case& c, Implementation& impl, CheckNotes& notes,
                              std::int64_t first, std::int64_t last);
// Notes the option "target 2+ ranks ahead" when some depth-k target of `plan` lives on a rank two
// or more past its token's.
void far_target_tag(const ShardPlan& plan, std::int64_t depth, CheckNotes& notes);

}  // namespace cplab::properties
