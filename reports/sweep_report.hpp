#pragma once
// Writers (and the one reader) of sweep reports: report.json (schema in reports/README.md, the
// contract other tools read), junit.xml for CI dashboards, summary.md for people.
#include <filesystem>
#include <string>
#include <vector>

#include "properties/results.hpp"

namespace cplab::reports {

inline constexpr const char* kSweepSchema = "cplab-sweep-report/1";

std::string to_json(const properties::SweepReport& report);  // pretty-printed, ends in a newline
properties::SweepReport from_json(
    const std::string& text);  // throws cplab::Error naming the bad field
std::string to_junit(const properties::SweepReport& report);
std::string to_markdown(const properties::SweepReport& report);
// index.html: the self-contained page of the sweep (matrix, failures drawn, environment).
std::string to_html(const properties::SweepReport& report);

// Merges the reports of one sweep's shards (same seed, cases per job, selection and shard count;
// no shard twice): results in job order, seconds summed. Throws naming the mismatch.
properties::SweepReport merge(const std::vector<properties::SweepReport>& shards);

// Writes text to path through a temporary file in the same folder and a rename.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

// Writes report.json, junit.xml, summary.md and index.html into dir (created when missing), each
// atomically; returns their paths.
std::vector<std::filesystem::path> write_all(const properties::SweepReport& report,
                                             const std::filesystem::path& dir);
// The files of write_all that cost nothing to make (report.json first, junit.xml, summary.md,
// each atomically), and no index.html: what a sweep writes before its slow start-up steps, so
// that an earlier run's report in dir is never taken for this one's.
void write_started(const properties::SweepReport& report, const std::filesystem::path& dir);

// The bytes of the regular file at path; anything else (a FIFO, a device, a folder) is refused
// without blocking, naming `what` and the kind of file. Throws cplab::Error.
std::string read_regular_file(const std::filesystem::path& path, const std::string& what);
// report.json at path, read and parsed (errors name the path).
properties::SweepReport read_json_file(const std::filesystem::path& path);
// What `cplab sweep --merge PATH` reads: PATH/report.json when PATH is a folder, else PATH.
properties::SweepReport read_report(const std::filesystem::path& path);

}  // namespace cplab::reports
