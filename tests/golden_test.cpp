// Runs torchlint over every fixture and compares with the `# expect: TLxxx` marks in the
// fixture files (read by tests/support/expect_marks.h): every finding must be marked and
// every mark must be found.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "catalog.h"
#include "cli/check_command.h"
#include "core/fixes.h"
#include "support/expect_marks.h"

namespace fs = std::filesystem;
using namespace torchlint;
using testing::CommentSyntax;
using testing::Mark;

namespace {

// Per-rule tallies over the cases of one test, for its precision/recall table.
struct Tally {
  size_t true_positives = 0, false_positives = 0, false_negatives = 0;
};
using Tallies = std::map<std::string, Tally>;

void print_tallies(const Tallies& tallies) {
  std::printf("\n%-7s %6s %6s %6s %9s %7s\n", "rule", "TP", "FP", "FN", "precision", "recall");
  for (const auto& [code, t] : tallies) {
    double p = t.true_positives + t.false_positives
                   ? double(t.true_positives) / double(t.true_positives + t.false_positives)
                   : 1.0;
    double r = t.true_positives + t.false_negatives
                   ? double(t.true_positives) / double(t.true_positives + t.false_negatives)
                   : 1.0;
    std::printf("%-7s %6zu %6zu %6zu %9.2f %7.2f\n", code.c_str(), t.true_positives, t.false_positives,
                t.false_negatives, p, r);
  }
}

struct CaseCheck {
  std::string problems;  // empty when the findings are exactly the marks
  std::set<Mark> marks;
};

// Lints one fixture case (a file, or a directory as one project) with every rule. A rule
// fixture is a program of its own: the other cases beside it give it no context.
CaseCheck check_case(const fs::path& path, Tallies& tallies, bool project_context = true) {
  testing::Marks marks = testing::read_marks(path, CommentSyntax::kHash);
  const std::set<Mark>& expected = marks.marks;
  std::ostringstream report;
  for (const auto& e : marks.errors) report << "  error: " << e << "\n";
  cli::CheckRequest request;
  request.paths = {path.generic_string()};
  request.project_context = project_context;
  request.selection.select = std::vector<std::string>{"ALL"};
  request.jobs = 2;
  std::string error;
  auto run = cli::run_check(request, error);
  if (!run) return {report.str() + "  error: " + error + "\n", std::move(marks.marks)};
  std::set<Mark> found;
  for (const auto& d : run->outcome.diagnostics) {
    Mark key{fs::path(d.path).lexically_normal().generic_string(), d.start.line, d.code};
    found.insert(key);
    if (expected.contains(key)) ++tallies[d.code].true_positives;
    if (!expected.contains(key)) {
      ++tallies[d.code].false_positives;
      report << "  Noisy:   " << d.path << ":" << d.start.line << ":" << d.start.column << " " << d.code << " "
             << d.message << "\n";
    }
  }
  for (const auto& key : expected) {
    if (!found.contains(key)) {
      ++tallies[key.code].false_negatives;
      report << "  Missing: " << key.path << ":" << key.line << " " << key.code << "\n";
    }
  }
  for (const auto& e : run->outcome.errors) report << "  error: " << e.path << ": " << e.message << "\n";
  return {report.str(), std::move(marks.marks)};
}

std::vector<fs::path> cases_in(const fs::path& rule_dir) {
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(rule_dir)) {
    std::string name = e.path().filename().string();
    if (!(name.starts_with("bad") || name.starts_with("good"))) continue;
    if (e.is_directory() || e.path().extension() == ".py") cases.push_back(e.path());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

}  // namespace

TEST_CASE("every fixture's findings match its expect marks") {
  REQUIRE(fs::is_directory("fixtures/python"));
  size_t cases = 0, failures = 0;
  std::vector<fs::path> rule_dirs;
  for (const auto& e : fs::directory_iterator("fixtures/python")) {
    if (e.is_directory()) rule_dirs.push_back(e.path());
  }
  std::sort(rule_dirs.begin(), rule_dirs.end());
  REQUIRE_FALSE(rule_dirs.empty());
  Tallies tallies;
  for (const auto& dir : rule_dirs) {
    auto dir_cases = cases_in(dir);
    // Every rule directory holds at least one case that must flag and one that must not.
    CHECK_MESSAGE(std::any_of(dir_cases.begin(), dir_cases.end(),
                              [](const fs::path& c) { return c.filename().string().starts_with("bad"); }),
                  dir.generic_string() << " has no bad_* case");
    CHECK_MESSAGE(std::any_of(dir_cases.begin(), dir_cases.end(),
                              [](const fs::path& c) { return c.filename().string().starts_with("good"); }),
                  dir.generic_string() << " has no good_* case");
    const std::string code = dir.filename().string().substr(0, dir.filename().string().find('-'));
    for (const auto& c : dir_cases) {
      ++cases;
      CaseCheck check = check_case(c, tallies, /*project_context=*/false);
      if (!check.problems.empty()) {
        ++failures;
        FAIL_CHECK(c.generic_string() << ":\n" << check.problems);
      }
      // A flagged case that marks nothing of its rule would pass with the rule silent.
      if (c.filename().string().starts_with("bad")) {
        CHECK_MESSAGE(
            std::any_of(check.marks.begin(), check.marks.end(), [&](const Mark& m) { return m.code == code; }),
            c.generic_string() << " is a bad_* case without an `expect: " << code << "` mark");
      }
    }
  }
  MESSAGE(cases << " fixture cases, " << failures << " failing");
  CHECK(cases > 0);
  print_tallies(tallies);
}

TEST_CASE("the sample project's findings match its expect marks") {
  REQUIRE(fs::is_directory("fixtures/sample_project"));
  Tallies tallies;
  CaseCheck check = check_case("fixtures/sample_project", tallies);
  CHECK_MESSAGE(check.problems.empty(), "fixtures/sample_project:\n" << check.problems);
  CHECK_FALSE(check.marks.empty());  // the project carries expect marks at all
}

TEST_CASE("realistic training projects: findings match their expect marks") {
  // fixtures/projects/<name>/ are complete projects written the way people write them;
  // their marks are the ground truth for precision and recall.
  REQUIRE(fs::is_directory("fixtures/projects"));
  std::vector<fs::path> projects;
  for (const auto& e : fs::directory_iterator("fixtures/projects")) {
    if (e.is_directory()) projects.push_back(e.path());
  }
  std::sort(projects.begin(), projects.end());
  REQUIRE(projects.size() >= 10);
  Tallies tallies;
  size_t marks = 0;
  for (const auto& p : projects) {
    CaseCheck check = check_case(p, tallies);
    CHECK_MESSAGE(check.problems.empty(), p.generic_string() << ":\n" << check.problems);
  }
  for (const auto& [code, t] : tallies) marks += t.true_positives + t.false_negatives;
  CHECK(marks > 0);  // the projects carry expect marks at all
  print_tallies(tallies);
}

TEST_CASE("fixes: every fixable rule's bad fixtures become their .fixed snapshots") {
  // `bad_x.py` with a sibling `bad_x.py.fixed`: the safe fixes applied once must give the
  // snapshot byte for byte, and a fixable rule needs at least one snapshot.
  size_t snapshots = 0;
  for (const auto& rule : rule_catalog()) {
    if (!rule.fixable ||
        std::find(rule.languages.begin(), rule.languages.end(), Language::kPython) == rule.languages.end())
      continue;
    fs::path dir = fs::path("fixtures/python") / (rule.code + "-" + rule.name);
    REQUIRE_MESSAGE(fs::is_directory(dir), dir.generic_string());
    size_t for_rule = 0;
    for (const auto& c : cases_in(dir)) {
      fs::path snapshot = c.string() + ".fixed";
      if (!fs::is_regular_file(c) || !fs::exists(snapshot)) continue;
      ++for_rule;
      cli::CheckRequest request;
      request.paths = {c.generic_string()};
      request.project_context = false;
      request.selection.select = std::vector<std::string>{rule.code};
      std::string error;
      auto run = cli::run_check(request, error);
      REQUIRE_MESSAGE(run, error);
      std::vector<const Diagnostic*> diagnostics;
      for (const auto& d : run->outcome.diagnostics) diagnostics.push_back(&d);
      std::ifstream in(c), expected_in(snapshot);
      std::stringstream original, expected;
      original << in.rdbuf();
      expected << expected_in.rdbuf();
      FixResult fixed = apply_fixes(original.str(), diagnostics);
      CHECK_MESSAGE(fixed.text == expected.str(),
                    c.generic_string() << ": fixed text differs from its snapshot:\n"
                                       << unified_diff(snapshot.generic_string(), expected.str(), fixed.text));
      CHECK(fixed.applied > 0);
    }
    CHECK_MESSAGE(for_rule > 0, rule.code << " is fixable but has no bad_*.py.fixed snapshot");
    snapshots += for_rule;
  }
  CHECK(snapshots > 0);
}
