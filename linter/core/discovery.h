#pragma once
// Turns the paths a user passed into the files to lint, in a stable order.
#include <filesystem>
#include <string>
#include <vector>

#include "diagnostic.h"

namespace torchlint {

struct DiscoveredFile {
  std::filesystem::path path;  // as opened
  std::string display;         // relative to the working directory where possible
  std::string relative;        // relative to the project root, '/'-separated
  bool explicitly_given = false;
};

struct DiscoveryOptions {
  std::filesystem::path project_root;
  std::vector<std::string> extensions;  // ".py", ".ipynb", ...
  std::vector<std::string> exclude;     // user patterns, relative to project_root
};

// Directories are walked recursively without following directory symlinks (so symlink
// loops cannot trap the walk); well-known tool, VCS and virtualenv folders are skipped.
// Paths that cannot be read are reported in `errors`; the walk goes on.
std::vector<DiscoveredFile> discover_files(const std::vector<std::string>& inputs, const DiscoveryOptions& options,
                                           std::vector<FileError>& errors);

// Dotted module name for a project-relative path ("pkg/utils.py" -> "pkg.utils",
// "pkg/__init__.py" -> "pkg").
std::string module_name_for(const std::string& relative_path);

}  // namespace torchlint
