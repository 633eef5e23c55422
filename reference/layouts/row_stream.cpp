#include "reference/layouts/row_stream.hpp"

#include <fmt/ranges.h>

#include "core/error.hpp"

namespace cplab::reference::row_stream {

std::int64_t ceil_to(std::int64_t x, std::int64_t m) {
  CPLAB_CHECK(x >= 0 && m >= 1, "ceil_to({}, {}): needs x >= 0 and m >= 1", x, m);
  return x + ((m - x % m) % m);
}

CallerRow read_caller_row(std::int64_t caller_len, const std::vector<std::int64_t>* seq_lens,
                          const std::vector<std::int64_t>* seq_lens_padded) {
  CPLAB_CHECK(caller_len >= 0, "row length must be non-negative, got S={}", caller_len);
  CallerRow row;
  row.len = caller_len;
  row.packed = seq_lens != nullptr;
  if (!row.packed) {
    CPLAB_CHECK(seq_lens_padded == nullptr || seq_lens_padded->empty(),
                "seq_lens_padded given without seq_lens for a row of S={}", caller_len);
    return row;
  }
  row.seq_lens = *seq_lens;
  const bool has_padded = seq_lens_padded != nullptr && !seq_lens_padded->empty();
  row.seq_lens_padded = has_padded ? *seq_lens_padded : *seq_lens;
  CPLAB_CHECK(row.seq_lens_padded.size() == row.seq_lens.size(),
              "packed row: {} seq_lens_padded for {} documents", row.seq_lens_padded.size(),
              row.seq_lens.size());
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < row.seq_lens.size(); ++i) {
    CPLAB_CHECK(row.seq_lens[i] >= 0, "packed row: document {} has negative length {}", i,
                row.seq_lens[i]);
    CPLAB_CHECK(row.seq_lens_padded[i] >= row.seq_lens[i],
                "packed row: document {} occupies {} slots, less than its {} tokens", i,
                row.seq_lens_padded[i], row.seq_lens[i]);
    row.starts.push_back(offset);
    offset += row.seq_lens_padded[i];
  }
  CPLAB_CHECK(offset <= caller_len,
              "packed row: documents {} occupy {} slots, more than the row length S={}",
              fmt::format("{}", row.seq_lens_padded), offset, caller_len);
  return row;
}

std::int64_t resolve_padded_len(const char* layout, std::int64_t natural, std::int64_t pinned) {
  CPLAB_CHECK(pinned >= 0, "pinned row length must be non-negative, got {}", pinned);
  if (pinned == 0) return natural;
  CPLAB_CHECK(pinned == natural, "{} pads this row to L={}, but the row length is pinned to L={}",
              layout, natural, pinned);
  return pinned;
}

RowPlan end_padded_stream(const CallerRow& caller, std::int64_t cp, std::int64_t padded_len) {
  CPLAB_CHECK(padded_len >= caller.len, "padded length L={} is shorter than the row S={}",
              padded_len, caller.len);
  RowPlan row;
  row.cp = cp;
  row.caller_len = caller.len;
  row.original_len = caller.packed ? -1 : caller.len;
  row.padded_len = padded_len;
  row.packed = caller.packed;
  const auto n = static_cast<std::size_t>(padded_len);
  row.caller_pos.assign(n, -1);
  row.positions.assign(n, 0);
  row.doc_ids.assign(n, 0);
  row.real.assign(n, 0);
  for (std::int64_t g = 0; g < caller.len; ++g) row.caller_pos[g] = g;

  if (!caller.packed) {
    for (std::int64_t g = 0; g < padded_len; ++g) {
      row.positions[g] = g;
      row.doc_ids[g] = g < caller.len ? 1 : 0;
      row.real[g] = g < caller.len ? 1 : 0;
    }
    return row;
  }
  // Slots a document occupies get its id; the rest stays row padding (id 0) and is filled below.
  std::vector<std::uint8_t> in_document(n, 0);
  row.cu_seqlens_padded.push_back(0);
  for (std::int64_t i = 0; i < caller.documents(); ++i) {
    const std::int64_t start = caller.starts[i];
    for (std::int64_t j = 0; j < caller.seq_lens_padded[i]; ++j) {
      row.positions[start + j] = j;
      row.doc_ids[start + j] = static_cast<std::int32_t>(i + 1);
      row.real[start + j] = j < caller.seq_lens[i] ? 1 : 0;
      in_document[start + j] = 1;
    }
    row.cu_seqlens_padded.push_back(start + caller.seq_lens_padded[i]);
  }
  for (std::size_t g = 0; g < n; ++g) {
    if (!in_document[g]) row.positions[g] = g == 0 ? 0 : row.positions[g - 1] + 1;
  }
  return row;
}

