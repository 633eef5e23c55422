// `cplab sweep`: every property × layout × implementation on random cases, the nightly job.
// Prints the seed first and, for every failure, the shrunk case, its replay command and the sweep
// command that reruns that job; writes report.json, junit.xml and summary.md; exits 1 on any
// failure. `--shard i/n` runs one n-th of the jobs; `--merge` merges the shards' reports.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rapidcheck.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>

#include "cli/arguments.hpp"
#include "cli/command.hpp"
#include "cli/errors.hpp"
#include "cli/stop_signals.hpp"
#include "core/error.hpp"
#include "core/limits.hpp"
#include "properties/mask_choice.hpp"
#include "properties/sweep.hpp"
#include "properties/sweep_processes.hpp"
#include "reports/distributed_sweep.hpp"
#include "reports/sweep_report.hpp"

namespace cplab::cli {
namespace {

struct SweepArgs {
  properties::SweepOptions sweep;
  std::string seed_text, shard_text = "0/1", out = "out/sweep";
  CLI::Option* seed_option = nullptr;
  std::vector<std::string> merge;
  bool distribute = false;           // split the jobs over the processes of an MPI job
  std::int64_t rank_timeout_ms = 0;  // -mpi implementations: a rank's wait for the others
};

// --seed, else RC_PARAMS' seed (RapidCheck's own variable), else a fresh random one.
std::uint64_t choose_seed(const std::string& text, bool given) {
  if (given) return parse_seed("--seed", text);
  if (std::getenv("RC_PARAMS") != nullptr) return rc::detail::configuration().testParams.seed;
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

void print_job_line(const properties::JobResult& r) {
  fmt::print("{:<7} {:<44} {:<10} {:<10} {:>5} cases {:>7.2f} s\n",
             properties::job_status_name(r.status), r.property, r.layout, r.impl, r.cases,
             r.seconds);
}

int finish(const properties::SweepReport& report, const std::string& out,
           const properties::SweepOptions* options) {
  const auto files = reports::write_all(report, out);
  fmt::print(
      "\n{}: {} jobs, {} passed, {} failed, {} skipped; {} cases in {:.1f} s ({:.1f} cases/s)\n",
      !report.ok()      ? "RED"
      : report.complete ? "green"
                        : "INCOMPLETE",
      report.results.size(), report.count(properties::JobStatus::passed),
      report.count(properties::JobStatus::failed), report.count(properties::JobStatus::skipped),
      report.total_cases(), report.seconds, report.cases_per_second());
  // The slowest properties: where the sweep's time went.
  const std::vector<properties::PropertyTime> times = report.property_times();
  constexpr std::size_t kShown = 5;
  for (std::size_t i = 0; i < times.size() && i < kShown; ++i) {
    const properties::PropertyTime& t = times[i];
    fmt::print("  {:>5.1f}% of job time  {:<44} {:>6} cases {:>8.2f} s {:>8.0f} cases/s\n",
               100.0 * t.share, t.property, t.cases, t.seconds, t.cases_per_second);
  }
  if (times.size() > kShown)
    fmt::print("  ... {} more properties in summary.md and report.json\n", times.size() - kShown);
  std::map<std::string, std::string> skip_reasons;  // one line per reason, not per job
  for (const properties::JobResult& r : report.results) {
    if (r.status == properties::JobStatus::skipped)
      skip_reasons.emplace(r.impl + ": " + r.message, r.impl);
  }
  for (const auto& [reason, impl] : skip_reasons) fmt::print("skipped {}\n", reason);
  for (const properties::JobResult& r : report.results) {
    if (r.status != properties::JobStatus::failed) continue;
    fmt::print(
        "\nFAILED {} · {} · {} after {} cases ({} shrinks)\n  {}\n  counterexample: {}\n  replay: "
        "{}\n",
        r.property, r.layout, r.impl, r.cases, r.shrinks, r.message, r.counterexample, r.replay);
    if (options) fmt::print("  rerun:  {}\n", properties::rerun_command(*options, r));
  }
  std::vector<std::string> names;
  for (const auto& file : files) names.push_back(file.string());
  fmt::print("reports: {}\n", fmt::join(names, ", "));
  return report.ok() ? 0 : 1;
}

int run_merge(const SweepArgs& args) {
  std::vector<properties::SweepReport> shards;
  for (const std::string& path : args.merge) {
    properties::SweepReport report = reports::read_report(path);
    try {
      properties::check_report_jobs(report);
    } catch (const Error& e) {
      const std::filesystem::path p = std::filesystem::is_directory(path)
                                          ? std::filesystem::path(path) / "report.json"
                                          : std::filesystem::path(path);
      CPLAB_FAIL("{}: not a report of the sweep it names: {}", p.string(), e.what());
    }
    shards.push_back(std::move(report));
  }
  const properties::SweepReport merged = reports::merge(shards);
  const std::int64_t count = merged.shards.front().count;
  if (static_cast<std::int64_t>(merged.shards.size()) != count) {
    fmt::print("note: {} of {} shards merged; the others' jobs are missing\n", merged.shards.size(),
               count);
  }
  return finish(merged, args.out, nullptr);
}

int run_sweep_command(SweepArgs& args) {
  if (!args.merge.empty()) {
    release_stop_signals();  // a merge is short: a signal has its default effect
    return run_merge(args);
  }
  properties::SweepOptions& options = args.sweep;
  options.seed = choose_seed(args.seed_text, args.seed_option->count() > 0);
  options.shard = properties::parse_shard(args.shard_text);
  CPLAB_CHECK(std::isfinite(options.time_budget_seconds) && options.time_budget_seconds >= 0.0,
              "--time-budget {}: must be a finite number of seconds >= 0 (0: none)",
              options.time_budget_seconds);
  properties::GenOptions gen;
  gen.cp = options.cps;
  gen.max_tokens = options.max_tokens;
  gen.masks = options.masks;
  properties::validate_gen_options(gen);
  for (std::string& mask : options.masks)  // canonical, as the report and reruns name them
    mask = properties::mask_choice_text(properties::parse_mask_choice(mask));
  const properties::SweepProcesses processes =
      properties::plan_sweep_processes(options, args.distribute, args.rank_timeout_ms);
  // In a job of several processes the launcher's SIGTERM means a peer died: mpi/session's handler
  // says so and what this rank was waiting in; cutting between cases would wait in vain.
  if (processes.size > 1) release_stop_signals();
  if (!processes.writes_reports()) silence_stdout();
  const std::size_t jobs =
      properties::shard_jobs(properties::all_jobs(options), options.shard).size();
  // Every argument is checked (a refused sweep writes nothing). Now, before any slow step (the
  // page asks git and CUDA about the build, the first job starts libraries): --out must take a
  // report, and a stale one of an earlier run is replaced by this run's, marked incomplete, so
  // that it is never read as this run's. The stop signals are caught since main() began: one
  // that came already stops the sweep before its first case, with this report.
  properties::SweepReport started;
  started.seed = options.seed;
  started.cases_per_job = options.cases;
  started.shards = {options.shard};
  started.layouts = options.layouts;
  for (std::int64_t cp : options.cps) started.cps.push_back(std::to_string(cp));
  started.impls = options.impls;
  started.properties = options.properties;
  started.masks = options.masks;
  started.time_budget_seconds = options.time_budget_seconds;
  started.complete = false;
  if (processes.writes_reports()) {
    reports::write_started(started, args.out);
    reports::write_all(started, args.out);  // the page too, with the build's commit and devices
  }
  fmt::print(
      "cplab sweep: seed {} · {} cases per job · shard {}/{} · {} jobs (rerun with --seed {})\n",
      options.seed, options.cases, options.shard.index, options.shard.count, jobs, options.seed);
  if (processes.size > 1) {
    fmt::print("{} processes: {}\n", processes.size,
               processes.distribute ? "each runs every n-th job, rank 0 merges the reports"
                                    : "each case's rank r is process r");
  }
  std::fflush(stdout);
  const bool terminal = isatty(fileno(stderr)) != 0 && processes.writes_reports();
  const auto progress = [&](const properties::Job& job, std::int64_t done, std::int64_t total,
                            const properties::JobResult* finished) {
    if (finished) {
      if (terminal) std::fprintf(stderr, "\r\033[K");
      // Skipped jobs are summed up at the end, one line per reason.
      if (finished->status != properties::JobStatus::skipped) print_job_line(*finished);
      std::fflush(stdout);
    } else if (terminal) {
      std::fprintf(stderr, "\r\033[K[%lld/%lld] %s · %s · %s ...", static_cast<long long>(done + 1),
                   static_cast<long long>(total), job.spec.property->name.c_str(),
                   job.spec.layout->name.c_str(), job.spec.impl->name.c_str());
      std::fflush(stderr);
    }
  };
  const auto checkpoint = [&](const properties::SweepReport& so_far) {
    reports::write_all(so_far, args.out);
  };
  const properties::SweepReport report =
      processes.distribute         ? reports::run_distributed_sweep(options, processes, progress)
      : processes.writes_reports() ? properties::run_sweep(options, progress, checkpoint)
                                   : properties::run_sweep(options, progress);
  const int status =
      processes.writes_reports() ? finish(report, args.out, &options) : (report.ok() ? 0 : 1);
  if (const int sig = properties::sweep_stop_signal(); sig != 0) {
    if (processes.writes_reports()) {
      std::fprintf(stderr,
                   "cplab sweep: stopped by signal %d; %s/report.json holds the jobs that ran, "
                   "marked \"complete\": false\n",
                   sig, args.out.c_str());
    }
    return 128 + sig;
  }
  return status;
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* sub = app.add_subcommand(
      "sweep", "Run every property for every layout and implementation on random cases");
  sub->add_option("--cases", args->sweep.cases, "Cases per property × layout × implementation")
      ->check(CLI::Range(std::int64_t{1}, limits::kMaxCasesPerJob));
  args->seed_option =
      sub->add_option("--seed", args->seed_text,
                      "Sweep seed (default: RC_PARAMS' seed, else random; always printed)");
  sub->add_option("--layouts", args->sweep.layouts, "Layouts (default all)")->delimiter(',');
  sub->add_option("--cp", args->sweep.cps,
                  "C values to draw from (default 1..64, weighted to small)")
      ->delimiter(',');
  sub->add_option("--impl", args->sweep.impls,
                  "Implementations (default sim,gpu; also gpu-nccl, gpu-host, mutants)")
      ->delimiter(',');
  sub->add_option("--properties", args->sweep.properties, "Properties (default all)")
      ->delimiter(',');
  sub->add_option("--masks", args->sweep.masks,
                  "Attention masks to draw, space-separated: causal, window:W, chunked:K, "
                  "bidirectional:B-E,..., or a family alone (window, chunked, bidirectional: sizes "
                  "drawn per case); default every family");
  sub->add_option("--shard", args->shard_text, "Run shard i of n (0-based i/n) of the job list");
  sub->add_option("--time-budget", args->sweep.time_budget_seconds,
                  "Seconds; jobs not started by then are skipped");
  sub->add_option("--max-tokens", args->sweep.max_tokens, "Bound on a row's padded length")
      ->check(CLI::Range(std::int64_t{1}, limits::kMaxRowTokens));
  sub->add_option("--out", args->out, "Folder for report.json, junit.xml, summary.md");
  sub->add_option("--merge", args->merge,
                  "Merge these shard reports (report.json files or their folders) into --out");
  sub->add_flag(
      "--distribute", args->distribute,
      "Under mpirun/srun: split the jobs over the N processes; rank 0 merges the reports");
  sub->add_option("--rank-timeout-ms", args->rank_timeout_ms,
                  "-mpi implementations: how long a rank process waits for the others (default "
                  "20000)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{24} * 3600 * 1000));  // at most a day
  return {sub, [args] { return run_sweep_command(*args); }};
}

}  // namespace cplab::cli
