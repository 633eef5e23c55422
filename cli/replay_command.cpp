// `cplab replay '<case>'`: reruns one case verbosely — the case, how the reference lays it out on
// every rank, then every property (or the chosen ones) on the chosen implementation, with the
// full failure and what each property noted. The counterexample of a sweep or a mutant hunt is a
// replay string, so a failure seen at night is one paste away on a laptop.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/errors.hpp"
#include "core/error.hpp"
#include "properties/case.hpp"
#include "properties/case_data.hpp"
#include "properties/rank_processes.hpp"
#include "properties/runner.hpp"
#include "reference/plan.hpp"

namespace cplab::cli {
namespace {

struct ReplayOptions {
  std::string text;
  std::string impl = "sim";
  std::vector<std::string> properties;
  bool quiet_plan = false;
};

// The reference's view of the case: per microbatch and rank, which slots and which caller tokens.
void print_plan(const properties::Case& c) {
  const Batch batch = properties::make_batch(c);
  const ShardPlan plan = reference::plan(c.spec, batch);
  for (std::int64_t m = 0; m < c.spec.microbatches; ++m) {
    const ShardPlan micro = reference::microbatch_plan(plan, m);
    const RowPlan& row = micro.rows.front();
    fmt::print("microbatch {}: S={} L={} ℓ={}{}\n", m, row.caller_len, row.padded_len,
               row.local_len(),
               row.cu_seqlens_padded.empty()
                   ? std::string()
                   : fmt::format(" cu_seqlens_padded=[{}]", fmt::join(row.cu_seqlens_padded, ",")));
    for (std::size_t r = 0; r < row.index.size(); ++r) {
      std::vector<std::string> tokens;
      for (std::int64_t g : row.index[r]) {
        const std::int64_t t = row.caller_pos[static_cast<std::size_t>(g)];
        tokens.push_back(t < 0 ? fmt::format("{}:pad", g) : fmt::format("{}", g));
      }
      fmt::print("  rank {}: slots [{}] real {}\n", r, fmt::join(tokens, " "), row.valid_tokens[r]);
    }
  }
}

int run_replay(const ReplayOptions& options) {
  // Ranks as processes (mpirun -np C cplab replay --impl sim-mpi ...): rank 0 prints.
  if (properties::find_implementation(options.impl).ranks_as_processes) {
    properties::RankProcesses* world = properties::mpi_rank_processes();
    if (world != nullptr && world->world_rank() != 0) silence_stdout();
  }
  const properties::Case c = properties::parse_case(options.text);
  // Before anything is printed: a case the reference refuses (thd without documents, an unknown
  // layout) and an unknown implementation are bad input, not a property that failed.
  (void)reference::plan(c.spec, properties::make_batch(c));
  const properties::ImplementationInfo& info = properties::find_implementation(options.impl);
  // An implementation that cannot run here (no device, no MPI) is a refusal like the others:
  // one line on stderr, before the case is printed.
  const std::string unavailable = properties::unavailable_reason(info);
  CPLAB_CHECK(unavailable.empty(), "--impl {} cannot run here: {}", info.name, unavailable);
  // Every process runs the case; its C must fit the job.
  std::optional<properties::ScopedRankProcesses> processes;
  if (info.ranks_as_processes) {
    properties::cps_for_processes({c.spec.cp});
    processes.emplace(properties::mpi_rank_processes());
  }
  const std::unique_ptr<Implementation> impl = info.make();
  std::vector<const properties::PropertyInfo*> chosen;
  if (options.properties.empty()) {
    for (const auto& p : properties::property_table()) chosen.push_back(&p);
  } else {
    for (const auto& name : options.properties) chosen.push_back(&properties::find_property(name));
  }
  // A case past a bound a property states (SPEC §13.2) is bad input for that property: refused
  // here, before the case is printed and before any property runs.
  for (const properties::PropertyInfo* property : chosen) {
    if (property->refusal == nullptr) continue;
    if (property->unsupported != nullptr && !property->unsupported(*impl).empty()) continue;
    const std::string refused = property->refusal(c, *impl);
    CPLAB_CHECK(refused.empty(), "{} refuses the case: {}", property->name, refused);
  }
  fmt::print("case: {}\n", properties::print_case(c));
  fmt::print("      {}\n", properties::case_headline(c));
  if (!options.quiet_plan) print_plan(c);
  fmt::print("implementation {}: {}\n", info.name, info.summary);
  int failures = 0;
  std::size_t skipped = 0;
  for (const properties::PropertyInfo* property : chosen) {
    const std::string unsupported =
        property->unsupported != nullptr ? property->unsupported(*impl) : std::string();
    if (!unsupported.empty()) {
      fmt::print("SKIP {}: {}\n", property->name, unsupported);
      ++skipped;
      continue;
    }
    const properties::CaseOutcome outcome = properties::run_case(*property, c, *impl);
    const bool held = outcome.failure.empty();
    failures += held ? 0 : 1;
    fmt::print("{} {} ({:.3f} s)\n", held ? "PASS" : "FAIL", property->name, outcome.seconds);
    if (!held) fmt::print("  {}\n", outcome.failure);
    for (const std::string& note : outcome.notes.notes) fmt::print("  note: {}\n", note);
  }
  const std::size_t ran = chosen.size() - skipped;
  fmt::print("{} of {} properties hold\n", ran - static_cast<std::size_t>(failures), ran);
  return failures == 0 ? 0 : 1;
}

}  // namespace

Command add_replay_command(CLI::App& app) {
  auto options = std::make_shared<ReplayOptions>();
  CLI::App* sub = app.add_subcommand(
      "replay", "Rerun one case (a sweep's or mutant hunt's counterexample) verbosely");
  sub->add_option("case", options->text, "The case's one-line form, quoted")->required();
  sub->add_option("--impl", options->impl, "Implementation to run (sim, gpu, or a mutant)");
  sub->add_option("--property", options->properties,
                  "Only these properties (repeatable); default all");
  sub->add_flag("--no-plan", options->quiet_plan, "Do not print the reference's per-rank layout");
  return {sub, [options] { return run_replay(*options); }};
}

}  // namespace cplab::cli
