#include "check_command.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>

#include "registry/all_rules.h"
#include "changed_lines.h"
#include "cpp_frontend.h"
#include "core/result_cache.h"
#include "python/analyzer.h"
#include "python/api_tables.h"

namespace torchlint::cli {

namespace fs = std::filesystem;

const RuleRegistry& registry() {
  static const RuleRegistry instance = [] {
    RuleRegistry r;
    register_all_rules(r);
    return r;
  }();
  return instance;
}

static std::map<std::string, const SourceFile*> sources_of(const LintOutcome& outcome) {
  std::map<std::string, const SourceFile*> sources;
  for (const auto& [path, file] : outcome.sources) sources[path] = file.get();
  return sources;
}

// The project root comes from the files, never from the working directory: a configuration
// file's directory, else the nearest project marker (see find_project_root).
static ProjectRoot project_root_for(const CheckRequest& request, const std::optional<Config>& config) {
  std::error_code ec;
  if (config) return {config->root, true};
  fs::path start = request.paths.empty() ? fs::path(".") : fs::path(request.paths.front());
  if (!request.project_context) {
    fs::path abs = fs::absolute(start, ec).lexically_normal();
    if (!abs.has_filename()) abs = abs.parent_path();
    return {fs::is_directory(abs, ec) ? abs : abs.parent_path(), false};
  }
  return find_project_root(start);
}

// Where the result cache lives: in the project (`.torchlint_cache`) when the root is a
// real project; a tree with no project marker is not written into, so its cache goes to
// the user's cache directory, one folder per root.
static fs::path default_cache_dir(const ProjectRoot& root) {
  if (root.has_marker) return root.path / ".torchlint_cache";
  fs::path base;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    base = fs::path(home) / ".cache";
  } else {
    base = fs::temp_directory_path();
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(std::hash<std::string>{}(root.path.string())));
  return base / "torchlint" / hex;
}

// A project root holding more Python files than this (a home directory, a monorepo of
// vendored code) gives no context: the files asked for are linted as their own project.
constexpr size_t kMaxContextFiles = 20000;

