#include "driver.h"

#include <unistd.h>

#include <clang/AST/ASTConsumer.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>
#include <clang/Lex/HeaderSearch.h>
#include <clang/Lex/Lexer.h>
#include <clang/Lex/PPCallbacks.h>
#include <clang/Lex/Preprocessor.h>
#include <clang/Tooling/ArgumentsAdjusters.h>
#include <clang/Tooling/CompilationDatabase.h>
#include <clang/Tooling/JSONCompilationDatabase.h>
#include <clang/Tooling/Tooling.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/lint_session.h"
#include "core/result_cache.h"
#include "core/text.h"
#include "nolint.h"
#include "pch.h"
#include "pch_lru.h"
#include "program.h"
#include "rule.h"

#ifndef TORCHLINT_CLANG_RESOURCE_DIR
#define TORCHLINT_CLANG_RESOURCE_DIR ""
#endif

namespace torchlint::cpp {

namespace fs = std::filesystem;
using namespace clang;

void Context::report(std::string_view code, SourceRange range, std::string message) {
  SourceLocation b = sm_.getExpansionLoc(range.getBegin());
  SourceLocation e = sm_.getExpansionLoc(range.getEnd());
  if (b.isInvalid() || !sm_.isInMainFile(b)) return;
  unsigned begin = sm_.getFileOffset(b);
  unsigned end = begin;
  if (e.isValid() && sm_.isInMainFile(e)) {
    // The end of a token range: past its last token.
    unsigned last = sm_.getFileOffset(e);
    unsigned len = Lexer::MeasureTokenLength(e, sm_, ast_.getLangOpts());
    end = std::max(begin, last + len);
  }
  findings_.push_back({std::string(code), begin, end, std::move(message)});
}

std::string default_resource_dir() { return TORCHLINT_CLANG_RESOURCE_DIR; }

std::vector<std::string> cpp_rule_codes() {
  std::vector<std::string> out;
  for (const auto& e : cpp_rules()) out.push_back(e.code);
  return out;
}

const std::vector<std::string>& cpp_extensions() {
  static const std::vector<std::string> exts = {".cpp", ".cc", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx"};
  return exts;
}

namespace {

// What clang says about one TU: the first error, located in the main file where possible
// (an error inside a header is reported at the #include that leads to it).
class ErrorCollector : public DiagnosticConsumer {
 public:
  void HandleDiagnostic(DiagnosticsEngine::Level level, const clang::Diagnostic& info) override {
    DiagnosticConsumer::HandleDiagnostic(level, info);
    if (level < DiagnosticsEngine::Error || !first_error.empty()) return;
    llvm::SmallString<256> text;
    info.FormatDiagnostic(text);
    first_error = std::string(text.str());
    // "'opencv2/opencv.hpp' file not found": a header of another library or of the
    // project that the include path lacks.
    llvm::StringRef t = text.str();
    if (t.startswith("'") && t.endswith("' file not found")) missing_header = t.drop_front().drop_back(16).str();
    if (info.hasSourceManager() && info.getLocation().isValid()) {
      const SourceManager& sm = info.getSourceManager();
      SourceLocation loc = sm.getExpansionLoc(info.getLocation());
      if (!sm.isInMainFile(loc)) {
        if (auto* entry = sm.getFileEntryForID(sm.getFileID(loc))) where = std::string(entry->getName());
      }
      for (int depth = 0; loc.isValid() && !sm.isInMainFile(loc) && depth < 64; ++depth) {
        loc = sm.getExpansionLoc(sm.getIncludeLoc(sm.getFileID(loc)));
      }
      if (loc.isValid() && sm.isInMainFile(loc)) offset = sm.getFileOffset(loc);
    }
  }
  std::string first_error;
  std::string missing_header;  // set when the first error is an #include not found
  std::string where;           // the header the error is in, if not the main file
  unsigned offset = 0;
};

// One #include the preprocessor resolved: what the result cache records as the TU's
// dependencies (after the parse, see dependencies()).
struct IncludeSeen {
  std::string path;  // the file it resolved to
  std::string name;  // as written
  std::string includer_dir;
  bool angled = false;
};

// What one parse of a translation unit gives. The report is made from this the same way
// whether it was parsed now or read back from the result cache.
struct TuResult {
  std::vector<RawFinding> findings;
  std::string error;
  std::string error_where;
  unsigned error_offset = 0;
  bool failed = false;
  std::string missing_header;
  std::vector<std::string> standins;  // headers not found, replaced by empty ones
  TuSummary summary;                  // for the program pass (program.h)
};

struct ParseOutput {
  TuResult result;
  std::vector<IncludeSeen> includes;
  std::vector<std::string> search_dirs;  // the include path, in search order
};

std::string absolute_in(const std::string& dir, llvm::StringRef name) {
  fs::path p(name.str());
  if (p.is_relative()) p = fs::path(dir) / p;
  return p.lexically_normal().string();
}

class IncludeCollector : public PPCallbacks {
 public:
  IncludeCollector(const SourceManager& sm, std::string working_dir, std::vector<IncludeSeen>& out)
      : sm_(sm), working_dir_(std::move(working_dir)), out_(out) {}
  void InclusionDirective(SourceLocation hash, const Token&, llvm::StringRef name, bool angled, CharSourceRange,
                          const FileEntry* file, llvm::StringRef, llvm::StringRef, const Module*,
                          SrcMgr::CharacteristicKind) override {
    if (!file) return;  // not found: the run with a stand-in for it records it
    IncludeSeen seen;
    llvm::StringRef real = file->tryGetRealPathName();
    seen.path = absolute_in(working_dir_, real.empty() ? file->getName() : real);
    seen.name = name.str();
    seen.angled = angled;
    if (const FileEntry* includer = sm_.getFileEntryForID(sm_.getFileID(sm_.getExpansionLoc(hash)))) {
      llvm::StringRef r = includer->tryGetRealPathName();
      seen.includer_dir =
          fs::path(absolute_in(working_dir_, r.empty() ? includer->getName() : r)).parent_path().string();
    }
    out_.push_back(std::move(seen));
  }

 private:
  const SourceManager& sm_;
  std::string working_dir_;
  std::vector<IncludeSeen>& out_;
};

class LintConsumer : public ASTConsumer {
 public:
  LintConsumer(const std::set<std::string>& enabled, std::vector<RawFinding>& out, TuSummary& summary)
      : enabled_(enabled), out_(out), summary_(summary) {}
  void HandleTranslationUnit(ASTContext& ast) override {
    SourceManager& sm = ast.getSourceManager();
    // Only the main file's declarations are visited: LibTorch's headers are ~100k
    // declarations that no rule looks at (clangd does the same).
    std::vector<Decl*> scope;
    // noload_decls: with a precompiled header, the header's declarations stay on disk
    // (the main file's are never external).
    for (Decl* d : ast.getTranslationUnitDecl()->noload_decls()) {
      if (sm.isInMainFile(sm.getExpansionLoc(d->getLocation()))) scope.push_back(d);
    }
    ast.setTraversalScope(scope);
    Context ctx(ast);
    ast_matchers::MatchFinder finder;
    std::vector<std::unique_ptr<Rule>> rules;
    for (const auto& entry : cpp_rules()) {
      if (!enabled_.contains(entry.code)) continue;
      rules.push_back(entry.make(ctx));
      rules.back()->register_matchers(finder);
    }
    if (!scope.empty()) finder.matchAST(ast);
    for (auto& r : rules) r->finish();
    out_ = std::move(ctx.findings());
    summary_ = std::move(ctx.summary());
  }

 private:
  const std::set<std::string>& enabled_;
  std::vector<RawFinding>& out_;
  TuSummary& summary_;
};

class LintAction : public ASTFrontendAction {
 public:
  LintAction(const std::set<std::string>& enabled, ParseOutput& out) : enabled_(enabled), out_(out) {}
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance& ci, llvm::StringRef) override {
    Preprocessor& pp = ci.getPreprocessor();
    std::string working_dir = ci.getFileSystemOpts().WorkingDir;
    if (working_dir.empty()) {
      if (auto cwd = ci.getFileManager().getVirtualFileSystem().getCurrentWorkingDirectory()) working_dir = *cwd;
    }
    const HeaderSearch& search = pp.getHeaderSearchInfo();
    for (auto it = search.search_dir_begin(); it != search.search_dir_end(); ++it) {
      if (const DirectoryEntry* dir = it->getDir())
        out_.search_dirs.push_back(absolute_in(working_dir, dir->getName()));
    }
    pp.addPPCallbacks(std::make_unique<IncludeCollector>(ci.getSourceManager(), working_dir, out_.includes));
    return std::make_unique<LintConsumer>(enabled_, out_.result.findings, out_.result.summary);
  }

 private:
  const std::set<std::string>& enabled_;
  ParseOutput& out_;
};

class LintActionFactory : public tooling::FrontendActionFactory {
 public:
  LintActionFactory(const std::set<std::string>& enabled, ParseOutput& out) : enabled_(enabled), out_(out) {}
  std::unique_ptr<FrontendAction> create() override { return std::make_unique<LintAction>(enabled_, out_); }

 private:
  const std::set<std::string>& enabled_;
  ParseOutput& out_;
};

bool is_under(const std::string& path, const std::string& dir) {
  if (dir.empty() || path.size() <= dir.size() || path.compare(0, dir.size(), dir) != 0) return false;
  return dir.back() == '/' || path[dir.size()] == '/';
}

// A LibTorch include root on the include path (…/include or …/torch/csrc/api/include):
// its headers are LibTorch's, versioned by torch/version.h, never the project's.
bool is_libtorch_root(const std::string& dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(dir) / "torch/version.h", ec) ||
         fs::is_regular_file(fs::path(dir) / "torch/csrc/api/include/torch/version.h", ec);
}

// A dependency of a cached result: a file and the hash of its bytes, or a path that did not
// exist (where a header that was not found would be found once it is there).
struct Dependency {
  std::string path;
  std::optional<uint64_t> hash;  // nullopt: must still not exist
};

std::optional<uint64_t> hash_file(const std::string& path) {
  std::string error;
  auto bytes = read_file_bytes(path, error);
  if (!bytes) return std::nullopt;
  return ResultCache::hash(*bytes);
}

// The project headers the TU included (under `root`, outside LibTorch's include roots,
// not the main file itself), and for each header replaced by a stand-in the paths where it
// was looked for: creating it there, or adding it to the project, must invalidate the result.
std::optional<std::vector<Dependency>> dependencies(const ParseOutput& parse, const std::string& main_file,
                                                    const std::string& root, const std::string& standin_dir) {
  std::vector<std::string> torch_roots;
  for (const auto& d : parse.search_dirs) {
    if (is_libtorch_root(d)) torch_roots.push_back(d);
  }
  std::set<std::string> seen;
  std::vector<Dependency> out;
  for (const auto& inc : parse.includes) {
    if (is_under(inc.path, standin_dir)) {
      std::vector<std::string> candidates;
      if (!inc.angled && !inc.includer_dir.empty()) candidates.push_back(inc.includer_dir);
      for (const auto& d : parse.search_dirs) {
        if (d != standin_dir) candidates.push_back(d);
      }
      for (const auto& d : candidates) {
        std::string p = (fs::path(d) / inc.name).lexically_normal().string();
        if (seen.insert(p).second) out.push_back({p, std::nullopt});
      }
      continue;
    }
    // Without a project root every header outside LibTorch counts (slower, never stale).
    if (inc.path == main_file || (!root.empty() && !is_under(inc.path, root))) continue;
    if (std::any_of(torch_roots.begin(), torch_roots.end(),
                    [&](const std::string& t) { return is_under(inc.path, t); }))
      continue;
    if (!seen.insert(inc.path).second) continue;
    auto hash = hash_file(inc.path);
    if (!hash) return std::nullopt;  // unreadable now: do not cache what cannot be checked
    out.push_back({inc.path, hash});
  }
  return out;
}

// What besides the main file's bytes and its headers decides a TU's result: the tool, the
// rules, the full compile command (extra arguments and resource directory included) and
// the LibTorch release found on its include path.
uint64_t tu_key(const std::string& tool, const std::set<std::string>& enabled, const tooling::CompileCommand& command,
                const std::string& main_text) {
  std::string material = tool + '\0';
  for (const auto& code : enabled) material += code + ',';
  material += '\0' + command.Directory + '\0';
  for (const auto& a : command.CommandLine) material += a + '\0';
  std::error_code ec;
  for (const auto& d : include_dirs(command.Directory, command.CommandLine)) {
    for (const char* version : {"torch/version.h", "torch/csrc/api/include/torch/version.h"}) {
      fs::path v = fs::path(d) / version;
      if (!fs::is_regular_file(v, ec)) continue;
      std::string error;
      if (auto text = read_file_bytes(v.string(), error)) material += v.string() + '\0' + *text;
    }
  }
  return ResultCache::hash(main_text, ResultCache::hash(material));
}

std::string encode_entry(const TuResult& r, const std::vector<Dependency>& deps) {
  nlohmann::json j;
  auto& d = j["deps"] = nlohmann::json::array();
  for (const auto& dep : deps) d.push_back({dep.path, dep.hash ? nlohmann::json(*dep.hash) : nlohmann::json(nullptr)});
  // Findings before the program pass, with their conditions, and the TU's summary: the
  // pass runs over every TU of the run, cached or not (another TU may have changed).
  auto& f = j["findings"] = nlohmann::json::array();
  for (const auto& x : r.findings) {
    f.push_back({x.code, x.begin, x.end, x.message, x.program.requires_facts, x.program.unless_facts});
  }
  auto& s = j["summary"] = nlohmann::json::object();
  for (const auto& [name, fn] : r.summary) s[name] = {fn.facts, fn.calls};
  j["failed"] = r.failed;
  j["error"] = r.error;
  j["where"] = r.error_where;
  j["offset"] = r.error_offset;
  j["missing"] = r.missing_header;
  j["standins"] = r.standins;
  return j.dump();
}

// The cached result when every dependency is as it was; nullopt otherwise (or unreadable).
std::optional<TuResult> decode_entry(const std::string& bytes) {
  nlohmann::json j = nlohmann::json::parse(bytes, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  try {
    std::error_code ec;
    for (const auto& dep : j.at("deps")) {
      std::string path = dep.at(0).get<std::string>();
      if (dep.at(1).is_null()) {
        if (fs::exists(path, ec)) return std::nullopt;
      } else if (hash_file(path) != dep.at(1).get<uint64_t>()) {
        return std::nullopt;
      }
    }
    TuResult r;
    for (const auto& x : j.at("findings")) {
      ProgramCondition program{x.at(4).get<std::vector<std::string>>(), x.at(5).get<std::vector<std::string>>()};
      r.findings.push_back({x.at(0).get<std::string>(), x.at(1).get<unsigned>(), x.at(2).get<unsigned>(),
                            x.at(3).get<std::string>(), std::move(program)});
    }
    for (const auto& [name, fn] : j.at("summary").items()) {
      r.summary[name] = {fn.at(0).get<std::set<std::string>>(), fn.at(1).get<std::set<std::string>>()};
    }
    r.failed = j.at("failed").get<bool>();
    r.error = j.at("error").get<std::string>();
    r.error_where = j.at("where").get<std::string>();
    r.error_offset = j.at("offset").get<unsigned>();
    r.missing_header = j.at("missing").get<std::string>();
    r.standins = j.at("standins").get<std::vector<std::string>>();
    return r;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // a foreign or damaged entry is a miss
  }
}

// compile_commands.json in the file's directory or a parent (also in a `build/` folder
// beside it, where CMake users put it), up to the repository's root: a database above it
// belongs to another project (a checkout inside another project's build tree).
std::optional<fs::path> find_database_dir(const fs::path& file) {
  std::error_code ec;
  for (fs::path dir = file.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::is_regular_file(dir / "compile_commands.json", ec)) return dir;
    if (fs::is_regular_file(dir / "build" / "compile_commands.json", ec)) return dir / "build";
    if (fs::exists(dir / ".git", ec) || fs::exists(dir / ".hg", ec)) break;
    if (dir == dir.parent_path()) break;
  }
  return std::nullopt;
}

// LibTorch's include directories, for files without a compile command.
std::vector<std::string> torch_include_args(std::string& found) {
  std::vector<std::string> roots;
  if (const char* env = std::getenv("TORCH_INCLUDE_DIRS")) {
    std::string s = env;
    size_t start = 0;
    while (start <= s.size()) {
      size_t colon = s.find(':', start);
      if (colon == std::string::npos) colon = s.size();
      if (colon > start) roots.push_back(s.substr(start, colon - start));
      start = colon + 1;
    }
  }
  if (const char* lt = std::getenv("LIBTORCH")) roots.push_back(std::string(lt) + "/include");
  for (const char* r : {"/usr/include", "/usr/local/include", "/opt/libtorch/include", "/usr/local/libtorch/include"})
    roots.push_back(r);
  std::vector<std::string> args;
  std::error_code ec;
  for (const auto& root : roots) {
    fs::path api = fs::path(root) / "torch/csrc/api/include";
    if (!fs::is_regular_file(api / "torch/torch.h", ec)) continue;
    args.push_back("-I" + api.string());
    if (root != "/usr/include" && root != "/usr/local/include") args.push_back("-I" + root);
    found = root;
    break;
  }
  return args;
}

struct FileJob {
  std::string path;  // as given (display)
  std::string absolute;
  tooling::CompilationDatabase* db = nullptr;
  // Without a compile command: this file's own project include folders. Per file, not
  // shared: two programs of one checkout often have headers of the same name
  // (`include/transform.h` in each tutorial), and the other program's would be parsed.
  std::vector<std::string> project_includes;
};

// The repository's root above `file` (the first folder with .git or .hg), or none.
std::optional<fs::path> repository_root(const fs::path& file) {
  std::error_code ec;
  for (fs::path dir = file.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / ".git", ec) || fs::exists(dir / ".hg", ec)) return dir;
    if (dir == dir.parent_path()) break;
  }
  return std::nullopt;
}

