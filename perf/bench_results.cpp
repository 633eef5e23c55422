#include "perf/bench_results.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "perf/bench_json.hpp"

namespace cplab::perf {
namespace {

double time_unit_ns(const std::string& unit, const std::string& path, const std::string& name) {
  if (unit == "ns") return 1.0;
  if (unit == "us") return 1e3;
  if (unit == "ms") return 1e6;
  if (unit == "s") return 1e9;
  CPLAB_FAIL("{}: benchmark '{}' has time unit '{}' (ns, us, ms or s expected)", path, name, unit);
}

// The context fields cplab reads back (date, cplab.commit, ...) must have the types it reads them
// as: a file edited by hand or by another tool is refused here, not deep inside a comparison.
void check_context(const nlohmann::json& context, const std::string& path) {
  CPLAB_CHECK(context.is_object(), "{}: \"context\" is not an object", path);
  for (const char* key : {"date", "host_name", "executable"}) {
    CPLAB_CHECK(!context.contains(key) || context[key].is_string(),
                "{}: context.{} is not a string", path, key);
  }
  if (!context.contains("cplab")) return;
  const nlohmann::json& cplab = context["cplab"];
  CPLAB_CHECK(cplab.is_object(), "{}: context.cplab is not an object", path);
  for (const char* key :
       {"commit", "subject", "compiler", "build_type", "flags", "cpu", "gpu", "cuda"}) {
    CPLAB_CHECK(!cplab.contains(key) || cplab[key].is_string(),
                "{}: context.cplab.{} is not a string", path, key);
  }
}

// A number field of an entry: absent → nullopt with present = false; null (missing) → nullopt.
std::optional<double> number(const nlohmann::json& b, const char* key, const std::string& path,
                             const std::string& name, bool& present) {
  present = b.contains(key);
  if (!present || b[key].is_null()) return std::nullopt;
  CPLAB_CHECK(b[key].is_number(), "{}: benchmark '{}' has a {} that is not a number", path, name,
              key);
  const double v = b[key].get<double>();
  if (!std::isfinite(v)) return std::nullopt;  // cannot come from JSON text; kept for safety
  return v;
}

void read_series(const nlohmann::json& doc, const std::string& path, BenchFile& file) {
  for (const nlohmann::json& b : doc["benchmarks"]) {
    CPLAB_CHECK(b.is_object() && b.contains("name") && b["name"].is_string(),
                "{}: a benchmark entry without a name", path);
    if (b.value("run_type", "iteration") != "iteration") continue;  // aggregates, complexity fits
    const std::string name = b.contains("run_name") && b["run_name"].is_string()
                                 ? b["run_name"].get<std::string>()
                                 : b["name"].get<std::string>();
    const std::size_t at = file.index.insert(name, file.series.size());
    if (at == file.series.size()) {
      file.series.emplace_back();
      file.series.back().name = name;
    }
    BenchSeries& s = file.series[at];
    if (b.value("error_occurred", false)) {
      const std::string message = b.value("error_message", "");
      if (message.rfind("skipped", 0) == 0) {
        s.skipped = true;
      } else {
        s.error = message.empty() ? "failed" : message;
      }
      continue;
    }
    ++s.repetitions;
    bool present = false;
    const std::optional<double> time = number(b, "real_time", path, name, present);
    CPLAB_CHECK(present, "{}: benchmark '{}' has no real_time", path, name);
    const std::string unit = b.contains("time_unit") && b["time_unit"].is_null()
                                 ? "ns"
                                 : b.value("time_unit", std::string("ns"));
    if (time) {
      s.time_ns.push_back(*time * time_unit_ns(unit, path, name));
    } else {
      ++s.missing;
    }
    const std::optional<double> ratio = number(b, "ratio_to_baseline", path, name, present);
    if (!present) {
      s.reports_ratio = false;
    } else if (ratio) {
      s.ratio.push_back(*ratio);
    } else {
      ++s.missing;
    }
  }
}

}  // namespace

const BenchSeries* BenchFile::find(const std::string& name) const {
  const std::optional<std::size_t> at = index.find(name);
  return at ? &series[*at] : nullptr;
}

BenchFile read_bench_file(const std::string& path) {
  return read_bench_text(read_text_file(path, "JSON file"), path);
}

BenchFile read_bench_text(const std::string& text, const std::string& path) {
  BenchJson parsed = parse_bench_json(text);
  CPLAB_CHECK(parsed.complete, "{}: not JSON ({}; byte {})", path, parsed.error, parsed.offset);
  const nlohmann::json& doc = parsed.doc;
  CPLAB_CHECK(doc.is_object() && doc.contains("benchmarks") && doc["benchmarks"].is_array(),
              "{}: not Google Benchmark JSON (no \"benchmarks\" array)", path);
  BenchFile file;
  file.path = path;
  file.context = doc.value("context", nlohmann::json::object());
  check_context(file.context, path);
  try {
    read_series(doc, path, file);
  } catch (const nlohmann::json::exception& e) {
    // A field of the wrong type (a string run_type, a numeric error_message, ...).
    CPLAB_FAIL("{}: not Google Benchmark JSON ({})", path, e.what());
  }
  file.missing = missing_values(doc);
  return file;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

std::string describe_context(const nlohmann::json& context) {
  const nlohmann::json cplab = context.value("cplab", nlohmann::json::object());
  return fmt::format("commit {} · {} · {} · {}", cplab.value("commit", "?"),
                     cplab.value("compiler", "?"), cplab.value("cpu", "?"),
                     context.value("date", "?"));
}

std::string describe_missing(const BenchFile& file) {
  if (file.missing.empty()) return "";
  constexpr std::size_t kListed = 4;
  std::string listed;
  for (std::size_t i = 0; i < file.missing.size() && i < kListed; ++i)
    listed += (i ? ", " : "") + file.missing[i];
  return fmt::format(
      "{}: {} {} read as missing: {}{}", file.path, file.missing.size(),
      file.missing.size() == 1 ? "value is not a finite number (NaN, Infinity or null),"
                               : "values are not finite numbers (NaN, Infinity or null),",
      listed,
      file.missing.size() > kListed ? fmt::format(" and {} more", file.missing.size() - kListed)
                                    : "");
}

}  // namespace cplab::perf
