// The checkpoints that fixtures/checkpoints/make.py wrote with the real torch.save:
// each must give exactly the codes its case in cases.toml expects (every finding
// expected, every expectation found), and the summary facts the case states.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include "registry/checkpoint_rules.h"
#include "checkpoint/inspector.h"
#include "checkpoint/summary.h"

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
  auto table = toml::parse_file(std::string(TORCHLINT_SOURCE_DIR) + "/fixtures/checkpoints/cases.toml");
  REQUIRE_MESSAGE(table, "fixtures/checkpoints/cases.toml does not parse");
  fs::path dir = fixture_dir();
  if (!fs::exists(dir / "made.json")) {
    MESSAGE("checkpoint fixtures not generated (python3-torch missing?): " << dir << " - skipped");
    return;
  }
  std::map<std::string, size_t> per_rule;
  size_t cases = 0;
  for (const auto& node : *table["case"].as_array()) {
    const auto& c = *node.as_table();
    std::string file = c["file"].value_or(std::string());
    CAPTURE(file);
    std::set<std::string> expected;
    if (const auto* e = c["expect"].as_array()) {
      for (const auto& code : *e) expected.insert(code.value_or(std::string()));
    }
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
