// cplab: context-parallel layout testbed. Thin wiring: each subcommand lives in its own file.
#include <fmt/core.h>

#include <cstdio>
#include <exception>
#include <vector>

#include "cli/arguments.hpp"
#include "cli/command.hpp"
#include "cli/errors.hpp"
#include "cli/stop_signals.hpp"

namespace {

// CLI11 fills an option's least number of values with whatever follows, options included:
// `check --shards --layout thd` took "--layout" for a shard file and then said "--layout is
// required". A value that is one of the command's own options is refused as what it is: the
// option before it was given no value.
void refuse_options_taken_as_values(CLI::App& app, const CLI::App& root) {
  for (CLI::Option* option : app.get_options()) {
    if (!option->nonpositional() || option->get_type_size_max() <= 0) continue;  // flags
    option->check(CLI::Validator(
        [&app, &root](std::string& value) -> std::string {
          if (value.size() < 3 || value.rfind("--", 0) != 0) return {};
          const std::string name = value.substr(0, value.find('='));
          if (app.get_option_no_throw(name) == nullptr && root.get_option_no_throw(name) == nullptr)
            return {};
          return fmt::format("no value given ({} after it is an option; a file so named is ./{})",
                             name, value);
        },
        ""));
  }
  for (CLI::App* sub : app.get_subcommands({})) refuse_options_taken_as_values(*sub, root);
}

}  // namespace

int main(int argc, char** argv) {
  // First: a SIGINT/SIGTERM from here on is recorded, never lost (cli/stop_signals.hpp says what
  // happens before main, and how the executable's .preinit_array already installed it once).
  cplab::cli::catch_stop_signals();
  bool verbose = false;
  const int status = cplab::cli::run_guarded(
      [&] {
        CLI::App app{"cplab: context-parallel token layouts, checked against a reference"};
        app.require_subcommand(1);
        app.set_help_all_flag("--help-all", "Show every subcommand's options");
        app.add_flag("--verbose", verbose, "On errors, add detail (exception type, libtorch text)");
        app.fallthrough();  // --verbose after the subcommand too
        const std::vector<cplab::cli::Command> commands = {
            cplab::cli::add_layout_command(app),   cplab::cli::add_loss_command(app),
            cplab::cli::add_sweep_command(app),    cplab::cli::add_replay_command(app),
            cplab::cli::add_mutants_command(app),  cplab::cli::add_check_command(app),
            cplab::cli::add_explain_command(app),  cplab::cli::add_bench_command(app),
            cplab::cli::add_schedule_command(app),
        };
        cplab::cli::refuse_non_decimal_integers(app);
        refuse_options_taken_as_values(app, app);
        try {
          app.parse(argc, argv);
        } catch (const CLI::CallForHelp& e) {
          cplab::cli::release_stop_signals();
          return app.exit(e);
        } catch (const CLI::CallForAllHelp& e) {
          cplab::cli::release_stop_signals();
          return app.exit(e);
        } catch (const CLI::ParseError& e) {
          cplab::cli::release_stop_signals();
          std::fprintf(stderr, "cplab: %s\n", cplab::escape_untrusted(e.what()).c_str());
          return cplab::cli::kUsageError;
        }
        cplab::cli::set_verbose(verbose);
        for (const auto& command : commands) {
          if (!command.sub->parsed()) continue;
          // Only the sweep stops between steps and reports what ran (its --merge and its MPI
          // jobs release them itself); every other command gets the default effect back.
          if (command.sub->get_name() != "sweep") cplab::cli::release_stop_signals();
          return command.run();
        }
        cplab::cli::release_stop_signals();
        return cplab::cli::kUsageError;
      },
      verbose);
  return cplab::cli::finish_output(status);
}
