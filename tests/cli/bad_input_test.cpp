// The bad-input catalogue: every class of malformed or extreme input, end to end through the built
// executable, with the one line it must print and the exit status of the contract (0 ok, 1 a check
// failed, 2 bad input or usage, 3 an internal error). Values on both sides of every limit that is
// cheap to reach from the command line; the expensive accepted sides are in limits_test.cpp.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "core/layout_option.hpp"
#include "io/npy.hpp"
#include "reference/plan.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::clitest {
namespace {

using testsupport::CliRun;
using testsupport::expect_refusal;
using testsupport::fresh_dir;
using testsupport::line_count;
using testsupport::refusal_line;
using testsupport::run_cplab;
using testsupport::ScratchDir;
using testsupport::slurp;

struct Refusal {
  std::string args;
  std::string line;
  int status = 2;
};

void expect_all(const std::vector<Refusal>& refusals) {
  for (const Refusal& r : refusals) expect_refusal(run_cplab(r.args), r.line, r.args, r.status);
}

// The layout that exists only with CP off: its cases are the cheapest to run (one rank).
std::string a_cp_off_layout() {
  return testsupport::first_layout(
      "a CP-off layout", [](const sim::LayoutDescriptor& layout) { return layout.cp_off; });
}

// A layout that takes packed rows (--doc-lens, docs=).
std::string a_packed_layout() {
  return testsupport::first_layout("a layout that shards at C > 1",
                                   [](const sim::LayoutDescriptor& layout) {
                                     return !layout.cp_off;  // every layout takes packed rows
                                   });
}

// A sweep selection of one job.
std::string one_job() {
  return "--layouts " + a_cp_off_layout() +
         " --impl sim --properties shard_then_gather_is_identity";
}

// Every declared option's flag, on its own layout: a value either side of its range at C = 2, not
// an integer, NaN and past int64 are each one line naming the flag, and exit 2; the range's ends
// are taken.
TEST(BadInput, EveryOptionFlagOutsideItsRange) {
  int flags = 0;
  for (const layouts::LayoutDeclaration& d : layouts::declarations()) {
    for (const layouts::LayoutOption* o : d.options) {
      if (o->is_switch) continue;
      ++flags;
      const std::string base =
          fmt::format("layout --layout {} --cp 2 --seq-len 8 {} ", d.name, o->flag);
      const std::int64_t most = o->most_at(2);
      for (const std::string& bad :
           {std::to_string(o->least - 1), std::to_string(most + 1), std::string("nan"),
            std::string("1e3"), std::string("99999999999999999999")}) {
        const CliRun run = run_cplab(base + "'" + bad + "'");
        EXPECT_EQ(run.status, 2) << base << bad << ": " << run.err;
        EXPECT_TRUE(run.out.empty()) << base << bad;
        EXPECT_EQ(line_count(run.err), 1) << base << bad << ": " << run.err;
        EXPECT_NE(run.err.find(o->flag), std::string::npos) << base << bad << ": " << run.err;
      }
      // The least value is taken (some rows of a layout refuse it, never with a crash).
      const CliRun least = run_cplab(base + std::to_string(o->least));
      EXPECT_TRUE(least.status == 0 || least.status == 2) << base << o->least << ": " << least.err;
      EXPECT_LE(line_count(least.err), 1) << least.err;
    }
  }
  EXPECT_GE(flags, 4) << "too few option flags declared";
}

TEST(BadInput, LayoutSizesAndOverflow) {
  const std::string packed = "layout --layout " + a_packed_layout() + " --cp 2 ";
  const std::string plain = "layout --layout " + testsupport::a_plain_layout() + " ";
  // An option bounded by the padding limit alone (kMaxPadUnit / C), with no automatic value.
  const layouts::LayoutOption* bounded = nullptr;
  std::string owner;
  for (const layouts::LayoutDeclaration& d : layouts::declarations()) {
    for (const layouts::LayoutOption* o : d.options) {
      if (bounded == nullptr && !o->is_switch && o->most == nullptr && o->automatic == nullptr) {
        bounded = o;
        owner = d.name;
      }
    }
  }
  ASSERT_NE(bounded, nullptr) << "no option bounded by the padding limit alone";
  const std::string option = "layout --layout " + owner + " --cp 2 " + bounded->flag + " ";
  const auto outside = [&](const std::string& value) {
    return fmt::format("cplab: error: {} {}: {} must be in [{}, {}] at cp=2", bounded->flag, value,
                       bounded->what, bounded->least, bounded->most_at(2));
  };
  expect_all({
      {packed + "--doc-lens 9223372036854775807,9223372036854775807,3",
       "cplab: error: --doc-lens: document 0 takes the row past 16777216 tokens (cplab's limit "
       "per row)"},
      {packed + "--doc-lens 16777216,1",
       "cplab: error: --doc-lens: document 1 takes the row past 16777216 tokens (cplab's limit "
       "per row)"},
      {packed + "--doc-lens 5,-3",
       "cplab: error: --doc-lens '5,-3': document 1 has negative length -3"},
      {packed + "--doc-lens 5,99999999999999999999",
       "cplab: error: --doc-lens '5,99999999999999999999': '99999999999999999999' is not an "
       "integer (expected a list like 5,3,8)"},
      {plain + "--cp 0 --seq-len 8", "cplab: error: CP size must be at least 1, got cp=0"},
      {plain + "--cp 1025 --seq-len 8", "cplab: error: CP size must be in [1, 1024], got cp=1025"},
      {plain + "--cp 2 --seq-len -1", "cplab: error: --seq-len must be non-negative, got -1"},
      {plain + "--cp 2 --seq-len 16777217",
       "cplab: error: a row of S=16777217 tokens is outside [0, 16777216] (cplab's limit per "
       "row)"},
      {option + "9223372036854775807 --seq-len 5", outside("9223372036854775807")},
      {option + std::to_string(bounded->most_at(2) + 1) + " --seq-len 5",
       outside(std::to_string(bounded->most_at(2) + 1))},
  });
  // Just inside: C = 1024 and a doc list summing to exactly the row limit's neighbourhood.
  const CliRun ok = run_cplab(plain + "--cp 1024 --seq-len 2048 --json");
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out).at("ranks").size(), 1024u);
}

