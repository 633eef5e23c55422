#pragma once
// `cplab check`'s outcome in a test (exit status, its JSON or text, stderr), and the lookup every
// check test makes in it.
#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace cplab::testing {

struct CheckRun {
  int status = -1;
  nlohmann::json out;  // the JSON object, or the text as a JSON string
  std::string err;
};

// The first difference of rank `rank`, key `key`; fails the test when there is none.
inline nlohmann::json first_difference(const CheckRun& run, std::int64_t rank,
                                       const std::string& key) {
  for (const auto& d : run.out["differences"]) {
    if (d["rank"] == rank && d["key"] == key) return d;
  }
  ADD_FAILURE() << "no difference for rank " << rank << " " << key << " in " << run.out.dump(1)
                << run.err;
  return nlohmann::json::object();
}

}  // namespace cplab::testing
