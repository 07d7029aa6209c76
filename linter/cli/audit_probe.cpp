#include "audit_probe.h"

#include "process.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/glob.h"

namespace torchlint::cli {

namespace fs = std::filesystem;

namespace {

bool executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

std::string read_file(const fs::path& p, size_t limit) {
  std::ifstream in(p, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > limit) text = text.substr(text.size() - limit);
  return text;
}

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  size_t nl = text.find_last_of('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

}  // namespace

std::string find_probe_binary(const std::optional<std::string>& flag) {
  if (flag) return executable(*flag) ? fs::absolute(*flag).string() : std::string();
  if (const char* env = std::getenv("TORCHLINT_PROBE"); env && *env)
    return executable(env) ? fs::absolute(env).string() : std::string();
  auto found = find_executable("torchlint-probe");
  return found ? found->string() : std::string();
}

report::ProbeSection run_probe(const std::vector<ProbeTarget>& models, const ProbeRunOptions& options) {
  report::ProbeSection section;
  section.requested = true;
  if (!options.inputs.empty()) {
    section.inputs = options.inputs;
    section.inputs_source = "--probe-input";
  } else if (!options.config.inputs.empty()) {
    section.inputs = options.config.inputs;
    section.inputs_source = options.config_name + " [tool.torchlint.probe]";
  }
  section.binary = find_probe_binary(options.binary);

  std::vector<const ProbeTarget*> selected;
  for (const auto& m : models) {
    bool wanted =
        options.config.models.empty() || std::any_of(options.config.models.begin(), options.config.models.end(),
                                                     [&](const std::string& g) { return path_matches(g, m.display); });
    if (wanted) selected.push_back(&m);
  }
  if (selected.empty()) {
    section.note = models.empty() ? "No TorchScript model was found in the repository: nothing to probe."
                                  : "No TorchScript model matches `models` of [tool.torchlint.probe]: nothing probed.";
    return section;
  }
  auto skip_all = [&](const std::string& why) {
    section.note = why;
    for (const ProbeTarget* m : selected) section.models.push_back({m->display, "skipped", -1, why, nullptr});
  };
  if (section.binary.empty()) {
    skip_all(options.binary
                 ? "torchlint-probe was not found at " + *options.binary + ": the models were not probed."
                 : "torchlint-probe was not found (it is built when CMake finds LibTorch; looked beside torchlint, "
                   "in $TORCHLINT_PROBE and on PATH; or pass --probe-binary): the models were not probed.");
    return section;
  }
  if (section.inputs.empty()) {
    skip_all(
        "No input spec: set `inputs = [\"x:1x3x224x224:float32\"]` in [tool.torchlint.probe] or pass --probe-input; "
        "the models were not probed.");
    return section;
  }

  char pattern[] = "/tmp/torchlint-audit-probe-XXXXXX";
  std::string tmp_base = std::getenv("TMPDIR") && *std::getenv("TMPDIR") ? std::string(std::getenv("TMPDIR")) : "/tmp";
  std::string templ = tmp_base + "/torchlint-audit-probe-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  char* dir = mkdtemp(buf.data());
  if (!dir) dir = mkdtemp(pattern);
  if (!dir) {
    skip_all(std::string("cannot create a temporary directory for the probe's reports: ") + std::strerror(errno));
    return section;
  }
  fs::path work(dir);
  int timeout =
      options.config.timeout_seconds > 0 ? static_cast<int>(options.config.timeout_seconds) : options.timeout_seconds;

  size_t index = 0;
  for (const ProbeTarget* m : selected) {
    ++index;
    report::ProbeModel result{m->display, "skipped", -1, {}, nullptr};
    if (!m->trusted) {
      result.note = "not run: " + m->why_not;
      section.models.push_back(std::move(result));
      continue;
    }
    if (options.progress) {
      options.progress("probing model " + std::to_string(index) + "/" + std::to_string(selected.size()) + ": " +
                       m->display);
    }
    fs::path json_file = work / ("report-" + std::to_string(index) + ".json");
    fs::path err_file = work / ("stderr-" + std::to_string(index) + ".txt");
    std::vector<std::string> argv = {section.binary,    fs::absolute(m->path).string(), "--output-format", "json", "-o",
                                     json_file.string()};
    for (const auto& spec : section.inputs) {
      argv.push_back("--input");
      argv.push_back(spec);
    }
    if (!options.config.batch_sizes.empty()) {
      std::vector<std::string> sizes;
      for (auto b : options.config.batch_sizes) sizes.push_back(std::to_string(b));
      argv.push_back("--batch-sizes");
      argv.push_back(join(sizes, ","));
    }
    if (!options.config.checks.empty()) {
      argv.push_back("--checks");
      argv.push_back(join(options.config.checks, ","));
    }
    if (!options.config.device.empty()) {
      argv.push_back("--device");
      argv.push_back(options.config.device);
    }
    if (!options.config.memory_budget.empty()) {
      argv.push_back("--memory-budget");
      argv.push_back(options.config.memory_budget);
    }
    ProcessOptions spawn;
    spawn.stderr_file = err_file;
    spawn.timeout_seconds = timeout;
    ProcessResult exit = run_process(argv, spawn);
    if (exit.error.empty() && exit.signal) exit.error = "the probe was killed by signal " + std::to_string(exit.signal);
    result.exit_code = exit.exit_code;
    std::error_code ec;
    if (fs::exists(json_file, ec)) {
      auto parsed = nlohmann::ordered_json::parse(read_file(json_file, 256u << 20), nullptr, false);
      if (!parsed.is_discarded() && parsed.is_object()) result.report = std::move(parsed);
    }
    if (!exit.error.empty()) {
      result.status = "failed";
      result.note = exit.error;
    } else if (exit.timed_out) {
      result.status = "timed out";
      result.note = "stopped after " + std::to_string(timeout) + " s (set `timeout` in [tool.torchlint.probe])";
    } else if (result.report.is_null()) {
      result.status = "failed";
      std::string err = last_line(read_file(err_file, 4096));
      result.note =
          "exit " + std::to_string(exit.exit_code) + ", no report" + (err.empty() ? std::string() : ": " + err);
    } else if (result.report.contains("fatal") && result.report["fatal"].is_string()) {
      result.status = "failed";
      result.note = "could not be probed: " + result.report["fatal"].get<std::string>();
    } else {
      result.status = "probed";
    }
    section.models.push_back(std::move(result));
  }
  std::error_code ec;
  fs::remove_all(work, ec);
  return section;
}

std::vector<Diagnostic> probe_diagnostics(const report::ProbeSection& probe, const RuleSet& enabled,
                                          const RuleRegistry& registry) {
  std::vector<Diagnostic> out;
  for (const auto& m : probe.models) {
    if (m.status != "probed" || !m.report.contains("findings") || !m.report["findings"].is_array()) continue;
    for (const auto& f : m.report["findings"]) {
      if (!f.is_object() || !f.contains("code") || !f["code"].is_string()) continue;
      std::string code = f["code"].get<std::string>();
      // The latency check's finding is its figures, shown with the probe's charts.
      if (f.value("check", std::string()) == "latency") continue;
      const RuleInfo* rule = registry.find(code);
      auto index = rule ? registry.index_of(rule->code) : std::nullopt;
      if (!rule || !index || !enabled.contains(*index)) continue;
      Diagnostic d;
      d.code = rule->code;
      d.name = rule->name;
      d.severity = rule->severity;
      std::string severity = f.value("severity", std::string());
      if (severity == "error") d.severity = Severity::kError;
      if (severity == "warning") d.severity = Severity::kWarning;
      if (severity == "info") d.severity = Severity::kInfo;
      d.message = f.value("message", std::string());
      std::string check = f.value("check", std::string());
      if (!check.empty()) d.message = "probe check `" + check + "`: " + d.message;
      d.path = m.path;
      out.push_back(std::move(d));
    }
  }
  std::sort(out.begin(), out.end(), diagnostic_less);
  return out;
}

std::set<std::string> probe_rules_not_run(const report::ProbeSection& probe, const RuleRegistry& registry) {
  // The report of each probed model says which rule each of its checks reports.
  std::set<std::string> ran;
  for (const auto& m : probe.models) {
    if (m.status != "probed" || !m.report.contains("checks") || !m.report["checks"].is_object()) continue;
    for (const auto& [name, check] : m.report["checks"].items()) {
      if (!check.is_object() || !check.contains("rule") || !check["rule"].is_string()) continue;
      std::string status = check.value("status", std::string());
      if (status == "passed" || status == "failed") ran.insert(check["rule"].get<std::string>());
    }
  }
  std::set<std::string> not_run;
  for (const RuleInfo& rule : registry.rules()) {
    bool probe_rule = std::find(rule.languages.begin(), rule.languages.end(), Language::kProbe) != rule.languages.end();
    if (probe_rule && !ran.contains(rule.code)) not_run.insert(rule.code);
  }
  return not_run;
}

}  // namespace torchlint::cli
