#pragma once
// `torchlint server`: a Language Server Protocol (3.17) server over stdio. Open Python
// files are linted from the editor's text (saved or not) together with the rest of their
// project, so project facts (a seeding helper in utils.py) stay live; findings are
// published as diagnostics, safe fixes and suppressions offered as code actions, rule docs
// shown on hover.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/check_command.h"
#include "core/config.h"
#include "core/diagnostic.h"
#include "core/lint_session.h"
#include "core/rule_selection.h"
#include "json_rpc.h"
#include "text_document.h"

namespace torchlint::server {

using Clock = std::chrono::steady_clock;

struct ServerOptions {
  std::string version;  // reported in serverInfo
  // Edits wait this long for the next keystroke before the file is linted again.
  std::chrono::milliseconds debounce{100};
  // Re-parse an edited file from its previous tree (false: from scratch, for comparison).
  bool incremental_parse = true;
};

// Converts between `file://` URIs and paths (percent-encoding per RFC 3986). Null for
// other schemes (`untitled:`), which have no project to lint against.
std::optional<std::filesystem::path> path_from_uri(const std::string& uri);
std::string uri_from_path(const std::filesystem::path& path);

struct Inbox;

// One project's lint: the editor's texts it was given, and what came out. Built on the
// main thread, run on a worker, applied on the main thread again.
struct LintJob {
  std::filesystem::path project;
  std::vector<std::pair<std::string, int64_t>> documents;  // URI, version linted
  std::unordered_map<std::string, std::string> texts;      // by path: the overlay
  // The documents' parse memos (incremental parsing), by path; kept alive by `memo_owners`
  // should a document be closed during the lint.
  std::unordered_map<std::string, ParseMemo*> memos;
  std::vector<std::shared_ptr<ParseMemo>> memo_owners;
  // The project's context files from an earlier lint, valid while `context_key` is the same.
  std::shared_ptr<cli::ContextMemo> context;
  uint64_t context_key = 0;
  std::vector<std::string> paths;
  SelectionLayer selection;
  std::optional<TorchVersion> target_torch;
  std::optional<std::string> baseline;  // known findings to leave out (an existing file)
  // Notebooks synchronised cell by cell: linted as one module (its code cells in order, at
  // `path`, which exists only in the overlay), reported per cell.
  struct NotebookCell {
    std::string uri;
    uint32_t first_line = 1;  // in the module, 1-based
    uint32_t first_byte = 0;  // in the module
    std::string text;
  };
  struct NotebookPart {
    std::string path;
    std::vector<NotebookCell> cells;
  };
  std::vector<NotebookPart> notebooks;
  // Results.
  std::optional<std::string> error;  // the configuration could not be used
  std::map<std::filesystem::path, std::vector<Diagnostic>> findings;
  std::vector<std::string> problems;  // files that could not be read
  size_t context_files = 0;
  double milliseconds = 0;
  // The process's CPU time over the lint: on a loaded machine the wall time above counts
  // the waits for a core too, this does not (the latency benchmark reports both).
  double cpu_milliseconds = 0;
};

class LanguageServer {
 public:
  LanguageServer(std::FILE* in, std::FILE* out, ServerOptions options);
  // Serves until `exit` or until the client goes away; returns the process exit code
  // (0 after shutdown + exit, 1 otherwise, as the protocol asks). A lint may still be
  // running on its worker thread then: the caller ends the process without waiting.
  int run();

 private:
  struct Document {
    std::string uri;
    std::filesystem::path path;  // absolute, normal; empty when the URI is not a file
    std::filesystem::path project;
    TextDocument text;
    bool lintable = false;  // a Python source or notebook
    // A notebook's code cell: linted with its notebook, not alone; `linted` and `findings`
    // are the cell's share of the notebook's last lint, in the cell's own lines and bytes,
    // so that code actions and hover work on it as on a file.
    bool cell = false;
    // A C++ source or header: linted by torchlint-cpp (a separate process, seconds per
    // file) from the file on disk, so only when opened or saved, never per keystroke.
    bool cpp = false;
    bool cpp_due = false;                                             // opened or saved since its last lint
    std::shared_ptr<ParseMemo> memo = std::make_shared<ParseMemo>();  // the last parse
    // The last lint: the text it saw and its findings (byte offsets refer to that text).
    std::optional<TextDocument> linted;
    std::vector<Diagnostic> findings;
  };

  // Message handling.
  void handle_frame(const Frame& frame, const std::set<std::string>& cancelled);
  // Runs a request's or notification's handler (id null: a notification); a handler's
  // exception becomes a JSON-RPC error (or a log line), never the end of the server.
  void dispatch(const nlohmann::json* id, const std::string& method, const nlohmann::json& params);
  void handle_request(const nlohmann::json& id, const std::string& method, const nlohmann::json& params);
  void handle_notification(const std::string& method, const nlohmann::json& params);
  nlohmann::json initialize(const nlohmann::json& params);
  void read_initialization_options(const nlohmann::json& options);