TEST(BadInput, ExplainAndEveryLayoutBoundTheRowFirst) {
  // S near 2^63 once wrapped the padded length (L=-9223372036854775808); an automatic option's
  // value of such a row is its layout's own file's (layouts/ID_test.cpp).
  const std::string too_long =
      "cplab: error: a row of S=9223372036854775807 tokens is outside [0, 16777216] (cplab's "
      "limit per row)";
  expect_all({
      {"explain --layout " + testsupport::a_plain_layout() +
           " --cp 2 --seq-len 9223372036854775807",
       too_long},
      {"explain --layout all --cp 2 --seq-len 9223372036854775807", too_long},
      {"layout --layout all --cp 2 --seq-len 9223372036854775807", too_long},
      {"explain --layout all --cp 2 --doc-lens 9223372036854775807,9223372036854775807,3",
       "cplab: error: --doc-lens: document 0 takes the row past 16777216 tokens (cplab's limit "
       "per row)"},
      {"explain --layout all --cp 1025 --seq-len 4",
       "cplab: error: CP size must be in [1, 1024], got cp=1025"},
  });
}

TEST(BadInput, MutantsAndProcessArguments) {
  expect_all({
      {"mutants --seed -1 --only none",
       "cplab: error: --seed '-1' is not an unsigned 64-bit integer (0 to 18446744073709551615)"},
      {"mutants --cases 10000001", "cplab: --cases: Value 10000001 not in range 1 to 10000000"},
      {"mutants --cases 4294967296", "cplab: --cases: Value 4294967296 not in range 1 to 10000000"},
      // A wait of 2^63 ms once wrapped the deadline: every wait timed out at once.
      {"sweep --rank-timeout-ms 9223372036854775807 --impl sim-mpi",
       "cplab: --rank-timeout-ms: Value 9223372036854775807 not in range 1 to 86400000"},
      {"sweep --rank-timeout-ms 86400001 --impl sim-mpi",
       "cplab: --rank-timeout-ms: Value 86400001 not in range 1 to 86400000"},
  });
}

