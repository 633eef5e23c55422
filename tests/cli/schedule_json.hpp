#pragma once
// `cplab schedule ARGS --json` parsed, for the schedule tests of the layouts' own files
// (layouts/ID_test.cpp); a failing run fails the calling test and gives null.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/cli.hpp"

namespace cplab::testing {

inline nlohmann::json schedule_json(const std::string& args) {
  const auto run = testsupport::run_cplab("schedule " + args + " --json");
  EXPECT_EQ(run.status, 0) << args << ": " << run.err;
  if (run.status != 0) return nullptr;
  return nlohmann::json::parse(run.out);
}

}  // namespace cplab::testing
