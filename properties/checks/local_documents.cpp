// Property 4: local cu_seqlens describe exactly the local documents (layouts with whole local
// documents), and every rank's count of valid (real) tokens is what it holds: per document, what
// the layout's own rule says (LayoutEntry::local_document_valid, SPEC §3).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "properties/checks/checks.hpp"

namespace cplab::properties {

namespace {

// Layouts with whole local documents: the local cu_seqlens against cu_seqlens_padded / C, the
// document ids inside each local document, and each document's valid count against the layout's
// rule.
std::string local_documents_mismatch(const Case& c, const LayoutEntry& entry, const RowPlan& row,
                                     const ShardLayout& layout, std::size_t b, std::int64_t r,
                                     const std::string& at) {
  CPLAB_CHECK(b < layout.cu_seqlens.size(), "{}: {} recorded no local cu_seqlens for this row", at,
              c.spec.layout);
  const std::vector<std::int64_t>& cu = layout.cu_seqlens[b];
  std::vector<std::int64_t> want;
  for (std::int64_t boundary : row.cu_seqlens_padded) want.push_back(boundary / c.spec.cp);
  const std::string bad =
      vector_mismatch(at + ": local cu_seqlens (cu_seqlens_padded / C)", want, cu);
  if (!bad.empty()) return bad;
  for (std::size_t i = 0; i + 1 < cu.size(); ++i) {
    std::int64_t valid = 0;
    for (std::int64_t k = cu[i]; k < cu[i + 1]; ++k) {
      const auto doc = layout.doc_ids[b][static_cast<std::size_t>(k)];
      if (doc != static_cast<std::int32_t>(i + 1)) {
        return fmt::format(
            "{}: local token {} lies in local document {} ([{}, {}) of cu_seqlens) but has "
            "document id {}",
            at, k, i + 1, cu[i], cu[i + 1], doc);
      }
      valid += layout.real[b][static_cast<std::size_t>(k)];
    }
    const std::int64_t padded = row.cu_seqlens_padded[i + 1] - row.cu_seqlens_padded[i];
    // Real tokens of document i: counted in the reference row (row padding added to the last
    // document is not real).
    std::int64_t n = 0;
    for (std::int64_t g = row.cu_seqlens_padded[i]; g < row.cu_seqlens_padded[i + 1]; ++g)
      n += row.real[static_cast<std::size_t>(g)];
    // Where the layout keeps the caller's row as it is (C = 1), the one rank holds all.
    const std::int64_t expected = sim::partitions(*entry.descriptor, c.spec)
                                      ? entry.local_document_valid(n, padded, c.spec.cp, r)
                                      : n;
    if (valid != expected) {
      return fmt::format(
          "{}: local document {} (n={} in {} slots) holds {} real tokens; {}'s rule (SPEC §3) "
          "says {}",
          at, i + 1, n, padded, valid, c.spec.layout, expected);
    }
  }
  return {};
}

// Layouts whose ranks attend through varlen segments: the rank's cu_seqlens_q, cu_seqlens_k and
// key slice against the ones the reference built document by document (SPEC §10.3).
std::string varlen_mismatch(const VarlenSegments& want, const ShardLayout& layout, std::size_t b,
                            const std::string& at) {
  if (b >= layout.varlen.size())
    return fmt::format("{}: the rank recorded no varlen segments (cu_seqlens_q/k, key slice)", at);
  const VarlenSegments& got = layout.varlen[b];
  std::string bad = vector_mismatch(at + ": cu_seqlens_q", want.cu_seqlens_q, got.cu_seqlens_q);
  if (bad.empty())
    bad = vector_mismatch(at + ": cu_seqlens_k", want.cu_seqlens_k, got.cu_seqlens_k);
  if (bad.empty() && (got.k_begin != want.k_begin || got.k_end != want.k_end)) {
    bad = fmt::format("{}: key slice [{}, {}), the reference's [{}, {})", at, got.k_begin,
                      got.k_end, want.k_begin, want.k_end);
  }
  return bad;
}

std::string check_local_documents(const Case& c, Implementation& impl, CheckNotes& notes) {
  const Subject subject(c);
  const auto shards = shard_on_ranks(impl, c.spec, subject.batch);
  const LayoutEntry& entry = layout_entry(c.spec.layout);
  notes.tags.push_back(fmt::format("{} {}", c.spec.layout, cp_class(c.spec.cp)));
  for (std::int64_t m = 0; m < c.spec.microbatches; ++m) {
    const ShardPlan& plan = subject.microbatches[static_cast<std::size_t>(m)];
    for (std::size_t b = 0; b < plan.rows.size(); ++b) {
      const RowPlan& row = plan.rows[b];
      std::int64_t total_valid = 0;
      for (std::int64_t r = 0; r < c.spec.cp; ++r) {
        const ShardLayout& layout = shard_of(shards, r, m).layout;
        const std::string at = fmt::format("rank {}, microbatch {}, row {}", r, m, b);
        CPLAB_CHECK(
            b < layout.valid_tokens.size() && b < layout.real.size() && b < layout.doc_ids.size(),
            "{}: the recorded layout has fewer rows than the microbatch", at);
        // Layouts without local documents may record no cu_seqlens at all.
        const std::vector<std::int64_t> no_cu;
        const std::vector<std::int64_t>& cu =
            b < layout.cu_seqlens.size() ? layout.cu_seqlens[b] : no_cu;
        std::int64_t held = 0;
        for (std::uint8_t real : layout.real[b]) held += real;
        if (layout.valid_tokens[b] != held ||
            held != row.valid_tokens[static_cast<std::size_t>(r)]) {
          return failure_prefix(c) +
                 fmt::format(
                     "{}: valid_tokens says {}, the rank holds {} real tokens, the reference {}",
                     at, layout.valid_tokens[b], held,
                     row.valid_tokens[static_cast<std::size_t>(r)]);
        }
        total_valid += held;
        const bool has_local_docs = entry.descriptor->local_documents && row.packed;
        if (!row.varlen.empty()) {
          const std::string bad =
              varlen_mismatch(row.varlen[static_cast<std::size_t>(r)], layout, b, at);
          if (!bad.empty()) return failure_prefix(c) + bad;
        }
        if (has_local_docs) {
          const std::string bad = local_documents_mismatch(c, entry, row, layout, b, r, at);
          if (!bad.empty()) return failure_prefix(c) + bad;
        } else if (!cu.empty()) {
          const std::string bad = vector_mismatch(
              at + ": local cu_seqlens of a layout without local documents",
              row.local_cu_seqlens.empty() ? std::vector<std::int64_t>{}
                                           : row.local_cu_seqlens[static_cast<std::size_t>(r)],
              cu);
          if (!bad.empty()) return failure_prefix(c) + bad;
        }
      }
      // Every real token of the caller's row is held by exactly one rank.
      std::int64_t caller_real_tokens = 0;
      const std::int64_t global_row = m * c.rows_per_microbatch() + static_cast<std::int64_t>(b);
      for (std::int64_t t = 0; t < c.seq_len; ++t)
        caller_real_tokens += caller_real(c, global_row, t) ? 1 : 0;
      if (total_valid != caller_real_tokens) {
        return failure_prefix(c) +
               fmt::format(
                   "microbatch {} row {}: the ranks hold {} real tokens, the caller's row has {}",
                   m, b, total_valid, caller_real_tokens);
      }
    }
  }
  return {};
}

}  // namespace

extern const PropertyInfo local_documents_property;
const PropertyInfo local_documents_property{
    .name = "local_documents_match_cu_seqlens",
    .invariant =
        "local cu_seqlens = cu_seqlens_padded / C and bound exactly the local documents (the "
        "layouts that hold whole local documents); "
        "every "
        "rank's valid count is what it holds (SPEC §3's formula per document) and they sum to the "
        "row's",
    .check = check_local_documents,
    .coverage = {{kAnyCase, {}, Cross::cp}},
};

}  // namespace cplab::properties
