#pragma once
// The organisation-level report: the work-unit records (schema torchlint-unit/1, one JSON
// line per checkpoint file or repository, written by `ckpt --files-from` and `audit
// --repos-from` on many machines) merged into one view of the fleet, rendered as JSON
// (schema torchlint-fleet/1), Markdown or one self-contained HTML file.
#include <cstddef>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace torchlint::report {

inline constexpr const char* kUnitSchema = "torchlint-unit/1";
inline constexpr const char* kFleetSchema = "torchlint-fleet/1";

// One shard: its name (for messages) and its text.
struct UnitShard {
  std::string name;
  std::string text;
};

struct FleetRepo {
  std::string path, status, error;  // status "ok" or "error"
  std::optional<int> score;         // absent when the audit could not run
  size_t passed = 0, failed = 0, not_applicable = 0, manual = 0, not_checked = 0;
  size_t files_linted = 0, findings = 0, checkpoints = 0, dangerous_checkpoints = 0;
  std::vector<std::string> failed_items;  // ids
  std::optional<int> baseline_score;      // with --baseline, when the repository was there
};

struct FleetItem {
  std::string id, title;
  std::vector<std::string> repos;  // the repositories failing it
};

struct FleetCheckpoint {
  std::string path, status, error, format, safety, safety_detail, training_state;
  std::vector<std::string> codes;
};

// Counts per verdict for the checkpoints under one directory of the registry.
struct FleetDirectory {
  std::string path;
  std::map<std::string, size_t> verdicts;
  size_t total = 0;
};

struct FleetError {
  std::string kind, path, message;
};

struct FleetReport {
  std::string generated_at;
  size_t shards = 0, records = 0, duplicates = 0;  // records read; repeats of a unit left out
  std::vector<std::string> malformed;              // "shard:line: why", lines that are no record
  std::vector<FleetRepo> repos;                    // worst score first, then path
  std::vector<FleetItem> worst_items;              // most failing repositories first
  std::map<std::string, size_t> rule_findings;     // code -> findings across the repositories
  std::vector<FleetCheckpoint> checkpoints;        // every checkpoint unit, by path
  std::map<std::string, size_t> verdicts;          // safety verdict -> checkpoints
  std::vector<FleetDirectory> directories;         // verdicts by parent directory
  std::vector<FleetError> errors;                  // units that failed, by kind and path
  // Trends (--baseline): repositories in both runs and the fleet's mean score then and now.
  bool has_baseline = false;
  size_t baseline_records = 0;
  std::vector<std::string> repos_added, repos_removed;
  std::optional<double> mean_score, baseline_mean_score;  // over repositories scored in both
  size_t baseline_dangerous = 0;                          // dangerous checkpoints then
  std::vector<std::string> newly_dangerous;               // dangerous now, not (or absent) then

  size_t count_kind(const std::string& kind) const;
};

// Merges the shards (and the baseline's, for trends). A unit (kind and path) seen more
// than once is kept once: a successful record over a failed one (a retried task), else
// the first; the others are counted in `duplicates`. Lines that are not torchlint-unit/1
// records are listed in `malformed`, never fatal.
FleetReport merge_units(const std::vector<UnitShard>& shards, const std::vector<UnitShard>& baseline,
                        const std::string& generated_at);

void write_fleet_json(std::ostream& out, const FleetReport& report);
void write_fleet_markdown(std::ostream& out, const FleetReport& report);
void write_fleet_html(std::ostream& out, const FleetReport& report);

}  // namespace torchlint::report
