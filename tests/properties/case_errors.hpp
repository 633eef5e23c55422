#pragma once
// A case line parse_case refuses, and the words its error must hold: shared by the case format's
// tests and the layouts' own (tests/properties/layouts/ID_test.cpp) for their options' keys.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "properties/case.hpp"

namespace cplab::properties {

inline void expect_error(const std::string& line, const std::string& names) {
  try {
    parse_case(line);
    ADD_FAILURE() << "parsed: " << line;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
  }
}

}  // namespace cplab::properties
