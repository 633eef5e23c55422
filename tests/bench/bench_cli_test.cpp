// `cplab bench run|compare|history` end to end. The planted benchmark (planted_bench.cpp) runs as
// the cpu suite: three runs of it (unchanged, unchanged again, 2× slower) are compared and
// charted; the page is drawn in headless Chromium. One benchmark of each family of the real host
// suite runs for its checks.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/bench/host_suite.hpp"
#include "tests/support/cli.hpp"

namespace cplab {
namespace {

namespace fs = std::filesystem;
using testsupport::run_cplab;
using testsupport::slurp;

std::string scratch() {
  static const std::string dir = [] {
    const fs::path d =
        fs::path(::testing::TempDir()) / ("cplab_bench_cli." + std::to_string(::getpid()));
    fs::create_directories(d);
    return d.string();
  }();
  return dir;
}

std::string make_planted_run(const std::string& name, int slowdown);

// One run of the planted suite with the given slowdown, made once per test process. The three
// runs are made in the order base, same, slow whichever is asked for first: the history orders
// runs by their dates, and the slow run must be the last.
std::string planted_run(const std::string& name, int slowdown) {
  static const bool made = [] {
    make_planted_run("base", 1);
    make_planted_run("same", 1);
    make_planted_run("slow", 2);
    return true;
  }();
  (void)made;
  return make_planted_run(name, slowdown);
}

std::string make_planted_run(const std::string& name, int slowdown) {
  const std::string out = scratch() + "/" + name + ".json";
  if (fs::exists(out)) return out;
  ::setenv("CPLAB_BENCH_DIR", CPLAB_PLANTED_DIR, 1);
  ::setenv("CPLAB_PLANTED_SLOWDOWN", std::to_string(slowdown).c_str(), 1);
  const auto run = run_cplab("bench run --suite cpu --repetitions 7 --min-time 0.02 --out " + out);
  ::unsetenv("CPLAB_BENCH_DIR");
  ::unsetenv("CPLAB_PLANTED_SLOWDOWN");
  EXPECT_EQ(run.status, 0) << run.err;
  return out;
}

TEST(BenchRun, writes_benchmark_json_with_the_context_and_ratio_counters) {
  const nlohmann::json doc = nlohmann::json::parse(slurp(planted_run("base", 1)));
  const nlohmann::json& cplab = doc["context"]["cplab"];
  for (const char* key : {"commit", "compiler", "flags", "cpu", "gpu", "cuda", "build_type"})
    EXPECT_TRUE(cplab.contains(key)) << key;
  EXPECT_EQ(cplab["commit"].get<std::string>().size(), 40u);
  int iterations = 0;
  for (const auto& b : doc["benchmarks"]) {
    if (b.value("run_type", "") != "iteration") continue;
    ++iterations;
    EXPECT_TRUE(b.contains("ratio_to_baseline") && b.contains("bytes_per_second") &&
                b.contains("items_per_second"))
        << b.dump();
    EXPECT_EQ(b.value("suite", ""), "cpu");
  }
  EXPECT_EQ(iterations, 7);
}

TEST(BenchCompare, an_unchanged_build_passes) {
  const auto run = run_cplab("bench compare --threshold 25 " + planted_run("base", 1) + " " +
                             planted_run("same", 1));
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_EQ(run.out.find("REGRESSION"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("BM_planted_copy"), std::string::npos) << run.out;
}

TEST(BenchCompare, a_planted_two_fold_slowdown_is_a_significant_regression) {
  const auto run =
      run_cplab("bench compare " + planted_run("base", 1) + " " + planted_run("slow", 2));
  EXPECT_EQ(run.status, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("REGRESSION"), std::string::npos) << run.out;
}

TEST(BenchCompare, bad_input_is_one_line_and_exit_2) {
  const std::string garbage = scratch() + "/garbage.json";
  std::ofstream(garbage) << "{ not json";
  const std::string empty = scratch() + "/empty.json";
  std::ofstream(empty) << "{\"context\": {}}";
  for (const std::string& file : {scratch() + "/missing.json", garbage, empty}) {
    const auto run = run_cplab("bench compare " + planted_run("base", 1) + " " + file);
    EXPECT_EQ(run.status, 2) << file << ": " << run.err;
    EXPECT_EQ(testsupport::line_count(run.err), 1) << run.err;
  }
  EXPECT_EQ(run_cplab("bench run --suite tpu --out x.json").status, 2);
}

TEST(BenchHistory, the_page_draws_a_chart_and_flags_the_planted_slowdown_in_chromium) {
  const std::string dir = scratch() + "/history";
  const auto made = run_cplab("bench history --out " + dir + " " + planted_run("base", 1) + " " +
                              planted_run("same", 1) + " " + planted_run("slow", 2));
  ASSERT_EQ(made.status, 0) << made.err;
  const std::string page = dir + "/index.html";
  const std::string html = slurp(page);
  EXPECT_EQ(html.find("<script src="), std::string::npos) << "the page must load nothing";
  EXPECT_NE(html.find("<li class=\"regression\">BM_planted_copy"), std::string::npos);
  EXPECT_NE(html.find("at run 3"), std::string::npos) << "the slow run is the third by date";

  const char* chromium = "/usr/bin/chromium";
  if (!fs::exists(chromium)) GTEST_SKIP() << "no Chromium at " << chromium;
  const std::string profile = scratch() + "/chromium-profile";
  const std::string flags = std::string(chromium) +
                            " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                            "--disable-background-networking --disable-component-update "
                            "--disable-sync --virtual-time-budget=15000 --user-data-dir=" +
                            profile;
  const std::string dom_file = scratch() + "/dom.html", png = scratch() + "/page.png";
  const int dumped = std::system(
      ("timeout 180 " + flags + " --dump-dom file://" + page + " > " + dom_file + " 2>/dev/null")
          .c_str());
  if (dumped != 0 && slurp(dom_file).empty()) GTEST_SKIP() << "Chromium cannot run here";
  const std::string dom = slurp(dom_file);
  EXPECT_NE(dom.find("data-charts=\"1\""), std::string::npos) << "vegaEmbed did not finish";
  EXPECT_EQ(dom.find("data-chart-error"), std::string::npos);
  EXPECT_NE(dom.find("<svg"), std::string::npos) << "no chart was drawn";
  EXPECT_NE(dom.find("class=\"mark-area"), std::string::npos) << "no noise band";
  EXPECT_NE(dom.find("class=\"mark-symbol"), std::string::npos) << "no points";
  EXPECT_NE(dom.find("BM_planted_copy"), std::string::npos);
  ASSERT_EQ(std::system(("timeout 180 " + flags + " --window-size=900,700 --screenshot=" + png +
                         " file://" + page + " > /dev/null 2>&1")
                            .c_str()),
            0);
  EXPECT_EQ(std::system(("python3 " + std::string(CPLAB_PNG_CHECK) + " " + png).c_str()), 0)
      << "the screenshot is blank";
}

// One benchmark of every family of the host suite, twice, so that every kind of counter is
// aggregated (mean, median, stddev, cv): the file must be JSON as it is written, with no value
// missing, and every benchmark's own output check passes. Every benchmark of the suite, three
// times, is the nightly check (every_benchmark_test.cpp, ctest label slow).
TEST(BenchRun, one_benchmark_of_each_family_repeated_checks_its_output_and_writes_valid_json) {
  const std::string out = scratch() + "/families.json";
  const testsupport::HostSuiteRun run = testsupport::run_host_suite(
      "--repetitions 2 --filter '" + std::string(testsupport::kOneOfEachFamily) + "'", out);
  testsupport::expect_valid_host_suite_json(run, out, testsupport::kBenchmarkFamilies,
                                            2 * testsupport::kBenchmarkFamilies);
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = scratch() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// Five repetitions of one benchmark named `name` (JSON-escaped), with these ratios.
std::string five_repetitions(const std::string& name, const std::string& ratio) {
  std::string text = "{\"context\": {}, \"benchmarks\": [";
  for (int i = 0; i < 5; ++i) {
    text += std::string(i ? "," : "") + "{\"name\": \"" + name + "\", \"run_name\": \"" + name +
            "\", \"run_type\": \"iteration\", \"real_time\": " + std::to_string(100 + i) +
            ", \"time_unit\": \"ns\", \"ratio_to_baseline\": " + ratio + "}";
  }
  return text + "]}";
}

TEST(BenchCompare, names_from_the_files_are_escaped_in_the_table) {
  // A terminal escape and a newline in a name (as JSON escapes them).
  const std::string name = "BM_\\u001b[31mred\\nline";
  const std::string a = write_file("escape-a.json", five_repetitions(name, "1.0"));
  const std::string b = write_file("escape-b.json", five_repetitions(name, "1.0"));
  const auto run = run_cplab("bench compare " + a + " " + b);
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out.find('\x1b'), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("BM_\\x1b[31mred\\x0aline"), std::string::npos) << run.out;
  EXPECT_EQ(testsupport::line_count(run.out), 5)
      << "base, new, header, one row, summary: " << run.out;
}

TEST(BenchCompare, a_base_ratio_of_0_is_reported_as_not_comparable) {
  const std::string zero = write_file("zero.json", five_repetitions("BM_z", "0"));
  const std::string fine = write_file("fine.json", five_repetitions("BM_z", "1.02"));
  const auto run = run_cplab("bench compare " + zero + " " + fine);
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("not comparable: the base median ratio is 0"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("n/a"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("faster"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("+0.0%"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("1 benchmarks not comparable"), std::string::npos) << run.out;
}

TEST(BenchCompare, values_that_are_not_finite_are_read_as_missing_and_said_so) {
  // As Google Benchmark writes a NaN counter, in one of the five repetitions.
  std::string text = five_repetitions("BM_n", "1.0");
  text.replace(text.find("\"ratio_to_baseline\": 1.0"), 24, "\"ratio_to_baseline\": NaN");
  const std::string with_nan = write_file("nan.json", text);
  const std::string fine = write_file("fine-n.json", five_repetitions("BM_n", "1.0"));
  const auto run = run_cplab("bench compare " + with_nan + " " + fine);
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("note: " + with_nan +
                         ": 1 value is not a finite number (NaN, Infinity or null), read as "
                         "missing: BM_n: ratio_to_baseline"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("  4/5  "), std::string::npos) << "four ratios against five: " << run.out;
  EXPECT_NE(run.out.find("(1 value missing: not finite)"), std::string::npos) << run.out;
}

TEST(BenchHistory, values_that_are_not_finite_are_left_out_and_listed_on_the_page) {
  std::string text = five_repetitions("BM_h", "1.0");
  text.replace(text.find("\"real_time\": 100"), 16, "\"real_time\": Infinity");
  const std::string with_inf = write_file("inf.json", text);
  const std::string dir = scratch() + "/history-missing";
  const auto run = run_cplab("bench history --out " + dir + " " + with_inf);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("note: " + with_inf + ": 1 value is not a finite number"),
            std::string::npos)
      << run.out;
  const std::string html = slurp(dir + "/index.html");
  EXPECT_NE(html.find("<ul id=\"missing\">\n<li class=\"missing\">"), std::string::npos);
  EXPECT_NE(html.find("BM_h: real_time"), std::string::npos);
  const std::size_t specs = html.find("id=\"specs\">");
  ASSERT_NE(specs, std::string::npos);
  const std::string data = html.substr(specs, html.find("</script>", specs) - specs);
  EXPECT_EQ(data.find("Infinity"), std::string::npos) << "no non-finite value reaches the chart";
  EXPECT_NE(data.find("BM_h"), std::string::npos) << data;
}

}  // namespace
}  // namespace cplab
