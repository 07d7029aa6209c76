#include "cpp_frontend.h"

#include "process.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/glob.h"

namespace torchlint::cli {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kSources = {".cpp", ".cc", ".cxx", ".c++"};
const std::vector<std::string> kHeaders = {".h", ".hh", ".hpp", ".hxx"};

bool has_ext(const std::string& path, const std::vector<std::string>& exts) {
  std::string ext = fs::path(path).extension().string();
  return std::find(exts.begin(), exts.end(), ext) != exts.end();
}

std::optional<fs::path> find_torchlint_cpp() {
  std::error_code ec;
  if (const char* env = std::getenv("TORCHLINT_CPP"); env && *env) {
    if (fs::is_regular_file(env, ec)) return fs::path(env);
    return std::nullopt;
  }
  return find_executable("torchlint-cpp");
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

bool is_cpp_source(const std::string& path) { return has_ext(path, kSources); }
bool is_cpp_file(const std::string& path) { return has_ext(path, kSources) || has_ext(path, kHeaders); }

const std::vector<std::string>& cpp_source_extensions() { return kSources; }

std::vector<DiscoveredFile> split_cpp_files(std::vector<DiscoveredFile>& files) {
  std::vector<DiscoveredFile> cpp;
  for (const auto& f : files) {
    if (is_cpp_file(f.path.string())) cpp.push_back(f);
  }
  std::erase_if(files, [](const DiscoveredFile& f) { return is_cpp_file(f.path.string()); });
  return cpp;
}

void add_cpp_findings(const std::vector<DiscoveredFile>& files, const RuleRegistry& registry, const RuleSet& enabled,
                      const std::vector<std::pair<std::string, std::vector<std::string>>>& per_file_ignores,
                      const CppRunSettings& settings, LintOutcome& outcome) {
  if (files.empty()) return;
  auto exe = find_torchlint_cpp();
  if (!exe) {
    std::cerr << "torchlint: note: " << files.size() << (files.size() == 1 ? " C++ file" : " C++ files")
              << " not linted: torchlint-cpp (the C++ front-end) was not found next to torchlint or on PATH\n";
    return;
  }
  std::string codes;
  for (size_t i = 0; i < registry.rules().size(); ++i) {
    if (!enabled.contains(i)) continue;
    // Every selected code: torchlint-cpp runs those of them it implements.
    codes += (codes.empty() ? "" : ",") + registry.rules()[i].code;
  }
  if (codes.empty()) return;
  std::vector<std::string> argv = {exe->string(), "--output-format=json", "--select=" + codes};
  if (settings.jobs) {
    argv.push_back("--jobs");
    argv.push_back(std::to_string(settings.jobs));
  }
  if (settings.config_file) {
    argv.push_back("--config");
    argv.push_back(settings.config_file->string());
  } else {
    argv.push_back("--isolated");  // no configuration here: none there either
  }
  if (settings.build_path) {
    argv.push_back("--build-path");
    argv.push_back(*settings.build_path);
  }
  // `--extra-arg=VALUE`: a value starting with `-` is never read as an option.
  for (const auto& a : settings.extra_args) argv.push_back("--extra-arg=" + a);
  if (settings.cache_dir) {
    argv.push_back("--cache-dir");
    argv.push_back(settings.cache_dir->string());
  }
  argv.push_back("--");  // file names are never options
  for (const auto& f : files) argv.push_back(f.display);

  std::error_code ec;
  fs::path err = fs::temp_directory_path(ec) / ("torchlint-cpp-" + std::to_string(getpid()) + ".err");
  ProcessOptions spawn;
  spawn.capture_stdout = true;
  spawn.stderr_file = err;
  ProcessResult run = run_process(argv, spawn);
  std::string stdout_text = std::move(run.out), stderr_text = slurp(err);
  fs::remove(err, ec);

  // Notes pass through; file errors join the run's errors.
  std::istringstream lines(stderr_text);
  std::string line;
  const std::string error_prefix = "torchlint-cpp: error: ";
  while (std::getline(lines, line)) {
    if (line.starts_with(error_prefix)) {
      std::string rest = line.substr(error_prefix.size());
      size_t colon = rest.find(": ");
      if (colon != std::string::npos) {
        outcome.errors.push_back({rest.substr(0, colon), rest.substr(colon + 2)});
        continue;
      }
      outcome.errors.push_back({exe->filename().string(), rest});
      continue;
    }
    if (!line.empty()) std::cerr << line << '\n';
  }
  bool exited = run.error.empty() && run.signal == 0;
  int code = run.exit_code;
  if (!exited || code > 2) {
    outcome.errors.push_back({exe->string(), !run.error.empty() ? run.error
                                             : run.signal       ? "killed by signal " + std::to_string(run.signal)
                                                                : "exited with status " + std::to_string(code)});
    return;
  }
  nlohmann::json findings = nlohmann::json::parse(stdout_text, nullptr, false);
  if (!findings.is_array()) {
    if (code != 2) outcome.errors.push_back({exe->string(), "printed no JSON findings"});
    return;
  }
  std::map<std::string, const DiscoveredFile*> by_display;
  for (const auto& f : files) by_display[f.display] = &f;
  outcome.files_linted += files.size();
  for (const auto& j : findings) {
    Diagnostic d;
    d.code = j.value("code", "");
    d.name = j.value("name", "");
    const RuleInfo* info = registry.find(d.code);
    if (info) d.severity = info->severity;
    d.message = j.value("message", "");
    d.path = j.value("filename", "");
    d.start = {j["location"].value("row", 1u), j["location"].value("column", 1u)};
    d.end = {j["end_location"].value("row", d.start.line), j["end_location"].value("column", d.start.column)};
    d.statement_first_line = d.statement_last_line = d.start.line;
    auto it = by_display.find(d.path);
    if (it != by_display.end() && info) {
      bool ignored = false;
      for (const auto& [pattern, selectors] : per_file_ignores) {
        if (!path_matches(pattern, it->second->relative)) continue;
        RuleSet rest = without(registry, enabled, selectors);
        if (auto index = registry.index_of(d.code); index && !rest.contains(*index)) ignored = true;
      }
      if (ignored) continue;
    }
    if (!outcome.sources.contains(d.path)) {
      std::string error;
      if (auto source = SourceFile::read(d.path, error))
        outcome.sources.emplace(d.path, std::make_shared<const SourceFile>(std::move(*source)));
    }
    if (auto src = outcome.sources.find(d.path); src != outcome.sources.end()) {
      const SourceFile& s = *src->second;
      if (d.start.line >= 1 && d.start.line <= s.line_count())
        d.start_byte = s.line_start(d.start.line) + d.start.column - 1;
      if (d.end.line >= 1 && d.end.line <= s.line_count()) d.end_byte = s.line_start(d.end.line) + d.end.column - 1;
    }
    outcome.diagnostics.push_back(std::move(d));
  }
  std::sort(outcome.diagnostics.begin(), outcome.diagnostics.end(), diagnostic_less);
  std::sort(outcome.errors.begin(), outcome.errors.end(),
            [](const FileError& a, const FileError& b) { return a.path < b.path; });
}

}  // namespace torchlint::cli
