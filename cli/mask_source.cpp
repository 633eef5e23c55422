#include "cli/mask_source.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string_view>
#include <vector>

#include "core/batch.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "io/torch_batch.hpp"

namespace cplab::cli {

namespace {
constexpr std::string_view kKeyForm = "bidirectional:key=";
}  // namespace

sim::AttentionMask read_mask(const std::string& text, const LayoutSourceArgs& source) {
  if (text.rfind(kKeyForm, 0) != 0) return sim::parse_mask(text);
  const std::string key = text.substr(kKeyForm.size());
  CPLAB_CHECK(!key.empty(), "--mask {}: name the batch key (bidirectional:key=token_type_ids)",
              text);
  CPLAB_CHECK(source.has_batch,
              "--mask {}: spans from a batch key need --batch FILE.pt (or give the spans: "
              "bidirectional:B-E,...)",
              text);
  const Batch batch = io::load_torch_batch(source.batch_path);
  if (!batch.has(key)) {
    std::vector<std::string> names;
    for (const auto& [name, field] : batch.tokens) names.push_back(name);
    CPLAB_FAIL("--mask {}: {} holds no token key '{}' (it holds {})", text, source.batch_path, key,
               fmt::join(names, ", "));
  }
  const TokenField& field = batch.tokens.at(key);
  const Tensor& values = field.value;
  CPLAB_CHECK(values.dim() == 2 && field.seq_dim == 1,
              "--mask {}: '{}' is {}; spans come from a [B, S] key (one value per token)", text,
              key, tensor_brief(values));
  const std::int64_t row = source.has_row ? source.row : 0, len = values.size(1);
  CPLAB_CHECK(row >= 0 && row < values.size(0), "--mask {}: --row {} of a batch of {} rows", text,
              row, values.size(0));
  sim::AttentionMask mask;
  mask.family = sim::MaskFamily::bidirectional;
  for (std::int64_t s = 0; s < len; ++s) {
    if (values.get(row * len + s) == 0.0) continue;
    if (!mask.spans.empty() && mask.spans.back().end == s) {
      mask.spans.back().end = s + 1;
    } else {
      CPLAB_CHECK(mask.spans.size() < limits::kMaxDocuments,
                  "--mask {}: '{}' marks more than {} spans in row {}", text, key,
                  limits::kMaxDocuments, row);
      mask.spans.push_back({s, s + 1});
    }
  }
  // A row the key marks nowhere has no span: its mask is the causal one.
  if (mask.spans.empty()) return {};
  return mask;
}

}  // namespace cplab::cli
