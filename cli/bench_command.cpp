// `cplab bench run|compare|history`: run the benchmark suites into one JSON file with the
// context a comparison needs, compare two such files with a significance test, draw the history
// of many as an offline page.
#include <fmt/format.h>

#include "cli/arguments.hpp"
#include "cli/command.hpp"
#include "cli/errors.hpp"
#include "perf/bench_compare.hpp"
#include "perf/bench_history.hpp"
#include "perf/bench_run.hpp"

namespace cplab::cli {
namespace {

struct BenchArgs {
  perf::BenchRunArgs run;
  std::string base, now;
  perf::CompareOptions compare;
  perf::BenchHistoryArgs history;
};

int run_compare(const BenchArgs& args) {
  const perf::BenchFile base = perf::read_bench_file(args.base);
  const perf::BenchFile now = perf::read_bench_file(args.now);
  const std::vector<perf::BenchChange> changes = perf::compare_files(base, now, args.compare);
  // Everything taken from the files (names, messages, context) is escaped as stderr text is: a
  // benchmark name cannot add a line or a terminal escape to the table.
  fmt::print("base: {}\nnew:  {}\n", escape_untrusted(perf::describe_context(base.context)),
             escape_untrusted(perf::describe_context(now.context)));
  for (const perf::BenchFile* file : {&base, &now}) {
    const std::string missing = perf::describe_missing(*file);
    if (!missing.empty()) fmt::print("note: {}\n", escape_untrusted(missing));
  }
  fmt::print("{:<58} {:>6} {:>12} {:>12} {:>8} {:>8} {:>7}  {}\n", "benchmark", "metric", "base",
             "new", "speed", "p", "reps", "verdict");
  std::size_t regressions = 0, untestable = 0, incomparable = 0;
  for (const perf::BenchChange& c : changes) {
    const std::string name = escape_untrusted(c.name);
    if (!c.note.empty()) {
      fmt::print("{:<58} {}\n", name, escape_untrusted(c.note));
      continue;
    }
    regressions += c.regression ? 1 : 0;
    untestable += c.comparable && !c.testable ? 1 : 0;
    incomparable += c.comparable ? 0 : 1;
    const std::string speed = c.comparable ? fmt::format("{:>+7.1f}%", 100.0 * c.change) : "n/a";
    const std::string p = c.comparable ? fmt::format("{:.4f}", c.p_value) : "n/a";
    const std::string missing = c.missing ? fmt::format(" ({} value{} missing: not finite)",
                                                        c.missing, c.missing == 1 ? "" : "s")
                                          : "";
    fmt::print("{:<58} {:>6} {:>12.4g} {:>12.4g} {:>8} {:>8} {:>3}/{:<3}  {}{}\n", name, c.metric,
               c.base, c.now, speed, p, c.base_n, c.now_n, c.verdict, missing);
  }
  std::string notes;
  if (untestable)
    notes +=
        fmt::format(" ({} benchmarks untestable: run with --repetitions 5 or more)", untestable);
  if (incomparable)
    notes +=
        fmt::format(" ({} benchmarks not comparable: a median that is not above 0)", incomparable);
  fmt::print("{} regressions beyond {}% at p < {}{}\n", regressions, args.compare.threshold_pct,
             args.compare.alpha, notes);
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
            if (run->parsed()) return perf::run_bench(args->run);
            if (compare->parsed()) return run_compare(*args);
            if (history->parsed()) return perf::run_bench_history(args->history);
            return kUsageError;
          }};
}

}  // namespace cplab::cli
