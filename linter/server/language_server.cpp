#include "language_server.h"

#include <algorithm>
#include <condition_variable>
#include <ctime>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "cli/check_command.h"
#include "cli/cpp_frontend.h"
#include "core/registry.h"

namespace torchlint::server {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Frames read by a thread of their own, so that the main loop can wait for "a message or
// the next debounce deadline, whichever comes first" and can see a `$/cancelRequest`
// that arrived behind the request it cancels. Shared with that thread, which may outlive
// the server while it is blocked reading a client that never closes its end.
}  // namespace

// What the main loop waits for: frames from the reader thread, finished lints from the
// worker. Shared with both threads, which may outlive the server (a reader blocked on a
// client that never closes its end, a lint still running at `exit`).
struct Inbox {
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<Frame> frames;
  std::deque<LintJob> lints;
  bool ended = false;
};

namespace {

// A summary of what decides a lint's context files besides the disk: the linted paths and
// their import statements (lines starting with `import` or `from`).
uint64_t context_key(const LintJob& job, uint64_t disk_generation) {
  std::hash<std::string_view> hash;
  uint64_t key = disk_generation * 0x9E3779B97F4A7C15ull;
  auto mix = [&](std::string_view s) { key = (key ^ hash(s)) * 0x100000001B3ull; };
  std::vector<std::string> paths = job.paths;
  std::sort(paths.begin(), paths.end());
  for (const auto& path : paths) {
    mix(path);
    auto text = job.texts.find(path);
    if (text == job.texts.end()) continue;
    std::string_view rest = text->second;
    while (!rest.empty()) {
      size_t eol = rest.find('\n');
      std::string_view line = rest.substr(0, eol);
      rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
      size_t first = line.find_first_not_of(" \t");
      if (first == std::string_view::npos) continue;
      line.remove_prefix(first);
      if (line.starts_with("import ") || line.starts_with("from ")) mix(line);
    }
  }
  return key;
}

// Runs one lint (any thread): what `torchlint check` does for the job's paths, with the
// editor's texts in place of the files.
double process_cpu_milliseconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

void run_lint(LintJob& job) {
  auto started = Clock::now();
  double cpu_started = process_cpu_milliseconds();
  cli::CheckRequest request;
  request.paths = job.paths;
  request.selection = job.selection;
  request.target_torch = job.target_torch;
  request.use_cache = true;  // the unchanged files of the project: their facts from the cache
  request.overlay = &job.texts;
  request.parse_memos = &job.memos;
  request.baseline = job.baseline;
  request.context_memo = job.context.get();
  request.context_key = job.context_key;
  std::string error;
  auto run = cli::run_check(request, error);
  if (!run) {
    job.error = error;
    return;
  }
  std::error_code ec;
  for (auto& d : run->outcome.diagnostics) {
    job.findings[fs::absolute(d.path, ec).lexically_normal()].push_back(std::move(d));
  }
  for (const auto& e : run->outcome.errors) job.problems.push_back(e.path + ": " + e.message);
  job.context_files = run->context_files;
  job.milliseconds = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  job.cpu_milliseconds = process_cpu_milliseconds() - cpu_started;
}

const std::vector<std::string> kPythonExtensions = {".py", ".pyi", ".ipynb"};

bool is_config_file(const fs::path& path) {
  auto name = path.filename();
  return name == "pyproject.toml" || name == "torchlint.toml";
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The selectors of one initializationOptions key: a list of strings (or one string).
std::vector<std::string> selectors(const json& options, const char* kebab, const char* camel) {
  std::vector<std::string> out;
  std::vector<std::string_view> keys{kebab};
  if (std::string_view(camel) != kebab) keys.push_back(camel);  // "select" has one spelling
  for (std::string_view key : keys) {
    auto it = options.find(std::string(key));
    if (it == options.end()) continue;
    if (it->is_string()) out.push_back(it->get<std::string>());
    if (it->is_array()) {
      for (const auto& v : *it) {
        if (v.is_string()) out.push_back(v.get<std::string>());
      }
    }
  }
  return split_selector_list(out);
}

}  // namespace

std::optional<fs::path> path_from_uri(const std::string& uri) {
  constexpr std::string_view scheme = "file://";
  if (uri.size() < scheme.size() || uri.compare(0, scheme.size(), scheme) != 0) return std::nullopt;
  std::string_view rest = std::string_view(uri).substr(scheme.size());
  // file://host/path: only the local host (empty or "localhost") names a local file.
  size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string_view host = rest.substr(0, slash);
  if (!host.empty() && host != "localhost") return std::nullopt;
  std::string decoded;
  for (size_t i = slash; i < rest.size(); ++i) {
    if (rest[i] == '%' && i + 2 < rest.size() + 0 && hex_value(rest[i + 1]) >= 0 && hex_value(rest[i + 2]) >= 0) {
      decoded.push_back(static_cast<char>(hex_value(rest[i + 1]) * 16 + hex_value(rest[i + 2])));
      i += 2;
    } else if (rest[i] == '?' || rest[i] == '#') {
      break;
    } else {
      decoded.push_back(rest[i]);
    }
  }
  return fs::path(decoded).lexically_normal();
}

std::string uri_from_path(const fs::path& path) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "file://";
  for (unsigned char c : path.generic_string()) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

LanguageServer::LanguageServer(std::FILE* in, std::FILE* out, ServerOptions options)
    : in_(in), writer_(out), options_(std::move(options)), inbox_(std::make_shared<Inbox>()) {}

int LanguageServer::run() {
  std::shared_ptr<Inbox> inbox = inbox_;
  std::thread reader([inbox, in = in_] {
    FrameReader frames(in);
    while (true) {
      Frame frame = frames.next();
      std::lock_guard lock(inbox->mutex);
      if (frame.kind == Frame::Kind::kEnd) {
        inbox->ended = true;
        inbox->ready.notify_one();
        return;
      }
      inbox->frames.push_back(std::move(frame));
      inbox->ready.notify_one();
    }
  });
  // The reader may be blocked in a read when the client says `exit` but keeps the pipe
  // open: the process ends without waiting for it.
  reader.detach();

  while (!exit_) {
    std::deque<Frame> batch;
    std::deque<LintJob> lints;
    bool ended = false;
    {
      std::unique_lock lock(inbox->mutex);
      auto has_work = [&] { return !inbox->frames.empty() || !inbox->lints.empty() || inbox->ended; };
      if (pending_.empty() || linting_) {
        // While a lint runs, the next one waits for it (its result arrives as work).
        inbox->ready.wait(lock, has_work);
      } else {
        auto next = std::min_element(pending_.begin(), pending_.end(), [](const auto& a, const auto& b) {
                      return a.second < b.second;
                    })->second;
        inbox->ready.wait_until(lock, next, has_work);
      }
      batch.swap(inbox->frames);
      lints.swap(inbox->lints);
      ended = inbox->ended;
    }
    for (LintJob& job : lints) apply(std::move(job));
    // Cancellations anywhere in the batch apply to the requests before them too.
    std::set<std::string> cancelled;
    for (const Frame& f : batch) {
      if (f.kind != Frame::Kind::kMessage || f.body.find("$/cancelRequest") == std::string::npos) continue;
      json m = json::parse(f.body, nullptr, false);
      if (m.is_object() && m.value("method", "") == "$/cancelRequest" && m.contains("params") &&
          m["params"].is_object() && m["params"].contains("id")) {
        cancelled.insert(m["params"]["id"].dump());
      }
    }
    for (const Frame& f : batch) {
      handle_frame(f, cancelled);
      if (exit_) break;
    }
    if (exit_) break;
    if (ended && batch.empty() && lints.empty()) {
      // The client closed the connection without `exit`: nothing more can be served.
      return shutdown_ ? 0 : 1;
    }
    lint_due(Clock::now());
    if (writer_.broken()) return 1;  // the client stopped reading: nobody to serve
  }
  return shutdown_ ? 0 : 1;
}

void LanguageServer::handle_frame(const Frame& frame, const std::set<std::string>& cancelled) {
  if (frame.kind == Frame::Kind::kBadFrame) {
    reply_error(nullptr, rpc_error::kParseError, frame.error);
    return;
  }
  json message = json::parse(frame.body, nullptr, false);
  if (message.is_discarded()) {
    reply_error(nullptr, rpc_error::kParseError, "message is not valid JSON");
    return;
  }
  if (!message.is_object()) {
    // Batches were removed from JSON-RPC use by LSP; anything but an object is invalid.
    reply_error(nullptr, rpc_error::kInvalidRequest, "message is not a JSON-RPC object");
    return;
  }
  json id = message.contains("id") ? message["id"] : json();
  bool has_id = message.contains("id") && (id.is_number_integer() || id.is_string());
  auto method = message.find("method");
  if (method == message.end()) {
    // A response to a request of ours (workspace/applyEdit): nothing waits for it.
    if (!message.contains("result") && !message.contains("error")) {
      reply_error(has_id ? id : json(), rpc_error::kInvalidRequest, "message has no method");
    }
    return;
  }
  if (!method->is_string() || (message.contains("id") && !has_id)) {
    reply_error(has_id ? id : json(), rpc_error::kInvalidRequest, "method must be a string and id a number or string");
    return;
  }
  json params = message.contains("params") ? message["params"] : json::object();
  const std::string name = method->get<std::string>();
  if (has_id && cancelled.contains(id.dump())) {
    reply_error(id, rpc_error::kRequestCancelled, "request cancelled");
    return;
  }
  dispatch(has_id ? &id : nullptr, name, params);
}

void LanguageServer::dispatch(const json* id, const std::string& name, const json& params) {
  try {
    if (id) {
      handle_request(*id, name, params);
    } else {
      handle_notification(name, params);
    }
  } catch (const RequestError& e) {
    if (id) {
      reply_error(*id, e.code, e.what());
    } else {
      log(1, name + ": " + e.what());
    }
  } catch (const json::exception& e) {
    // A field of the wrong type or missing: the client's message, not the server, is wrong.
    if (id) {
      reply_error(*id, rpc_error::kInvalidParams, "invalid params for " + name + ": " + e.what());
    } else {
      log(1, "ignored " + name + " with invalid params: " + e.what());
    }
  } catch (const std::exception& e) {
    if (id) {
      reply_error(*id, rpc_error::kInternalError, name + " failed: " + e.what());
    } else {
      log(1, name + " failed: " + e.what());
    }
  }
}

void LanguageServer::handle_request(const json& id, const std::string& method, const json& params) {
  if (method == "initialize") {
    if (initialized_) {
      reply_error(id, rpc_error::kInvalidRequest, "initialize was already called");
      return;
    }
    reply(id, initialize(params));
    initialized_ = true;
    return;
  }
  if (!initialized_) {
    reply_error(id, rpc_error::kServerNotInitialized, "the server is not initialized");
    return;
  }
  if (shutdown_) {
    reply_error(id, rpc_error::kInvalidRequest, "the server is shutting down");
    return;
  }
  if (method == "shutdown") {
    shutdown_ = true;
    for (const Deferred& d : deferred_) reply_error(d.id, rpc_error::kRequestCancelled, "the server is shutting down");
    deferred_.clear();
    reply(id, nullptr);
  } else if (defer_until_fresh(id, method, params)) {
    return;
  } else if (method == "textDocument/codeAction") {
    reply(id, code_actions(params));
  } else if (method == "textDocument/hover") {
    reply(id, hover(params));
  } else if (method == "workspace/executeCommand") {
    reply(id, execute_command(params));
  } else {
    reply_error(id, rpc_error::kMethodNotFound, "unknown method " + method);
  }
}

void LanguageServer::handle_notification(const std::string& method, const json& params) {
  if (method == "exit") {
    exit_ = true;
    return;
  }
  if (method == "$/cancelRequest") {
    // A request still waiting for a lint is answered now; one already answered needs
    // nothing (and one in the same batch was caught by run()).
    json id = params.at("id");
    auto it = std::find_if(deferred_.begin(), deferred_.end(), [&](const Deferred& d) { return d.id == id; });
    if (it != deferred_.end()) {
      reply_error(it->id, rpc_error::kRequestCancelled, "request cancelled");
      deferred_.erase(it);
    }
    return;
  }
  // Before initialize, notifications are dropped (the protocol says so); after shutdown
  // nothing is linted any more.
  if (!initialized_ || shutdown_) return;
  if (method == "textDocument/didOpen") {
    did_open(params);
  } else if (method == "textDocument/didChange") {
    did_change(params);
  } else if (method == "textDocument/didSave") {
    did_save(params);
  } else if (method == "textDocument/didClose") {
    did_close(params);
  } else if (method == "notebookDocument/didOpen") {
    notebook_did_open(params);
  } else if (method == "notebookDocument/didChange") {
    notebook_did_change(params);
  } else if (method == "notebookDocument/didClose") {
    notebook_did_close(params);
  } else if (method == "workspace/didChangeWatchedFiles" || method == "workspace/didChangeConfiguration") {
    ++disk_generation_;
    // A file changed outside the editor (a `git checkout`, a configuration edit): every
    // open project may see different facts or settings now.
    schedule_all(Clock::now());
  }
  // Anything else (initialized, $/setTrace, $/cancelRequest, ...) needs no answer.
}

json LanguageServer::initialize(const json& params) {
  // LSP 3.17: the client lists the encodings it can use; UTF-16 is the default every
  // client supports. UTF-8 is what torchlint counts in, so it is preferred when offered.
  encoding_ = PositionEncoding::kUtf16;
  std::string encoding_name = "utf-16";
  if (params.contains("capabilities") && params["capabilities"].is_object()) {
    const json& caps = params["capabilities"];
    if (caps.contains("general") && caps["general"].is_object() && caps["general"].contains("positionEncodings") &&
        caps["general"]["positionEncodings"].is_array()) {
      for (const auto& e : caps["general"]["positionEncodings"]) {
        if (e == "utf-8") {
          encoding_ = PositionEncoding::kUtf8;
          encoding_name = "utf-8";
          break;
        }
      }
    }
  }
  if (params.contains("initializationOptions") && params["initializationOptions"].is_object()) {
    read_initialization_options(params["initializationOptions"]);
  }
  json capabilities = {
      {"positionEncoding", encoding_name},
      {"textDocumentSync", {{"openClose", true}, {"change", 2}, {"save", {{"includeText", false}}}}},
      {"codeActionProvider", {{"codeActionKinds", {"quickfix", "source.fixAll.torchlint"}}}},
      {"hoverProvider", true},
      {"notebookDocumentSync",
       {{"notebookSelector",
         {{{"notebook", {{"notebookType", "jupyter-notebook"}}}, {"cells", {{{"language", "python"}}}}}}}}},
      {"executeCommandProvider", {{"commands", {"torchlint.fixAll", "torchlint.addToBaseline"}}}},
  };
  return {{"capabilities", capabilities}, {"serverInfo", {{"name", "torchlint"}, {"version", options_.version}}}};
}

void LanguageServer::read_initialization_options(const json& options) {
  if (options.contains("select")) selection_.select = selectors(options, "select", "select");
  selection_.extend_select = selectors(options, "extend-select", "extendSelect");
  selection_.ignore = selectors(options, "ignore", "ignore");
  for (const char* key : {"target-torch", "targetTorch"}) {
    if (!options.contains(key)) continue;
    std::string text = options[key].is_string() ? options[key].get<std::string>() : options[key].dump();
    if (auto v = TorchVersion::parse(text)) {
      target_torch_ = *v;
    } else {
      show_error_once("initializationOptions: target-torch `" + text + "` is not a version like 2.4");
    }
  }
  if (options.contains("baseline") && options["baseline"].is_string() &&
      !options["baseline"].get<std::string>().empty()) {
    baseline_ = options["baseline"].get<std::string>();
  }
  for (const char* key : {"debounce-ms", "debounceMs"}) {
    if (options.contains(key) && options[key].is_number_unsigned()) {
      options_.debounce = std::chrono::milliseconds(std::min<uint64_t>(options[key].get<uint64_t>(), 10000));
    }
  }
}

LanguageServer::Document* LanguageServer::document(const json& identifier) {
  auto it = documents_.find(identifier.at("uri").get<std::string>());
  return it == documents_.end() ? nullptr : &it->second;
}

void LanguageServer::did_open(const json& params) {
  const json& item = params.at("textDocument");
  Document doc;
  doc.uri = item.at("uri").get<std::string>();
  doc.text = TextDocument(item.at("text").get<std::string>(), item.value("version", int64_t{0}));
  if (auto path = path_from_uri(doc.uri)) {
    doc.path = *path;
    doc.project = find_project_root(doc.path).path;
    doc.lintable = std::find(kPythonExtensions.begin(), kPythonExtensions.end(), doc.path.extension().string()) !=
                   kPythonExtensions.end();
    doc.cpp = cli::is_cpp_file(doc.path.string());
    doc.cpp_due = doc.cpp;
  }
  auto& stored = documents_[doc.uri] = std::move(doc);
  if (stored.lintable || stored.cpp) schedule(stored.project, Clock::now());
}

void LanguageServer::did_change(const json& params) {
  Document* doc = document(params.at("textDocument"));
  if (!doc) {
    log(2, "didChange for a document that is not open: " + params["textDocument"].value("uri", ""));
    return;
  }
  apply_changes(*doc, params["textDocument"], params.at("contentChanges"));
  if (doc->lintable) schedule(doc->project, Clock::now() + options_.debounce);
}

void LanguageServer::apply_changes(Document& document, const json& identifier, const json& changes) {
  Document* doc = &document;
  for (const auto& change : changes) {
    if (!change.contains("range")) {
      doc->text.replace_all(change.at("text").get<std::string>());
      continue;
    }
    const json& range = change["range"];
    LspPosition from{range.at("start").at("line").get<uint32_t>(), range["start"].at("character").get<uint32_t>()};
    LspPosition to{range.at("end").at("line").get<uint32_t>(), range["end"].at("character").get<uint32_t>()};
    if (!doc->text.replace(from, to, change.at("text").get<std::string>(), encoding_)) {
      log(2, "didChange range ends before it starts; change ignored");
    }
  }
  if (identifier.contains("version") && identifier["version"].is_number_integer()) {
    doc->text.set_version(identifier["version"].get<int64_t>());
  }
}

void LanguageServer::did_save(const json& params) {
  ++disk_generation_;
  Document* doc = document(params.at("textDocument"));
  if (doc && params.contains("text") && params["text"].is_string())
    doc->text.replace_all(params["text"].get<std::string>());
  std::optional<fs::path> path =
      doc ? std::optional(doc->path) : path_from_uri(params["textDocument"].value("uri", ""));
  if (path && is_config_file(*path)) {
    // Settings changed: run_check reads them again, for every project it may apply to.
    shown_errors_.clear();
    schedule_all(Clock::now());
  } else if (doc && doc->lintable) {
    // Saved text is what other tools and the unopened files' context now see: re-lint now.
    schedule(doc->project, Clock::now());
  } else if (doc && doc->cpp) {
    doc->cpp_due = true;  // the C++ front-end reads the file: now it has the editor's text
    schedule(doc->project, Clock::now());
  }
}

void LanguageServer::did_close(const json& params) {
  ++disk_generation_;  // its saved text is what the others see now
  auto it = documents_.find(params.at("textDocument").at("uri").get<std::string>());
  if (it == documents_.end()) return;
  bool lintable = it->second.lintable;
  fs::path project = it->second.project;
  std::string uri = it->second.uri;
  bool cpp = it->second.cpp;
  documents_.erase(it);
  if (cpp) notify("textDocument/publishDiagnostics", {{"uri", uri}, {"diagnostics", json::array()}});
  if (lintable) {
    // The editor keeps no findings for a closed file; its saved text is what the other
    // open files now see as context.
    notify("textDocument/publishDiagnostics", {{"uri", uri}, {"diagnostics", json::array()}});
    schedule(project, Clock::now() + options_.debounce);
  }
}

void LanguageServer::schedule(const fs::path& project, Clock::time_point when) {
  auto [it, inserted] = pending_.emplace(project, when);
  // A later keystroke pushes the lint back (debounce); an open or save brings it forward.
  if (!inserted) it->second = when;
}

void LanguageServer::schedule_all(Clock::time_point when) {
  for (auto& [uri, doc] : documents_) {
    if (doc.cpp) doc.cpp_due = true;  // settings changed: the C++ files' findings may too
    if (doc.lintable || doc.cpp) schedule(doc.project, when);
  }
}

void LanguageServer::lint_due(Clock::time_point now) {
  if (linting_) return;  // the next lint starts when this one is applied
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (it->second > now) continue;
    LintJob job;
    job.project = it->first;
    pending_.erase(it);
    for (auto& [uri, doc] : documents_) {
      if (doc.project != job.project) continue;
      if (doc.cpp && doc.cpp_due) {
        // Linted from disk by torchlint-cpp; its text is kept only to place the findings.
        doc.cpp_due = false;
        job.texts.emplace(doc.path.string(), doc.text.text());
        job.paths.push_back(doc.path.string());
        job.documents.emplace_back(uri, doc.text.version());
        continue;
      }
      if (!doc.lintable) continue;
      job.texts.emplace(doc.path.string(), doc.text.text());
      job.paths.push_back(doc.path.string());
      job.documents.emplace_back(uri, doc.text.version());
      if (options_.incremental_parse) {
        job.memos.emplace(doc.path.string(), doc.memo.get());
        job.memo_owners.push_back(doc.memo);
      }
    }
    add_notebooks(job);
    if (job.documents.empty() && job.notebooks.empty()) return;
    // The context depends on the files on disk and on what the linted texts import: the
    // key changes with either, and an edit elsewhere in a file re-uses the last context.
    auto& context = contexts_[job.project];
    if (!context) context = std::make_shared<cli::ContextMemo>();
    job.context = context;
    job.context_key = context_key(job, disk_generation_);
    job.selection = selection_;
    job.target_torch = target_torch_;
    std::error_code ec;
    if (auto baseline = baseline_for(job.project); baseline && fs::is_regular_file(*baseline, ec)) {
      job.baseline = baseline->string();
    }
    linting_ = true;
    std::thread([inbox = inbox_, job = std::move(job)]() mutable {
      run_lint(job);
      std::lock_guard lock(inbox->mutex);
      inbox->lints.push_back(std::move(job));
      inbox->ready.notify_one();
    }).detach();
    return;
  }
}

