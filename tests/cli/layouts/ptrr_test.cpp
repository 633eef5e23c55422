// ptrr's own checks end to end: `cplab check --layout auto` finds ptrr's block size, an option only
// ptrr reads, in the shards ptrr's reference plan gives, and ptrr's blocks in head-tail's shards
// of a long row; and the block size's bounds on the command line.
#include "layouts/ptrr.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli/check_fixture.hpp"
#include "tests/support/cli.hpp"

namespace cplab::testing {
namespace {

using testsupport::expect_refusal;

// ptrr's block size B (each B dividing a rank's tokens) is searched too, not only the default.
TEST_F(CliCheck, AutoFindsPtrrsBlockSize) {
  const Batch batch = bshd_batch(32);
  io::save_torch_batch(batch, dir.file("batch.pt"));
  LayoutSpec ptrr;
  ptrr.layout = "ptrr";
  ptrr.cp = 2;
  layouts::ptrr_block_size.set(ptrr, 2);
  const auto found_ptrr = check(reference_shards(ptrr, batch), "auto");
  EXPECT_EQ(found_ptrr.status, 0) << found_ptrr.out.dump(1) << found_ptrr.err;
  // On one causal document ptrr's blocks of 2 are magi's chunks of 2: named, or an alias of it.
  std::vector<std::string> names = {found_ptrr.out["spec"]};
  for (const auto& also : found_ptrr.out["also_explained_by"]) names.push_back(also);
  EXPECT_NE(std::find(names.begin(), names.end(), "ptrr cp=2 block_size=2"), names.end())
      << found_ptrr.out.dump(1);
}

// On one causal row ptrr's 16 blocks (B = L / 2C) are head-tail's two chunks per rank: `check
// --layout auto` on the head-tail shards of a long row names ptrr among their aliases.
TEST_F(CliCheck, AutoNamesPtrrAnAliasOfHeadTailOnALongRow) {
  const nlohmann::json aliases = head_tail_long_row_aliases();
  EXPECT_TRUE(lists(aliases, "ptrr cp=8 block_size=3465")) << aliases.dump(1);
}

// B outside [1, 16777216] is refused before any file is read, in one line, whichever side.
TEST(BadInput, CheckPtrrBlockSizeOutsideItsLimits) {
  const std::string check =
      "check --batch /nonexistent.pt --layout auto --cp 2 --shards a.pt b.pt ";
  expect_refusal(testsupport::run_cplab(check + "--block-size 0"),
                 "cplab: error: --block-size 0: ptrr block size B must be in [1, 16777216] at cp=2",
                 check + "--block-size 0");
  expect_refusal(
      testsupport::run_cplab(check + "--block-size 16777217"),
      "cplab: error: --block-size 16777217: ptrr block size B must be in [1, 16777216] at cp=2",
      check + "--block-size 16777217");
}

}  // namespace
}  // namespace cplab::testing