TEST(BadInput, MutantNamesAreKnownBeforeTheHeader) {
  // The header once reached stdout before an unknown --only name was refused.
  for (const std::string mpi : {"", " --mpi"}) {
    const CliRun run = run_cplab("mutants --cases 1 --only NO_SUCH_NAME" + mpi);
    EXPECT_EQ(run.status, 2) << mpi << "\n" << run.err;
    EXPECT_TRUE(run.out.empty()) << mpi << ": " << run.out;
    EXPECT_EQ(line_count(run.err), 1) << mpi << ": " << run.err;
    EXPECT_EQ(refusal_line(run.err).rfind(
                  "cplab: error: unknown implementation 'NO_SUCH_NAME'; known: ", 0),
              0u)
        << run.err;
  }
  expect_all({{"mutants --cases 1 --only sim", "cplab: error: 'sim' is not a mutant"}});
}

TEST(BadInput, BenchNumbersAreFinite) {
  // CLI::Range let NaN through; --min-time nan then ran the suites with no bound.
  ScratchDir dir;
  const std::string folder = dir.file("folder");
  std::filesystem::create_directories(folder);
  const std::string good = dir.file("good.json");
  std::ofstream(good) << R"({"benchmarks": [{"name": "BM_x", "run_type": "iteration", )"
                      << R"("real_time": 10.0, "time_unit": "ns"}]})";
  const std::string compare = "bench compare " + good + " " + good;
  expect_all({
      {compare + " --threshold nan",
       "cplab: --threshold: Value nan not a finite number in range 0 to 1000"},
      {compare + " --threshold inf",
       "cplab: --threshold: Value inf not a finite number in range 0 to 1000"},
      {compare + " --threshold 1001",
       "cplab: --threshold: Value 1001 not a finite number in range 0 to 1000"},
      {compare + " --alpha nan", "cplab: --alpha: Value nan not a finite number in range 0 to 1"},
      {compare + " --alpha -inf", "cplab: --alpha: Value -inf not a finite number in range 0 to 1"},
      {compare + " --alpha 1.5", "cplab: --alpha: Value 1.5 not a finite number in range 0 to 1"},
      {"bench history " + good + " --threshold nan --out " + dir.file("page"),
       "cplab: --threshold: Value nan not a finite number in range 0 to 1000"},
      {"bench run --min-time nan --out " + dir.file("b.json"),
       "cplab: --min-time: Value nan not a finite number in range 0 to 3600"},
      {"bench run --min-time -1 --out " + dir.file("b.json"),
       "cplab: --min-time: Value -1 not a finite number in range 0 to 3600"},
      // A folder given as a result file is the user's mistake (2), not an internal error (3).
      {"bench compare " + folder + " " + good,
       "cplab: error: " + folder + ": is a folder, not a JSON file"},
      // --out is tried before any suite runs: one line, not the suite's own complaint as well.
      {"bench run --filter '^$' --out /proc/cplab_b.json",
       "cplab: error: bench run: cannot write /proc/cplab_b.json"},
      {"bench run --filter '^$' --out " + folder,
       "cplab: error: bench run: cannot write " + folder + " (a folder)"},
      // Found by listing before running: one line, not the suite's own complaint as well.
      {"bench run --suite cpu --filter '^$' --out " + dir.file("none.json"),
       "cplab: error: bench run: --filter '^$' matches no benchmark of the cpu suite"},
  });
  EXPECT_FALSE(std::filesystem::exists(dir.file("none.json")));
  EXPECT_EQ(run_cplab(compare + " --threshold 5 --alpha 0.05").status, 0);
}

