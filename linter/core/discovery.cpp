#include "discovery.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <unordered_map>
#include <unordered_set>
#include <set>

#include "glob.h"

namespace torchlint {

namespace fs = std::filesystem;

namespace {

constexpr std::array kSkippedDirectories = {
    ".git",
    ".hg",
    ".svn",
    ".bzr",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".eggs",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".ipynb_checkpoints",
    "__pycache__",
    "__pypackages__",
    "site-packages",
    "node_modules",
    "build",
    "dist",
    "_build",
    "buck-out",
    ".direnv",
    ".pyenv",
    ".torchlint_cache",
};

std::string generic(const fs::path& p) { return p.lexically_normal().generic_string(); }

// Whether an absolute POSIX path string is already in normal form: no `.` or `..`
// component, no repeated or trailing separator.
bool is_normal_absolute(std::string_view p) {
  if (p.empty() || p.front() != '/') return false;
  if (p.size() > 1 && p.back() == '/') return false;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != '/') continue;
    std::string_view rest = p.substr(i + 1);
    if (rest.starts_with('/') || rest == "." || rest.starts_with("./") || rest == ".." || rest.starts_with("../")) {
      return false;
    }
  }
  return true;
}

// `path` relative to `base`, or `path` itself (normalised) when it is not under `base`;
// relative paths are taken from `cwd`.
std::string relative_to(const fs::path& path, const fs::path& base, const fs::path& cwd) {
  // Fast path, by string, for the common case of clean paths under `base`: the walk calls
  // this twice per file, and the std::filesystem operations below allocate a lot.
  std::string joined;
  if (!path.is_absolute() && !cwd.empty()) joined = cwd.native() + "/" + path.native();
  std::string_view p = path.is_absolute() ? std::string_view(path.native()) : std::string_view(joined);
  if (!p.empty() && is_normal_absolute(p)) {
    std::string_view b = base.native();
    if (b.size() > 1 && b.back() == '/') b.remove_suffix(1);
    if (is_normal_absolute(b)) {
      if (p == b) return ".";
      if (b == "/") return std::string(p.substr(1));
      if (p.size() > b.size() && p.starts_with(b) && p[b.size()] == '/') return std::string(p.substr(b.size() + 1));
    }
  }
  std::error_code ec;
  fs::path abs = path.is_absolute() || cwd.empty() ? fs::absolute(path, ec) : cwd / path;
  fs::path rel = abs.lexically_normal().lexically_relative(base);
  if (rel.empty() || rel.native().starts_with("..")) return generic(path);
  return generic(rel);
}

bool has_extension(const fs::path& p, const std::vector<std::string>& extensions) {
  std::string ext = p.extension().string();
  return std::find(extensions.begin(), extensions.end(), ext) != extensions.end();
}

bool excluded(const std::string& relative, const std::vector<std::string>& patterns) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return path_matches(p, relative); });
}

}  // namespace

std::vector<DiscoveredFile> discover_files(const std::vector<std::string>& inputs, const DiscoveryOptions& options,
                                           std::vector<FileError>& errors) {
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  const fs::path root = fs::absolute(options.project_root, ec).lexically_normal();
  std::vector<DiscoveredFile> files;
  std::set<std::string> seen;

  auto add = [&](const fs::path& p, bool explicit_) {
    std::string display = relative_to(p, cwd, cwd);
    if (!seen.insert(display).second) return;
    DiscoveredFile f;
    f.path = p;
    f.display = display;
    f.relative = relative_to(p, root, cwd);
    f.explicitly_given = explicit_;
    if (excluded(f.relative, options.exclude)) return;
    files.push_back(std::move(f));
  };

  for (const auto& input : inputs) {
    fs::path p(input);
    auto status = fs::status(p, ec);
    if ((ec || !fs::exists(status)) && options.unsaved_text && options.unsaved_text(p)) {
      add(p, true);
      continue;
    }
    if (ec || !fs::exists(status)) {
      // Tell a dangling symlink or symlink loop apart from a missing path.
      auto link = fs::symlink_status(p, ec);
      if (!ec && fs::is_symlink(link)) {
        errors.push_back({generic(p), "cannot follow symbolic link (dangling or a loop)"});
      } else {
        errors.push_back({generic(p), "no such file or directory"});
      }
      continue;
    }
    if (!fs::is_directory(status)) {
      add(p, true);
      continue;
    }
    fs::recursive_directory_iterator it(p, fs::directory_options::skip_permission_denied, ec);
    if (ec) {
      errors.push_back({generic(p), "cannot read directory: " + ec.message()});
      continue;
    }
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) {
        errors.push_back({generic(it->path()), "cannot read directory: " + ec.message()});
        ec.clear();
        break;
      }
      const fs::directory_entry& entry = *it;
      std::error_code entry_ec;
      bool is_symlink = entry.is_symlink(entry_ec);
      if (entry.is_directory(entry_ec) && !is_symlink) {
        std::string name = entry.path().filename().string();
        bool skip =
            std::find(kSkippedDirectories.begin(), kSkippedDirectories.end(), name) != kSkippedDirectories.end();
        // A virtualenv under any name carries pyvenv.cfg.
        if (!skip) skip = fs::exists(entry.path() / "pyvenv.cfg", entry_ec);
        if (!skip) skip = excluded(relative_to(entry.path(), root, cwd), options.exclude);
        if (skip) it.disable_recursion_pending();
        continue;
      }
      if (!has_extension(entry.path(), options.extensions)) continue;
      if (is_symlink && !fs::exists(entry.path(), entry_ec)) {
        errors.push_back({relative_to(entry.path(), cwd, cwd), "cannot follow symbolic link (dangling or a loop)"});
        continue;
      }
      if (is_symlink && fs::is_directory(entry.path(), entry_ec)) continue;
      add(entry.path(), false);
    }
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.display < b.display; });
  return files;
}

