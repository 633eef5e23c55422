#pragma once
// `cplab check --json` on saved shards, for the check tests of check_command_test.cpp and of the
// layouts' own files (layouts/ID_test.cpp): a packed batch of documents 5, 3, 8 and the shards a
// thd sharder writes for it at C = 2 (shard_fixtures.hpp, from SPEC's formulas), and the shards
// the reference plan of a spec gives for a batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reference/plan.hpp"
#include "reference/verbs.hpp"
#include "tests/cli/check_run.hpp"
#include "tests/cli/shard_fixtures.hpp"
#include "tests/support/cli.hpp"

namespace cplab::testing {

inline const Ints kDocs = {5, 3, 8};  // thd cp=2: padded 8, 4, 8; r0 [0,1,6,7,8,11,12,13,18,19]
inline constexpr std::int64_t kCp = 2;

class CliCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!io::torch_available()) GTEST_SKIP() << "skipped: this cplab reads no torch.save files";
    io::save_torch_batch(packed_batch(kDocs), dir.file("batch.pt"));
    clean = thd_shards(kDocs, kCp);
  }

  // Writes the shards and runs `cplab check --json` on them.
  CheckRun check(const std::vector<ShardDict>& shards, const std::string& layout,
                 const std::string& extra = "", std::int64_t cp = kCp) {
    std::string paths;
    for (std::size_t r = 0; r < shards.size(); ++r) {
      const std::string path = dir.file("rank" + std::to_string(r) + ".pt");
      io::save_torch_tensors(shards[r], path);
      paths += " " + path;
    }
    const auto run = testsupport::run_cplab("check --json --batch " + dir.file("batch.pt") +
                                            " --shards" + paths + " --cp " + std::to_string(cp) +
                                            " --layout " + layout + " " + extra);
    CheckRun out{run.status, nlohmann::json::object(), run.err};
    if (!run.out.empty()) out.out = nlohmann::json::parse(run.out);
    return out;
  }

  // What `check --layout auto` names besides head-tail on the head-tail shards of one long
  // causal row (S = 55440, C = 8): the layouts whose maps on such a row are head-tail's, each as
  // "NAME cp=8 ..." (each layout's own file looks for itself).
  nlohmann::json head_tail_long_row_aliases() {
    constexpr std::int64_t kSeq = 55440, kRanks = 8;
    io::save_torch_batch(bshd_batch(kSeq), dir.file("batch.pt"));
    const auto run = check(head_tail_zero_pad_shards(kSeq, kRanks), "auto", "", kRanks);
    EXPECT_EQ(run.status, 0) << run.err;
    return run.out.value("also_explained_by", nlohmann::json::array());
  }

  testsupport::ScratchDir dir;
  ThdShards clean;
};

// Whether a JSON array of specs holds `spec`.
inline bool lists(const nlohmann::json& specs, const std::string& spec) {
  return std::find(specs.begin(), specs.end(), nlohmann::json(spec)) != specs.end();
}

// The shards the reference plan of `spec` gives for a BSHD batch, one dict per rank.
inline std::vector<ShardDict> reference_shards(const LayoutSpec& spec, const Batch& batch) {
  std::vector<ShardDict> out;
  const auto sharded = reference::shard_batch(reference::plan(spec, batch), batch);
  for (const Batch& local : sharded[0]) {
    ShardDict dict;
    for (const auto& [key, field] : local.tokens) dict[key] = field.value;
    out.push_back(std::move(dict));
  }
  return out;
}

}  // namespace cplab::testing