TEST(BadInput, CheckPadIdIsASixtyFourBitInteger) {
  // CLI11 saturated 2^63 to 2^63-1 and the check ran with that pad id.
  const std::string check = "check --batch /nonexistent.pt --layout " +
                            testsupport::a_plain_layout() + " --cp 2 --shards a.pt b.pt --pad-id ";
  expect_all({
      {check + "9223372036854775808",
       "cplab: error: --pad-id '9223372036854775808' is not a 64-bit integer "
       "(-9223372036854775808 to 9223372036854775807)"},
      {check + "-9223372036854775809",
       "cplab: error: --pad-id '-9223372036854775809' is not a 64-bit integer "
       "(-9223372036854775808 to 9223372036854775807)"},
      {check + "0x10",
       "cplab: error: --pad-id '0x10' is not a 64-bit integer (-9223372036854775808 to "
       "9223372036854775807)"},
  });
}

TEST(BadInput, CheckLayoutOptionsOutsideTheirLimits) {
  // Refused before any file is read: each in one line, whichever option (each option's own range
  // is its layout's file's, layouts/ID_test.cpp).
  const std::string check =
      "check --batch /nonexistent.pt --layout auto --cp 2 --shards a.pt b.pt ";
  int flags = 0;
  for (const layouts::LayoutOption* o : layouts::all_options()) {
    if (o->is_switch) continue;
    ++flags;
    const std::string flag = o->flag;
    expect_all({
        {check + flag + " 9223372036854775808",
         "cplab: error: " + flag + " '9223372036854775808': outside the range of a 64-bit integer"},
        {check + flag + " nan", "cplab: error: " + flag + " 'nan': expected an integer" +
                                    (o->automatic != nullptr ? " or auto" : "")},
    });
  }
  EXPECT_GE(flags, 4) << "too few option flags declared";
}

TEST(BadInput, BenchResultFiles) {
  ScratchDir dir;
  const auto file = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.file(name)) << text;
    return dir.file(name);
  };
  const std::string good =
      file("good.json",
           R"({"context": {"date": "2026-01-01", "cplab": {"commit": "abc"}}, "benchmarks": [)"
           R"({"name": "BM_x", "run_type": "iteration", "real_time": 10.0, "time_unit": "ns"}]})");
  const std::string date = file("date.json", R"({"context": {"date": 5}, "benchmarks": []})");
  const std::string commit =
      file("commit.json", R"({"context": {"cplab": {"commit": 7}}, "benchmarks": []})");
  const std::string run_type =
      file("run_type.json", R"({"benchmarks": [{"name": "BM_x", "run_type": 1, "real_time": 1}]})");
  const std::string message =
      file("message.json",
           R"({"benchmarks": [{"name": "BM_x", "error_occurred": true, "error_message": 3}]})");
  expect_all({
      {"bench compare " + good + " " + date,
       "cplab: error: " + date + ": context.date is not a string"},
      {"bench history " + commit + " --out " + dir.file("page"),
       "cplab: error: " + commit + ": context.cplab.commit is not a string"},
      {"bench compare " + run_type + " " + good,
       "cplab: error: " + run_type +
           ": not Google Benchmark JSON ([json.exception.type_error.302] type must be string, "
           "but is number)"},
      {"bench compare " + good + " " + message,
       "cplab: error: " + message +
           ": not Google Benchmark JSON ([json.exception.type_error.302] type must be string, "
           "but is number)"},
  });
  // A folder that cannot be made is the path's fault (2), not an internal error (3).
  const CliRun run = run_cplab("bench history " + good + " --out /proc/cplab-no-such-page");
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_EQ(line_count(run.err), 1) << run.err;
  EXPECT_EQ(run_cplab("bench compare " + good + " " + good).status, 0);
}

