#pragma once
// Helpers of the `cplab layout` tests (cli_layout_test.cpp and the layouts' own files): the JSON
// of one run and the index maps it prints.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/reference/support.hpp"
#include "tests/support/cli.hpp"

namespace cplab::testing {

// `cplab layout --json ARGS`, which must succeed.
inline nlohmann::json layout_json(const std::string& args) {
  const testsupport::CliRun run = testsupport::run_cplab("layout --json " + args);
  EXPECT_EQ(run.status, 0) << args << ": " << run.err;
  return nlohmann::json::parse(run.out);
}

// Every rank's index map, in rank order.
inline std::vector<Ints> indices(const nlohmann::json& out) {
  std::vector<Ints> all;
  for (const auto& rank : out["ranks"]) all.push_back(rank["indices"].get<Ints>());
  return all;
}

}  // namespace cplab::testing
