#pragma once
// A subcommand of the cplab executable: it adds its options to its CLI11 subcommand and returns
// the function that runs it (exit status). Errors are thrown as cplab::Error; main() prints them
// as one line and exits with the status cli/errors.hpp defines.
#include <CLI/CLI.hpp>
#include <functional>

#include "cli/errors.hpp"

namespace cplab::cli {

using Runner = std::function<int()>;

struct Command {
  CLI::App* sub;  // the subcommand it added
  Runner run;
};

// One function per subcommand file; main() lists them.
Command add_layout_command(CLI::App& app);
Command add_loss_command(CLI::App& app);
Command add_sweep_command(CLI::App& app);
Command add_replay_command(CLI::App& app);
Command add_mutants_command(CLI::App& app);
Command add_check_command(CLI::App& app);
Command add_explain_command(CLI::App& app);
Command add_bench_command(CLI::App& app);
Command add_schedule_command(CLI::App& app);

}  // namespace cplab::cli
