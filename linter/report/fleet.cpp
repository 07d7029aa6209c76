// Merging torchlint-unit/1 shards into the fleet report (see fleet.h).
#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fleet.h"

namespace torchlint::report {

namespace {

using json = nlohmann::json;

std::string str(const json& record, const char* key) {
  auto it = record.find(key);
  return it != record.end() && it->is_string() ? it->get<std::string>() : std::string();
}

size_t count(const json& record, const char* key) {
  auto it = record.find(key);
  return it != record.end() && it->is_number_unsigned() ? it->get<size_t>() : 0;
}

// The units of some shards, one record per (kind, path), in first-seen order.
struct Units {
  std::vector<json> records;
  std::map<std::pair<std::string, std::string>, size_t> index;
  size_t read = 0, duplicates = 0;
  std::vector<std::string> malformed;
};

// Why `record` is not a torchlint-unit/1 record, or "" when it is one.
std::string invalid(const json& record) {
  if (!record.is_object()) return "not a JSON object";
  if (str(record, "schema") != kUnitSchema) {
    return record.contains("schema") ? "schema " + record["schema"].dump() + " is not " + kUnitSchema
                                     : "no schema field";
  }
  std::string kind = str(record, "kind");
  if (kind != "checkpoint" && kind != "repository") return "kind is neither checkpoint nor repository";
  if (str(record, "path").empty()) return "no path";
  std::string status = str(record, "status");
  if (status != "ok" && status != "error") return "status is neither ok nor error";
  return "";
}

Units read_units(const std::vector<UnitShard>& shards) {
  Units units;
  for (const auto& shard : shards) {
    std::istringstream in(shard.text);
    std::string line;
    size_t number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      json record = json::parse(line, nullptr, /*allow_exceptions=*/false);
      std::string why = record.is_discarded() ? "not JSON" : invalid(record);
      if (!why.empty()) {
        units.malformed.push_back(shard.name + ":" + std::to_string(number) + ": " + why);
        continue;
      }
      ++units.read;
      auto key = std::make_pair(str(record, "kind"), str(record, "path"));
      auto [it, inserted] = units.index.emplace(key, units.records.size());
      if (inserted) {
        units.records.push_back(std::move(record));
        continue;
      }
      // The same unit twice: a retried task or overlapping lists. A success beats a failure.
      ++units.duplicates;
      json& kept = units.records[it->second];
      if (str(kept, "status") == "error" && str(record, "status") == "ok") kept = std::move(record);
    }
  }
  return units;
}

FleetRepo repo_of(const json& r) {
  FleetRepo repo;
  repo.path = str(r, "path");
  repo.status = str(r, "status");
  repo.error = str(r, "error");
  if (r.contains("score") && r["score"].is_number_integer()) repo.score = r["score"].get<int>();
  repo.passed = count(r, "passed");
  repo.failed = count(r, "failed");
  repo.not_applicable = count(r, "not_applicable");
  repo.manual = count(r, "manual");
  repo.not_checked = count(r, "not_checked");
  repo.files_linted = count(r, "files_linted");
  if (auto it = r.find("findings"); it != r.end() && it->is_object()) {
    for (const auto& [code, n] : it->items()) repo.findings += n.is_number_unsigned() ? n.get<size_t>() : 0;
  }
  if (auto it = r.find("checkpoints"); it != r.end() && it->is_array()) {
    repo.checkpoints = it->size();
    for (const auto& cp : *it) repo.dangerous_checkpoints += cp.is_object() && str(cp, "safety") == "dangerous";
  }
  if (auto it = r.find("failed_items"); it != r.end() && it->is_array()) {
    for (const auto& item : *it) {
      if (item.is_object()) repo.failed_items.push_back(str(item, "id"));
    }
  }
  return repo;
}

FleetCheckpoint checkpoint_of(const json& r) {
  FleetCheckpoint cp;
  cp.path = str(r, "path");
  cp.status = str(r, "status");
  cp.error = str(r, "error");
  cp.format = str(r, "format");
  cp.safety = str(r, "safety");
  if (cp.safety.empty()) cp.safety = "unknown";
  cp.safety_detail = str(r, "safety_detail");
  cp.training_state = str(r, "training_state");
  if (auto it = r.find("findings"); it != r.end() && it->is_object()) {
    for (const auto& [code, n] : it->items()) cp.codes.push_back(code);
  }
  return cp;
}

// The registry directory a checkpoint sits in ("." for a bare file name).
std::string parent_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : slash == 0 ? std::string("/") : path.substr(0, slash);
}

}  // namespace

