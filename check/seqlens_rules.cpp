// The cu_seqlens and max_seqlen tables a rank holds, against the plan (seqlens_rules.hpp).
#include "check/seqlens_rules.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>

#include "check/shard_keys.hpp"
#include "check/slot_runs.hpp"

namespace cplab::check {

namespace {

const char* const kCuKeys[] = {"cu_seqlens", "cu_seqlens_padded"};

bool is_integer(DType t) { return t == DType::i64 || t == DType::i32 || t == DType::u8; }

// Entries of `want` that `held` does not match, an entry too many or too few counting one each.
std::int64_t mismatches(const std::vector<std::int64_t>& want,
                        const std::vector<std::int64_t>& held) {
  std::int64_t n =
      std::abs(static_cast<std::int64_t>(want.size()) - static_cast<std::int64_t>(held.size()));
  for (std::size_t i = 0; i < std::min(want.size(), held.size()); ++i) n += want[i] != held[i];
  return n;
}

// The largest segment of a cu_seqlens table and the index of its first entry.
std::pair<std::int64_t, std::int64_t> largest_segment(const std::vector<std::int64_t>& cu) {
  std::int64_t largest = 0, at = 0;
  for (std::size_t i = 1; i < cu.size(); ++i) {
    if (cu[i] - cu[i - 1] > largest) {
      largest = cu[i] - cu[i - 1];
      at = static_cast<std::int64_t>(i) - 1;
    }
  }
  return {largest, at};
}

}  // namespace

bool is_cu_seqlens_key(const std::string& name) {
  return std::find(std::begin(kCuKeys), std::end(kCuKeys), name) != std::end(kCuKeys);
}

// cu_seqlens and max_seqlen belong to layouts whose ranks hold whole local documents; to any
// other they are an extra key (reported here; false).
bool SeqlensRules::layout_has_tables(std::int64_t r, const std::string& name, const Tensor& value) {
  if (!plan_.rows.empty() && !plan_.rows[0].local_cu_seqlens.empty()) return true;
  add_difference(out_,
                 key_difference(r, name, DiffKind::extra_key,
                                fmt::format("{}: {} given, but this layout defines no local "
                                            "cu_seqlens",
                                            lead(r, name), tensor_brief(value))),
                 1);
  return false;
}

void SeqlensRules::tables_on_every_rank(const std::vector<io::TensorFile>& shards) {
  if (plan_.rows.empty() || plan_.rows[0].local_cu_seqlens.empty()) return;
  std::vector<std::string> tables(std::begin(kCuKeys), std::end(kCuKeys));
  tables.emplace_back(kMaxSeqlen);
  for (const std::string& name : tables) {
    if (!any_shard_holds(shards, name)) continue;
    for (std::int64_t r = 0; r < plan_.spec.cp; ++r) {
      if (shards[r].tensors.count(name) != 0) continue;
      add_difference(out_,
                     key_difference(r, name, DiffKind::missing_key,
                                    fmt::format("{}: missing (another rank holds it; every rank "
                                                "needs its own table)",
                                                lead(r, name))),
                     1);
    }
  }
}

void SeqlensRules::cu_seqlens(std::int64_t r, const std::string& name, const Tensor& value) {
  if (!layout_has_tables(r, name, value)) return;
  if (!is_integer(value.dtype())) {
    add_difference(out_,
                   key_difference(r, name, DiffKind::dtype,
                                  fmt::format("{}: dtype {}; cu_seqlens tables are integers (TE "
                                              "reads int32)",
                                              lead(r, name), dtype_name(value.dtype()))),
                   1);
    return;
  }
  const auto rows = static_cast<std::int64_t>(plan_.rows.size());
  const bool one_row = value.dim() == 1 && rows == 1;
  if (!one_row && !(value.dim() == 2 && value.size(0) == rows)) {
    add_difference(out_,
                   key_difference(r, name, DiffKind::shape,
                                  fmt::format("{}: shape {}; expected [n+1] for one row or [B={}, "
                                              "n+1]",
                                              lead(r, name), shape_str(value.shape()), rows)),
                   1);
    return;
  }
  const std::int64_t width = value.size(-1);
  for (std::int64_t b = 0; b < rows; ++b) {
    std::vector<std::int64_t> held;
    for (std::int64_t i = 0; i < width; ++i)
      held.push_back(static_cast<std::int64_t>(value.get(b * width + i)));
    cu_row(r, name, b, held);
  }
}

void SeqlensRules::cu_row(std::int64_t r, const std::string& name, std::int64_t b,
                          std::vector<std::int64_t> held) {
  const RowPlan& row = plan_.rows[b];
  const std::vector<std::int64_t>& local = row.local_cu_seqlens[r];
  const std::vector<std::int64_t>& global = row.cu_seqlens_padded;
  // Rows of different lengths stacked into one tensor end in a filler (Automodel's -1000, or
  // -1): a negative value after the row's last entry is not an entry.
  while (held.size() > 1 && held.back() < 0) {
    record_filler(held.back());
    held.pop_back();
  }
  held_cu_[name].resize(plan_.rows.size());
  held_cu_[name][static_cast<std::size_t>(b)] = held;
  // Fixed-size tables repeat their last entry; that is not a difference.
  while (held.size() > local.size() && held.size() >= 2 && held.back() == held[held.size() - 2])
    held.pop_back();
  if (held == local) return out_.cu_conventions.push_back("local");
  if (held == global) return out_.cu_conventions.push_back("global");
  cu_row_difference(r, name, b, held);
}

// A row's table that is neither the local nor the global one: told against the nearer of the two,
// by the entries that differ, naming the classic bug (the real-length table where the padded one
// belongs) when it is that.
void SeqlensRules::cu_row_difference(std::int64_t r, const std::string& name, std::int64_t b,
                                     const std::vector<std::int64_t>& held) {
  const RowPlan& row = plan_.rows[b];
  const std::vector<std::int64_t>& local = row.local_cu_seqlens[r];
  const std::vector<std::int64_t>& global = row.cu_seqlens_padded;
  const bool use_global = mismatches(global, held) < mismatches(local, held);
  const std::vector<std::int64_t>& want = use_global ? global : local;
  std::size_t first = 0;
  while (first < want.size() && first < held.size() && want[first] == held[first]) ++first;
  std::size_t last = std::max(want.size(), held.size());
  while (last > first + 1 && last <= std::min(want.size(), held.size()) &&
         want[last - 1] == held[last - 1])
    --last;
  std::vector<std::int64_t> real = {0};
  if (b < static_cast<std::int64_t>(batch_.seq_lens.size())) {
    for (std::int64_t n : batch_.seq_lens[b]) real.push_back(real.back() + n);
  }
  std::vector<std::int64_t> real_local;
  for (std::int64_t v : real) real_local.push_back(v / plan_.spec.cp);
  const bool unpadded = held == real || held == real_local;
  Difference d = key_difference(
      r, name, DiffKind::cu_seqlens,
      fmt::format("{}{} entries {}: should be {} ({}), is {}{}", lead(r, name),
                  rows_shown() ? fmt::format(" row {}", b) : "",
                  range_text(static_cast<std::int64_t>(first), static_cast<std::int64_t>(last)),
                  want, use_global ? "cu_seqlens_padded" : "cu_seqlens_padded / C", held,
                  unpadded ? " — the unpadded lengths (cu_seqlens from seq_lens, not "
                             "seq_lens_padded)"
                           : ""));
  d.row = b;
  d.begin = static_cast<std::int64_t>(first);
  d.end = static_cast<std::int64_t>(last);
  add_difference(out_, std::move(d), mismatches(want, held));
}

void SeqlensRules::record_filler(std::int64_t value) {
  auto& fillers = out_.cu_fillers;
  if (std::find(fillers.begin(), fillers.end(), value) == fillers.end()) fillers.push_back(value);
}

// One integer per row: [] or [1] for one row, [B] stacked.
bool SeqlensRules::max_seqlen_form(std::int64_t r, const Tensor& value) {
  const std::string name = kMaxSeqlen;
  const auto rows = static_cast<std::int64_t>(plan_.rows.size());
  const bool scalar = value.numel() == 1 && value.dim() <= 1 && rows == 1;
  if (!scalar && !(value.dim() == 1 && value.size(0) == rows)) {
    add_difference(out_,
                   key_difference(r, name, DiffKind::shape,
                                  fmt::format("{}: shape {}; expected [] for one row or [B={}]",
                                              lead(r, name), shape_str(value.shape()), rows)),
                   1);
    return false;
  }
  if (!is_integer(value.dtype())) {
    add_difference(out_,
                   key_difference(r, name, DiffKind::dtype,
                                  fmt::format("{}: dtype {}; max_seqlen is an integer (TE reads "
                                              "int32)",
                                              lead(r, name), dtype_name(value.dtype()))),
                   1);
    return false;
  }
  return true;
}

// TE reads max_seqlen as a bound on every segment of the cu_seqlens it comes with: at least the
// largest segment of the table the rank holds (cu_seqlens, else cu_seqlens_padded, else the
// layout's own local table).
void SeqlensRules::max_seqlen(std::int64_t r, const Tensor& value) {
  const std::string name = kMaxSeqlen;
  if (!layout_has_tables(r, name, value)) return;
  if (!max_seqlen_form(r, value)) return;
  out_.max_seqlen_checked = true;
  const auto rows = static_cast<std::int64_t>(plan_.rows.size());
  for (std::int64_t b = 0; b < rows; ++b) {
    std::string table = "the layout's local cu_seqlens";
    const std::vector<std::int64_t>* cu = &plan_.rows[b].local_cu_seqlens[r];
    for (const char* key : kCuKeys) {
      const auto it = held_cu_.find(key);
      if (it != held_cu_.end() && it->second.size() > static_cast<std::size_t>(b)) {
        cu = &it->second[static_cast<std::size_t>(b)];
        table = fmt::format("the rank's {}", key);
        break;
      }
    }
    const auto [largest, at] = largest_segment(*cu);
    const auto held = static_cast<std::int64_t>(value.get(b));
    if (held >= largest) continue;
    Difference d = key_difference(
        r, name, DiffKind::max_seqlen,
        fmt::format("{}{}: {}, below segment {} of {} ({} tokens; TE needs max_seqlen ≥ every "
                    "segment)",
                    lead(r, name), rows_shown() ? fmt::format(" row {}", b) : "", held, at, table,
                    largest));
    d.row = b;
    d.begin = at;
    d.end = at + 1;
    add_difference(out_, std::move(d), 1);
  }
}

}  // namespace cplab::check
