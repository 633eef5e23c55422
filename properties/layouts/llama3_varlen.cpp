// llama3-varlen (ring-flash-attention's llama3_flash_attn_varlen): contiguous ranks over packed
// rows that are a multiple of C already; ranks attend through their varlen segments. Like
// contiguous it is unbalanced by design: its imbalance is reported (a coverage tag), not bounded,
// and so is whether a document crossed a rank boundary (what the segments are for).
#include <fmt/format.h>

#include "core/layout_name.hpp"
#include "properties/layout_table.hpp"
#include "reference/work.hpp"

namespace cplab::properties {
namespace {

bool a_document_crosses_ranks(const RowPlan& row) {
  const std::int64_t local = row.local_len();
  const std::vector<std::int64_t>& cu = row.cu_seqlens_padded;
  for (std::size_t i = 0; i + 1 < cu.size(); ++i) {
    for (std::int64_t boundary = local; boundary < row.padded_len; boundary += local) {
      if (cu[i] < boundary && boundary < cu[i + 1]) return true;
    }
  }
  return false;
}

std::string reported_balance(const BalanceFacts& f) {
  const double imbalance = reference::imbalance(f.work);
  f.tags.push_back(fmt::format("{} imbalance {}", f.spec.layout,
                               imbalance < 1.5 ? "<1.5"
                               : imbalance < 3 ? "<3"
                                               : ">=3"));
  if (f.spec.cp > 1) {
    f.tags.push_back(fmt::format("{} {}", f.spec.layout,
                                 a_document_crosses_ranks(f.row) ? "documents cross rank boundaries"
                                                                 : "documents stay within ranks"));
  }
  return {};
}

}  // namespace

namespace mutants {
std::vector<ImplementationInfo> llama3_varlen_mutants();  // llama3_varlen_mutants.cpp
}  // namespace mutants

extern const LayoutEntry llama3_varlen_entry;
const LayoutEntry llama3_varlen_entry{
    .name = CPLAB_LAYOUT_NAME(llama3_varlen),
    .balance = reported_balance,
    .own_mutants = mutants::llama3_varlen_mutants,
};

}  // namespace cplab::properties
