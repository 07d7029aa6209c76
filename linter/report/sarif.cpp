// SARIF 2.1.0 as GitHub code scanning reads it: every selected rule with its doc as help,
// checklist items as a taxonomy, relative URIs under %SRCROOT%, GitHub's line hashes,
// fixes, and the run's success and file errors as invocation data.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "line_hash.h"
#include "report.h"

namespace torchlint::report {

namespace {

using json = nlohmann::ordered_json;

// The project's home page is project_url() (-DTORCHLINT_PROJECT_URL=...). Rules get no
// helpUri: each rule's whole doc travels in `help`, and a viewer shows that offline.
constexpr const char* kTaxonomy = "torchlint-checklist";
constexpr size_t kMaxResults = 25000;  // GitHub rejects runs above this
constexpr size_t kMaxTags = 10;        // GitHub keeps ten

const char* level(Severity s) {
  switch (s) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kInfo:
      return "note";
  }
  return "warning";
}

// Cuts at a UTF-8 boundary.
std::string truncate(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t cut = max - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return std::string(s.substr(0, cut)) + "...";
}

// The doc without its title line: the help text.
std::string_view doc_body(std::string_view doc) {
  if (doc.starts_with("# ")) {
    size_t eol = doc.find('\n');
    doc = eol == std::string_view::npos ? std::string_view() : doc.substr(eol + 1);
  }
  while (!doc.empty() && (doc.front() == '\n' || doc.front() == '\r')) doc.remove_prefix(1);
  return doc;
}

std::string percent_encode_path(std::string_view path) {
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::string_view("/-._~").find(static_cast<char>(c)) != std::string_view::npos) {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

json artifact_location(const std::string& path, const std::string& root) {
  if (!path.empty() && path.front() == '/') {
    if (!root.empty() && path.starts_with(root)) {
      return {{"uri", percent_encode_path(path.substr(root.size()))}, {"uriBaseId", "%SRCROOT%"}};
    }
    return {{"uri", "file://" + percent_encode_path(path)}};
  }
  return {{"uri", percent_encode_path(path)}, {"uriBaseId", "%SRCROOT%"}};
}

json rule_descriptor(const RuleInfo& rule, const Checklist* checklist) {
  std::string summary = rule.summary();
  std::string body(doc_body(rule.doc));
  json r;
  r["id"] = rule.code;
  r["name"] = rule.name;
  r["shortDescription"] = {{"text", truncate(summary.empty() ? rule.name : summary, 1024)}};
  r["fullDescription"] = {{"text", truncate(body.empty() ? summary : body, 1024)}};
  r["help"] = {{"text", body.empty() ? summary : body}, {"markdown", body.empty() ? summary : body}};
  r["defaultConfiguration"] = {{"level", level(rule.severity)}};
  json tags = json::array({"torchlint"});
  const bool security = !rule.security_severity.empty();
  if (security) tags.push_back("security");
  for (const auto& item : rule.checklist_items) {
    if (tags.size() < kMaxTags) tags.push_back("checklist-" + item);
  }
  json props;
  props["tags"] = tags;
  props["precision"] = std::string(rule.precision);
  if (security) {
    props["security-severity"] = std::string(rule.security_severity);
  } else {
    props["problem.severity"] = rule.severity == Severity::kError     ? "error"
                                : rule.severity == Severity::kWarning ? "warning"
                                                                      : "recommendation";
  }
  r["properties"] = props;
  if (checklist) {
    json relationships = json::array();
    for (const auto& item : rule.checklist_items) {
      if (!checklist->find(item)) continue;
      relationships.push_back(
          {{"target", {{"id", item}, {"toolComponent", {{"name", kTaxonomy}}}}}, {"kinds", json::array({"relevant"})}});
    }
    if (!relationships.empty()) r["relationships"] = relationships;
  }
  return r;
}

json region(Position start, Position end) {
  json r;
  r["startLine"] = std::max<uint32_t>(start.line, 1);
  r["startColumn"] = std::max<uint32_t>(start.column, 1);
  r["endLine"] = std::max<uint32_t>(std::max(end.line, start.line), 1);
  uint32_t end_column = end.column;
  if (end.line <= start.line && end_column <= start.column) end_column = start.column + 1;
  r["endColumn"] = std::max<uint32_t>(end_column, 1);
  return r;
}

// The finding's related locations (same file), numbered from 1 as SARIF's ids are.
json related_locations(const Diagnostic& d, const std::string& root) {
  json out = json::array();
  for (const auto& r : d.related) {
    out.push_back({{"id", out.size() + 1},
                   {"physicalLocation",
                    {{"artifactLocation", artifact_location(d.path, root)}, {"region", region(r.start, r.end)}}},
                   {"message", {{"text", r.message}}}});
  }
  return out;
}

json sarif_fix(const Diagnostic& d, const SourceFile& file, const std::string& root) {
  json replacements = json::array();
  for (const auto& e : d.fix->edits) {
    Position s = file.position(e.start), en = file.position(e.end);
    replacements.push_back(
        {{"deletedRegion",
          {{"startLine", s.line}, {"startColumn", s.column}, {"endLine", en.line}, {"endColumn", en.column}}},
         {"insertedContent", {{"text", e.replacement}}}});
  }
  return {{"description", {{"text", d.fix->message}}},
          {"artifactChanges",
           json::array({{{"artifactLocation", artifact_location(d.path, root)}, {"replacements", replacements}}})}};
}

}  // namespace

namespace {

// One run: the rules, the results of `ctx.outcome`, the invocation.
json sarif_run(const ReportContext& ctx) {
  const Checklist* checklist = ctx.checklist ? &ctx.checklist() : nullptr;
  // Rules: every selected rule, plus any rule with a result (TL000 is always possible).
  std::set<std::string> with_results;
  for (const auto& d : ctx.outcome.diagnostics) with_results.insert(d.code);
  for (const auto& d : ctx.outcome.baselined) with_results.insert(d.code);
  json rules = json::array();
  std::map<std::string, size_t> rule_index;
  const auto& all = ctx.registry.rules();
  for (size_t i = 0; i < all.size(); ++i) {
    bool selected = ctx.enabled ? ctx.enabled->contains(i) : all[i].default_enabled;
    if (!selected && !with_results.contains(all[i].code)) continue;
    rule_index[all[i].code] = rules.size();
    rules.push_back(rule_descriptor(all[i], checklist));
  }

  std::map<std::string, std::vector<std::string>> hashes;  // per file, computed once
  json results = json::array();
  size_t emitted = 0;
  std::vector<std::pair<const Diagnostic*, bool>> all_results;  // (finding, baselined)
  for (const auto& d : ctx.outcome.diagnostics) all_results.emplace_back(&d, false);
  for (const auto& d : ctx.outcome.baselined) all_results.emplace_back(&d, true);
  for (const auto& [finding, baselined] : all_results) {
    const Diagnostic& d = *finding;
    if (emitted++ >= kMaxResults) break;
    json r;
    r["ruleId"] = d.code;
    if (auto it = rule_index.find(d.code); it != rule_index.end()) r["ruleIndex"] = it->second;
    r["level"] = level(d.severity);
    r["message"] = {{"text", d.message}};
    r["locations"] = json::array(
        {{{"physicalLocation",
           {{"artifactLocation", artifact_location(d.path, ctx.source_root)}, {"region", region(d.start, d.end)}}}}});
    if (!d.related.empty()) r["relatedLocations"] = related_locations(d, ctx.source_root);
    auto source = ctx.outcome.sources.find(d.path);
    if (source != ctx.outcome.sources.end()) {
      auto& file_hashes = hashes[d.path];
      if (file_hashes.empty()) file_hashes = primary_location_line_hashes(source->second->text());
      size_t line = std::max<uint32_t>(d.start.line, 1) - 1;
      if (line < file_hashes.size() && !file_hashes[line].empty()) {
        r["partialFingerprints"] = {{"primaryLocationLineHash", file_hashes[line]}};
      }
      if (d.fix) r["fixes"] = json::array({sarif_fix(d, *source->second, ctx.source_root)});
    }
    if (ctx.baseline_active) r["baselineState"] = baselined ? "unchanged" : "new";
    results.push_back(std::move(r));
  }

  json invocation;
  invocation["executionSuccessful"] = ctx.outcome.errors.empty();
  invocation["exitCode"] = ctx.exit_code;
  json notifications = json::array();
  for (const auto& e : ctx.outcome.errors) {
    notifications.push_back(
        {{"level", "error"},
         {"message", {{"text", e.path + ": " + e.message}}},
         {"locations",
          json::array({{{"physicalLocation", {{"artifactLocation", artifact_location(e.path, ctx.source_root)}}}}})}});
  }
  if (all_results.size() > kMaxResults) {
    notifications.push_back({{"level", "warning"},
                             {"message",
                              {{"text", "results truncated to " + std::to_string(kMaxResults) +
                                            " (GitHub's limit per run) of " + std::to_string(all_results.size())}}}});
  }
  if (!notifications.empty()) invocation["toolExecutionNotifications"] = notifications;

  json run;
  run["tool"] = {{"driver",
                  {{"name", "torchlint"},
                   {"version", TORCHLINT_VERSION},
                   {"semanticVersion", TORCHLINT_VERSION},
                   {"rules", rules}}}};
  if (!project_url().empty()) run["tool"]["driver"]["informationUri"] = std::string(project_url());
  if (checklist) {
    json taxa = json::array();
    for (const auto& item : checklist->items) {
      taxa.push_back({{"id", item.id}, {"name", item.id}, {"shortDescription", {{"text", item.title}}}});
    }
    run["taxonomies"] = json::array({{{"name", kTaxonomy},
                                      {"version", TORCHLINT_VERSION},
                                      {"shortDescription", {{"text", "PyTorch best-practice checklist"}}},
                                      {"taxa", taxa}}});
  }
  run["automationDetails"] = {{"id", ctx.automation_id}};
  run["columnKind"] = "unicodeCodePoints";
  if (!ctx.source_root.empty()) {
    run["originalUriBaseIds"] = {{"%SRCROOT%", {{"uri", "file://" + percent_encode_path(ctx.source_root)}}}};
  }
  run["invocations"] = json::array({invocation});
  run["results"] = results;
  return run;
}

bool is_cpp_path(std::string_view path) {
  for (std::string_view ext : {".cpp", ".cc", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx"}) {
    if (path.ends_with(ext)) return true;
  }
  return false;
}

}  // namespace

void write_sarif(std::ostream& out, const ReportContext& ctx) {
  json runs = json::array();
  auto has_cpp = [](const std::vector<Diagnostic>& ds) {
    return std::any_of(ds.begin(), ds.end(), [](const Diagnostic& d) { return is_cpp_path(d.path); });
  };
  bool split = ctx.automation_id.find("/cpp/") == std::string::npos &&
               (has_cpp(ctx.outcome.diagnostics) || has_cpp(ctx.outcome.baselined));
  if (!split) {
    runs.push_back(sarif_run(ctx));
  } else {
    // C++ findings (from torchlint-cpp) get a run of their own, so that code scanning
    // shows them under their own category (automationDetails.id).
    LintOutcome python = ctx.outcome, cpp = ctx.outcome;
    auto keep = [](std::vector<Diagnostic>& ds, bool want_cpp) {
      std::erase_if(ds, [&](const Diagnostic& d) { return is_cpp_path(d.path) != want_cpp; });
    };
    keep(python.diagnostics, false);
    keep(python.baselined, false);
    keep(cpp.diagnostics, true);
    keep(cpp.baselined, true);
    cpp.errors.clear();  // reported once, in the first run
    ReportContext py_ctx = ctx;
    ReportContext cpp_ctx = ctx;
    std::string id = ctx.automation_id;
    if (auto pos = id.find("/python/"); pos != std::string::npos) {
      id.replace(pos, 8, "/cpp/");
    } else {
      id += "cpp/";
    }
    cpp_ctx.automation_id = id;
    runs.push_back(sarif_run(ReportContext{python, py_ctx.registry, py_ctx.color, py_ctx.show_fixes, py_ctx.enabled,
                                           py_ctx.checklist, py_ctx.source_root, py_ctx.exit_code, py_ctx.automation_id,
                                           py_ctx.baseline_active}));
    runs.push_back(sarif_run(ReportContext{cpp, cpp_ctx.registry, cpp_ctx.color, cpp_ctx.show_fixes, cpp_ctx.enabled,
                                           cpp_ctx.checklist, cpp_ctx.source_root, cpp_ctx.exit_code,
                                           cpp_ctx.automation_id, cpp_ctx.baseline_active}));
  }
  json log;
  log["$schema"] = "https://json.schemastore.org/sarif-2.1.0.json";
  log["version"] = "2.1.0";
  log["runs"] = runs;
  out << log.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace torchlint::report
