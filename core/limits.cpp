#include "core/limits.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/layout_option.hpp"

namespace cplab::limits {

std::int64_t add(std::int64_t a, std::int64_t b, std::string_view what) {
  std::int64_t out = 0;
  CPLAB_CHECK(!__builtin_add_overflow(a, b, &out), "{}: {} + {} overflows 64-bit integers", what, a,
              b);
  return out;
}

std::int64_t mul(std::int64_t a, std::int64_t b, std::string_view what) {
  std::int64_t out = 0;
  CPLAB_CHECK(!__builtin_mul_overflow(a, b, &out), "{}: {} × {} overflows 64-bit integers", what, a,
              b);
  return out;
}

std::int64_t sum(const std::vector<std::int64_t>& values, std::string_view what) {
  std::int64_t total = 0;
  for (std::int64_t v : values) total = add(total, v, what);
  return total;
}

void check_spec(const LayoutSpec& spec) {
  CPLAB_CHECK(spec.cp >= 1 && spec.cp <= kMaxCp, "CP size must be in [1, {}], got cp={}", kMaxCp,
              spec.cp);
  CPLAB_CHECK(spec.microbatches >= 1 && spec.microbatches <= kMaxBatchSlots,
              "pipeline microbatches must be in [1, {}], got microbatches={}", kMaxBatchSlots,
              spec.microbatches);
  layouts::check_options(spec);  // each option inside its declared range at this C
}

std::int64_t padded_len_bound(const LayoutSpec& spec, std::int64_t caller_len,
                              std::int64_t documents) {
  check_spec(spec);
  CPLAB_CHECK(caller_len >= 0 && caller_len <= kMaxRowTokens,
              "a row of S={} tokens is outside [0, {}] (cplab's limit per row)", caller_len,
              kMaxRowTokens);
  CPLAB_CHECK(documents >= 0 && documents <= kMaxDocuments,
              "a packed row of {} documents is more than cplab's limit of {}", documents,
              kMaxDocuments);
  // Every layout pads the row to a multiple of its unit D: at most 2C or what its options make it
  // (C·m, K·C, B, ...); thd pads every document to 2C on top. All factors are bounded above by the
  // options' declared ranges, so nothing here overflows.
  const std::int64_t unit = layouts::pad_unit_bound(spec);
  const std::int64_t bound = (caller_len + unit - 1) / unit * unit + documents * 2 * spec.cp;
  CPLAB_CHECK(bound <= kMaxPaddedLen,
              "{}: a row of S={} with {} documents may pad to {} slots, more than cplab's limit "
              "of {}",
              spec_brief(spec), caller_len, documents, bound, kMaxPaddedLen);
  return bound;
}

std::int64_t check_documents(const std::vector<std::int64_t>& lens, std::string_view what) {
  CPLAB_CHECK(static_cast<std::int64_t>(lens.size()) <= kMaxDocuments,
              "{}: {} documents, more than cplab's limit of {} per row", what, lens.size(),
              kMaxDocuments);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < lens.size(); ++i) {
    CPLAB_CHECK(lens[i] >= 0, "{}: document {} has negative length {}", what, i, lens[i]);
    CPLAB_CHECK(lens[i] <= kMaxRowTokens - total,
                "{}: document {} takes the row past {} tokens (cplab's limit per row)", what, i,
                kMaxRowTokens);
    total += lens[i];
  }
  return total;
}

}  // namespace cplab::limits
