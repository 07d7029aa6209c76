#include "audit_command.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
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
#include "work_units.h"

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

}  // namespace

namespace {

// Everything one repository's audit found; the scorecard points into `run` and `checklist`,
// so an AuditResult stays where it was built.
struct AuditResult {
  std::optional<CheckRun> run;
  CheckpointScan scan;
  std::vector<report::CheckpointRow> checkpoint_table;
  report::ProbeSection probe;
  Scorecard card;
  AuditResult() = default;
  AuditResult(const AuditResult&) = delete;
  AuditResult& operator=(const AuditResult&) = delete;
};

// Audits the repository that is the current directory: lint, checkpoints, probe, scorecard.
// `request.check.paths` is {"."}. False, with `error` set, when the lint cannot run.
bool audit_here(const AuditRequest& request, const Checklist& checklist,
                const std::vector<std::pair<std::string, std::string>>& extra_checkpoints, Progress& progress,
                AuditResult& result, std::string& error) {
  progress("linting sources...");
  result.run = run_check(request.check, error);
  if (!result.run) return false;
  CheckRun* run = &*result.run;
  std::error_code ec;
  std::set<Language> analysers{Language::kPython};
  // Automated CI/CD (the industry checklist): a workflow file of a known CI system.
  for (const char* ci : {".github/workflows", ".gitlab-ci.yml", "Jenkinsfile", ".circleci/config.yml",
                         "azure-pipelines.yml", ".buildkite", ".travis.yml"}) {
    if (fs::exists(ci, ec)) run->outcome.facts.insert("has-ci-workflow");
  }
  std::vector<Diagnostic>& diagnostics = run->outcome.diagnostics;

  // Checkpoints found by their bytes, inspected without executing anything.
  CheckpointScan& scan = result.scan;
  std::vector<report::CheckpointRow>& checkpoint_table = result.checkpoint_table;
  if (request.scan_checkpoints) {
    progress("looking for checkpoints...");
    CheckpointScanOptions options;
    options.extra = extra_checkpoints;
    options.max_bytes = request.max_checkpoint_bytes;
    if (run->config && fs::equivalent(run->config->root, fs::current_path(ec), ec))
      options.exclude = run->config->exclude;
    options.progress = [&](const std::string& text) { progress(text); };
    scan = scan_checkpoints(options);
    std::vector<Diagnostic> found = checkpoint_diagnostics(scan, run->enabled, registry());
    checkpoint_table = checkpoint_rows(scan.checkpoints, found);
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
  report::ProbeSection& probe = result.probe;
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
    if (std::any_of(probe.models.begin(), probe.models.end(),
                    [](const report::ProbeModel& m) { return m.status == "probed"; })) {
      analysers.insert(Language::kProbe);
      probe_not_run = probe_rules_not_run(probe, registry());
    }
  }
  std::stable_sort(diagnostics.begin(), diagnostics.end(), diagnostic_less);
  progress("scoring " + std::to_string(run->outcome.files_linted) + " files and " +
           std::to_string(scan.checkpoints.size()) + " checkpoints...");

  result.card = build_scorecard({checklist, registry(), run->enabled, diagnostics, run->outcome.facts, analysers,
                                 &probe_not_run, request.fail_on});
  // Items a person decides: point at what the audit found for them.
  for (auto& r : result.card.items) {
    if (r.status != ItemStatus::kManual) continue;
    const std::string& evidence = r.item->evidence;
    if (evidence.find("checkpoint") != std::string::npos) {
      std::string list;
      for (size_t i = 0; i < checkpoint_table.size() && i < 5; ++i) list += (i ? ", " : "") + checkpoint_table[i].path;
      if (checkpoint_table.size() > 5) list += ", ...";
      r.reason += checkpoint_table.empty()
                      ? "; the audit found no checkpoint files"
                      : "; the audit found " + std::to_string(checkpoint_table.size()) + " checkpoints: " + list;
    }
    if (evidence.find("probe") != std::string::npos && analysers.contains(Language::kProbe)) {
      r.reason += "; see the runtime probe's figures below";
    }
  }
  return true;
}

// The checklist to score against: the built-in one, or --checklist read into `custom`.
const Checklist* load_checklist(const AuditRequest& request, Checklist& custom) {
  if (!request.checklist_file) return &builtin_checklist();
  std::ifstream in(*request.checklist_file);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string error;
  auto parsed = in ? parse_checklist(ss.str(), error) : std::nullopt;
  if (!parsed) {
    std::cerr << "torchlint: error: --checklist " << *request.checklist_file << ": "
              << (in ? error : "cannot read the file") << '\n';
    return nullptr;
  }
  custom = std::move(*parsed);
  return &custom;
}

// Paths the request names are taken from where the command ran, wherever the audit goes;
// --checkpoints are opened by absolute path and shown as given. False after an error line.
bool absolute_paths(AuditRequest& request, std::vector<std::pair<std::string, std::string>>& extra_checkpoints) {
  std::error_code ec;
  if (request.output) request.output = fs::absolute(*request.output, ec).string();
  if (request.checklist_file) request.checklist_file = fs::absolute(*request.checklist_file, ec).string();
  if (request.check.cache_dir) request.check.cache_dir = fs::absolute(*request.check.cache_dir, ec).string();
  if (request.probe_binary) request.probe_binary = fs::absolute(*request.probe_binary, ec).string();
  if (request.check.config_file) request.check.config_file = fs::absolute(*request.check.config_file, ec).string();
  for (const auto& p : request.checkpoint_paths) {
    if (!fs::exists(p, ec)) {
      std::cerr << "torchlint: error: --checkpoints " << p << ": no such file or directory\n";
      return false;
    }
    extra_checkpoints.emplace_back(fs::absolute(p, ec).lexically_normal().string(),
                                   fs::path(p).lexically_normal().generic_string());
  }
  return true;
}

// Enters `repo`; false, with `error` set (without the path), when it is no directory or
// cannot be entered.
bool enter_repository(const fs::path& repo, std::string& error) {
  std::error_code ec;
  if (!fs::is_directory(repo, ec)) {
    error = "not a directory";
    return false;
  }
  fs::current_path(repo, ec);
  if (ec) {
    error = "cannot enter it: " + ec.message();
    return false;
  }
  return true;
}

}  // namespace

