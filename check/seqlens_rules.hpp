#pragma once
// The rules of the tables a layout whose ranks hold whole local documents may hand each rank
// beside its token keys: cu_seqlens and cu_seqlens_padded (the rank's local table, or the global
// padded one, per row; fillers and repeated last entries read as TE and Automodel write them) and
// TransformerEngine's max_seqlen (at least every segment of the table the rank holds), and that a
// table one rank holds every rank holds.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "check/shard_check.hpp"
#include "core/batch.hpp"
#include "core/shard_plan.hpp"
#include "core/tensor.hpp"
#include "io/torch_tensors.hpp"

namespace cplab::check {

inline constexpr const char* kMaxSeqlen = "max_seqlen";
bool is_cu_seqlens_key(const std::string& name);  // cu_seqlens or cu_seqlens_padded

// One plan's tables against the shards, rank by rank: a rank's cu_seqlens first, then its
// max_seqlen (read against the cu_seqlens it holds). Differences go to `out`.
class SeqlensRules {
 public:
  SeqlensRules(const ShardPlan& plan, const Batch& batch, Outcome& out)
      : plan_(plan), batch_(batch), out_(out) {}

  void start_rank() { held_cu_.clear(); }
  void cu_seqlens(std::int64_t r, const std::string& name, const Tensor& value);
  void max_seqlen(std::int64_t r, const Tensor& value);
  // A table the sharder gives one rank it gives every rank: a rank without it reads its
  // neighbour's, or none (TE's attention would run on whatever the caller defaults to).
  void tables_on_every_rank(const std::vector<io::TensorFile>& shards);

 private:
  bool layout_has_tables(std::int64_t r, const std::string& name, const Tensor& value);
  void cu_row(std::int64_t r, const std::string& name, std::int64_t b,
              std::vector<std::int64_t> held);
  void cu_row_difference(std::int64_t r, const std::string& name, std::int64_t b,
                         const std::vector<std::int64_t>& held);
  void record_filler(std::int64_t value);
  bool max_seqlen_form(std::int64_t r, const Tensor& value);
  bool rows_shown() const { return plan_.rows.size() > 1; }

  const ShardPlan& plan_;
  const Batch& batch_;
  Outcome& out_;
  // The cu_seqlens tables of the rank being compared, per key and row, fillers removed.
  std::map<std::string, std::vector<std::vector<std::int64_t>>> held_cu_;
};

}  // namespace cplab::check