std::optional<CheckRun> run_check(const CheckRequest& request, std::string& error) {
  CheckRun run;
  std::optional<fs::path> config_path;
  if (request.config_file) {
    config_path = fs::path(*request.config_file);
    std::error_code ec;
    if (!fs::is_regular_file(*config_path, ec)) {
      error = "configuration file not found: " + *request.config_file;
      return std::nullopt;
    }
  } else {
    config_path = find_config_file(request.paths.empty() ? fs::path(".") : fs::path(request.paths.front()));
  }
  if (config_path) {
    run.config = load_config(*config_path, error);
    if (!run.config) return std::nullopt;
  }
  const ProjectRoot root = project_root_for(request, run.config);
  run.project_root = root.path;
  run.project_marker = root.has_marker;

  // target-torch and target-torchvision: command line, then configuration, then the
  // project's declared dependencies; then the documented default for torch, and the
  // torchvision release published with the torch target.
  auto target = [&](const std::optional<TorchVersion>& given, const char* flag,
                    const std::optional<TorchVersion>& configured, const std::string& configured_in,
                    std::string_view package, TorchVersion& out, std::string& source) {
    if (given) {
      out = *given;
      source = flag;
    } else if (configured) {
      out = *configured;
      source = configured_in;
    } else if (auto inferred = infer_target_version(run.project_root, package, source)) {
      out = *inferred;
    } else {
      return false;
    }
    return true;
  };
  const bool has_config = run.config.has_value();
  if (!target(request.target_torch, "--target-torch", has_config ? run.config->target_torch : std::nullopt,
              has_config ? run.config->target_torch_source : "", "torch", run.target_torch, run.target_torch_source)) {
    run.target_torch_source = "default";
  }
  if (!target(request.target_torchvision, "--target-torchvision",
              has_config ? run.config->target_torchvision : std::nullopt,
              has_config ? run.config->target_torchvision_source : "", "torchvision", run.target_torchvision,
              run.target_torchvision_source)) {
    run.target_torchvision = paired_torchvision(run.target_torch);
    run.target_torchvision_source = "paired with target-torch";
  }

  const RuleRegistry& rules = registry();
  std::vector<SelectionLayer> layers;
  if (run.config) layers.push_back(run.config->selection);
  layers.push_back(request.selection);
  std::vector<std::string> unknown;
  LintOptions options;
  options.enabled = resolve_selection(rules, layers, unknown);
  if (!unknown.empty()) {
    error = unknown_selector_message(rules, unknown.front());
    return std::nullopt;
  }
  options.target_torch = run.target_torch;
  options.target_torchvision = run.target_torchvision;
  options.jobs = request.jobs;
  options.overlay = request.overlay;
  options.memos = request.parse_memos;
  if (run.config) options.per_file_ignores = run.config->per_file_ignores;
  for (const auto& [pattern, selectors] : options.per_file_ignores) {
    for (const auto& s : selectors) {
      if (!selector_is_known(rules, s)) {
        error = "per-file-ignores `" + pattern + "`: " + unknown_selector_message(rules, s);
        return std::nullopt;
      }
    }
  }

  std::optional<ResultCache> cache;
  CppRunSettings cpp;
  if (request.use_cache) {
    cache.emplace(request.cache_dir ? fs::path(*request.cache_dir) : default_cache_dir(root),
                  executable_identity(TORCHLINT_VERSION));
    options.cache = &*cache;
    std::error_code ec;
    cpp.cache_dir = fs::absolute(cache->dir(), ec);  // the same cache: torchlint-cpp's packs beside ours
  }
  if (run.config) cpp.config_file = fs::absolute(run.config->file);
  cpp.build_path = request.cpp_build_path;
  cpp.extra_args = request.cpp_extra_args;
  cpp.jobs = request.jobs;

  python::PythonAnalyzer python(rules, python_rules());
  DiscoveryOptions discovery;
  discovery.project_root = run.project_root;
  // One walk finds the Python files and the C++ sources (linted by torchlint-cpp).
  discovery.extensions = python.extensions();
  const auto& cpp_extensions = cpp_source_extensions();
  discovery.extensions.insert(discovery.extensions.end(), cpp_extensions.begin(), cpp_extensions.end());
  if (request.exclude) {
    discovery.exclude = *request.exclude;
  } else if (run.config) {
    discovery.exclude = run.config->exclude;
  }
  discovery.exclude.insert(discovery.exclude.end(), request.extend_exclude.begin(), request.extend_exclude.end());
  if (request.overlay) {
    discovery.unsaved_text = [overlay = request.overlay](const fs::path& p) -> const std::string* {
      std::error_code ec;
      auto it = overlay->find(fs::absolute(p, ec).lexically_normal().string());
      return it == overlay->end() ? nullptr : &it->second;
    };
  }
  std::vector<FileError> errors;
  std::vector<std::string> paths = request.paths;
  if (paths.empty()) paths.push_back(".");
  auto files = discover_files(paths, discovery, errors);
  auto cpp_files = split_cpp_files(files);
  auto covers_root = [&] {
    std::error_code ec;
    for (const auto& p : paths) {
      fs::path abs = fs::absolute(p, ec).lexically_normal();
      if (!abs.has_filename()) abs = abs.parent_path();
      if (abs == run.project_root) return true;
    }
    return false;
  };
  // A tree with no project marker is not a project: walking it (a home directory, /tmp)
  // could read anything, so its files are linted as they are given.
  if (request.project_context && root.has_marker && !covers_root()) {
    // The rest of the project, read for its facts only (cached like any file).
    DiscoveryOptions context = discovery;
    context.extensions = python.extensions();
    context.external_package = [](std::string_view top) { return python::api::is_external_package(top); };
    bool truncated = false;
    std::vector<DiscoveredFile> more;
    if (request.context_memo && request.context_memo->key == request.context_key) {
      more = request.context_memo->files;
    } else {
      more = discover_context_files(files, context, kMaxContextFiles, truncated);
      if (request.context_memo) *request.context_memo = {request.context_key, more};
    }
    run.context_files = more.size();
    files.insert(files.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  run.enabled = options.enabled;
  run.outcome = lint_files(files, {&python}, rules, options);
  run.outcome.errors.insert(run.outcome.errors.begin(), errors.begin(), errors.end());
  add_cpp_findings(cpp_files, rules, run.enabled, options.per_file_ignores, cpp, run.outcome);

  if (request.diff_base) {
    auto changed = changed_lines_since(*request.diff_base, error);
    if (!changed) return std::nullopt;
    std::erase_if(run.outcome.diagnostics, [&](const Diagnostic& d) {
      uint32_t first = d.statement_first_line ? d.statement_first_line : d.start.line;
      return !changed->touches(d.path, first, std::max(d.statement_last_line, first));
    });
  }
  if (request.baseline) {
    auto baseline = read_baseline(*request.baseline, error);
    if (!baseline) return std::nullopt;
    auto match = apply_baseline(std::move(run.outcome.diagnostics), *baseline, sources_of(run.outcome),
                                fs::absolute(*request.baseline).parent_path());
    run.outcome.diagnostics = std::move(match.fresh);
    run.outcome.baselined = std::move(match.baselined);
    run.stale_baseline = std::move(match.stale);
  }
  return run;
}

std::optional<size_t> write_baseline(const CheckRun& run, const std::string& file, std::string& error) {
  Baseline baseline = make_baseline(run.outcome.diagnostics, sources_of(run.outcome), fs::absolute(file).parent_path());
  if (!save_baseline(baseline, file, error)) return std::nullopt;
  size_t n = 0;
  for (const auto& e : baseline.entries) n += e.count;
  return n;
}

bool save_baseline(const Baseline& baseline, const std::string& file, std::string& error) {
  std::string text = serialize_baseline(baseline);
  // Write-then-rename so an interrupted run never leaves half a baseline.
  fs::path target(file), tmp = target;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) {
      error = "cannot write " + tmp.string();
      return false;
    }
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    error = "cannot write " + file + ": " + ec.message();
    return false;
  }
  return true;
}

}  // namespace torchlint::cli
