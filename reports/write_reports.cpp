// Writing a sweep's report files, each atomically, so that a reader (or a sweep stopped mid-write)
// never sees half of one.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/error.hpp"
#include "core/output_file.hpp"
#include "reports/sweep_report.hpp"

namespace cplab::reports {

using properties::SweepReport;

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  write_output_file(path.string(), text);
}

namespace {

void make_folder(const std::filesystem::path& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  CPLAB_CHECK(!error && std::filesystem::is_directory(dir),
              "--out {}: cannot create the folder: {}", dir.string(),
              error ? error.message() : "a file of that name is in the way");
}

}  // namespace

void write_started(const SweepReport& report, const std::filesystem::path& dir) {
  make_folder(dir);
  // Replaced first: report.json is what tools read to decide whether a run is complete.
  write_file_atomically(dir / "report.json", to_json(report));
  write_file_atomically(dir / "junit.xml", to_junit(report));
  write_file_atomically(dir / "summary.md", to_markdown(report));
  // The page of an earlier run would show that run as this one's; write_all writes this run's.
  std::error_code error;
  std::filesystem::remove(dir / "index.html", error);
  CPLAB_CHECK(!error, "cannot replace {}: {}", (dir / "index.html").string(), error.message());
}

std::vector<std::filesystem::path> write_all(const SweepReport& report,
                                             const std::filesystem::path& dir) {
  make_folder(dir);
  const std::vector<std::pair<std::string, std::string>> files = {
      {"report.json", to_json(report)},
      {"junit.xml", to_junit(report)},
      {"summary.md", to_markdown(report)},
      {"index.html", to_html(report)}};
  std::vector<std::filesystem::path> written;
  for (const auto& [name, text] : files) {
    const std::filesystem::path path = dir / name;
    write_file_atomically(path, text);
    written.push_back(path);
  }
  return written;
}

}  // namespace cplab::reports
