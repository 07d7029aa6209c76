#include "parse_errors.h"

#include <algorithm>
#include <iostream>

#include "core/exit_code.h"
#include "core/text.h"

namespace torchlint::cli {

namespace {

// The subcommand being parsed when the error came: the deepest one named in argv.
const CLI::App* active_subcommand(const CLI::App& app, int argc, char** argv) {
  const CLI::App* current = &app;
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word.starts_with("-")) continue;
    for (const CLI::App* sub : current->get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_name() == word) {
        current = sub;
        break;
      }
    }
  }
  return current;
}

}  // namespace

int report_parse_error(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv, const std::string& tool) {
  const CLI::App* where = active_subcommand(app, argc, argv);
  std::string message = e.what();
  std::string hint;
  std::vector<std::string> names;  // the subcommands, if the tool has any
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  if (dynamic_cast<const CLI::RequiredError*>(&e) && where == &app && !names.empty() && argc >= 2 &&
      !std::string(argv[1]).starts_with("-")) {
    // `torchlint chek`: CLI11 only says a subcommand is required.
    message = "unknown command `" + std::string(argv[1]) + "`";
    if (std::string m = closest_match(argv[1], names); !m.empty()) hint = "did you mean `" + tool + " " + m + "`?";
  } else if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    // An unknown option: suggest the closest of the subcommand's own.
    std::vector<std::string> options;
    for (const CLI::Option* o : where->get_options()) {
      for (const auto& name : o->get_lnames()) options.push_back("--" + name);
    }
    for (int i = 1; i < argc; ++i) {
      std::string word = argv[i];
      if (!word.starts_with("--")) continue;
      std::string flag = word.substr(0, word.find('='));
      if (std::find(options.begin(), options.end(), flag) != options.end()) continue;
      message = "unexpected argument `" + flag + "`";
      if (std::string m = closest_match(flag, options); !m.empty()) hint = "did you mean `" + m + "`?";
      break;
    }
  }
  std::cerr << tool << ": error: " << message << '\n';
  if (!hint.empty()) std::cerr << "  " << hint << '\n';
  std::string path = where == &app ? tool : tool + " " + where->get_name();
  std::cerr << "For more information, run `" << path << " --help`.\n";
  return kExitError;
}

}  // namespace torchlint::cli
