#include "audit_command.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "registry/all_rules.h"
#include "audit_checkpoints.h"
#include "audit_probe.h"
#include "checkpoint/summary.h"
#include "checkpoint/training_state.h"
#include "core/exit_code.h"
#include "core/scorecard.h"
#include "report/audit.h"

namespace torchlint::cli {

namespace fs = std::filesystem;

namespace {

// One status line on stderr, rewritten in place; only when stderr is a terminal, so it
// never mixes into redirected or machine-readable output.
class Progress {
 public:
  Progress() : enabled_(isatty(STDERR_FILENO) != 0) {}
  ~Progress() { clear(); }
  void operator()(const std::string& text) {
    if (!enabled_) return;
    std::string line = "torchlint audit: " + text;
    if (line.size() > 110) line = line.substr(0, 107) + "...";
    std::cerr << "\r\x1b[K" << line << std::flush;
    shown_ = true;
  }
  void clear() {
    if (shown_) std::cerr << "\r\x1b[K" << std::flush;
    shown_ = false;
  }

 private:
  bool enabled_;
  bool shown_ = false;
};

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

int run_audit(const AuditRequest& request_in) {
  Progress progress;
  // The report speaks in paths relative to the audited repository (its links work when
  // the report sits at the repository root): run from there.
  AuditRequest request = request_in;
  std::string repo = request.check.paths.empty() ? std::string(".") : request.check.paths.front();
  std::error_code ec;
  if (request.output) request.output = fs::absolute(*request.output, ec).string();
  if (request.checklist_file) request.checklist_file = fs::absolute(*request.checklist_file, ec).string();
  if (request.check.cache_dir) request.check.cache_dir = fs::absolute(*request.check.cache_dir, ec).string();
  if (request.probe_binary) request.probe_binary = fs::absolute(*request.probe_binary, ec).string();
  if (request.check.config_file) request.check.config_file = fs::absolute(*request.check.config_file, ec).string();
  // --checkpoints: opened by absolute path, shown as given.
  std::vector<std::pair<std::string, std::string>> extra_checkpoints;
  for (const auto& p : request.checkpoint_paths) {
    if (!fs::exists(p, ec)) {
      std::cerr << "torchlint: error: --checkpoints " << p << ": no such file or directory\n";
      return kExitError;
    }
    extra_checkpoints.emplace_back(fs::absolute(p, ec).lexically_normal().string(), fs::path(p).lexically_normal().generic_string());
  }
  if (!fs::is_directory(repo, ec)) {
    std::cerr << "torchlint: error: " << repo << ": not a directory\n";
    return kExitError;
  }
  fs::current_path(repo, ec);
  if (ec) {
    std::cerr << "torchlint: error: cannot enter " << repo << ": " << ec.message() << '\n';
    return kExitError;
  }
  request.check.paths = {"."};
  Checklist custom;
  const Checklist* checklist = &builtin_checklist();
  if (request.checklist_file) {
    std::ifstream in(*request.checklist_file);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string error;
    auto parsed = in ? parse_checklist(ss.str(), error) : std::nullopt;
    if (!parsed) {
      std::cerr << "torchlint: error: --checklist " << *request.checklist_file << ": "
                << (in ? error : "cannot read the file") << '\n';
      return kExitError;
    }
    custom = std::move(*parsed);
    checklist = &custom;
  }
  progress("linting sources...");
  std::string error;
  auto run = run_check(request.check, error);
  if (!run) {
    progress.clear();
    std::cerr << "torchlint: error: " << error << '\n';
    return kExitError;
  }
  std::set<Language> analysers{Language::kPython};
  // Automated CI/CD (the industry checklist): a workflow file of a known CI system.
  for (const char* ci : {".github/workflows", ".gitlab-ci.yml", "Jenkinsfile", ".circleci/config.yml",
                         "azure-pipelines.yml", ".buildkite", ".travis.yml"}) {
    if (fs::exists(ci, ec)) run->outcome.facts.insert("has-ci-workflow");
  }
  std::vector<Diagnostic>& diagnostics = run->outcome.diagnostics;

  // Checkpoints found by their bytes, inspected without executing anything.
  CheckpointScan scan;
  std::vector<report::CheckpointRow> checkpoint_table;
  if (request.scan_checkpoints) {
    progress("looking for checkpoints...");
    CheckpointScanOptions options;
    options.extra = extra_checkpoints;
    options.max_bytes = request.max_checkpoint_bytes;
    if (run->config && fs::equivalent(run->config->root, fs::current_path(ec), ec)) options.exclude = run->config->exclude;
    options.progress = [&](const std::string& text) { progress(text); };
    scan = scan_checkpoints(options);
    std::vector<Diagnostic> found = checkpoint_diagnostics(scan, run->enabled, registry());
    checkpoint_table = checkpoint_rows(scan, found);
    for (auto& d : found) diagnostics.push_back(std::move(d));
    if (!scan.checkpoints.empty()) {
      analysers.insert(Language::kCheckpoint);
      run->outcome.facts.insert("has-checkpoint-file");
    }
    for (const auto& cp : scan.checkpoints) {
      if (ckpt::analyze_training_state(cp).training) run->outcome.facts.insert("has-training-checkpoint");
    }
    for (const auto& row : checkpoint_table) {
      if (row.torchscript) run->outcome.facts.insert("has-torchscript-model");
    }
  }

  // The runtime probe on the TorchScript models found.
  report::ProbeSection probe;
  std::set<std::string> probe_not_run;
  if (request.probe) {
    std::vector<ProbeTarget> targets;
    for (const auto& file : scan.files) {
      if (file->format != ckpt::Format::kTorchScript) continue;
      ProbeTarget t{file->path, file->display, true, {}};
      // --probe runs the TorchScript code on purpose; anything else that would run code refuses it.
      ckpt::Safety safety = ckpt::assess_file_safety(*file, /*run_torchscript_code=*/true);
      if (safety.level == ckpt::SafetyLevel::kDangerous || safety.level == ckpt::SafetyLevel::kIncomplete) {
        t.trusted = false;
        t.why_not = "the checkpoint inspector's verdict is \"" + safety.text + "\"";
      }
      targets.push_back(std::move(t));
    }
    ProbeRunOptions options;
    options.binary = request.probe_binary;
    options.inputs = request.probe_inputs;
    if (run->config) {
      options.config = run->config->probe;
      options.config_name = run->config->file.filename().string();
    }
    options.timeout_seconds = request.probe_timeout_seconds;
    options.progress = [&](const std::string& text) { progress(text); };
    if (!request.scan_checkpoints) {
      probe.requested = true;
      probe.note = "--no-checkpoints: no model was looked for, so nothing was probed.";
    } else {
      probe = run_probe(targets, options);
    }
    std::vector<Diagnostic> found = probe_diagnostics(probe, run->enabled, registry());
    for (auto& d : found) diagnostics.push_back(std::move(d));
    if (std::any_of(probe.models.begin(), probe.models.end(), [](const report::ProbeModel& m) { return m.status == "probed"; })) {
      analysers.insert(Language::kProbe);
      probe_not_run = probe_rules_not_run(probe);
    }
  }
  std::stable_sort(diagnostics.begin(), diagnostics.end(), diagnostic_less);
  progress("scoring " + std::to_string(run->outcome.files_linted) + " files and " + std::to_string(scan.checkpoints.size()) +
           " checkpoints...");

  Scorecard card = build_scorecard({*checklist, registry(), run->enabled, diagnostics, run->outcome.facts, analysers,
                                    &probe_not_run, request.fail_on});
  // Items a person decides: point at what the audit found for them.
  for (auto& r : card.items) {
    if (r.status != ItemStatus::kManual) continue;
    const std::string& evidence = r.item->evidence;
    if (evidence.find("checkpoint") != std::string::npos) {
      std::string list;
      for (size_t i = 0; i < checkpoint_table.size() && i < 5; ++i) list += (i ? ", " : "") + checkpoint_table[i].path;
      if (checkpoint_table.size() > 5) list += ", ...";
      r.reason += checkpoint_table.empty() ? "; the audit found no checkpoint files"
                                           : "; the audit found " + std::to_string(checkpoint_table.size()) + " checkpoints: " + list;
    }
    if (evidence.find("probe") != std::string::npos && analysers.contains(Language::kProbe)) {
      r.reason += "; see the runtime probe's figures below";
    }
  }

  report::ReportContext findings{run->outcome, registry(), false};
  findings.enabled = &run->enabled;
  findings.checklist = [checklist]() -> const Checklist& { return *checklist; };
  findings.source_root = fs::current_path(ec).generic_string() + "/";
  findings.automation_id = "torchlint/audit/";
  // The report names the project, not the path it was given as (`.`).
  std::string project = fs::current_path(ec).filename().string();
  if (project.empty()) project = repo;
  report::AuditContext audit{project, utc_now(), card, findings, std::move(checkpoint_table), scan.notes, std::move(probe),
                             run->outcome.files_linted};
  progress.clear();

  std::ofstream file;
  std::ostream* out = &std::cout;
  if (request.output) {
    file.open(*request.output, std::ios::binary | std::ios::trunc);
    if (!file) {
      std::cerr << "torchlint: error: cannot write " << *request.output << '\n';
      return kExitError;
    }
    out = &file;
  }
  if (request.summary) {
    report::write_audit_summary_markdown(*out, audit, request.report_url.value_or(""));
  } else if (request.format == "html") {
    report::write_audit_html(*out, audit);
  } else if (request.format == "json") {
    report::write_audit_json(*out, audit);
  } else if (request.format == "sarif") {
    report::write_sarif(*out, findings);
  } else {
    report::write_audit_markdown(*out, audit);
  }
  out->flush();
  for (const auto& e : run->outcome.errors) std::cerr << "torchlint: error: " << e.path << ": " << e.message << '\n';
  if (!audit.probe.note.empty()) std::cerr << "torchlint: note: " << audit.probe.note << '\n';
  if (request.output) {
    std::cerr << "Wrote the audit of " << audit.project << " (score " << card.score << "/100, " << card.failed
              << " failed items; " << audit.checkpoints.size() << " checkpoints) to " << *request.output << ".\n";
  }
  if (!run->outcome.errors.empty()) return kExitError;
  if (request.exit_zero) return kExitClean;
  if (request.fail_under) {
    if (card.score < *request.fail_under) {
      std::cerr << "torchlint: audit score " << card.score << " is below --fail-under " << *request.fail_under << '\n';
      return kExitFindings;
    }
    return kExitClean;
  }
  return card.failed ? kExitFindings : kExitClean;
}

}  // namespace torchlint::cli
