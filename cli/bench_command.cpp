// `cplab bench run|compare|history`: run the benchmark suites into one JSON file with the
// context a comparison needs, compare two such files with a significance test, draw the history
// of many as an offline page.
#include <fmt/format.h>

#include "cli/arguments.hpp"
#include "cli/bench_compare.hpp"
#include "cli/bench_history.hpp"
#include "cli/bench_run.hpp"
#include "cli/command.hpp"

namespace cplab::cli {
namespace {

struct BenchArgs {
  BenchRunArgs run;
  std::string base, now;
  CompareOptions compare;
  BenchHistoryArgs history;
};

int run_compare(const BenchArgs& args) {
  const BenchFile base = read_bench_file(args.base);
  const BenchFile now = read_bench_file(args.now);
  const std::vector<BenchChange> changes = compare_files(base, now, args.compare);
  fmt::print("base: {}\nnew:  {}\n", describe_context(base.context), describe_context(now.context));
  fmt::print("{:<58} {:>6} {:>12} {:>12} {:>8} {:>8} {:>7}  {}\n", "benchmark", "metric", "base",
             "new", "speed", "p", "reps", "verdict");
  std::size_t regressions = 0, untestable = 0;
  for (const BenchChange& c : changes) {
    if (!c.note.empty()) {
      fmt::print("{:<58} {}\n", c.name, c.note);
      continue;
    }
    std::string verdict = "same";
    if (c.regression) {
      verdict = "REGRESSION";
      ++regressions;
    } else if (!c.testable) {
      verdict = "too few repetitions for the U test";
      ++untestable;
    } else if (c.p_value < args.compare.alpha) {
      verdict = c.change < 0 ? "slower (within threshold)" : "faster";
    }
    fmt::print("{:<58} {:>6} {:>12.4g} {:>12.4g} {:>+7.1f}% {:>8.4f} {:>3}/{:<3}  {}\n", c.name,
               c.metric, c.base, c.now, 100.0 * c.change, c.p_value, c.base_n, c.now_n, verdict);
  }
  fmt::print(
      "{} regressions beyond {}% at p < {}{}\n", regressions, args.compare.threshold_pct,
      args.compare.alpha,
      untestable
          ? fmt::format(" ({} benchmarks untestable: run with --repetitions 5 or more)", untestable)
          : "");
  return regressions > 0 ? 1 : 0;
}

}  // namespace

Command add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* bench = app.add_subcommand("bench", "Run, compare and chart the benchmark suites");
  bench->require_subcommand(1);

  CLI::App* run = bench->add_subcommand("run", "Run the benchmark suites into one JSON file");
  run->add_option("--suite", args->run.suite, "cpu, gpu or all (what this build has)")
      ->check(CLI::IsMember({"cpu", "gpu", "all"}));
  run->add_option("--filter", args->run.filter, "Only benchmarks matching this regex");
  run->add_option("--repetitions", args->run.repetitions, "Repetitions of every benchmark")
      ->check(CLI::Range(1, 1000));
  run->add_option("--min-time", args->run.min_time, "Seconds per benchmark (0: the default)")
      ->check(finite_range(0.0, 3600.0));
  run->add_option("--out", args->run.out, "The JSON file to write")->required();

  CLI::App* compare = bench->add_subcommand(
      "compare", "Compare two runs; exit 1 on a significant regression beyond the threshold");
  compare->add_option("base", args->base, "The base run's JSON")->required();
  compare->add_option("new", args->now, "The new run's JSON")->required();
  compare->add_option("--threshold", args->compare.threshold_pct, "Percent slower that counts")
      ->check(finite_range(0.0, 1000.0));
  compare->add_option("--alpha", args->compare.alpha, "Significance level of the U test")
      ->check(finite_range(0.0, 1.0));

  CLI::App* history =
      bench->add_subcommand("history", "An offline page charting runs across commits");
  history->add_option("files", args->history.files, "Run JSON files")->required();
  history->add_option("--out", args->history.out, "The folder to write index.html into")
      ->required();
  history
      ->add_option("--threshold", args->history.threshold_pct,
                   "Percent worse than the previous run that the step rule flags")
      ->check(finite_range(0.0, 1000.0));

  return {bench, [args, run, compare, history] {
            if (run->parsed()) return run_bench(args->run);
            if (compare->parsed()) return run_compare(*args);
            if (history->parsed()) return run_bench_history(args->history);
            return kUsageError;
          }};
}

}  // namespace cplab::cli