TEST(BadInput, UntrustedTextIsEscapedOnOneLine) {
  const std::string packed = a_packed_layout();
  expect_all({
      {"layout --layout " + packed + " --cp 2 --doc-lens \"$(printf '5,\\033[31m3')\"",
       "cplab: error: --doc-lens '5,\\x1b[31m3': '\\x1b[31m3' is not an integer (expected a "
       "list like 5,3,8)"},
      {"layout --layout \"$(printf '" + packed + "\\nfake line')\" --cp 2 --seq-len 4",
       "cplab: error: unknown layout '" + packed + "\\x0afake line'; known layouts: " +
           fmt::format("{}", fmt::join(reference::layout_names(), ", "))},
  });
  // A very long argument is cut, not echoed whole.
  const CliRun run =
      run_cplab("layout --layout " + packed + " --cp 2 --doc-lens " + std::string(5000, 'x'));
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(line_count(run.err), 1);
  EXPECT_LT(run.err.size(), 1200u);
  EXPECT_NE(run.err.find("more bytes)"), std::string::npos) << run.err;
}

TEST(BadInput, SweepArguments) {
  const std::string out = fresh_dir("bad_sweep_args").string();
  expect_all({
      {"sweep --cases 4294967296", "cplab: --cases: Value 4294967296 not in range 1 to 10000000"},
      {"sweep --cases 10000001", "cplab: --cases: Value 10000001 not in range 1 to 10000000"},
      {"sweep --cases 0", "cplab: --cases: Value 0 not in range 1 to 10000000"},
      {"sweep --seed -1",
       "cplab: error: --seed '-1' is not an unsigned 64-bit integer (0 to 18446744073709551615)"},
      {"sweep --seed 18446744073709551616",
       "cplab: error: --seed '18446744073709551616' is not an unsigned 64-bit integer (0 to "
       "18446744073709551615)"},
      {"sweep --seed ' 7'",
       "cplab: error: --seed ' 7' is not an unsigned 64-bit integer (0 to 18446744073709551615)"},
      {"sweep --seed abc",
       "cplab: error: --seed 'abc' is not an unsigned 64-bit integer (0 to 18446744073709551615)"},
      {"sweep --time-budget -1",
       "cplab: error: --time-budget -1: must be a finite number of seconds >= 0 (0: none)"},
      {"sweep --time-budget nan",
       "cplab: error: --time-budget nan: must be a finite number of seconds >= 0 (0: none)"},
      {"sweep --time-budget inf",
       "cplab: error: --time-budget inf: must be a finite number of seconds >= 0 (0: none)"},
      {"sweep --cp 1025",
       "cplab: error: --cp 1025: a CP size must be in [1, 1024] (one thread per rank)"},
      {"sweep --cp 0",
       "cplab: error: --cp 0: a CP size must be in [1, 1024] (one thread per rank)"},
      {"sweep --max-tokens 16777217",
       "cplab: --max-tokens: Value 16777217 not in range 1 to 16777216"},
      {"sweep --shard 1/1",
       "cplab: error: --shard '1/1': expected i/n with 0 <= i < n (0-based), e.g. 0/4"},
      {"sweep --shard -1/2",
       "cplab: error: --shard '-1/2': expected i/n with 0 <= i < n (0-based), e.g. 0/4"},
      {"sweep --out /proc/cplab-cannot-be-here --cases 1",
       "cplab: error: --out /proc/cplab-cannot-be-here: cannot create the folder: No such file or "
       "directory"},
  });
  // Just inside: the largest case count and seed are taken; the time budget bounds the job.
  const CliRun run = run_cplab(std::string("sweep --cases 10000000 --seed 18446744073709551615 "
                                           "--time-budget 1 --out ") +
                               out + " " + one_job());
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  const nlohmann::json report = nlohmann::json::parse(slurp(out + "/report.json"));
  EXPECT_EQ(report.at("seed").get<std::uint64_t>(), 18446744073709551615ull);
  EXPECT_EQ(report.at("complete"), true);
  const nlohmann::json& job = report.at("results").at(0);
  EXPECT_EQ(job.at("status"), "skipped");  // cut by the budget: never passed
  EXPECT_NE(job.at("message").get<std::string>().find("time budget of 1 s spent after"),
            std::string::npos)
      << job;
  std::filesystem::remove_all(out);
}