  // Documents.
  void did_open(const nlohmann::json& params);
  void did_change(const nlohmann::json& params);
  void did_save(const nlohmann::json& params);
  void did_close(const nlohmann::json& params);
  void apply_changes(Document& doc, const nlohmann::json& identifier, const nlohmann::json& changes);
  // notebookDocument/* (notebooks.cpp).
  void open_cell(const nlohmann::json& text_document_item);
  void notebook_did_open(const nlohmann::json& params);
  void notebook_did_change(const nlohmann::json& params);
  void notebook_did_close(const nlohmann::json& params);
  void add_notebooks(LintJob& job) const;
  void publish_notebook(const std::filesystem::path& project, const LintJob::NotebookPart& part,
                        const std::vector<Diagnostic>& findings);
  Document* document(const nlohmann::json& text_document_identifier);

  // Linting: every open document of a project at once, from the editor's texts, on a
  // worker thread (one lint at a time), so that messages are answered meanwhile.
  void schedule(const std::filesystem::path& project, Clock::time_point when);
  void schedule_all(Clock::time_point when);
  void lint_due(Clock::time_point now);
  void apply(LintJob job);
  // Whether the document's findings are those of its current text.
  bool fresh(const Document& doc) const;
  // Requests about a document whose text changed since its last lint wait for the next
  // one (or for their cancellation); true when `method` was put off that way.
  bool defer_until_fresh(const nlohmann::json& id, const std::string& method, const nlohmann::json& params);
  void answer_deferred();
  void publish(const Document& doc);
  // `uri`: the document's, for the related locations (empty: the caller adds them).
  nlohmann::json to_lsp(const TextDocument& text, const Diagnostic& d, const std::string& uri) const;
  nlohmann::json lsp_location(const TextDocument& text, const std::string& uri, Position start, Position end) const;
  nlohmann::json lsp_range(const TextDocument& text, uint32_t begin, uint32_t end) const;
  std::pair<uint32_t, uint32_t> byte_range(const TextDocument& text, const Diagnostic& d) const;

  // Features (code_actions.cpp).
  nlohmann::json code_actions(const nlohmann::json& params);
  nlohmann::json hover(const nlohmann::json& params);
  nlohmann::json execute_command(const nlohmann::json& params);
  std::optional<nlohmann::json> fix_all_edit(Document& doc);
  std::optional<nlohmann::json> suppress_edit(const Document& doc, const Diagnostic& d) const;
  nlohmann::json add_to_baseline(const nlohmann::json& arguments);
  // The baseline file for a project (initializationOptions `baseline`, relative to the
  // project root); null when none was configured.
  std::optional<std::filesystem::path> baseline_for(const std::filesystem::path& project) const;

  // Output.
  void reply(const nlohmann::json& id, nlohmann::json result);
  void reply_error(const nlohmann::json& id, int code, const std::string& message);
  void notify(const std::string& method, nlohmann::json params);
  void log(int type, const std::string& message);  // window/logMessage (1 error .. 4 log)
  void show_error_once(const std::string& message);

  std::FILE* in_;
  FrameWriter writer_;
  ServerOptions options_;
  PositionEncoding encoding_ = PositionEncoding::kUtf16;
  SelectionLayer selection_;  // initializationOptions, over the configuration files
  std::optional<TorchVersion> target_torch_;
  std::optional<std::string> baseline_;        // initializationOptions `baseline`
  std::map<std::string, Document> documents_;  // by URI (notebook cells too, not lintable)
  struct Notebook {
    std::filesystem::path path, project;
    std::vector<std::pair<std::string, bool>> cells;  // every cell in order: URI, is code
  };
  std::map<std::string, Notebook> notebooks_;                                    // by URI
  std::map<std::filesystem::path, Clock::time_point> pending_;                   // projects to lint, when
  std::map<std::filesystem::path, std::shared_ptr<cli::ContextMemo>> contexts_;  // by project
  // Bumped by everything that may change which files import which on disk (a save, a file
  // changed outside the editor, a file opened or closed): the context is found again.
  uint64_t disk_generation_ = 0;
  std::set<std::string> shown_errors_;
  std::shared_ptr<Inbox> inbox_;
  bool linting_ = false;  // a LintJob is on the worker
  struct Deferred {
    nlohmann::json id;
    std::string method;
    nlohmann::json params;
  };
  std::vector<Deferred> deferred_;
  int64_t next_request_id_ = 1;
  bool initialized_ = false, shutdown_ = false, exit_ = false;
};

}  // namespace torchlint::server
