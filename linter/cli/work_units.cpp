#include "work_units.h"

#include <ctime>
#include <fstream>
#include <iostream>
#include <map>

#include "core/exit_code.h"
#include "report/fleet.h"

namespace torchlint::cli {

std::optional<std::vector<std::string>> read_work_list(const std::string& source, std::string& error) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (source != "-") {
    file.open(source);
    if (!file) {
      error = "cannot read the list " + source;
      return std::nullopt;
    }
    in = &file;
  }
  std::vector<std::string> units;
  std::string line;
  while (std::getline(*in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    units.push_back(line);
  }
  if (in->bad()) {
    error = "error reading the list " + source;
    return std::nullopt;
  }
  return units;
}

nlohmann::ordered_json unit_record(std::string_view kind, const std::string& path) {
  nlohmann::ordered_json record;
  record["schema"] = report::kUnitSchema;
  record["tool"] = std::string("torchlint ") + TORCHLINT_VERSION;
  record["kind"] = kind;
  record["path"] = path;
  record["status"] = "ok";
  record["error"] = nullptr;
  return record;
}

nlohmann::ordered_json findings_by_code(const std::vector<Diagnostic>& diagnostics) {
  std::map<std::string, size_t> counts;
  for (const auto& d : diagnostics) ++counts[d.code];
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [code, n] : counts) out[code] = n;
  return out;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

void fail_unit(nlohmann::ordered_json& record, const std::string& message) {
  record["status"] = "error";
  record["error"] = message;
}

void UnitStream::write(const nlohmann::ordered_json& record, bool has_findings) {
  // Invalid UTF-8 in a path must not end the batch: replaced, not thrown.
  out_ << record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  out_.flush();
  errors_ = errors_ || record["status"] == "error";
  findings_ = findings_ || has_findings;
}

int UnitStream::exit_code() const {
  if (errors_) return kExitError;
  return findings_ && !exit_zero_ ? kExitFindings : kExitClean;
}

}  // namespace torchlint::cli
