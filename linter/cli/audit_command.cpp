#include "audit_command.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "all_rules.h"
#include "core/scorecard.h"
#include "report/audit.h"

namespace torchlint::cli {

namespace fs = std::filesystem;

namespace {

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

int run_audit(const AuditRequest& request_in) {
  const bool progress = isatty(STDERR_FILENO);
  // The report speaks in paths relative to the audited repository (its links work when
  // the report sits at the repository root): run from there.
  AuditRequest request = request_in;
  std::string repo = request.check.paths.empty() ? std::string(".") : request.check.paths.front();
  std::error_code ec;
  if (request.output) request.output = fs::absolute(*request.output, ec).string();
  if (request.checklist_file) request.checklist_file = fs::absolute(*request.checklist_file, ec).string();
  if (request.check.cache_dir) request.check.cache_dir = fs::absolute(*request.check.cache_dir, ec).string();
  if (!fs::is_directory(repo, ec)) {
    std::cerr << "torchlint: error: " << repo << ": not a directory\n";
    return 2;
  }
  fs::current_path(repo, ec);
  if (ec) {
    std::cerr << "torchlint: error: cannot enter " << repo << ": " << ec.message() << '\n';
    return 2;
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
      return 2;
    }
    custom = std::move(*parsed);
    checklist = &custom;
  }
  if (progress) std::cerr << "torchlint audit: linting sources...\r" << std::flush;
  std::string error;
  auto run = run_check(request.check, error);
  if (!run) {
    std::cerr << "torchlint: error: " << error << '\n';
    return 2;
  }
  if (progress) std::cerr << "torchlint audit: scoring " << run->outcome.files_linted << " files          \n";

  std::set<Language> analysers{Language::kPython};
  Scorecard card = build_scorecard(
      {*checklist, registry(), run->enabled, run->outcome.diagnostics, run->outcome.facts, analysers});

  report::ReportContext findings{run->outcome, registry(), false};
  findings.enabled = &run->enabled;
  findings.checklist = checklist;
  findings.source_root = fs::current_path(ec).generic_string() + "/";
  findings.automation_id = "torchlint/audit/";
  report::AuditContext audit{repo, utc_now(), card, findings, {}, nullptr, run->outcome.files_linted};

  std::ofstream file;
  std::ostream* out = &std::cout;
  if (request.output) {
    file.open(*request.output, std::ios::binary | std::ios::trunc);
    if (!file) {
      std::cerr << "torchlint: error: cannot write " << *request.output << '\n';
      return 2;
    }
    out = &file;
  }
  if (request.format == "html") {
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
  if (request.output) {
    std::cerr << "Wrote the audit of " << audit.project << " (score " << card.score << "/100, " << card.failed
              << " failed items) to " << *request.output << ".\n";
  }
  if (!run->outcome.errors.empty()) return 2;
  return card.failed ? 1 : 0;
}

}  // namespace torchlint::cli