int run_audit(const AuditRequest& request_in) {
  Progress progress;
  // The report speaks in paths relative to the audited repository (its links work when
  // the report sits at the repository root): run from there.
  AuditRequest request = request_in;
  std::string repo = request.check.paths.empty() ? std::string(".") : request.check.paths.front();
  std::error_code ec;
  std::vector<std::pair<std::string, std::string>> extra_checkpoints;
  if (!absolute_paths(request, extra_checkpoints)) return kExitError;
  std::string error;
  if (!enter_repository(repo, error)) {
    std::cerr << "torchlint: error: " << repo << ": " << error << '\n';
    return kExitError;
  }
  request.check.paths = {"."};
  Checklist custom;
  const Checklist* checklist = load_checklist(request, custom);
  if (!checklist) return kExitError;
  AuditResult result;
  if (!audit_here(request, *checklist, extra_checkpoints, progress, result, error)) {
    progress.clear();
    std::cerr << "torchlint: error: " << error << '\n';
    return kExitError;
  }
  const CheckRun* run = &*result.run;
  const Scorecard& card = result.card;

  report::ReportContext findings{run->outcome, registry(), false};
  findings.enabled = &run->enabled;
  findings.checklist = [checklist]() -> const Checklist& { return *checklist; };
  findings.source_root = fs::current_path(ec).generic_string() + "/";
  findings.automation_id = "torchlint/audit/";
  // The report names the project, not the path it was given as (`.`).
  std::string project = fs::current_path(ec).filename().string();
  if (project.empty()) project = repo;
  report::AuditContext audit{project,
                             utc_now(),
                             card,
                             findings,
                             std::move(result.checkpoint_table),
                             result.scan.notes,
                             std::move(result.probe),
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

namespace {

// The torchlint-unit/1 fields of one repository's audit.
void describe_audit(const AuditResult& result, nlohmann::ordered_json& record) {
  const Scorecard& card = result.card;
  record["score"] = card.score;
  record["passed"] = card.passed;
  record["failed"] = card.failed;
  record["not_applicable"] = card.not_applicable;
  record["manual"] = card.manual;
  record["not_checked"] = card.not_checked;
  nlohmann::ordered_json failed = nlohmann::ordered_json::array();
  for (const auto& item : card.items) {
    if (item.status != ItemStatus::kFailed) continue;
    failed.push_back({{"id", item.item->id}, {"title", item.item->title}, {"findings", item.evidence.size()}});
  }
  record["failed_items"] = std::move(failed);
  record["files_linted"] = result.run->outcome.files_linted;
  record["findings"] = findings_by_code(result.run->outcome.diagnostics);
  nlohmann::ordered_json checkpoints = nlohmann::ordered_json::array();
  for (const auto& row : result.checkpoint_table) {
    checkpoints.push_back(
        {{"path", row.path}, {"format", row.format}, {"safety", row.safety}, {"findings", row.codes}});
  }
  record["checkpoints"] = std::move(checkpoints);
}

}  // namespace

int run_audit_units(const AuditRequest& request_in, const std::vector<std::string>& repos, std::ostream& out) {
  Progress progress;
  AuditRequest request = request_in;
  std::vector<std::pair<std::string, std::string>> extra_checkpoints;
  if (!absolute_paths(request, extra_checkpoints)) return kExitError;
  Checklist custom;
  const Checklist* checklist = load_checklist(request, custom);
  if (!checklist) return kExitError;
  std::error_code ec;
  const fs::path origin = fs::current_path(ec);
  request.check.paths = {"."};
  UnitStream stream(out, request.exit_zero);
  for (const auto& repo : repos) {
    nlohmann::ordered_json record = unit_record("repository", repo);
    bool failed_items = false;
    auto start = std::chrono::steady_clock::now();
    progress(repo);
    // One repository's failure is its record: the batch goes on with the next.
    try {
      std::string error;
      AuditResult result;
      AuditRequest one = request;
      // The cache keeps one file's result by its path in the project: repositories sharing
      // --cache-dir get a folder each (named by the repository's absolute path), so that
      // one repository's train.py never stands for another's.
      if (one.check.cache_dir) {
        std::string where = fs::weakly_canonical(origin / repo, ec).string();
        char name[17];
        std::snprintf(name, sizeof name, "%016zx", std::hash<std::string>{}(where));
        one.check.cache_dir = (fs::path(*one.check.cache_dir) / name).string();
      }
      if (!enter_repository(origin / repo, error) ||
          !audit_here(one, *checklist, extra_checkpoints, progress, result, error)) {
        fail_unit(record, error);
      } else {
        describe_audit(result, record);
        failed_items = request.fail_under ? result.card.score < *request.fail_under : result.card.failed > 0;
        const auto& errors = result.run->outcome.errors;
        if (!errors.empty()) {
          std::string message =
              std::to_string(errors.size()) + (errors.size() == 1 ? " file" : " files") + " could not be read: ";
          for (size_t i = 0; i < errors.size() && i < 5; ++i)
            message += (i ? "; " : "") + errors[i].path + ": " + errors[i].message;
          if (errors.size() > 5) message += "; ...";
          fail_unit(record, message);
        }
      }
    } catch (const std::exception& e) {
      fail_unit(record, std::string("internal error: ") + e.what());
    }
    fs::current_path(origin, ec);
    progress.clear();
    record["elapsed_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    stream.write(record, failed_items);
  }
  return stream.exit_code();
}

}  // namespace torchlint::cli
