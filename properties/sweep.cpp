#include "properties/sweep.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>

#include "core/error.hpp"

namespace cplab::properties {

namespace {

using Clock = std::chrono::steady_clock;

template <typename T, typename Find>
std::vector<const T*> select(const std::vector<std::string>& names, const std::vector<T>& all,
                             Find find) {
  std::vector<const T*> chosen;
  if (names.empty()) {
    for (const T& item : all) chosen.push_back(&item);
  } else {
    for (const std::string& name : names) chosen.push_back(&find(name));
  }
  return chosen;
}

std::vector<std::string> as_strings(const std::vector<std::int64_t>& values) {
  std::vector<std::string> out;
  for (std::int64_t v : values) out.push_back(std::to_string(v));
  return out;
}

}  // namespace

ShardIndex parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  ShardIndex shard{-1, -1};
  const auto parse = [&](std::string_view part, std::int64_t& out) {
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), out);
    return error == std::errc() && end == part.data() + part.size() && !part.empty();
  };
  const bool ok = slash != std::string::npos &&
                  parse(std::string_view(text).substr(0, slash), shard.index) &&
                  parse(std::string_view(text).substr(slash + 1), shard.count);
  CPLAB_CHECK(ok && shard.count >= 1 && shard.index >= 0 && shard.index < shard.count,
              "--shard '{}': expected i/n with 0 <= i < n (0-based), e.g. 0/4", text);
  return shard;
}

std::vector<Job> all_jobs(const SweepOptions& options) {
  const auto properties = select(options.properties, property_table(), find_property);
  const auto layouts = select(options.layouts, layout_table(), layout_entry);
  std::vector<const ImplementationInfo*> impls;
  if (options.impls.empty()) {
    for (const ImplementationInfo& info : implementation_registry()) {
      if (info.in_default_sweep && !info.mutant) impls.push_back(&info);
    }
  } else {
    for (const std::string& name : options.impls) impls.push_back(&find_implementation(name));
  }
  std::vector<Job> jobs;
  for (const PropertyInfo* property : properties) {
    for (const LayoutEntry* layout : layouts) {
      for (const ImplementationInfo* impl : impls) {
        jobs.push_back({static_cast<std::int64_t>(jobs.size()), JobSpec{property, layout, impl}});
      }
    }
  }
  return jobs;
}

std::vector<Job> shard_jobs(const std::vector<Job>& jobs, ShardIndex shard) {
  CPLAB_CHECK(shard.count >= 1 && shard.index >= 0 && shard.index < shard.count,
              "shard {}/{} is not 0 <= i < n", shard.index, shard.count);
  std::vector<Job> mine;
  // Round robin rather than contiguous blocks: every shard gets a mix of cheap and costly jobs.
  for (const Job& job : jobs) {
    if (job.index % shard.count == shard.index) mine.push_back(job);
  }
  return mine;
}

namespace {

std::atomic<int> stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "signal handlers need a lock-free flag");

std::string signal_name(int signal_number) {
  switch (signal_number) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return fmt::format("signal {}", signal_number);
  }
}

}  // namespace

void request_sweep_stop(int signal_number) { stop_signal.store(signal_number); }
int sweep_stop_signal() { return stop_signal.load(); }

SweepReport run_sweep(const SweepOptions& options, const SweepProgress& progress,
                      const SweepCheckpoint& checkpoint) {
  return run_jobs(options, shard_jobs(all_jobs(options), options.shard), progress, checkpoint);
}

SweepReport run_jobs(const SweepOptions& options, const std::vector<Job>& jobs,
                     const SweepProgress& progress, const SweepCheckpoint& checkpoint) {
  CPLAB_CHECK(std::isfinite(options.time_budget_seconds) && options.time_budget_seconds >= 0.0,
              "--time-budget {}: must be a finite number of seconds >= 0 (0: none)",
              options.time_budget_seconds);
  SweepReport report;
  report.seed = options.seed;
  report.cases_per_job = options.cases;
  report.shards = {options.shard};
  report.layouts = options.layouts;
  report.cps = as_strings(options.cps);
  report.impls = options.impls;
  report.properties = options.properties;
  report.masks = options.masks;
  report.time_budget_seconds = options.time_budget_seconds;
  RunOptions run;
  run.cases = options.cases;
  run.gen.cp = options.cps;
  run.gen.masks = options.masks;
  run.gen.max_tokens = options.max_tokens;
  const auto start = Clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  run.stop = [&]() -> std::string {
    if (const int sig = sweep_stop_signal(); sig != 0) return "interrupted by " + signal_name(sig);
    if (options.time_budget_seconds > 0.0 && elapsed() >= options.time_budget_seconds)
      return fmt::format("time budget of {} s spent", options.time_budget_seconds);
    return {};
  };
  report.complete = false;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Job& job = jobs[i];
    if (sweep_stop_signal() != 0) break;  // the jobs not started are not in the report
    if (progress)
      progress(job, static_cast<std::int64_t>(i), static_cast<std::int64_t>(jobs.size()), nullptr);
    JobResult result;
    if (options.time_budget_seconds > 0.0 && elapsed() >= options.time_budget_seconds) {
      result.property = job.spec.property->name;
      result.layout = job.spec.layout->name;
      result.impl = job.spec.impl->name;
      result.seed = job_seed(options.seed, job.spec);
      result.status = JobStatus::skipped;
      result.message = fmt::format("time budget of {} s spent before this job started",
                                   options.time_budget_seconds);
    } else {
      run.seed = job_seed(options.seed, job.spec);
      result = run_job(job.spec, run);
      if (coverage_required(options)) require_coverage(result);
    }
    result.job = job.index;
    report.results.push_back(result);
    if (progress)
      progress(job, static_cast<std::int64_t>(i) + 1, static_cast<std::int64_t>(jobs.size()),
               &report.results.back());
    if (checkpoint) {
      report.seconds = elapsed();
      checkpoint(report);
    }
  }
  report.seconds = elapsed();
  report.complete = sweep_stop_signal() == 0;
  return report;
}

bool coverage_required(const SweepOptions& options) {
  return options.cases >= kDefaultCasesPerJob && options.max_tokens >= GenOptions{}.max_tokens;
}

void require_coverage(JobResult& result) {
  if (result.status != JobStatus::passed) return;
  std::vector<std::string> missing;
  for (const auto& [name, count] : result.combinations) {
    if (count == 0) missing.push_back(name);
  }
  if (missing.empty()) return;
  result.status = JobStatus::failed;
  result.message =
      fmt::format("coverage: {} of {} declared combinations never drawn: {}", missing.size(),
                  result.combinations.size(), fmt::join(missing, "; "));
}

std::string rerun_command(const SweepOptions& options, const JobResult& result) {
  std::string command =
      fmt::format("cplab sweep --seed {} --cases {} --properties {} --layouts {} --impl {}",
                  options.seed, options.cases, result.property, result.layout, result.impl);
  if (!options.cps.empty()) command += fmt::format(" --cp {}", fmt::join(options.cps, ","));
  if (options.max_tokens != GenOptions{}.max_tokens)
    command += fmt::format(" --max-tokens {}", options.max_tokens);
  if (!options.masks.empty()) command += fmt::format(" --masks {}", fmt::join(options.masks, " "));
  return command;
}

}  // namespace cplab::properties