void LanguageServer::apply(LintJob job) {
  linting_ = false;
  if (job.error) {
    // A configuration error (an unknown selector, a broken pyproject.toml): the editor
    // shows it once; the old findings stay until the configuration is fixed.
    show_error_once("torchlint: " + *job.error);
    for (const Deferred& d : deferred_) reply_error(d.id, rpc_error::kRequestFailed, "torchlint: " + *job.error);
    deferred_.clear();
    return;
  }
  for (const auto& problem : job.problems) log(2, problem);
  for (const auto& [uri, version] : job.documents) {
    auto it = documents_.find(uri);
    if (it == documents_.end()) continue;  // closed meanwhile
    Document& doc = it->second;
    // Findings of an older text than the one already shown are not worth showing.
    if (doc.linted && doc.linted->version() > version) continue;
    doc.linted = TextDocument(std::move(job.texts[doc.path.string()]), version);
    doc.findings = std::move(job.findings[doc.path]);
    publish(doc);
  }
  for (const auto& part : job.notebooks) publish_notebook(job.project, part, job.findings[fs::path(part.path)]);
  char times[96];
  std::snprintf(times, sizeof times, " in %.1f ms (cpu %.1f ms)", job.milliseconds, job.cpu_milliseconds);
  log(4, "linted " + std::to_string(job.documents.size()) + " open file(s) of " + job.project.string() + " (+" +
             std::to_string(job.context_files) + " for context)" + times);
  answer_deferred();
}

