// ptrr's own case key: its block size B (block=) is printed last, and only when not the default;
// a B out of its range or not a number is an error naming it.
#include "layouts/ptrr.hpp"

#include <gtest/gtest.h>

#include "properties/case.hpp"
#include "tests/properties/case_errors.hpp"

namespace cplab::properties {
namespace {

TEST(CaseFormat, BlockSizeIsPrintedLastWhenNotTheDefault) {
  const Case c = parse_case("ptrr cp=2 docs=4,8,4 block=1");
  EXPECT_EQ(layouts::ptrr_block_size.of(c.spec), 1);
  const std::string line = print_case(c);
  EXPECT_EQ(line.substr(line.size() - 8), " block=1") << line;
  EXPECT_EQ(parse_case(line), c);
  EXPECT_EQ(print_case(parse_case("ptrr cp=2 docs=4,8,4")).find("block="), std::string::npos);
  expect_error("ptrr cp=2 docs=4,8,4 block=0", "ptrr block size B must be in [1, 16777216]");
  expect_error("ptrr cp=2 docs=4,8,4 block=x", "case key 'block'");
}

}  // namespace
}  // namespace cplab::properties
