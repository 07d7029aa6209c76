#pragma once
// Turns the paths a user passed into the files to lint, in a stable order.
#include <filesystem>
#include <functional>
#include <string_view>
#include <string>
#include <vector>

#include "diagnostic.h"

namespace torchlint {

struct DiscoveredFile {
  std::filesystem::path path;  // as opened
  std::string display;         // relative to the working directory where possible
  std::string relative;        // relative to the project root, '/'-separated
  bool explicitly_given = false;
  // A file of the project that was not asked for: it is analysed for the facts the
  // project pass needs (a seeding helper, a caller under no_grad), and reports nothing.
  bool context_only = false;
};

struct DiscoveryOptions {
  std::filesystem::path project_root;
  std::vector<std::string> extensions;  // ".py", ".ipynb", ...
  std::vector<std::string> exclude;     // user patterns, relative to project_root
  // For context: top-level names of installed libraries (`torch`, `numpy`), whose imports
  // never mean a project file, even where the project holds a copy of one.
  std::function<bool(std::string_view)> external_package;
  // The caller's text for a path (an editor's unsaved buffer), or null: read for its
  // imports instead of the file, and a file to lint even when it is not on disk yet.
  std::function<const std::string*(const std::filesystem::path&)> unsaved_text;
};

// Directories are walked recursively without following directory symlinks (so symlink
// loops cannot trap the walk); well-known tool, VCS and virtualenv folders are skipped.
// Paths that cannot be read are reported in `errors`; the walk goes on.
std::vector<DiscoveredFile> discover_files(const std::vector<std::string>& inputs, const DiscoveryOptions& options,
                                           std::vector<FileError>& errors);

// The project a path belongs to: the nearest directory at or above it (a file's own
// directory first) that holds a project marker (torchlint.toml, pyproject.toml, setup.cfg,
// setup.py, .git, .hg). Never the working directory: the same file gets the same project
// however it is named. `has_marker` says whether one was found; when none is, the root is
// the directory itself (a file's parent).
struct ProjectRoot {
  std::filesystem::path path;
  bool has_marker = false;
};
ProjectRoot find_project_root(const std::filesystem::path& start);

// The project's other files that matter to `files` (the walk of `discover_files` over the
// root), marked context_only: those that import them, transitively (callers, entry
// scripts), and everything these and `files` import. `limit` bounds the walk: a root with
// more files than that gives no context (and `truncated` says so).
std::vector<DiscoveredFile> discover_context_files(const std::vector<DiscoveredFile>& files,
                                                   const DiscoveryOptions& options, size_t limit, bool& truncated);

// Dotted module name for a project-relative path ("pkg/utils.py" -> "pkg.utils",
// "pkg/__init__.py" -> "pkg").
std::string module_name_for(const std::string& relative_path);
// The top-level package a module belongs to, as its imports name it: `lightning` for
// `src.lightning.pytorch.demos` (a src/ layout is on the path, not imported).
std::string_view top_level_package(std::string_view module);

}  // namespace torchlint