// A quoted project header not on the include path (`"image_io.h"` from a sibling folder
// `utils/image_io/include/`): the folder that holds it, when exactly one file of the
// repository has that relative path. Two candidates: unknown which one the build uses,
// so none (the header then gets an empty stand-in). Build folders and hidden ones are
// skipped; the walk is capped so a huge checkout costs little.
std::optional<fs::path> find_project_header(const fs::path& root, const std::string& header) {
  if (header.empty() || header.front() == '/' || header.find("..") != std::string::npos) return std::nullopt;
  std::optional<fs::path> found;
  std::error_code ec;
  size_t visited = 0;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (++visited > 200000) return std::nullopt;
    const fs::path& p = it->path();
    std::string name = p.filename().string();
    if (it->is_directory(ec)) {
      if (name.starts_with(".") || name == "build" || name == "node_modules" || it.depth() > 12)
        it.disable_recursion_pending();
      continue;
    }
    std::string s = p.generic_string();
    if (!s.ends_with("/" + header)) continue;
    if (found) return std::nullopt;  // ambiguous
    found = fs::path(s.substr(0, s.size() - header.size() - 1));
  }
  return found;
}

}  // namespace

CppLintResult lint_cpp(const CppLintOptions& options, const RuleRegistry& registry) {
  CppLintResult result;
  const RuleInfo& parse_error = registry.engine_rule(EngineRule::kParseError);
  std::string resource_dir = options.resource_dir.empty() ? default_resource_dir() : options.resource_dir;
  std::error_code ec;
  if (!resource_dir.empty() && !fs::is_directory(fs::path(resource_dir) / "include", ec)) {
    result.notes.push_back(
        "Clang resource directory " + resource_dir +
        " has no include/ (is clang-14's libclang-common-14-dev installed?); builtin headers may be missing");
  }

  // Compilation databases: one per directory, loaded once.
  std::map<std::string, std::unique_ptr<tooling::CompilationDatabase>> databases;
  std::unique_ptr<tooling::CompilationDatabase> fallback;
  std::vector<std::string> without_db;
  std::vector<FileJob> jobs;
  auto load = [&](const fs::path& dir, std::string& error) -> tooling::CompilationDatabase* {
    std::string key = dir.string();
    auto it = databases.find(key);
    if (it != databases.end()) return it->second.get();
    auto db = tooling::JSONCompilationDatabase::loadFromFile((dir / "compile_commands.json").string(), error,
                                                             tooling::JSONCommandLineSyntax::AutoDetect);
    if (!db) return nullptr;
    auto inferred = tooling::inferMissingCompileCommands(std::move(db));
    return (databases[key] = std::move(inferred)).get();
  };
  std::optional<fs::path> given_dir;
  if (options.build_dir) {
    given_dir = fs::absolute(*options.build_dir, ec);
    if (!fs::is_regular_file(*given_dir / "compile_commands.json", ec)) {
      result.errors.push_back({*options.build_dir,
                               "no compile_commands.json in this directory (-p); configure the build with "
                               "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"});
      return result;
    }
  }
  for (const auto& f : options.files) {
    FileJob job;
    job.path = f;
    job.absolute = fs::absolute(f, ec).lexically_normal().string();
    if (!fs::is_regular_file(job.absolute, ec)) {
      result.errors.push_back({f, fs::exists(job.absolute, ec) ? "not a regular file" : "no such file"});
      continue;
    }
    std::optional<fs::path> dir = given_dir ? given_dir : find_database_dir(job.absolute);
    if (dir) {
      std::string error;
      job.db = load(*dir, error);
      if (!job.db) {
        result.errors.push_back({f, "cannot read " + (*dir / "compile_commands.json").string() + ": " + error});
        continue;
      }
    } else {
      without_db.push_back(f);
    }
    jobs.push_back(std::move(job));
  }
  if (!without_db.empty()) {
    std::string found;
    std::vector<std::string> args = {"-std=c++17", "-xc++"};
    auto torch = torch_include_args(found);
    args.insert(args.end(), torch.begin(), torch.end());
    // Where a project's own headers usually are: beside the file, and in the `include/`
    // folders of a CMake target's layout (`src/main.cpp` with `include/model.h`).
    for (auto& j : jobs) {
      if (j.db) continue;
      fs::path dir = fs::path(j.absolute).parent_path();
      for (const fs::path& candidate : {dir, dir / "include", dir.parent_path() / "include"}) {
        if (fs::is_directory(candidate, ec)) j.project_includes.push_back("-I" + candidate.string());
      }
    }
    fallback = std::make_unique<tooling::FixedCompilationDatabase>(".", args);
    std::string flags;
    for (const auto& a : args) flags += " " + a;
    result.notes.push_back("no compile_commands.json found for " + std::to_string(without_db.size()) +
                           (without_db.size() == 1 ? " file" : " files") + " (e.g. " + without_db.front() +
                           ") in its directory or above; pass -p BUILD_DIR or configure with "
                           "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON. Linting with:" +
                           flags + " and, per file, -I of its folder and of the include/ folders beside it" +
                           (found.empty() ? " (LibTorch headers not found; set TORCH_INCLUDE_DIRS)" : ""));
    for (auto& j : jobs) {
      if (!j.db) j.db = fallback.get();
    }
  }

  std::vector<TuResult> slots(jobs.size());
  std::atomic<size_t> from_cache{0};
  std::atomic<size_t> next{0};
  // The adjustments of every compile command; the PCH is built with the same flags.
  std::vector<std::string> extra = {"-w", "-Wno-unknown-warning-option", "-Qunused-arguments",
                                    "-fno-caret-diagnostics"};
  extra.insert(extra.end(), options.extra_args.begin(), options.extra_args.end());
  tooling::ArgumentsAdjuster adjust = tooling::getClangSyntaxOnlyAdjuster();
  for (auto a : {tooling::getClangStripOutputAdjuster(), tooling::getClangStripDependencyFileAdjuster(),
                 tooling::getInsertArgumentAdjuster(extra, tooling::ArgumentInsertPosition::END)}) {
    adjust = tooling::combineAdjusters(adjust, a);
  }
  if (!resource_dir.empty()) {
    adjust =
        tooling::combineAdjusters(adjust, [resource_dir](const tooling::CommandLineArguments& args, llvm::StringRef) {
          for (const auto& a : args) {
            if (llvm::StringRef(a).startswith("-resource-dir")) return args;
          }
          tooling::CommandLineArguments out = args;
          out.insert(out.begin() + (out.empty() ? 0 : 1), "-resource-dir=" + resource_dir);
          return out;
        });
  }
  std::unique_ptr<PchCache> pch_cache;
  if (options.use_pch) {
    std::string dir = options.pch_dir.empty() ? default_pch_dir() : options.pch_dir;
    if (!dir.empty()) {
      pch_cache = std::make_unique<PchCache>(fs::absolute(dir, ec).string(),
                                             options.pch_max_size ? options.pch_max_size : kDefaultPchMaxSize);
    }
  }
  std::unique_ptr<ResultCache> cache;
  if (!options.cache_dir.empty())
    cache = std::make_unique<ResultCache>(options.cache_dir, options.tool_identity, "cpp-");
  // Canonical, as the real paths of the included files are (a project under a symlink).
  const std::string project_root =
      options.project_root.empty() ? "" : fs::weakly_canonical(fs::absolute(options.project_root, ec), ec).string();
  // Headers the include path lacks are replaced by empty ones in a folder of the job's,
  // searched last, so that Clang parses the rest of the file; what needs their
  // declarations does not match, and stays silent.
  // Returns false when Clang could not be run at all (nothing to cache).
  auto run_once = [&](const FileJob& job, const std::string& pch, ParseOutput& parse,
                      const std::vector<std::string>& standins, const fs::path& standin_dir,
                      const std::vector<std::string>& found_dirs) {
    tooling::ClangTool tool(*job.db, {job.absolute});
    tool.setPrintErrorMessage(false);
    ErrorCollector diags;
    tool.setDiagnosticConsumer(&diags);
    tool.appendArgumentsAdjuster(adjust);
    if (!pch.empty()) {
      tool.appendArgumentsAdjuster(
          tooling::getInsertArgumentAdjuster({"-include-pch", pch}, tooling::ArgumentInsertPosition::END));
    }
    // After the PCH's flags: Clang does not check user include folders against a PCH, so
    // one PCH serves every file of the fallback command.
    std::vector<std::string> own = job.project_includes;
    for (const auto& d : found_dirs) own.push_back("-I" + d);
    if (!own.empty())
      tool.appendArgumentsAdjuster(tooling::getInsertArgumentAdjuster(own, tooling::ArgumentInsertPosition::END));
    if (!standins.empty()) {
      std::error_code write_ec;
      for (const auto& header : standins) {
        fs::path file = standin_dir / header;
        fs::create_directories(file.parent_path(), write_ec);
        std::ofstream(file) << "// torchlint: stand-in for a header not found\n";
      }
      tool.appendArgumentsAdjuster(tooling::getInsertArgumentAdjuster(
          {"-idirafter", standin_dir.string(), "-ferror-limit=0"}, tooling::ArgumentInsertPosition::END));
    }
    parse = ParseOutput{};
    TuResult& slot = parse.result;
    slot.standins = standins;
    LintActionFactory factory(options.enabled, parse);
    int rc = tool.run(&factory);
    if (rc != 0 || diags.getNumErrors() > 0) {
      slot.failed = true;
      slot.missing_header = diags.missing_header;
      slot.error = diags.first_error.empty() ? "clang could not run the compile command" : diags.first_error;
      slot.error_where = diags.where;
      slot.error_offset = diags.offset;
    }
    return !diags.first_error.empty() || rc == 0;
  };
  auto pch_rejected = [](const std::string& error) {
    std::string e = ascii_lower(error);
    return e.find("precompiled") != std::string::npos || e.find("pch") != std::string::npos ||
           e.find("ast file") != std::string::npos;
  };
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < jobs.size(); i = next.fetch_add(1)) {
      const FileJob& job = jobs[i];
      // The TU's compile command, as Clang will run it (adjusted).
      std::optional<tooling::CompileCommand> command;
      if (pch_cache || cache) {
        auto commands = job.db->getCompileCommands(job.absolute);
        if (!commands.empty()) {
          command = commands.front();
          command->CommandLine = adjust(command->CommandLine, command->Filename);
        }
      }
      // The result cache first: a hit needs neither the PCH nor Clang.
      std::optional<uint64_t> key;
      if (cache && command) {
        std::string error;
        if (auto text = read_file_bytes(job.absolute, error)) {
          key = tu_key(options.tool_identity, options.enabled, *command, *text);
          if (auto bytes = cache->load_bytes(job.absolute, *key)) {
            if (auto hit = decode_entry(*bytes)) {
              slots[i] = std::move(*hit);
              ++from_cache;
              continue;
            }
          }
        }
      }
      // The PCH of the file's leading LibTorch includes, with its own flags.
      std::string pch;
      std::vector<std::string> includes;
      if (pch_cache && command) {
        std::ifstream in(job.absolute, std::ios::binary);
        std::string head(64 * 1024, '\0');
        in.read(head.data(), static_cast<std::streamsize>(head.size()));
        head.resize(static_cast<size_t>(in.gcount()));
        includes = leading_torch_includes(head);
        if (!includes.empty()) pch = pch_cache->get(*command, job.absolute, includes);
      }
      std::error_code job_ec;
      std::vector<std::string> standins, found_dirs, searched;
      const std::optional<fs::path> repo =
          job.db == fallback.get() && fallback ? repository_root(job.absolute) : std::nullopt;
      const fs::path standin_dir = fs::weakly_canonical(fs::temp_directory_path(job_ec), job_ec) /
                                   ("torchlint-standins-" + std::to_string(::getpid()) + "-" + std::to_string(i));
      ParseOutput parse;
      bool ran = false;
      for (int attempt = 0;; ++attempt) {
        ran = run_once(job, pch, parse, standins, standin_dir, found_dirs);
        const TuResult& slot = parse.result;
        const std::string& missing = slot.missing_header;
        // A project header elsewhere in the repository: its real declarations beat an
        // empty stand-in (only for files without a compile command, whose include path
        // is a guess anyway).
        if (slot.failed && !missing.empty() && repo && searched.size() < 16 &&
            std::find(searched.begin(), searched.end(), missing) == searched.end()) {
          searched.push_back(missing);
          if (auto dir = find_project_header(*repo, missing)) {
            found_dirs.push_back(dir->string());
            continue;
          }
        }
        if (slot.failed && !missing.empty() && standins.size() < 16 &&
            std::find(standins.begin(), standins.end(), missing) == standins.end()) {
          standins.push_back(missing);  // again, with an empty stand-in for it
          continue;
        }
        if (!slot.failed || pch.empty()) break;
        // Clang rejected the PCH (stale, corrupted): drop it and rebuild it once; an error
        // outside the main file may come from the PCH too: run without it. Findings are
        // never lost to the cache.
        bool rejected = pch_rejected(slot.error);
        if (!rejected && slot.error_where.empty()) break;  // an error of the file itself
        if (rejected) pch_cache->invalidate(pch);
        pch_cache->release(pch);
        pch = rejected && attempt == 0 ? pch_cache->get(*command, job.absolute, includes) : "";
      }
      if (pch_cache) pch_cache->release(pch);
      if (cache && key && ran) {
        if (auto deps = dependencies(parse, job.absolute, project_root, standin_dir.string())) {
          cache->store_bytes(job.absolute, *key, encode_entry(parse.result, *deps));
        }
      }
      slots[i] = std::move(parse.result);
      if (!standins.empty()) fs::remove_all(standin_dir, job_ec);
    }
  };
  unsigned n = options.jobs ? options.jobs : std::max(1u, std::thread::hardware_concurrency());
  n = static_cast<unsigned>(std::min<size_t>(n, std::max<size_t>(jobs.size(), 1)));
  if (n <= 1) {
    work();
  } else {
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < n; ++t) threads.emplace_back(work);
    for (auto& t : threads) t.join();
  }

  // The program pass: findings that depend on the other TUs of the same executable.
  std::vector<ProgramUnit> units(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    auto commands = jobs[i].db->getCompileCommands(jobs[i].absolute);
    units[i].executable = commands.empty()
                              ? program_key({}, "", jobs[i].absolute)
                              : program_key(commands.front().CommandLine, commands.front().Directory, jobs[i].absolute);
    units[i].summary = &slots[i].summary;
    units[i].findings = &slots[i].findings;
  }
  decide_program_findings(units);

  for (size_t i = 0; i < jobs.size(); ++i) {
    const FileJob& job = jobs[i];
    TuResult& slot = slots[i];
    std::string error;
    auto source = SourceFile::read(job.absolute, error, job.path);
    if (!source) {
      result.errors.push_back({job.path, error});
      continue;
    }
    ++result.files_linted;
    auto file = std::make_shared<const SourceFile>(std::move(*source));
    std::vector<Diagnostic> diagnostics;
    auto make = [&](const std::string& code, unsigned begin, unsigned end, std::string message) {
      Diagnostic d;
      d.code = code;
      if (const RuleInfo* info = registry.find(code)) {
        d.name = info->name;
        d.severity = info->severity;
      }
      d.message = std::move(message);
      d.path = job.path;
      d.start_byte = std::min<unsigned>(begin, static_cast<unsigned>(file->text().size()));
      d.end_byte = std::min<unsigned>(std::max(end, begin), static_cast<unsigned>(file->text().size()));
      d.start.line = 0;
      resolve_positions(*file, d);
      d.statement_first_line = d.statement_last_line = d.start.line;
      diagnostics.push_back(std::move(d));
    };
    if (!slot.standins.empty()) {
      // Not the file's fault: the environment lacks headers. A note, not a finding.
      std::string names;
      for (const auto& h : slot.standins) names += (names.empty() ? "'" : ", '") + h + "'";
      result.notes.push_back(job.path + ": header" + (slot.standins.size() > 1 ? "s " : " ") + names +
                             " not found; analysed without " + (slot.standins.size() > 1 ? "them" : "it") +
                             " (findings that need " + (slot.standins.size() > 1 ? "their" : "its") +
                             " declarations are not reported). Give the include path with -p BUILD_DIR "
                             "(compile_commands.json), --extra-arg=-IDIR, or [tool.torchlint.cpp] extra-args");
    } else if (slot.failed && options.enabled.contains(parse_error.code)) {
      std::string where = slot.error_where.empty() ? "" : " (in " + slot.error_where + ")";
      make(parse_error.code, slot.error_offset, slot.error_offset,
           "clang could not compile this file, C++ findings may be partial: " + slot.error + where);
    }
    std::set<std::pair<std::string, unsigned>> seen;  // template instantiations repeat matches
    for (auto& f : slot.findings) {
      if (!seen.insert({f.code, f.begin}).second) continue;
      make(f.code, f.begin, f.end, std::move(f.message));
    }
    NolintScan nolint = scan_nolint(file->text());
    std::erase_if(diagnostics, [&](const Diagnostic& d) { return is_suppressed(d, nolint.ranges); });
    for (const auto& [line, message] : nolint.problems) {
      result.notes.push_back(job.path + ":" + std::to_string(line) + ": " + message);
    }
    if (!diagnostics.empty()) result.sources.emplace(job.path, file);
    for (auto& d : diagnostics) result.diagnostics.push_back(std::move(d));
  }
  std::sort(result.diagnostics.begin(), result.diagnostics.end(), diagnostic_less);
  result.from_cache = from_cache;
  if (cache) cache->flush();
  return result;
}

}  // namespace torchlint::cpp
