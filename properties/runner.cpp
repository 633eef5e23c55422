#include "properties/runner.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rapidcheck.h>

#include <chrono>
#include <optional>
#include <unordered_map>

#include "core/error.hpp"
#include "core/limits.hpp"
#include "properties/case_data.hpp"
#include "properties/harness.hpp"
#include "properties/mask_choice.hpp"

namespace cplab::properties {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::uint64_t name_hash(const std::string& name) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char ch : name) h = (h ^ ch) * 0x100000001b3ull;
  return h;
}

// Counts the cases RapidCheck ran, the shrinks it tried and accepted, and when the first case
// failed (the rest of a failing job is shrinking); prints nothing.
class CountingListener final : public rc::detail::TestListener {
 public:
  explicit CountingListener(Clock::time_point start) : start_(start) {}
  void onTestCaseFinished(const rc::detail::CaseDescription& description) override {
    ++cases;
    if (description.result.type == rc::detail::CaseResult::Type::Failure && !failed_) {
      failed_ = true;
      seconds_to_failure = seconds_since(start_);
    }
  }
  void onShrinkTried(const rc::detail::CaseDescription&, bool accepted) override {
    ++shrinks_tried;
    shrinks += accepted ? 1 : 0;
  }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
  std::int64_t cases = 0, shrinks = 0, shrinks_tried = 0;
  double seconds_to_failure = 0.0;

 private:
  Clock::time_point start_;
  bool failed_ = false;
};

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

}  // namespace

std::vector<std::int64_t> cps_for_processes(const std::vector<std::int64_t>& asked) {
  RankProcesses* processes = mpi_rank_processes();
  CPLAB_CHECK(processes != nullptr, "ranks as processes need a build with MPI (CPLAB_MPI)");
  const int world = processes->world_size();
  if (asked.empty()) {
    std::vector<std::int64_t> all;
    for (std::int64_t c = 1; c <= world; ++c) all.push_back(c);
    return all;
  }
  for (std::int64_t c : asked) {
    CPLAB_CHECK(c <= world, "--cp {} needs {} MPI processes (mpirun -np {}); this job has {}", c, c,
                c, world);
  }
  return asked;
}

std::uint64_t job_seed(std::uint64_t sweep_seed, const JobSpec& job) {
  return mix(sweep_seed, name_hash(job.property->name), name_hash(job.layout->name),
             name_hash(job.impl->name));
}

std::string replay_command(const std::string& impl, const std::string& property, const Case& c) {
  // Ranks as processes: the case's C ranks are the processes of the job.
  const std::string suffix = kProcessSuffix;
  const bool processes = impl.size() > suffix.size() &&
                         impl.compare(impl.size() - suffix.size(), suffix.size(), suffix) == 0;
  return fmt::format("{}cplab replay --impl {} --property {} {}",
                     processes ? fmt::format("mpirun -np {} ", c.spec.cp) : std::string(), impl,
                     property, shell_quote(print_case(c)));
}

CaseOutcome run_case(const PropertyInfo& property, const Case& c, Implementation& impl) {
  CaseOutcome out{.property = property.name, .failure = {}, .notes = {}, .seconds = 0.0};
  const auto start = Clock::now();
  const ScopedRankFibers fibers(impl.ranks_share_a_thread());
  try {
    out.failure = property.check(c, impl, out.notes);
  } catch (const ResourceError&) {
    throw;  // the machine's limit, not the implementation's failure
  } catch (const std::bad_alloc&) {
    throw ResourceError(failure_prefix(c) + "out of memory");
  } catch (const std::exception& e) {
    // Whatever the implementation (or the reference) throws on a valid case is a failure of it.
    out.failure = failure_prefix(c) + "error: " + e.what();
  }
  out.seconds = seconds_since(start);
  return out;
}

