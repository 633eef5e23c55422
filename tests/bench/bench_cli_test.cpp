// `cplab bench run|compare|history` end to end. The planted benchmark (planted_bench.cpp) runs as
// the cpu suite: three runs of it (unchanged, unchanged again, 2× slower) are compared and
// charted; the page is drawn in headless Chromium. The real host suite runs once for its checks.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

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

TEST(BenchRun, every_host_benchmark_checks_its_output_and_reports_its_ratio) {
  const std::string out = scratch() + "/host.json";
  const auto run = run_cplab("bench run --suite cpu --min-time 0.01 --out " + out);
  ASSERT_EQ(run.status, 0) << run.err;
  const nlohmann::json doc = nlohmann::json::parse(slurp(out));
  int checked = 0;
  for (const auto& b : doc["benchmarks"]) {
    if (b.value("run_type", "") != "iteration") continue;
    ++checked;
    EXPECT_FALSE(b.value("error_occurred", false)) << b.value("name", "") << ": " << b.dump();
    EXPECT_TRUE(b.contains("ratio_to_baseline")) << b.value("name", "");
    EXPECT_TRUE(b.contains("items_per_second")) << b.value("name", "");
  }
  EXPECT_GT(checked, 50);
}

}  // namespace
}  // namespace cplab