ProjectRoot find_project_root(const fs::path& start) {
  static constexpr std::array kMarkers = {"torchlint.toml", "pyproject.toml", "setup.cfg", "setup.py", ".git", ".hg"};
  std::error_code ec;
  fs::path abs = fs::absolute(start, ec).lexically_normal();
  if (!abs.has_filename()) abs = abs.parent_path();  // "dir/" normalises to a trailing separator
  fs::path dir = fs::is_directory(abs, ec) ? abs : abs.parent_path();
  for (fs::path d = dir;; d = d.parent_path()) {
    for (const char* marker : kMarkers) {
      if (fs::exists(d / marker, ec)) return {d, true};
    }
    if (d == d.root_path() || d.parent_path() == d) break;
  }
  return {dir, false};
}

namespace {

// The modules a Python file imports, as written (`a.b` for `import a.b as c` and for
// `from a.b import c`, plus `a.b.c` since `c` may be a module); relative imports are
// resolved against `module`. A line scan, not a parse: good enough to find which project
// files can matter to which, and a miss only costs context.
std::vector<std::string> imported_modules(std::string_view text, std::string_view module) {
  std::vector<std::string> out;
  auto trim = [](std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t' || v.front() == '(')) v.remove_prefix(1);
    while (!v.empty() &&
           (v.back() == ' ' || v.back() == '\t' || v.back() == '\r' || v.back() == ')' || v.back() == '\\')) {
      v.remove_suffix(1);
    }
    return v;
  };
  auto name_of = [&](std::string_view item) {  // "a.b as c" -> "a.b"
    item = trim(item);
    size_t as = item.find(" as ");
    if (as != std::string_view::npos) item = trim(item.substr(0, as));
    return item;
  };
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = trim(text.substr(pos, end - pos));
    pos = end + 1;
    if (line.starts_with("import ")) {
      std::string_view rest = line.substr(7);
      size_t hash = rest.find('#');
      if (hash != std::string_view::npos) rest = rest.substr(0, hash);
      for (size_t start = 0; start <= rest.size();) {
        size_t comma = rest.find(',', start);
        if (comma == std::string_view::npos) comma = rest.size();
        std::string_view n = name_of(rest.substr(start, comma - start));
        if (!n.empty()) out.emplace_back(n);
        start = comma + 1;
      }
    } else if (line.starts_with("from ")) {
      size_t imp = line.find(" import ");
      if (imp == std::string_view::npos) continue;
      std::string_view from = trim(line.substr(5, imp - 5));
      std::string base;
      if (from.starts_with('.')) {
        size_t dots = from.find_first_not_of('.');
        if (dots == std::string_view::npos) dots = from.size();
        std::string_view pkg = module;
        for (size_t i = 0; i < dots; ++i) {
          size_t d = pkg.rfind('.');
          pkg = d == std::string_view::npos ? std::string_view() : pkg.substr(0, d);
        }
        base = std::string(pkg);
        std::string_view rest = from.substr(dots);
        if (!rest.empty()) base += (base.empty() ? "" : ".") + std::string(rest);
      } else {
        base = std::string(from);
      }
      if (!base.empty()) out.push_back(base);
      std::string_view names = line.substr(imp + 8);
      size_t hash = names.find('#');
      if (hash != std::string_view::npos) names = names.substr(0, hash);
      for (size_t start = 0; start <= names.size();) {
        size_t comma = names.find(',', start);
        if (comma == std::string_view::npos) comma = names.size();
        std::string_view n = name_of(names.substr(start, comma - start));
        if (!n.empty() && n != "*") out.push_back(base.empty() ? std::string(n) : base + "." + std::string(n));
        start = comma + 1;
      }
    }
  }
  return out;
}

}  // namespace

