#include "pch.h"

#include "pch_lru.h"

#include <clang/Basic/Version.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/SHA1.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace torchlint::cpp {

namespace fs = std::filesystem;
using namespace clang;

std::vector<std::string> leading_torch_includes(const std::string& text) {
  std::vector<std::string> out;
  size_t i = 0, n = text.size();
  auto skip_space = [&] {
    while (i < n) {
      if (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n' || text[i] == '\f' ||
          text[i] == '\v') {
        ++i;
      } else if (text.compare(i, 2, "//") == 0) {
        while (i < n && text[i] != '\n') ++i;
      } else if (text.compare(i, 2, "/*") == 0) {
        size_t e = text.find("*/", i + 2);
        i = e == std::string::npos ? n : e + 2;
      } else {
        break;
      }
    }
  };
  for (;;) {
    skip_space();
    if (i >= n || text[i] != '#') break;  // code: the preamble ends
    size_t eol = text.find('\n', i);
    if (eol == std::string::npos) eol = n;
    std::string line = text.substr(i + 1, eol - i - 1);
    if (!line.empty() && line.back() == '\\') break;  // continued directive: stop, to be safe
    size_t p = line.find_first_not_of(" \t");
    if (p == std::string::npos) break;
    std::string_view rest(line);
    rest.remove_prefix(p);
    if (rest.starts_with("pragma")) {
      if (rest.find("once") == std::string_view::npos) break;
    } else if (rest.starts_with("include")) {
      rest.remove_prefix(7);
      size_t q = rest.find_first_not_of(" \t");
      if (q == std::string_view::npos) break;
      rest.remove_prefix(q);
      char close = rest.empty() ? 0 : (rest[0] == '<' ? '>' : rest[0] == '"' ? '"' : 0);
      if (!close) break;  // a macro include: stop
      size_t end = rest.find(close, 1);
      if (end == std::string_view::npos) break;
      std::string path(rest.substr(1, end - 1));
      if (path.starts_with("torch/") || path.starts_with("ATen/") || path.starts_with("c10/")) {
        out.push_back("<" + path + ">");
      }
    } else {
      break;  // #define, #if, ...: what follows may depend on it
    }
    i = eol;
  }
  return out;
}

std::vector<std::string> include_dirs(const std::string& directory, const std::vector<std::string>& args) {
  std::vector<std::string> dirs;
  for (size_t i = 1; i < args.size(); ++i) {
    llvm::StringRef a = args[i];
    for (llvm::StringRef flag : {"-isystem", "-iquote", "-idirafter", "-I"}) {
      if (!a.startswith(flag)) continue;
      std::string d =
          a.size() > flag.size() ? a.drop_front(flag.size()).str() : (i + 1 < args.size() ? args[i + 1] : "");
      if (!d.empty()) dirs.push_back((fs::path(directory) / d).string());
      break;
    }
  }
  return dirs;
}

std::string default_pch_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/') return std::string(xdg) + "/torchlint/pch";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/torchlint/pch";
  return "";
}

namespace {

// The one command that builds a PCH, exactly as given (argv[0] included: it can name the
// target, e.g. aarch64-linux-gnu-g++).
class OneCommandDatabase : public tooling::CompilationDatabase {
 public:
  explicit OneCommandDatabase(tooling::CompileCommand c) : command_(std::move(c)) {}
  std::vector<tooling::CompileCommand> getCompileCommands(llvm::StringRef) const override { return {command_}; }
  std::vector<std::string> getAllFiles() const override { return {command_.Filename}; }

 private:
  tooling::CompileCommand command_;
};

class PchBuildAction : public tooling::ToolAction {
 public:
  explicit PchBuildAction(std::string output) : output_(std::move(output)) {}
  bool runInvocation(std::shared_ptr<CompilerInvocation> invocation, FileManager* files,
                     std::shared_ptr<PCHContainerOperations> ops, DiagnosticConsumer* diags) override {
    invocation->getFrontendOpts().OutputFile = output_;
    invocation->getFrontendOpts().ProgramAction = frontend::GeneratePCH;
    CompilerInstance ci(std::move(ops));
    ci.setInvocation(std::move(invocation));
    ci.setFileManager(files);
    ci.createDiagnostics(diags, /*ShouldOwnClient=*/false);
    if (!ci.hasDiagnostics()) return false;
    ci.createSourceManager(*files);
    GeneratePCHAction action;
    bool ok = ci.ExecuteAction(action);
    files->clearStatCache();
    return ok && !ci.getDiagnostics().hasErrorOccurred();
  }

 private:
  std::string output_;
};

std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  return ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
}

// Writes `text` to `path` unless it exists; never replaces it (its mtime is in the PCHs).
bool write_once(const fs::path& path, const std::string& text) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return true;
  fs::path tmp = path.string() + unique_suffix();
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out.flush()) return false;
  }
  bool ok = ::link(tmp.c_str(), path.c_str()) == 0 || errno == EEXIST;
  fs::remove(tmp, ec);
  return ok;
}

// Size and mtime of each included LibTorch header, found on the command's include path.
std::string header_stamps(const tooling::CompileCommand& command, const std::vector<std::string>& args,
                          const std::vector<std::string>& includes) {
  std::vector<fs::path> dirs;
  for (const auto& d : include_dirs(command.Directory, args)) dirs.push_back(d);
  dirs.push_back("/usr/local/include");
  dirs.push_back("/usr/include");
  std::string out;
  std::error_code ec;
  for (const auto& inc : includes) {
    std::string rel = inc.substr(1, inc.size() - 2);
    out += rel + ":";
    for (const auto& d : dirs) {
      fs::path p = d / rel;
      if (!fs::is_regular_file(p, ec)) continue;
      auto t = fs::last_write_time(p, ec).time_since_epoch().count();
      out += p.string() + ":" + std::to_string(fs::file_size(p, ec)) + ":" + std::to_string(t);
      break;
    }
    out += "\n";
  }
  return out;
}

}  // namespace