TEST(BadInput, NpyFiles) {
  ScratchDir dir;
  const auto raw_npy = [&](const std::string& name, const std::string& header, std::size_t data) {
    std::string bytes = "\x93NUMPY";
    bytes += '\x01';
    bytes += '\x00';
    std::string h = header;
    while ((10 + h.size() + 1) % 64 != 0) h += ' ';
    h += '\n';
    bytes += static_cast<char>(h.size() & 0xff);
    bytes += static_cast<char>(h.size() >> 8);
    bytes += h;
    bytes += std::string(data, '\0');
    std::ofstream(dir.file(name), std::ios::binary) << bytes;
    return dir.file(name);
  };
  Tensor labels(DType::i64, {1, 4});
  io::npy::write(dir.file("labels.npy"), labels);
  Tensor logits(DType::f32, {1, 4, 3});
  logits.set(5, std::nan(""));
  io::npy::write(dir.file("nan.npy"), logits);
  logits.set(5, 0.0);
  logits.set(7, -std::numeric_limits<double>::infinity());
  io::npy::write(dir.file("inf.npy"), logits);
  // 2^62 × 4 bytes wraps to 0: the size check must not pass it as an empty file.
  const std::string wrap = raw_npy(
      "wrap.npy",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 1, 1), }", 0);
  const std::string huge = raw_npy(
      "huge.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 40000, 40000), }", 16);
  const std::string overflow = raw_npy(
      "overflow.npy",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 2), }", 0);
  const std::string loss = "loss --layout " + testsupport::a_plain_layout() + " --cp 2 --labels " +
                           dir.file("labels.npy");
  expect_all({
      {loss + " --logits " + wrap,
       "cplab: error: " + wrap +
           ": .npy shape [4611686018427387904, 1, 1] of dtype <f4 holds more than 2^64 bytes"},
      {loss + " --logits " + huge,
       "cplab: error: " + huge +
           ": .npy data of shape [1, 40000, 40000] and dtype <f4 needs 6400000000 bytes, the "
           "file holds 16"},
      {loss + " --logits " + overflow,
       "cplab: error: " + overflow +
           ": .npy shape [4294967296, 4294967296, 2] of dtype <f8 holds more than 2^64 bytes"},
      {loss + " --logits " + dir.file("nan.npy"),
       "cplab: error: " + dir.file("nan.npy") +
           ": logit nan at flat index 5 is not finite; cplab compares finite losses only"},
      {loss + " --logits " + dir.file("inf.npy"),
       "cplab: error: " + dir.file("inf.npy") +
           ": logit -inf at flat index 7 is not finite; cplab compares finite losses only"},
  });
}

TEST(BadInput, CaseStrings) {
  const std::string replay = "replay --impl sim --property shard_then_gather_is_identity ";
  const std::string packed = "'" + a_packed_layout() + " cp=";
  const std::string one_rank = a_cp_off_layout() + " cp=1 ";
  expect_all({
      {replay + packed + "2 docs=9223372036854775807,9223372036854775807,3'",
       "cplab: error: case key 'docs': 9223372036854775807 + 9223372036854775807 overflows "
       "64-bit integers"},
      {replay + packed + "1025 docs=4'", "cplab: error: CP size must be in [1, 1024], got cp=1025"},
      {replay + "'" + one_rank + "S=16777217'",
       "cplab: error: a row of S=16777217 tokens is outside [0, 16777216] (cplab's limit per "
       "row)"},
      {replay + "'" + one_rank + "S=4096 vocab=1000000'",
       "cplab: error: case: rows=1 × L<=4096 × max(dim=1, vocab=1000000) = 4096000000 elements, "
       "more than cplab's limit of 67108864 per tensor"},
      {replay + "'" + one_rank + "rows=9223372036854775807 S=4'",
       "cplab: error: case: rows=9223372036854775807 is more than cplab's limit of 33554432"},
      {replay + "'" + one_rank + "S=4 seed=-1'",
       "cplab: error: case key 'seed': '-1' is not a number"},
      {replay + "\"$(printf '" + one_rank + "\\007bell=1')\"",
       "cplab: error: unknown case key '\\x07bell'"},
  });
}

