// torchlint's command line: builds the app from one class per subcommand, parses, dispatches.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "ckpt_command.h"
#include "commands.h"
#include "core/exit_code.h"
#include "parse_errors.h"
#include "report_command.h"

#if TORCHLINT_WITH_MIMALLOC
#include <mimalloc.h>
#endif

using namespace torchlint;

// Which allocator serves this binary (see linter/cli/CMakeLists.txt), for bug reports and
// for telling benchmark figures apart.
static std::string allocator_note() {
#if TORCHLINT_WITH_MIMALLOC
  int v = mi_version();
  return " (allocator: mimalloc " + std::to_string(v / 100) + "." + std::to_string(v % 100 / 10) + "." +
         std::to_string(v % 10) + ")";
#else
  return "";
#endif
}

// A lint run frees each file's tree and analysis right before the next file allocates as
// much again. mimalloc's default hands freed pages back to the kernel (decommit) and then
// faults them in again, zeroed, a page at a time: on the corpus of bench/run.sh that was
// 30 % of all page faults and about 5 % of the time. A lint run is short and its peak memory
// is the same either way, so it keeps its pages. MIMALLOC_ALLOW_DECOMMIT or
// MIMALLOC_DECOMMIT_DELAY in the environment still decide, as mimalloc documents.
static void tune_allocator() {
#if TORCHLINT_WITH_MIMALLOC
  if (!std::getenv("MIMALLOC_ALLOW_DECOMMIT") && !std::getenv("MIMALLOC_DECOMMIT_DELAY")) {
    // Segments take allow_decommit when they are created, and the first one was created
    // before main; the delay is read whenever a decommit is scheduled, so it reaches that
    // segment too. An hour is longer than any lint run.
    mi_option_disable(mi_option_allow_decommit);
    mi_option_set(mi_option_decommit_delay, 3600L * 1000);
  }
#endif
}

// A list option takes one value per occurrence (`--select TL1,TL2`, or `--select TL1
// --select TL2`): by default CLI11 lets a vector option swallow every word after it, so
// `--select ALL train.py` would read the path as a rule selector.
static void one_value_per_option(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (!option->nonpositional() || option->get_expected_max() <= 1) continue;
    option->allow_extra_args(false);
  }
  for (CLI::App* sub : app.get_subcommands({})) one_value_per_option(*sub);
}

int main(int argc, char** argv) {
  tune_allocator();
  CLI::App app{"torchlint: lint PyTorch training code against the best-practice checklist"};
  app.set_version_flag("-V,--version", std::string("torchlint ") + TORCHLINT_VERSION + allocator_note());
  app.require_subcommand(1);

  cli::CheckCommand check_cmd(app);
  cli::AuditCommand audit_cmd(app);
  cli::RulesCommand rules_cmd(app);
  cli::CkptCommand ckpt_cmd(app);
  cli::ServerCommand server_cmd(app);
  cli::ReportCommand report_cmd(app);

  // `torchlint` alone, `torchlint help` and `torchlint help CMD`: the help, as `--help` prints it.
  if (argc == 1 || (argc >= 2 && std::string_view(argv[1]) == "help")) {
    const CLI::App* about = &app;
    if (argc >= 3) {
      for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        if (sub->get_name() == argv[2]) about = sub;
      }
    }
    std::cout << about->help();
    return argc == 1 ? kExitError : kExitClean;
  }
  try {
    one_value_per_option(app);
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return cli::report_parse_error(app, e, argc, argv, "torchlint");
  }

  try {
    if (rules_cmd.selected()) return rules_cmd.run();
    if (audit_cmd.selected()) return audit_cmd.run();
    if (ckpt_cmd.selected()) return ckpt_cmd.run();
    if (server_cmd.selected()) return server_cmd.run();
    if (report_cmd.selected()) return report_cmd.run();
    return check_cmd.run();
  } catch (const std::exception& e) {
    std::cerr << "torchlint: internal error: " << e.what() << '\n';
    return kExitError;
  }
}
