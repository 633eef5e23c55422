// Report folders from the fuzzer, read as `cplab sweep --merge DIR...` reads them: up to three
// shards, each a folder whose report.json is a regular file of fuzzed bytes, or something a
// hostile user might leave there instead (a FIFO with no writer, a folder, a link to a FIFO,
// nothing), or the file named directly. Every read must return or refuse with cplab::Error at
// once, never wait (a FIFO once blocked the merge forever; libFuzzer's -timeout catches a wait);
// only regular files are read; what reads merges or is refused; a merged report written to a
// folder reads back the same.
//
// Input: byte 0 picks the number of shards, then one byte per shard its kind; the rest is the
// shards' report.json texts, separated by NUL bytes.
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "reports/sweep_report.hpp"

namespace {

namespace fs = std::filesystem;

enum class Kind : std::uint8_t { file_in_folder, file, fifo, folder, link_to_fifo, missing, count };

// One scratch folder per fuzzing process, emptied for every input.
const fs::path& scratch() {
  static const fs::path root =
      fs::temp_directory_path() / ("cplab_fuzz_merge_folders." + std::to_string(::getpid()));
  return root;
}

void write(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Lays shard i out as `kind` and returns the path --merge would be given.
fs::path lay_out(std::size_t i, Kind kind, const std::string& text) {
  const fs::path folder = scratch() / ("s" + std::to_string(i));
  fs::create_directories(folder);
  const fs::path report = folder / "report.json";
  switch (kind) {
    case Kind::file_in_folder:
      write(report, text);
      return folder;
    case Kind::file:
      write(report, text);
      return report;
    case Kind::fifo:
      if (::mkfifo(report.c_str(), 0600) != 0) __builtin_trap();
      return folder;
    case Kind::folder:
      fs::create_directories(report);
      return folder;
    case Kind::link_to_fifo:
      if (::mkfifo((folder / "pipe").c_str(), 0600) != 0) __builtin_trap();
      fs::create_symlink(folder / "pipe", report);
      return folder;
    case Kind::missing:
    case Kind::count:
      break;
  }
  return folder;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t shards = 1 + data[0] % 3;
  if (size < 1 + shards) return 0;
  std::error_code error;
  fs::remove_all(scratch(), error);
  fs::create_directories(scratch());
  const std::string texts(reinterpret_cast<const char*>(data + 1 + shards), size - 1 - shards);
  std::vector<cplab::properties::SweepReport> reports;
  bool refused = false;
  std::size_t start = 0;
  for (std::size_t i = 0; i < shards; ++i) {
    const auto kind = static_cast<Kind>(data[1 + i] % static_cast<std::uint8_t>(Kind::count));
    std::size_t end = texts.find('\0', start);
    if (end == std::string::npos) end = texts.size();
    const std::string text = start <= texts.size() ? texts.substr(start, end - start) : "";
    start = end + 1;
    const fs::path path = lay_out(i, kind, text);
    try {
      reports.push_back(cplab::reports::read_report(path));
      // Only a regular file is ever read.
      if (kind != Kind::file_in_folder && kind != Kind::file) __builtin_trap();
    } catch (const cplab::Error&) {
      refused = true;
    }
  }
  if (!refused) {
    try {
      const cplab::properties::SweepReport merged = cplab::reports::merge(reports);
      const std::string json = cplab::reports::to_json(merged);
      (void)cplab::reports::to_junit(merged);
      (void)cplab::reports::to_markdown(merged);
      const fs::path out = scratch() / "merged";
      fs::create_directories(out);
      write(out / "report.json", json);
      if (cplab::reports::to_json(cplab::reports::read_report(out)) != json) __builtin_trap();
    } catch (const cplab::Error&) {
    }
  }
  fs::remove_all(scratch(), error);
  return 0;
}