// Reports for --merge: a real one-job sweep's, then edited as a hostile or broken tool would.
class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fresh_dir("merge_base").string();
    const CliRun run =
        run_cplab("sweep --cases 2 --seed 5 --shard 0/2 --out " + base_ + " " + one_job());
    ASSERT_EQ(run.status, 0) << run.err;
    report_ = nlohmann::json::parse(slurp(base_ + "/report.json"));
  }
  void TearDown() override { std::filesystem::remove_all(base_); }
  std::string write(const nlohmann::json& report) {
    const std::string path = dir_.file("edited" + std::to_string(++files_) + ".json");
    std::ofstream(path) << report.dump();
    return path;
  }
  std::string base_;
  nlohmann::json report_;
  ScratchDir dir_;
  int files_ = 0;
};

TEST_F(MergeTest, RefusesReportsThatDoNotMatchTheirSweep) {
  const std::string out = " --out " + dir_.file("merged");
  nlohmann::json no_shards = report_;
  no_shards["shards"] = nlohmann::json::array();
  nlohmann::json wrong_job = report_;
  wrong_job["results"][0]["job"] = 1;
  nlohmann::json wrong_seed = report_;
  wrong_seed["results"][0]["seed"] = 12345;
  nlohmann::json wrong_counts = report_;
  wrong_counts["results"][0]["passed"] = 7;
  // Job 0 renamed to another registered layout than its own.
  const std::string job_layout = report_["results"][0]["layout"];
  const std::string other = testsupport::first_layout(
      "a layout other than the sweep's",
      [&](const sim::LayoutDescriptor& layout) { return layout.name != job_layout; });
  nlohmann::json wrong_name = report_;
  wrong_name["results"][0]["layout"] = other;
  const std::string a = write(no_shards), b = write(wrong_job), c = write(wrong_seed),
                    d = write(wrong_counts), e = write(wrong_name);
  const std::uint64_t seed = report_["results"][0]["seed"].get<std::uint64_t>();
  const std::string job0 = "(shard_then_gather_is_identity " + job_layout + " sim)";
  expect_all({
      {"sweep --merge " + a + out,
       "cplab: error: " + a + ": sweep report: 'shards' must list at least one {index, count}"},
      {"sweep --merge " + b + out, "cplab: error: " + b +
                                       ": not a report of the sweep it names: result for job 1 " +
                                       job0 + ": the selection has 1 jobs"},
      {"sweep --merge " + c + out,
       "cplab: error: " + c + ": not a report of the sweep it names: result for job 0 " + job0 +
           " has seed 12345; sweep seed 5 gives it " + std::to_string(seed)},
      {"sweep --merge " + d + out,
       "cplab: error: merge: report 0 job 0 has inconsistent counts (status passed, cases 2, "
       "passed 7, failed 0, shrinks 0, cases_per_job 2)"},
      {"sweep --merge " + e + out,
       "cplab: error: " + e +
           ": not a report of the sweep it names: result for job 0 names "
           "shard_then_gather_is_identity " +
           other + " sim; job 0 of this selection is shard_then_gather_is_identity " + job_layout +
           " sim"},
  });
  // The report as written merges (one of two shards: a note, exit 0).
  const CliRun ok = run_cplab("sweep --merge " + base_ + out);
  EXPECT_EQ(ok.status, 0) << ok.err;
}

}  // namespace
}  // namespace cplab::clitest