bool LanguageServer::fresh(const Document& doc) const {
  // A cell's findings hold while its text is the one its notebook was linted with.
  if (doc.cell) return doc.linted && doc.linted->text() == doc.text.text();
  return !doc.lintable ||
         (doc.linted && doc.linted->version() == doc.text.version() && doc.linted->text() == doc.text.text());
}

bool LanguageServer::defer_until_fresh(const json& id, const std::string& method, const json& params) {
  json identifier;
  if (method == "textDocument/codeAction" || method == "textDocument/hover") {
    identifier = params.at("textDocument");
  } else if (method == "workspace/executeCommand" && params.contains("arguments") && params["arguments"].is_array() &&
             !params["arguments"].empty()) {
    const json& first = params["arguments"][0];
    identifier = first.is_string() ? json{{"uri", first}} : first;
  } else {
    return false;
  }
  if (!identifier.is_object() || !identifier.contains("uri") || !identifier["uri"].is_string()) return false;
  Document* doc = document(identifier);
  if (!doc || fresh(*doc)) return false;
  // The answer needs the findings of the current text: lint it now if nothing else is
  // pending for the project, and answer once that lint is applied.
  if (!pending_.contains(doc->project)) schedule(doc->project, Clock::now());
  deferred_.push_back({id, method, params});
  return true;
}

