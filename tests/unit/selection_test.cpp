#include <doctest/doctest.h>

#include "cli/check_command.h"
#include "core/rule_selection.h"

using namespace torchlint;

namespace {
bool on(const RuleSet& set, const char* code) { return set.contains(*cli::registry().index_of(code)); }
}  // namespace

TEST_CASE("default selection is the default-on rules") {
  std::vector<std::string> unknown;
  auto set = resolve_selection(cli::registry(), {}, unknown);
  CHECK(on(set, "TL102"));
  CHECK_FALSE(on(set, "TL001"));  // opt-in
  CHECK(unknown.empty());
}

TEST_CASE("Ruff-like selection: prefixes, names, specificity, layers") {
  std::vector<std::string> unknown;
  SelectionLayer file;
  file.select = std::vector<std::string>{"TL1"};
  file.ignore = {"eval-without-no-grad"};
  auto set = resolve_selection(cli::registry(), {file}, unknown);
  CHECK(on(set, "TL101"));
  CHECK_FALSE(on(set, "TL102"));
  CHECK_FALSE(on(set, "TL304"));

  // A more specific select beats a broader ignore within one layer.
  SelectionLayer specific;
  specific.select = std::vector<std::string>{"TL304"};
  specific.ignore = {"TL3"};
  CHECK(on(resolve_selection(cli::registry(), {specific}, unknown), "TL304"));

  // The command line layer's select replaces the file's.
  SelectionLayer cli_layer;
  cli_layer.select = std::vector<std::string>{"TL401"};
  set = resolve_selection(cli::registry(), {file, cli_layer}, unknown);
  CHECK(on(set, "TL401"));
  CHECK_FALSE(on(set, "TL101"));

  // extend-select adds to the file's selection; ALL turns on opt-in rules.
  SelectionLayer extend;
  extend.extend_select = {"TL001"};
  CHECK(on(resolve_selection(cli::registry(), {file, extend}, unknown), "TL001"));
  SelectionLayer all;
  all.select = std::vector<std::string>{"ALL"};
  CHECK(on(resolve_selection(cli::registry(), {all}, unknown), "TL001"));
  CHECK(unknown.empty());

  SelectionLayer bad;
  bad.ignore = {"TL999", "not-a-rule"};
  resolve_selection(cli::registry(), {bad}, unknown);
  CHECK(unknown.size() == 2);
}
