#pragma once
// Google Benchmark JSON as text, read by one rule for numbers that are not finite: Google
// Benchmark writes such a double as a bare NaN or Infinity (-NaN, -Infinity; nan and inf from
// other writers), which no JSON reader takes. Each is read as null, and a null number is a missing
// value: `bench compare` and `bench history` leave it out and say so.
// A text that still does not parse is read up to the failure: the entries of "benchmarks" that
// were whole before it are kept, and the failure says where it is and which entry it is inside.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace cplab::perf {

struct BenchJson {
  nlohmann::json doc;          // the document; on a failure, what was whole before it
  bool complete = true;        // false: the text does not parse (error, offset, inside)
  std::string error;           // the JSON reader's message
  std::size_t offset = 0;      // byte offset of the failure in the text
  std::string inside;          // the name of the benchmark entry it fell inside ("" outside one)
  std::size_t whole = 0;       // benchmark entries whole before the failure (all when complete)
  std::size_t non_finite = 0;  // NaN / Infinity tokens read as null
};

BenchJson parse_bench_json(std::string_view text);

// "NAME: FIELD" for every field of a benchmark entry that is null (missing), in the file's order.
std::vector<std::string> missing_values(const nlohmann::json& doc);

}  // namespace cplab::perf
