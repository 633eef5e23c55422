// report.json: writer and reader (the reader exists for merging sharded sweeps).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "core/error.hpp"
#include "reports/sweep_report.hpp"

namespace cplab::reports {

// Ordered, so that report.json reads in the order reports/README.md documents it.
using json = nlohmann::ordered_json;
using properties::JobResult;
using properties::SweepReport;

namespace {

json or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json result_json(const JobResult& r) {
  return {{"job", r.job},
          {"property", r.property},
          {"layout", r.layout},
          {"impl", r.impl},
          {"status", properties::job_status_name(r.status)},
          {"cases", r.cases},
          {"passed", r.passed},
          {"failed", r.failed},
          {"shrinks", r.shrinks},
          {"seed", r.seed},
          {"seconds", r.seconds},
          {"counterexample", or_null(r.counterexample)},
          {"message", or_null(r.message)},
          {"replay", or_null(r.replay)},
          {"coverage", r.coverage},
          {"combinations", r.combinations},
          {"missing_combinations", r.missing_combinations()}};
}

// Reads key from j as T, naming the key (and its place) when it is missing or of the wrong type.
bool fits_int64(const json& value) {
  if (value.is_number_unsigned())
    return value.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX);
  return value.is_number_integer();
}

template <typename T>
T field(const json& j, const char* key, const std::string& where) {
  CPLAB_CHECK(j.is_object() && j.contains(key), "sweep report: {} has no '{}'", where, key);
  const json& value = j.at(key);
  // nlohmann converts a float to an integer with a plain cast (undefined out of range) and an
  // unsigned to a signed one modulo 2^64: integers must be integers, and in range.
  if constexpr (std::is_same_v<T, std::int64_t>) {
    CPLAB_CHECK(fits_int64(value), "sweep report: {} field '{}' is not a 64-bit integer: {}", where,
                key, value.dump());
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    CPLAB_CHECK(
        value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0),
        "sweep report: {} field '{}' is not an unsigned 64-bit integer: {}", where, key,
        value.dump());
  } else if constexpr (std::is_same_v<T, double>) {
    CPLAB_CHECK(value.is_number(), "sweep report: {} field '{}' is not a number: {}", where, key,
                value.dump());
  } else if constexpr (std::is_same_v<T, bool>) {
    CPLAB_CHECK(value.is_boolean(), "sweep report: {} field '{}' is not true or false: {}", where,
                key, value.dump());
  } else if constexpr (std::is_same_v<T, std::map<std::string, std::int64_t>>) {
    CPLAB_CHECK(value.is_object(), "sweep report: {} field '{}' is not an object", where, key);
    T out;
    for (const auto& [name, count] : value.items()) {
      CPLAB_CHECK(fits_int64(count),
                  "sweep report: {} field '{}' entry '{}' is not a 64-bit integer", where, key,
                  name);
      out[name] = count.template get<std::int64_t>();
    }
    return out;
  }
  try {
    return j.at(key).get<T>();
  } catch (const json::exception& e) {
    CPLAB_FAIL("sweep report: {} field '{}': {}", where, key, e.what());
  }
}

std::string nullable(const json& j, const char* key, const std::string& where) {
  CPLAB_CHECK(j.contains(key), "sweep report: {} has no '{}'", where, key);
  return j.at(key).is_null() ? std::string() : field<std::string>(j, key, where);
}

JobResult result_from(const json& j, std::size_t i) {
  const std::string where = "results[" + std::to_string(i) + "]";
  JobResult r;
  r.job = field<std::int64_t>(j, "job", where);
  r.property = field<std::string>(j, "property", where);
  r.layout = field<std::string>(j, "layout", where);
  r.impl = field<std::string>(j, "impl", where);
  r.status = properties::parse_job_status(field<std::string>(j, "status", where));
  r.cases = field<std::int64_t>(j, "cases", where);
  r.passed = field<std::int64_t>(j, "passed", where);
  r.failed = field<std::int64_t>(j, "failed", where);
  r.shrinks = field<std::int64_t>(j, "shrinks", where);
  r.seed = field<std::uint64_t>(j, "seed", where);
  r.seconds = field<double>(j, "seconds", where);
  r.counterexample = nullable(j, "counterexample", where);
  r.message = nullable(j, "message", where);
  r.replay = nullable(j, "replay", where);
  r.coverage = field<std::map<std::string, std::int64_t>>(j, "coverage", where);
  // Added later: reports written before it have none.
  if (j.contains("combinations"))
    r.combinations = field<std::map<std::string, std::int64_t>>(j, "combinations", where);
  return r;
}

