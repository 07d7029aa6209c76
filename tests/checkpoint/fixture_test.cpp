// The checkpoints that fixtures/checkpoints/make.py wrote with the real torch.save:
// each must give exactly the codes its case in cases.toml expects (every finding
// expected, every expectation found), and the summary facts the case states.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "registry/checkpoint_rules.h"
#include "checkpoint/inspector.h"
#include "checkpoint/summary.h"
#include "support/expect_marks.h"

namespace fs = std::filesystem;
using namespace torchlint;
using namespace torchlint::ckpt;

namespace {

fs::path fixture_dir() {
  const char* env = std::getenv("TORCHLINT_CKPT_FIXTURES");
  return env ? fs::path(env) : fs::path(TORCHLINT_CKPT_FIXTURES);
}

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ", ") + x;
  return "[" + out + "]";
}

}  // namespace

TEST_CASE("every generated fixture gives exactly the expected findings") {
  torchlint::testing::CheckpointCases table =
      torchlint::testing::read_checkpoint_fixture_cases(std::string(TORCHLINT_SOURCE_DIR) + "/fixtures/checkpoints");
  for (const auto& e : table.errors) FAIL_CHECK(e);
  fs::path dir = fixture_dir();
  // python3-torch is a test dependency, and `ctest` runs make.py first (checkpoint_fixtures):
  // missing fixtures are a broken setup, not a pass.
  REQUIRE_MESSAGE(fs::exists(dir / "made.json"), "checkpoint fixtures not generated in "
                                                     << dir << " (run fixtures/checkpoints/make.py with python3-torch, "
                                                     << "or `ctest -R checkpoint_fixtures`)");
  std::map<std::string, size_t> per_rule;
  size_t cases = 0;
  for (const auto& tc : table.cases) {
    const toml::table& c = tc.table;
    const std::string& file = tc.file;
    CAPTURE(file);
    const std::set<std::string>& expected = tc.expect;
    InspectOptions options;
    options.scan_values = c["scan_values"].value_or(false);
    Inspection inspection = inspect_paths({(dir / file).string()}, options);
    std::string errors;
    for (const auto& e : inspection.errors) errors += e.message + "\n";
    REQUIRE_MESSAGE(inspection.errors.empty(), errors);
    REQUIRE(inspection.checkpoints.size() == 1);
    const Checkpoint& cp = inspection.checkpoints.front();
    auto diagnostics = run_checkpoint_rules(cp, checkpoint_rules(), [](const std::string&) { return true; });
    std::set<std::string> got;
    std::string messages;
    for (const auto& d : diagnostics) {
      got.insert(d.code);
      messages += "  " + d.code + " " + d.message + "\n";
    }
    CHECK_MESSAGE(got == expected, "expected " << join(expected) << ", got " << join(got) << "\n" << messages);
    if (auto format = c["format"].value<std::string>()) {
      CHECK_MESSAGE(std::string(format_name(cp.files.front()->format)).find(*format) != std::string::npos,
                    "format is " << format_name(cp.files.front()->format));
    }
    if (auto safety = c["safety"].value<std::string>()) {
      std::string verdict = assess_checkpoint_safety(cp).text;
      CHECK_MESSAGE(verdict.starts_with(*safety), "safety is: " << verdict);
    }
    TrainingState training = analyze_training_state(cp);
    if (auto resumable = c["resumable"].value<bool>()) {
      CHECK(training.training);
      CHECK_MESSAGE(training.resumable() == *resumable, render_summary(cp, training, {}));
    }
    if (auto tensors = c["tensors"].value<int64_t>())
      CHECK(cp.files.front()->tensors.size() == static_cast<size_t>(*tensors));
    // The summary renders for every fixture.
    CHECK(render_summary(cp, training, {}).find("safety") != std::string::npos);
    for (const auto& code : expected) ++per_rule[code];
    ++cases;
  }
  MESSAGE(cases << " generated checkpoint fixtures checked");
  CHECK(cases >= 40);
}