size_t FleetReport::count_kind(const std::string& kind) const {
  return kind == "repository" ? repos.size() : kind == "checkpoint" ? checkpoints.size() : 0;
}

FleetReport merge_units(const std::vector<UnitShard>& shards, const std::vector<UnitShard>& baseline,
                        const std::string& generated_at) {
  FleetReport report;
  report.generated_at = generated_at;
  report.shards = shards.size();
  Units units = read_units(shards);
  report.records = units.read;
  report.duplicates = units.duplicates;
  report.malformed = std::move(units.malformed);

  std::map<std::string, FleetItem> items;
  std::map<std::string, FleetDirectory> directories;
  for (const json& r : units.records) {
    std::string kind = str(r, "kind");
    if (str(r, "status") == "error") report.errors.push_back({kind, str(r, "path"), str(r, "error")});
    if (kind == "repository") {
      FleetRepo repo = repo_of(r);
      if (auto it = r.find("failed_items"); it != r.end() && it->is_array()) {
        for (const auto& item : *it) {
          if (!item.is_object()) continue;
          FleetItem& fi = items[str(item, "id")];
          fi.id = str(item, "id");
          if (fi.title.empty()) fi.title = str(item, "title");
          fi.repos.push_back(repo.path);
        }
      }
      if (auto it = r.find("findings"); it != r.end() && it->is_object()) {
        for (const auto& [code, n] : it->items())
          report.rule_findings[code] += n.is_number_unsigned() ? n.get<size_t>() : 0;
      }
      report.repos.push_back(std::move(repo));
    } else {
      FleetCheckpoint cp = checkpoint_of(r);
      ++report.verdicts[cp.safety];
      FleetDirectory& dir = directories[parent_of(cp.path)];
      dir.path = parent_of(cp.path);
      ++dir.verdicts[cp.safety];
      ++dir.total;
      report.checkpoints.push_back(std::move(cp));
    }
  }
  // Worst first: repositories that could not be scored, then by score, then by path.
  std::sort(report.repos.begin(), report.repos.end(), [](const FleetRepo& a, const FleetRepo& b) {
    int sa = a.score.value_or(-1), sb = b.score.value_or(-1);
    return sa != sb ? sa < sb : a.path < b.path;
  });
  for (auto& [id, item] : items) report.worst_items.push_back(std::move(item));
  std::stable_sort(report.worst_items.begin(), report.worst_items.end(),
                   [](const FleetItem& a, const FleetItem& b) { return a.repos.size() > b.repos.size(); });
  std::sort(report.checkpoints.begin(), report.checkpoints.end(),
            [](const FleetCheckpoint& a, const FleetCheckpoint& b) { return a.path < b.path; });
  for (auto& [path, dir] : directories) report.directories.push_back(std::move(dir));
  std::sort(report.errors.begin(), report.errors.end(), [](const FleetError& a, const FleetError& b) {
    return std::tie(a.kind, a.path) < std::tie(b.kind, b.path);
  });

  if (baseline.empty()) return report;
  // Trends: the same units in an earlier run.
  report.has_baseline = true;
  Units before = read_units(baseline);
  report.baseline_records = before.read;
  for (auto& m : before.malformed) report.malformed.push_back("baseline " + m);
  std::map<std::string, std::optional<int>> old_scores;
  std::set<std::string> old_dangerous;
  for (const json& r : before.records) {
    if (str(r, "kind") == "repository") {
      old_scores[str(r, "path")] = repo_of(r).score;
    } else if (str(r, "safety") == "dangerous") {
      old_dangerous.insert(str(r, "path"));
    }
  }
  report.baseline_dangerous = old_dangerous.size();
  double now = 0, then = 0;
  size_t both = 0;
  std::set<std::string> current;
  for (auto& repo : report.repos) {
    current.insert(repo.path);
    auto it = old_scores.find(repo.path);
    if (it == old_scores.end()) {
      report.repos_added.push_back(repo.path);
      continue;
    }
    repo.baseline_score = it->second;
    if (repo.score && repo.baseline_score) {
      now += *repo.score;
      then += *repo.baseline_score;
      ++both;
    }
  }
  for (const auto& [path, score] : old_scores) {
    if (!current.contains(path)) report.repos_removed.push_back(path);
  }
  std::sort(report.repos_added.begin(), report.repos_added.end());
  if (both) {
    report.mean_score = now / static_cast<double>(both);
    report.baseline_mean_score = then / static_cast<double>(both);
  }
  for (const auto& cp : report.checkpoints) {
    if (cp.safety == "dangerous" && !old_dangerous.contains(cp.path)) report.newly_dangerous.push_back(cp.path);
  }
  return report;
}

}  // namespace torchlint::report
