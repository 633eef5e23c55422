// `cplab mutants [--json]`: the property suite against every deliberately broken implementation.
// Per mutant: killed or survived, the property (and layout) that killed it, the shrunk
// counterexample and its time to kill (cases and seconds to the first failure, shrink steps and
// their seconds). Exits 1 when any mutant survives: a hole in the checks.
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/arguments.hpp"
#include "cli/command.hpp"
#include "cli/errors.hpp"
#include "core/limits.hpp"
#include "properties/mutant_hunt.hpp"
#include "properties/rank_processes.hpp"

namespace cplab::cli {
namespace {

struct MutantsArgs {
  properties::HuntOptions hunt;
  std::string seed_text = "0";
  bool json = false;
  bool list = false;
};

nlohmann::json verdict_json(const properties::MutantVerdict& v) {
  const auto or_null = [](const std::string& s) {
    return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
  };
  return {{"mutant", v.mutant},
          {"bug", v.bug},
          {"killed", v.killed},
          {"property", or_null(v.property)},
          {"layout", or_null(v.layout)},
          {"counterexample", or_null(v.counterexample)},
          {"message", or_null(v.message)},
          {"replay", or_null(v.replay)},
          {"cases", v.cases},
          {"shrinks", v.shrinks},
          {"seconds", v.seconds},
          {"jobs", v.jobs},
          {"job_cases", v.job_cases},
          {"shrinks_tried", v.shrinks_tried},
          {"seconds_to_failure", v.seconds_to_failure},
          {"shrink_seconds", v.shrink_seconds}};
}

int run_mutants(MutantsArgs& args) {
  args.hunt.seed = parse_seed("--seed", args.seed_text);  // strict: "-1" is not 2^64-1
  if (args.list) {
    for (const auto& info : properties::implementation_registry()) {
      if (info.mutant) fmt::print("{:<40} {}\n", info.name, info.summary);
    }
    return 0;
  }
  // Every name is known before the header goes to stdout: a refusal leaves stdout empty.
  for (const std::string& name : args.hunt.only) {
    CPLAB_CHECK(properties::find_implementation(name).mutant, "'{}' is not a mutant", name);
    if (args.hunt.processes) properties::find_implementation(name + properties::kProcessSuffix);
  }
  if (args.hunt.processes) {
    // Every process hunts together (each case's ranks are processes); rank 0 prints.
    properties::RankProcesses* world = properties::mpi_rank_processes();
    CPLAB_CHECK(world != nullptr, "--mpi needs a build with MPI (CPLAB_MPI)");
    // A world of one runs every case at C = 1, where most mutants' bugs cannot show: a hunt that
    // "finds" survivors there is a launch mistake, not holes in the checks.
    CPLAB_CHECK(world->world_size() >= 2,
                "--mpi runs each case's ranks as the processes of an MPI job, and this job has {} "
                "process: start it under a launcher with two or more (mpirun -np 4 cplab mutants "
                "--mpi)",
                world->world_size());
    if (world->world_rank() != 0) silence_stdout();
  } else {
    CPLAB_CHECK(properties::launcher_processes() <= 1,
                "this hunt is one of {} processes started by a launcher: pass --mpi to run each "
                "case's ranks as those processes",
                properties::launcher_processes());
  }
  if (!args.json) {
    fmt::print("cplab mutants: seed {} · {} cases per job\n", args.hunt.seed, args.hunt.cases);
    std::fflush(stdout);
  }
  const auto progress = [&](const properties::MutantVerdict& v, std::int64_t, std::int64_t) {
    if (args.json) return;
    fmt::print("{:<8} {:<38} {:<44} {:<10} {:>5} cases {:>6.2f} s\n",
               v.killed ? "killed" : "SURVIVED", v.mutant, v.killed ? v.property : "-",
               v.killed ? v.layout : "-", v.cases, v.seconds);
    if (v.killed) {
      fmt::print(
          "         first failure: case {} of job {} after {:.2f} s; {} shrinks ({} tried) in "
          "{:.2f} s\n",
          v.job_cases, v.jobs, v.seconds_to_failure, v.shrinks, v.shrinks_tried, v.shrink_seconds);
      fmt::print("         counterexample: {}\n", v.counterexample);
    }
    std::fflush(stdout);
  };
  const std::vector<properties::MutantVerdict> verdicts =
      properties::hunt_mutants(args.hunt, progress);
  std::size_t survived = 0;
  for (const auto& v : verdicts) survived += v.killed ? 0 : 1;
  if (args.json) {
    nlohmann::json doc = {{"seed", args.hunt.seed},
                          {"cases_per_job", args.hunt.cases},
                          {"mutants", nlohmann::json::array()}};
    for (const auto& v : verdicts) doc["mutants"].push_back(verdict_json(v));
    doc["killed"] = verdicts.size() - survived;
    doc["survived"] = survived;
    fmt::print("{}\n", doc.dump(2));
  } else {
    fmt::print("{} of {} mutants killed{}\n", verdicts.size() - survived, verdicts.size(),
               survived ? "; the survivors are bugs the checks cannot see" : "");
  }
  return survived == 0 ? 0 : 1;
}

}  // namespace

Command add_mutants_command(CLI::App& app) {
  auto args = std::make_shared<MutantsArgs>();
  CLI::App* sub = app.add_subcommand(
      "mutants", "Run the property suite against every mutant: each must be killed");
  sub->add_flag("--json", args->json, "One JSON object: every mutant's verdict");
  sub->add_option("--cases", args->hunt.cases, "Cases per property × layout job")
      ->check(CLI::Range(std::int64_t{1}, limits::kMaxCasesPerJob));
  sub->add_option("--seed", args->seed_text,
                  "Seed of the hunt (default 0: the hunt is a fixed regression check)");
  sub->add_option("--only", args->hunt.only, "Only these mutants")->delimiter(',');
  sub->add_flag("--list", args->list, "List the mutants and their bugs");
  sub->add_flag("--mpi", args->hunt.processes,
                "Hunt each mutant's -mpi variant: its ranks are this MPI job's processes "
                "(mpirun -np N cplab mutants --mpi)");
  return {sub, [args] { return run_mutants(*args); }};
}

}  // namespace cplab::cli
