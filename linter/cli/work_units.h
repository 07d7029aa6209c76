#pragma once
// Work units for a batch engine (`ckpt --files-from`, `audit --repos-from`): the list of
// units read from a file or standard input, and the stream of one JSON line per unit
// (schema torchlint-unit/1, in the README) that `torchlint report merge` reads back.
// Stateless: each unit is judged on its own, nothing is kept between runs.
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/diagnostic.h"

namespace torchlint::cli {

// The units listed in `source` (a file, or `-` for standard input), one per line: blank
// lines are skipped, a trailing '\r' is dropped, nothing else is interpreted (a path may
// start with '#' or hold spaces). Null, with `error` set, when the list cannot be read.
std::optional<std::vector<std::string>> read_work_list(const std::string& source, std::string& error);

// A record with the fields every unit has: schema, tool, kind, path, status "ok", error null.
nlohmann::ordered_json unit_record(std::string_view kind, const std::string& path);

// {"TL810": 2, ...}: findings per rule code, codes in order.
nlohmann::ordered_json findings_by_code(const std::vector<Diagnostic>& diagnostics);

// The current time as ISO 8601 UTC ("2026-12-04T18:51:31Z"): when a report was made.
std::string utc_now();

// Marks `record` as failed with `message` (status "error").
void fail_unit(nlohmann::ordered_json& record, const std::string& message);

// Writes records one line each, flushed at once (a driver reads them as they come and a
// killed process loses only the unit in progress), and works out the exit code: 2 when a
// unit failed, else 1 when a unit had findings (unless `exit_zero`), else 0.
class UnitStream {
 public:
  UnitStream(std::ostream& out, bool exit_zero) : out_(out), exit_zero_(exit_zero) {}
  void write(const nlohmann::ordered_json& record, bool has_findings);
  int exit_code() const;

 private:
  std::ostream& out_;
  bool exit_zero_;
  bool errors_ = false, findings_ = false;
};

}  // namespace torchlint::cli