void LanguageServer::answer_deferred() {
  std::vector<Deferred> waiting;
  waiting.swap(deferred_);
  // Through the usual path: one still stale (typed into again) waits once more.
  for (const Deferred& d : waiting) dispatch(&d.id, d.method, d.params);
}

std::pair<uint32_t, uint32_t> LanguageServer::byte_range(const TextDocument& text, const Diagnostic& d) const {
  uint32_t begin = text.offset_of_line_column(d.start.line, d.start.column);
  uint32_t end = text.offset_of_line_column(d.end.line, d.end.column);
  return {begin, std::max(begin, end)};
}

json LanguageServer::lsp_range(const TextDocument& text, uint32_t begin, uint32_t end) const {
  auto a = text.position_of(begin, encoding_), b = text.position_of(end, encoding_);
  return {{"start", {{"line", a.line}, {"character", a.character}}},
          {"end", {{"line", b.line}, {"character", b.character}}}};
}

json LanguageServer::lsp_location(const TextDocument& text, const std::string& uri, Position start,
                                  Position end) const {
  uint32_t begin = text.offset_of_line_column(start.line, start.column);
  uint32_t finish = std::max(begin, text.offset_of_line_column(end.line, end.column));
  return {{"uri", uri}, {"range", lsp_range(text, begin, finish)}};
}

