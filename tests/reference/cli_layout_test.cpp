// `cplab layout` end to end: bad arguments exit 2 with one line on stderr. The JSON of each
// layout's worked examples (SPEC §9) and its own refusals are in
// tests/reference/layouts/ID_test.cpp.
#include "support.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::testing {
namespace {

using testsupport::expect_usage_error;
using testsupport::run_cplab;

// Argument plumbing, whatever the layout: a plain one (it takes BSHD and packed rows).
TEST(CliLayout, BadArgumentsExit2WithOneLine) {
  const std::string layout = "--layout " + testsupport::a_plain_layout() + " ";
  const std::vector<std::pair<std::string, std::string>> cases{
      {layout + "--cp 0 --seq-len 8", "cp=0"},
      {layout + "--cp 2", "neither"},
      {layout + "--cp 2 --seq-len 8 --doc-lens 4,4", "both"},
      {"--layout zigzag --cp 2 --seq-len 8", "known layouts"},
      {layout + "--cp 2 --seq-len=-4", "-4"},
      {layout + "--cp 2 --doc-lens 4,-2", "negative length -2"},
      {layout + "--cp 2 --doc-lens 4,x,2", "'x' is not an integer"},
      {layout + "--cp 2 --doc-lens 4,,2", "is not an integer"},
      {layout + "--cp two --seq-len 8", "--cp"},
      {layout + "--cp -9223372036854775809 --seq-len 16",
       "--cp: Value -9223372036854775809 is outside"},
  };
  for (const auto& [args, part] : cases) {
    expect_usage_error(run_cplab("layout " + args), {part}, args);
  }
}

}  // namespace
}  // namespace cplab::testing