std::vector<DiscoveredFile> discover_context_files(const std::vector<DiscoveredFile>& files,
                                                   const DiscoveryOptions& options, size_t limit, bool& truncated) {
  truncated = false;
  std::vector<FileError> ignored;  // an unreadable context file only costs context
  auto all = discover_files({options.project_root.string()}, options, ignored);
  if (all.size() > limit) {
    truncated = true;
    return {};
  }
  // Which project files import which: module names and their dotted suffixes
  // ("src.pkg.utils" is also "pkg.utils" and "utils", as scripts import their neighbours).
  std::vector<std::string> modules(all.size());
  std::unordered_map<std::string, std::vector<uint32_t>> by_name;
  for (uint32_t i = 0; i < all.size(); ++i) {
    modules[i] = module_name_for(all[i].relative);
    std::string_view m = modules[i];
    by_name[std::string(m)].push_back(i);
    for (size_t dot = m.find('.'); dot != std::string_view::npos; dot = m.find('.', dot + 1)) {
      by_name[std::string(m.substr(dot + 1))].push_back(i);
    }
  }
  // The top-level packages the project itself defines (`lightning` for src/lightning/...):
  // imports of them are project imports even when a library of that name is known.
  std::unordered_set<std::string> own_packages;
  for (const auto& m : modules) own_packages.insert(std::string(top_level_package(m)));
  std::vector<std::vector<uint32_t>> imports(all.size()), importers(all.size());
  for (uint32_t i = 0; i < all.size(); ++i) {
    const std::string* unsaved = options.unsaved_text ? options.unsaved_text(all[i].path) : nullptr;
    std::string text;
    if (!unsaved) {
      std::ifstream in(all[i].path, std::ios::binary);
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    for (const auto& name : imported_modules(unsaved ? *unsaved : text, modules[i])) {
      std::string_view top = std::string_view(name).substr(0, name.find('.'));
      // An installed library is not read, unless the project is that library (Lightning's
      // own repository imports `lightning.pytorch` from src/lightning/pytorch).
      if (options.external_package && options.external_package(top) && !own_packages.contains(std::string(top)))
        continue;
      // `a.b.c` may name module a.b.c or an attribute of module a.b.
      std::string_view n = name;
      for (int guard = 0; !n.empty() && guard < 64; ++guard) {
        auto it = by_name.find(std::string(n));
        if (it != by_name.end()) {
          for (uint32_t j : it->second) {
            if (j != i) imports[i].push_back(j);
          }
          break;
        }
        size_t dot = n.rfind('.');
        if (dot == std::string_view::npos) break;
        n = n.substr(0, dot);
      }
    }
    for (uint32_t j : imports[i]) importers[j].push_back(i);
  }
  // The context of the files asked for: the files that import them (their callers and
  // entry scripts, transitively), and everything those and the files themselves import.
  std::set<std::string> given;
  for (const auto& f : files) given.insert(f.relative);
  std::vector<char> in_set(all.size(), 0);
  std::vector<uint32_t> given_ids;
  for (uint32_t i = 0; i < all.size(); ++i) {
    if (given.contains(all[i].relative)) {
      in_set[i] = 1;
      given_ids.push_back(i);
    }
  }
  // Adds to in_set every file reachable from `from` along `edges`; returns `from` plus them.
  auto spread = [&](const std::vector<std::vector<uint32_t>>& edges, std::vector<uint32_t> from) {
    std::vector<uint32_t> reached = from;
    while (!from.empty()) {
      uint32_t i = from.back();
      from.pop_back();
      for (uint32_t j : edges[i]) {
        if (!in_set[j]) {
          in_set[j] = 1;
          from.push_back(j);
          reached.push_back(j);
        }
      }
    }
    return reached;
  };
  spread(imports, spread(importers, std::move(given_ids)));
  std::vector<DiscoveredFile> context;
  for (uint32_t i = 0; i < all.size(); ++i) {
    if (!in_set[i] || given.contains(all[i].relative)) continue;
    DiscoveredFile f = std::move(all[i]);
    f.context_only = true;
    f.explicitly_given = false;
    context.push_back(std::move(f));
  }
  return context;
}

std::string_view top_level_package(std::string_view module) {
  if (module.starts_with("src.")) module.remove_prefix(4);
  return module.substr(0, module.find('.'));
}

std::string module_name_for(const std::string& relative_path) {
  std::string s = relative_path;
  while (s.starts_with("./")) s.erase(0, 2);
  if (auto dot = s.rfind('.'); dot != std::string::npos && s.find('/', dot) == std::string::npos) s.erase(dot);
  if (s.ends_with("/__init__")) s.erase(s.size() - 9);
  for (char& c : s) {
    if (c == '/') c = '.';
  }
  return s;
}

}  // namespace torchlint