json LanguageServer::to_lsp(const TextDocument& text, const Diagnostic& d, const std::string& uri) const {
  auto [begin, end] = byte_range(text, d);
  json out = {{"range", lsp_range(text, begin, end)},
              {"severity", d.severity == Severity::kError     ? 1
                           : d.severity == Severity::kWarning ? 2
                                                              : 3},
              {"code", d.code},
              {"source", "torchlint"},
              {"message", d.message}};
  // The rule's doc page under the build's home page (the one SARIF links to as well).
  if (std::string href = rule_doc_url(d.name); !href.empty()) out["codeDescription"] = {{"href", href}};
  if (d.fix) out["data"] = {{"fix", d.fix->message}, {"safe", !d.fix->unsafe}};
  if (!uri.empty() && !d.related.empty()) {
    json related = json::array();
    for (const auto& r : d.related) {
      related.push_back({{"location", lsp_location(text, uri, r.start, r.end)}, {"message", r.message}});
    }
    out["relatedInformation"] = std::move(related);
  }
  return out;
}

void LanguageServer::publish(const Document& doc) {
  json diagnostics = json::array();
  for (const auto& d : doc.findings) diagnostics.push_back(to_lsp(*doc.linted, d, doc.uri));
  notify("textDocument/publishDiagnostics",
         {{"uri", doc.uri}, {"version", doc.linted->version()}, {"diagnostics", std::move(diagnostics)}});
}

void LanguageServer::reply(const json& id, json result) {
  writer_.write({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

void LanguageServer::reply_error(const json& id, int code, const std::string& message) {
  writer_.write({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

void LanguageServer::notify(const std::string& method, json params) {
  writer_.write({{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
}

void LanguageServer::log(int type, const std::string& message) {
  notify("window/logMessage", {{"type", type}, {"message", message}});
}

void LanguageServer::show_error_once(const std::string& message) {
  if (!shown_errors_.insert(message).second) return;
  notify("window/showMessage", {{"type", 1}, {"message", message}});
}

}  // namespace torchlint::server