namespace {

// Every other case is drawn from one cell (batch kind, dtype class, C class) in turn, so that
// each cell the layout can draw is drawn; the cases between are drawn freely by the last
// generator.
std::vector<rc::Gen<Case>> case_generators(const LayoutEntry& layout, const GenOptions& gen_options,
                                           const std::vector<CaseCell>& cells) {
  std::vector<rc::Gen<Case>> gens;
  for (const CaseCell& cell : cells) {
    GenOptions directed = gen_options;
    directed.cell = cell;
    gens.push_back(gen_case(layout, directed));
  }
  gens.push_back(gen_case(layout, gen_options));
  return gens;
}

// One job's cases as RapidCheck runs them, one call of run_one per case (shrinks included): the
// generator that draws it, the coverage it counts, the last failure and the cut.
class JobCases {
 public:
  JobCases(const JobSpec& job, const RunOptions& options, const GenOptions& gen_options,
           Implementation& impl, JobResult& result)
      : job_(job),
        options_(options),
        impl_(impl),
        result_(result),
        cells_(drawable_cells(*job.layout, gen_options.cp)),
        gens_(case_generators(*job.layout, gen_options, cells_)),
        // A sweep that draws some masks only asks for the families it draws.
        rules_(rules_for_masks(job.property->coverage, gen_options.masks)),
        which_(gens_.size() - 1) {
    result_.combinations = declared_combinations(rules_, *job.layout, options.gen.cp);
  }

  void run_one() {
    if (cut.empty() && options_.stop) cut = options_.stop();
    if (!cut.empty()) {
      if (cut_fired_ || !last_failure.empty()) return;  // a shrink after the cut: holds at once
      cut_fired_ = true;
      RC_FAIL("cut: " + cut);
    }
    if (!shrinking_) {
      // From a cell the job's seed picks, so that short runs (the mutant hunt's quick round)
      // start in different cells.
      which_ =
          drawn_ % 2 == 0 && cells_.size() > 0
              ? static_cast<std::size_t>(options_.seed + static_cast<std::uint64_t>(drawn_ / 2)) %
                    cells_.size()
              : gens_.size() - 1;
      ++drawn_;
    }
    const Case c = *gens_[which_];
    CaseOutcome outcome;
    try {
      outcome = run_case(*job_.property, c, impl_);
    } catch (const ResourceError& e) {
      resource_error = std::current_exception();
      cut = e.what();
      cut_fired_ = true;
      RC_FAIL(cut);
    }
    if (last_failure.empty()) ++cases_run;
    const std::string tags = fmt::format("{}", fmt::join(outcome.notes.tags, " "));
    RC_TAG(tags);
    if (!shrinking_) {
      count_combinations(rules_, *job_.layout, c, outcome.notes.options, result_.combinations);
    }
    if (outcome.failure.empty()) {
      ++coverage[tags];
      return;
    }
    shrinking_ = true;
    last_failing = c;
    last_failure = outcome.failure;
    RC_FAIL(outcome.failure);
  }

  // The last failing case RapidCheck ran is the shrunk counterexample: every failing shrink is
  // accepted, and every shrink tried after the last accepted one held.
  Case last_failing;
  std::string last_failure;
  std::map<std::string, std::int64_t> coverage;
  // A cut (time budget, interrupt, resource exhaustion) ends RapidCheck's loop from inside: the
  // case being drawn fails at once, and every shrink after it holds at once, so RapidCheck stops
  // within one round of shrink candidates and no case runs after the cut.
  std::string cut;
  std::exception_ptr resource_error;
  std::int64_t cases_run = 0;

