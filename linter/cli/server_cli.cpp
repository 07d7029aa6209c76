// `torchlint server`: runs the language server (linter/server) on stdin and stdout.
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "commands.h"
#include "server/language_server.h"

namespace torchlint::cli {

ServerCommand::ServerCommand(CLI::App& app) {
  command_ = app.add_subcommand("server", "Run the language server (LSP over stdin/stdout) for editors");
  command_
      ->add_option("--debounce-ms", debounce_ms_,
                   "Milliseconds an edit waits for the next one before the file is linted again (default 100)")
      ->check(CLI::Range(0u, 10000u));
  command_->add_flag("--full-reparse", full_reparse_,
                     "Parse every edited file from scratch instead of from its previous tree (for comparison)");
}

int ServerCommand::run() const {
  // A client that goes away closes the pipe: writing to it must fail (and end the
  // server), not kill the process with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  server::ServerOptions options;
  options.version = TORCHLINT_VERSION;
  options.debounce = std::chrono::milliseconds(debounce_ms_);
  options.incremental_parse = !full_reparse_;
  server::LanguageServer server(stdin, stdout, options);
  int code = server.run();
  // A lint may still be running on its worker thread (a large file when the editor quit):
  // end now rather than wait for it, and without running static destructors under it.
  std::fflush(stdout);
  std::_Exit(code);
}

}  // namespace torchlint::cli