// The sweep's coverage at a glance: declared combinations over every job, drawn, missing.
json combinations_json(const SweepReport& report) {
  std::int64_t declared = 0, missing = 0;
  for (const JobResult& r : report.results) {
    declared += static_cast<std::int64_t>(r.combinations.size());
    missing += r.missing_combinations();
  }
  return {{"declared", declared}, {"drawn", declared - missing}, {"missing", missing}};
}

}  // namespace

std::string to_json(const SweepReport& report) {
  json shards = json::array();
  for (const auto& s : report.shards) shards.push_back({{"index", s.index}, {"count", s.count}});
  json results = json::array();
  for (const JobResult& r : report.results) results.push_back(result_json(r));
  json by_property = json::array();
  for (const properties::PropertyTime& t : report.property_times()) {
    by_property.push_back({{"property", t.property},
                           {"jobs", t.jobs},
                           {"cases", t.cases},
                           {"seconds", t.seconds},
                           {"cases_per_second", t.cases_per_second},
                           {"share", t.share}});
  }
  const json doc = {
      {"schema", kSweepSchema},
      {"seed", report.seed},
      {"cases_per_job", report.cases_per_job},
      {"shards", shards},
      {"selection",
       {{"layouts", report.layouts},
        {"cp", report.cps},
        {"impls", report.impls},
        {"properties", report.properties},
        {"masks", report.masks}}},
      {"time_budget_seconds", report.time_budget_seconds},
      {"seconds", report.seconds},
      {"cases", report.total_cases()},
      {"cases_per_second", report.cases_per_second()},
      {"by_property", by_property},
      {"totals",
       {{"jobs", report.results.size()},
        {"passed", report.count(properties::JobStatus::passed)},
        {"failed", report.count(properties::JobStatus::failed)},
        {"skipped", report.count(properties::JobStatus::skipped)}}},
      {"combinations", combinations_json(report)},
      {"complete", report.complete},
      {"results", results},
  };
  return doc.dump(2) + "\n";
}

SweepReport from_json(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    CPLAB_FAIL("sweep report is not JSON: {}", e.what());
  }
  const std::string schema = field<std::string>(doc, "schema", "the report");
  CPLAB_CHECK(schema == kSweepSchema, "sweep report has schema '{}'; this cplab reads '{}'", schema,
              kSweepSchema);
  SweepReport report;
  report.seed = field<std::uint64_t>(doc, "seed", "the report");
  report.cases_per_job = field<std::int64_t>(doc, "cases_per_job", "the report");
  const json shards = field<json>(doc, "shards", "the report");
  CPLAB_CHECK(shards.is_array() && !shards.empty(),
              "sweep report: 'shards' must list at least one {{index, count}}");
  for (const json& s : shards) {
    report.shards.push_back(
        {field<std::int64_t>(s, "index", "a shard"), field<std::int64_t>(s, "count", "a shard")});
  }
  const json selection = field<json>(doc, "selection", "the report");
  report.layouts = field<std::vector<std::string>>(selection, "layouts", "selection");
  report.cps = field<std::vector<std::string>>(selection, "cp", "selection");
  report.impls = field<std::vector<std::string>>(selection, "impls", "selection");
  report.properties = field<std::vector<std::string>>(selection, "properties", "selection");
  // Reports written before --masks existed drew every family.
  if (selection.contains("masks"))
    report.masks = field<std::vector<std::string>>(selection, "masks", "selection");
  report.time_budget_seconds = field<double>(doc, "time_budget_seconds", "the report");
  report.seconds = field<double>(doc, "seconds", "the report");
  // Reports written before "complete" existed were written once, at the end of their sweep.
  report.complete = doc.contains("complete") ? field<bool>(doc, "complete", "the report") : true;
  const json results = field<json>(doc, "results", "the report");
  CPLAB_CHECK(results.is_array(), "sweep report: 'results' is not an array");
  for (std::size_t i = 0; i < results.size(); ++i)
    report.results.push_back(result_from(results[i], i));
  return report;
}

}  // namespace cplab::reports