 private:
  const JobSpec& job_;
  const RunOptions& options_;
  Implementation& impl_;
  JobResult& result_;
  const std::vector<CaseCell> cells_;
  std::vector<rc::Gen<Case>> gens_;
  const std::vector<CoverageRule> rules_;
  std::int64_t drawn_ = 0;
  std::size_t which_;
  // Once a case failed, every run is a shrink of it: it keeps that case's generator, and coverage
  // counts drawn cases only.
  bool shrinking_ = false;
  bool cut_fired_ = false;
};

rc::detail::TestResult check_cases(JobCases& cases, const JobSpec& job, const RunOptions& options,
                                   CountingListener& listener) {
  const auto property = rc::detail::toProperty([&] { cases.run_one(); });
  rc::detail::TestParams params;
  params.seed = options.seed;
  CPLAB_CHECK(options.cases >= 1 && options.cases <= limits::kMaxCasesPerJob,
              "--cases {}: cases per job must be in [1, {}]", options.cases,
              limits::kMaxCasesPerJob);
  params.maxSuccess = static_cast<int>(options.cases);
  const rc::detail::TestMetadata metadata{
      job.property->name + "/" + job.layout->name + "/" + job.impl->name, job.property->name};
  // No reproduce map: the global RC_PARAMS configuration is not consulted (and not printed).
  const std::unordered_map<std::string, rc::detail::Reproduce> no_reproduce;
  return rc::detail::checkProperty(property, metadata, params, listener, no_reproduce);
}

// What RapidCheck's run of the job's cases came to, once none was cut before it failed.
void record_outcome(const JobCases& cases, const CountingListener& listener,
                    const rc::detail::TestResult& outcome, const JobSpec& job, JobResult& result) {
  result.cases = listener.cases;
  result.shrinks = listener.shrinks;
  result.shrinks_tried = listener.shrinks_tried;
  result.seconds_to_failure = listener.seconds_to_failure;
  result.coverage = cases.coverage;
  if (outcome.template is<rc::detail::SuccessResult>()) {
    result.status = JobStatus::passed;
    result.passed = result.cases;
    return;
  }
  result.status = JobStatus::failed;
  result.failed = 1;
  result.passed = result.cases - 1;
  if (outcome.template is<rc::detail::FailureResult>() && !cases.last_failure.empty()) {
    result.counterexample = print_case(cases.last_failing);
    result.message = cases.cut.empty()
                         ? cases.last_failure
                         : fmt::format("{} (shrinking stopped: {})", cases.last_failure, cases.cut);
    result.replay = replay_command(job.impl->name, job.property->name, cases.last_failing);
  } else {
    // Gave up or a RapidCheck error: not a counterexample, but never a pass.
    std::ostringstream text;
    rc::detail::printResultMessage(outcome, text);
    result.message = "the job could not run its cases: " + text.str();
  }
}

}  // namespace

JobResult run_job(const JobSpec& job, const RunOptions& options) {
  validate_gen_options(options.gen);
  JobResult result;
  result.property = job.property->name;
  result.layout = job.layout->name;
  result.impl = job.impl->name;
  result.seed = options.seed;
  const auto start = Clock::now();
  const std::string unavailable = unavailable_reason(*job.impl);
  if (!unavailable.empty()) {
    result.status = JobStatus::skipped;
    result.message = unavailable;
    return result;
  }
  // Ranks as processes: cases draw C from what the MPI job holds.
  std::optional<ScopedRankProcesses> processes;
  GenOptions gen_options = options.gen;
  if (job.impl->ranks_as_processes) {
    processes.emplace(mpi_rank_processes());
    gen_options.cp = cps_for_processes(options.gen.cp);
  }
  const std::unique_ptr<Implementation> impl = job.impl->make();
  if (job.property->unsupported != nullptr) {
    const std::string why = job.property->unsupported(*impl);
    if (!why.empty()) {
      result.status = JobStatus::skipped;
      result.message = why;
      return result;
    }
  }
  JobCases cases(job, options, gen_options, *impl, result);
  CountingListener listener(start);
  const rc::detail::TestResult outcome = check_cases(cases, job, options, listener);
  if (cases.resource_error) std::rethrow_exception(cases.resource_error);
  result.seconds = seconds_since(start);
  if (!cases.cut.empty() && cases.last_failure.empty()) {
    // Cut before any case failed: what ran held, but the job is not done, so never `passed`.
    const std::int64_t held = cases.cases_run;
    result.status = JobStatus::skipped;
    result.cases = result.passed = held;
    result.coverage = cases.coverage;
    result.message =
        fmt::format("{} after {} of {} cases (all held)", cases.cut, held, options.cases);
    return result;
  }
  record_outcome(cases, listener, outcome, job, result);
  return result;
}

}  // namespace cplab::properties
