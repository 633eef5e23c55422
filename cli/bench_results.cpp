#include "cli/bench_results.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "reference/types/error.hpp"

namespace cplab::cli {
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

void read_series(const nlohmann::json& doc, const std::string& path, BenchFile& file) {
  for (const nlohmann::json& b : doc["benchmarks"]) {
    CPLAB_CHECK(b.is_object() && b.contains("name") && b["name"].is_string(),
                "{}: a benchmark entry without a name", path);
    if (b.value("run_type", "iteration") != "iteration") continue;  // aggregates, complexity fits
    const std::string name = b.contains("run_name") && b["run_name"].is_string()
                                 ? b["run_name"].get<std::string>()
                                 : b["name"].get<std::string>();
    BenchSeries* s = nullptr;
    for (BenchSeries& existing : file.series) {
      if (existing.name == name) s = &existing;
    }
    if (s == nullptr) {
      file.series.emplace_back();
      file.series.back().name = name;
      s = &file.series.back();
    }
    if (b.value("error_occurred", false)) {
      const std::string message = b.value("error_message", "");
      if (message.rfind("skipped", 0) == 0) {
        s->skipped = true;
      } else {
        s->error = message.empty() ? "failed" : message;
      }
      continue;
    }
    CPLAB_CHECK(b.contains("real_time") && b["real_time"].is_number(),
                "{}: benchmark '{}' has no real_time", path, name);
    s->time_ns.push_back(b["real_time"].get<double>() *
                         time_unit_ns(b.value("time_unit", "ns"), path, name));
    if (b.contains("ratio_to_baseline")) {
      CPLAB_CHECK(b["ratio_to_baseline"].is_number(),
                  "{}: benchmark '{}' has a ratio_to_baseline that is not a number", path, name);
      s->ratio.push_back(b["ratio_to_baseline"].get<double>());
    }
  }
}

}  // namespace

const BenchSeries* BenchFile::find(const std::string& name) const {
  for (const BenchSeries& s : series) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

BenchFile read_bench_file(const std::string& path) {
  // A folder opens as a stream on Linux and fails only when read, as no JSON error.
  std::error_code ec;
  CPLAB_CHECK(!std::filesystem::is_directory(path, ec), "{}: is a folder, not a JSON file", path);
  std::ifstream in(path);
  CPLAB_CHECK(in.good(), "{}: cannot open", path);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    CPLAB_FAIL("{}: not JSON ({})", path, e.what());
  }
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

}  // namespace cplab::cli
