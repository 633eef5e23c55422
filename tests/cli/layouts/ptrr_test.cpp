// ptrr's own checks end to end: `cplab check --layout auto` finds ptrr's block size, an option only
// ptrr reads, in the shards ptrr's reference plan gives.
#include "layouts/ptrr.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli/check_fixture.hpp"

namespace cplab::testing {
namespace {

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

}  // namespace
}  // namespace cplab::testing