std::string PchCache::get(const tooling::CompileCommand& command, const std::string& main_file,
                          const std::vector<std::string>& includes) {
  if (dir_.empty() || includes.empty()) return "";
  // The TU's flags without its input file (and -c, which -fsyntax-only supersedes).
  std::vector<std::string> args;
  std::error_code ec;
  for (size_t i = 0; i < command.CommandLine.size(); ++i) {
    const std::string& a = command.CommandLine[i];
    if (i > 0 && (a == "-c" || a == "--")) continue;
    if (i > 0 && (a == command.Filename || a == main_file ||
                  (a[0] != '-' &&
                   fs::absolute(fs::path(command.Directory) / a, ec).lexically_normal() == fs::path(main_file)))) {
      continue;
    }
    args.push_back(a);
  }
  if (args.empty()) return "";
  std::string header_text = "// torchlint-cpp: the LibTorch includes of a translation unit, precompiled\n";
  for (const auto& inc : includes) header_text += "#include " + inc + "\n";
  std::string material = getClangFullVersion() + '\0' + command.Directory + '\0';
  for (const auto& a : args) material += a + '\0';
  material += header_text + '\0' + header_stamps(command, args, includes);
  auto digest = llvm::SHA1::hash(llvm::arrayRefFromStringRef(material));
  std::string key = llvm::toHex(digest, /*LowerCase=*/true).substr(0, 24);

  std::shared_ptr<Entry> entry;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& e = entries_[key];
    if (!e) e = std::make_shared<Entry>();
    entry = e;
  }
  std::lock_guard<std::mutex> lock(entry->mutex);
  // A PCH that vanished since (evicted by this run or another) is built again.
  if (entry->done && (entry->path.empty() || fs::is_regular_file(entry->path, ec))) {
    acquire(entry->path);
    return entry->path;
  }
  entry->done = true;
  fs::path pch = fs::path(dir_) / (key + ".pch");
  if (fs::is_regular_file(pch, ec) && fs::file_size(pch, ec) > 0) {
    entry->path = pch.string();
  } else if (fs::exists(fs::path(dir_) / (key + ".failed"), ec)) {
    entry->path = "";  // these flags do not compile the LibTorch headers: no PCH
  } else {
    ++entry->builds;
    entry->path = build(key, command, args, header_text);
  }
  if (!entry->path.empty()) {
    {
      std::lock_guard<std::mutex> g(mutex_);
      key_of_[entry->path] = key;
    }
    acquire(entry->path);
  }
  return entry->path;
}

void PchCache::acquire(const std::string& pch) {
  if (pch.empty()) return;
  std::error_code ec;
  // Touch on use: the LRU order is by mtime. Clang checks the mtimes of a PCH's inputs,
  // never the PCH's own, so this does not make it stale.
  fs::last_write_time(pch, fs::file_time_type::clock::now(), ec);
  std::lock_guard<std::mutex> lock(mutex_);
  ++in_use_[pch];
  ours_.insert(pch);
  // At every use, not only after a build: a cap lowered since, or PCHs added by other runs,
  // are trimmed too (a directory listing; a run has few PCHs).
  std::set<std::string> in_use;
  for (const auto& [path, count] : in_use_) {
    if (count > 0) in_use.insert(path);
  }
  evict_pch_lru(dir_, max_size_, in_use, ours_);
}

void PchCache::release(const std::string& pch) {
  if (pch.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = in_use_.find(pch);
  if (it != in_use_.end() && --it->second <= 0) in_use_.erase(it);
}

void PchCache::invalidate(const std::string& pch) {
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto k = key_of_.find(pch);
    if (k == key_of_.end()) return;
    entry = entries_[k->second];
  }
  std::lock_guard<std::mutex> lock(entry->mutex);
  if (entry->path != pch) return;
  std::error_code ec;
  fs::remove(pch, ec);
  // Found on disk and rejected: rebuild it once. Built here and rejected: give up.
  if (entry->builds == 0) {
    entry->done = false;
  }
  entry->path = "";
}

std::string PchCache::build(const std::string& key, const tooling::CompileCommand& command,
                            const std::vector<std::string>& args, const std::string& header_text) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  fs::path header = fs::path(dir_) / (key + ".h");
  if (!write_once(header, header_text)) return "";
  fs::path final_path = fs::path(dir_) / (key + ".pch");
  fs::path tmp = final_path.string() + unique_suffix();
  tooling::CompileCommand c;
  c.Directory = command.Directory;
  c.Filename = header.string();
  c.CommandLine = args;
  // Templates instantiated once in the PCH, not in every TU that uses it.
  for (const char* a : {"-fpch-instantiate-templates", "-x", "c++-header"}) c.CommandLine.push_back(a);
  c.CommandLine.push_back(header.string());
  OneCommandDatabase db(c);
  tooling::ClangTool tool(db, {c.Filename});
  tool.setPrintErrorMessage(false);
  IgnoringDiagConsumer quiet;
  tool.setDiagnosticConsumer(&quiet);
  PchBuildAction action(tmp.string());
  int rc = tool.run(&action);
  if (rc != 0 || !fs::is_regular_file(tmp, ec)) {
    fs::remove(tmp, ec);
    if (rc == 1) write_once(fs::path(dir_) / (key + ".failed"), "");  // the headers do not compile
    return "";
  }
  fs::rename(tmp, final_path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return "";
  }
  return final_path.string();
}

}  // namespace torchlint::cpp
