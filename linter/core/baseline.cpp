#include "baseline.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace torchlint {

namespace fs = std::filesystem;

namespace {

// FNV-1a, 64 bit: stable across platforms and releases, which is all a fingerprint needs.
uint64_t fnv1a(std::string_view data, uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string relative_path(const std::string& display, const fs::path& base) {
  std::error_code ec;
  fs::path abs = fs::absolute(display, ec).lexically_normal();
  fs::path rel = abs.lexically_relative(fs::absolute(base, ec).lexically_normal());
  return rel.empty() ? display : rel.generic_string();
}

}  // namespace

std::string finding_fingerprint(const Diagnostic& d, const SourceFile& source) {
  std::string statement;
  uint32_t first = d.statement_first_line ? d.statement_first_line : d.start.line;
  uint32_t last = std::max(d.statement_last_line, first);
  for (uint32_t line = first; line <= last && line <= source.line_count(); ++line) {
    for (char c : source.line_text(line)) {
      if (!std::isspace(static_cast<unsigned char>(c))) statement += c;
    }
  }
  uint64_t h = fnv1a(d.code);
  h = fnv1a("\x1f", h);
  h = fnv1a(d.scope, h);
  h = fnv1a("\x1f", h);
  h = fnv1a(statement, h);
  return hex16(h);
}

Baseline make_baseline(const std::vector<Diagnostic>& findings, const std::map<std::string, const SourceFile*>& sources,
                       const fs::path& baseline_dir) {
  std::map<std::tuple<std::string, std::string, std::string>, size_t> counts;
  for (const auto& d : findings) {
    auto it = sources.find(d.path);
    if (it == sources.end()) continue;
    counts[{d.code, relative_path(d.path, baseline_dir), finding_fingerprint(d, *it->second)}]++;
  }
  Baseline b;
  for (const auto& [key, n] : counts) b.entries.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), n});
  return b;
}

std::string serialize_baseline(const Baseline& baseline) {
  nlohmann::ordered_json out;
  out["version"] = 1;
  out["tool"] = "torchlint";
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
  for (const auto& e : baseline.entries) {
    entries.push_back({{"rule", e.rule}, {"path", e.path}, {"fingerprint", e.fingerprint}, {"count", e.count}});
  }
  out["entries"] = entries;
  return out.dump(2) + "\n";
}

std::optional<Baseline> read_baseline(const fs::path& file, std::string& error) {
  std::ifstream in(file);
  if (!in) {
    error = "cannot read baseline " + file.string();
    return std::nullopt;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto doc = nlohmann::json::parse(ss.str(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("version", 0) != 1 || !doc.contains("entries") ||
      !doc["entries"].is_array()) {
    error = file.string() + ": not a torchlint baseline (version 1)";
    return std::nullopt;
  }
  Baseline b;
  for (const auto& e : doc["entries"]) {
    if (!e.is_object() || !e.contains("rule") || !e.contains("path") || !e.contains("fingerprint") ||
        !e["rule"].is_string() || !e["path"].is_string() || !e["fingerprint"].is_string()) {
      error = file.string() + ": malformed entry " + e.dump();
      return std::nullopt;
    }
    size_t count = e.contains("count") && e["count"].is_number_unsigned() ? e["count"].get<size_t>() : 1;
    b.entries.push_back({e["rule"], e["path"], e["fingerprint"], count});
  }
  std::sort(b.entries.begin(), b.entries.end(), [](const auto& x, const auto& y) { return x.key() < y.key(); });
  return b;
}

BaselineMatch apply_baseline(std::vector<Diagnostic> findings, const Baseline& baseline,
                             const std::map<std::string, const SourceFile*>& sources, const fs::path& baseline_dir) {
  std::map<std::tuple<std::string, std::string, std::string>, size_t> remaining;
  for (const auto& e : baseline.entries) remaining[{e.rule, e.path, e.fingerprint}] += e.count;
  BaselineMatch match;
  for (auto& d : findings) {
    auto it = sources.find(d.path);
    bool known = false;
    if (it != sources.end()) {
      auto r = remaining.find({d.code, relative_path(d.path, baseline_dir), finding_fingerprint(d, *it->second)});
      if (r != remaining.end() && r->second > 0) {
        --r->second;
        known = true;
      }
    }
    (known ? match.baselined : match.fresh).push_back(std::move(d));
  }
  for (const auto& [key, n] : remaining) {
    if (n > 0) match.stale.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), n});
  }
  return match;
}

}  // namespace torchlint