namespace {

// Each rank's slots as the layout lists them, checked as they come: every slot in the stream and
// taken once, every rank L/C of them; valid_tokens counted on the way.
class SlotDealer {
 public:
  explicit SlotDealer(RowPlan& row)
      : row_(row), taken_(static_cast<std::size_t>(row.padded_len), 0) {
    CPLAB_CHECK(row.padded_len % row.cp == 0, "padded length L={} does not divide over cp={} ranks",
                row.padded_len, row.cp);
    row.index.assign(static_cast<std::size_t>(row.cp), {});
    row.valid_tokens.assign(static_cast<std::size_t>(row.cp), 0);
  }

  void start_rank(std::size_t r) {
    rank_ = r;
    row_.index[r].reserve(static_cast<std::size_t>(row_.local_len()));
    valid_ = 0;
  }
  void take(std::int64_t g) {
    CPLAB_CHECK(g >= 0 && g < row_.padded_len && !taken_[g], "rank {} given slot {} of L={} {}",
                rank_, g, row_.padded_len,
                g >= 0 && g < row_.padded_len ? "twice" : "(out of range)");
    taken_[g] = 1;
    row_.index[rank_].push_back(g);
    valid_ += row_.real[g];
  }
  void end_rank() {
    row_.valid_tokens[rank_] = valid_;
    CPLAB_CHECK(static_cast<std::int64_t>(row_.index[rank_].size()) == row_.local_len(),
                "rank {} holds {} slots; every rank must hold L/C = {}/{} = {}", rank_,
                row_.index[rank_].size(), row_.padded_len, row_.cp, row_.local_len());
  }

 private:
  RowPlan& row_;
  std::vector<std::uint8_t> taken_;
  std::size_t rank_ = 0;
  std::int64_t valid_ = 0;
};

}  // namespace

void assign_ranges(RowPlan& row, const std::vector<std::vector<SlotRange>>& ranges) {
  CPLAB_CHECK(static_cast<std::int64_t>(ranges.size()) == row.cp, "{} rank range lists for cp={}",
              ranges.size(), row.cp);
  SlotDealer dealer(row);
  for (std::size_t r = 0; r < ranges.size(); ++r) {
    dealer.start_rank(r);
    for (const SlotRange& range : ranges[r]) {
      for (std::int64_t g = range.begin; g < range.end; ++g) dealer.take(g);
    }
    dealer.end_rank();
  }
}

void assign_round_robin(RowPlan& row, std::int64_t width) {
  CPLAB_CHECK(width >= 1 && row.padded_len % (width * row.cp) == 0,
              "runs of {} slots do not deal L={} over cp={} ranks", width, row.padded_len, row.cp);
  SlotDealer dealer(row);
  const std::int64_t period = width * row.cp;
  for (std::int64_t r = 0; r < row.cp; ++r) {
    dealer.start_rank(static_cast<std::size_t>(r));
    for (std::int64_t start = r * width; start < row.padded_len; start += period) {
      for (std::int64_t g = start; g < start + width; ++g) dealer.take(g);
    }
    dealer.end_rank();
  }
}

RowPlan identity_plan(const CallerRow& caller, std::int64_t pinned) {
  const std::int64_t len =
      resolve_padded_len("a row kept as it is (every layout at C = 1)", caller.len, pinned);
  RowPlan row = end_padded_stream(caller, 1, len);
  assign_ranges(row, {{SlotRange{0, len}}});
  return row;
}

}  // namespace cplab::reference::row_stream
