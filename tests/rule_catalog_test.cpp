// Every registered rule is complete: a doc in the expected shape, fixtures with flagged
// and must-not-flag cases, and a place in the checklist; every checklist item names
// rules that exist.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include "cli/check_command.h"
#include "support/expect_marks.h"

namespace fs = std::filesystem;
using namespace torchlint;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Whether a fixture case (a file, or a directory as one project) marks a line with exactly
// `code`; a mark that does not parse fails the test.
bool contains_mark(const fs::path& p, const std::string& code) {
  testing::Marks marks = testing::read_marks(p, testing::CommentSyntax::kHash);
  for (const auto& e : marks.errors) FAIL_CHECK(e);
  return std::any_of(marks.marks.begin(), marks.marks.end(), [&](const testing::Mark& m) { return m.code == code; });
}

}  // namespace

TEST_CASE("every rule has a doc, fixtures and checklist items") {
  const auto& rules = cli::registry().rules();
  REQUIRE(rules.size() >= 10);
  auto checklist = toml::parse_file("checklists/pytorch-best-practices.toml");
  REQUIRE_MESSAGE(checklist, "checklists/pytorch-best-practices.toml does not parse");
  std::set<std::string> items;
  std::map<std::string, std::set<std::string>> item_rules;  // item id -> the rules it lists
  if (const auto* arr = checklist.table()["item"].as_array()) {
    for (const auto& item : *arr) {
      if (const auto* t = item.as_table()) {
        std::string id = (*t)["id"].value_or(std::string());
        items.insert(id);
        if (const auto* list = (*t)["rules"].as_array()) {
          for (const auto& r : *list) item_rules[id].insert(r.value_or(std::string()));
        }
      }
    }
  }
  std::set<std::string> codes;
  for (const auto& rule : rules) {
    codes.insert(rule.code);
    CAPTURE(rule.code);
    REQUIRE_FALSE(rule.doc.empty());
    CHECK(rule.doc.starts_with("# " + rule.code + ": " + rule.name + "\n"));
    CHECK_FALSE(rule.summary().empty());
    if (rule.code != "TL000" && rule.code != "TL001") {
      for (const char* section : {"## What it does", "## Why is this bad?", "## Example", "## Use instead"}) {
        CHECK_MESSAGE(rule.doc.find(section) != std::string_view::npos, "missing section " << section);
      }
    }
    // A rule torchlint-cpp implements has its C++ doc beside the C++ rule, and the
    // embedded doc carries it (TL000 and TL001 are the front-ends' own, not rules).
    bool cpp_rule = std::find(rule.languages.begin(), rule.languages.end(), Language::kCpp) != rule.languages.end();
    if (cpp_rule && rule.code != "TL000" && rule.code != "TL001") {
      fs::path cpp_doc = fs::path("rules/cpp") / (rule.code + "-" + rule.name + ".md");
      CHECK_MESSAGE(fs::exists(cpp_doc), "no C++ doc " << cpp_doc);
      CHECK_MESSAGE(fs::exists(fs::path(cpp_doc).replace_extension(".cpp")), "no C++ rule beside " << cpp_doc);
      CHECK_MESSAGE(rule.doc.find("\n## C++\n") != std::string_view::npos, "the doc has no C++ section");
    }
    // Rule -> item: every rule belongs to an item, and that item lists it back (the
    // scorecard counts a rule's findings against the items that list it).
    CHECK_FALSE(rule.checklist_items.empty());
    for (const auto& item : rule.checklist_items) {
      CHECK_MESSAGE(items.contains(item), "unknown checklist item " << item);
      CHECK_MESSAGE(item_rules[item].contains(rule.code),
                    "checklist item " << item << " does not list " << rule.code << ", which names it");
    }

    // Probe rules are reported by torchlint-probe, which runs models: their cases are the
    // models of fixtures/models/make.py, and tests/probe/ asserts each code on them.
    if (rule.languages == std::vector<Language>{Language::kProbe}) {
      bool asserted = false;
      for (const auto& e : fs::directory_iterator("tests/probe")) {
        if (read_all(e.path()).find('"' + rule.code + '"') != std::string::npos) asserted = true;
      }
      CHECK_MESSAGE(asserted, "tests/probe/ never asserts " << rule.code);
      continue;
    }
    // Checkpoint rules run on checkpoint files, which make.py writes with the real
    // torch.save at test time: their cases are the `[[case]]` entries under <CODE>-<name>/
    // of fixtures/checkpoints/cases.toml or of the rule folder's own cases.toml, and tests/checkpoint's fixture
    // test checks each file gives exactly the codes its `expect` lists.
    if (rule.languages == std::vector<Language>{Language::kCheckpoint}) {
      testing::CheckpointCases cases = testing::read_checkpoint_fixture_cases("fixtures/checkpoints");
      for (const auto& e : cases.errors) FAIL_CHECK(e);
      std::string dir = rule.code + "-" + rule.name + "/";
      bool bad = false, good = false;
      for (const auto& c : cases.cases) {
        const std::string& file = c.file;
        if (!file.starts_with(dir)) continue;
        bool expects = c.expect.contains(rule.code);
        if (file.substr(dir.size()).starts_with("bad") && expects) bad = true;
        if (file.substr(dir.size()).starts_with("good")) {
          good = true;
          CHECK_MESSAGE(!expects, file << " is a must-not-flag case but expects " << rule.code);
        }
      }
      CHECK_MESSAGE(bad, rule.code << " has no flagged case (bad*) in fixtures/checkpoints");
      CHECK_MESSAGE(good, rule.code << " has no must-not-flag case (good*) in fixtures/checkpoints");
      continue;
    }
    fs::path dir = fs::path("fixtures/python") / (rule.code + "-" + rule.name);
    REQUIRE_MESSAGE(fs::is_directory(dir), "no fixtures at " << dir);
    bool bad = false, good = false;
    for (const auto& e : fs::directory_iterator(dir)) {
      std::string name = e.path().filename().string();
      // A case is a .py file or a directory (the golden test's cases), not a .fixed snapshot.
      if (!e.is_directory() && e.path().extension() != ".py") continue;
      if (name.starts_with("bad") && contains_mark(e.path(), rule.code)) bad = true;
      if (name.starts_with("good")) {
        good = true;
        CHECK_MESSAGE(!contains_mark(e.path(), rule.code), e.path()
                                                               << " is a must-not-flag case but expects " << rule.code);
      }
    }
    CHECK_MESSAGE(bad, rule.code << " has no flagged fixture (bad*)");
    CHECK_MESSAGE(good, rule.code << " has no must-not-flag fixture (good*)");
  }
  // And the other direction: every item's rules exist.
  if (const auto* arr = checklist.table()["item"].as_array()) {
    for (const auto& item : *arr) {
      const auto* t = item.as_table();
      REQUIRE(t);
      std::string id = (*t)["id"].value_or(std::string());
      const auto* rule_list = (*t)["rules"].as_array();
      bool manual = (*t)["manual"].value_or(false);
      bool planned = (*t)["planned"].value_or(false);
      CHECK_MESSAGE((manual || planned || (rule_list && !rule_list->empty())),
                    "item " << id << " names no rule and is neither manual nor planned");
      if (!rule_list) continue;
      for (const auto& r : *rule_list) {
        std::string code = r.value_or(std::string());
        // Item -> rule: the rule exists (source, checkpoint or probe check) and names the
        // item back.
        const RuleInfo* rule = cli::registry().find(code);
        CHECK_MESSAGE((rule && rule->code == code), "item " << id << " names unknown rule " << code);
        if (!rule) continue;
        bool back =
            std::find(rule->checklist_items.begin(), rule->checklist_items.end(), id) != rule->checklist_items.end();
        CHECK_MESSAGE(back, "item " << id << " lists " << code << ", whose checklist_items do not name it");
      }
    }
  }
}
