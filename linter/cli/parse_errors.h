#pragma once
// Command-line mistakes reported the way the rest of torchlint reports errors: one
// `torchlint: error: ...` line, a "did you mean" when a subcommand or an option is a
// typo of a real one, and the help pointer; exit 2.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace torchlint::cli {

// Prints the error for `e` raised while parsing `argv` with `app`; returns the exit code.
int report_parse_error(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv, const std::string& tool);

}  // namespace torchlint::cli
