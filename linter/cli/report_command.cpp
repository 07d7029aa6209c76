#include "report_command.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "core/exit_code.h"
#include "report/fleet.h"
#include "work_units.h"

namespace torchlint::cli {

namespace {

// Reads every shard into `out`; false after an error line for the first unreadable one.
bool read_shards(const std::vector<std::string>& paths, std::vector<report::UnitShard>& out) {
  for (const auto& path : paths) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    if (in) text << in.rdbuf();
    if (!in || in.bad()) {
      std::cerr << "torchlint: error: cannot read the shard " << path << '\n';
      return false;
    }
    out.push_back({path, text.str()});
  }
  return true;
}

}  // namespace

ReportCommand::ReportCommand(CLI::App& app) {
  command_ = app.add_subcommand("report", "Work with the results of many runs (`report merge`)");
  command_->require_subcommand(1);
  merge_ = command_->add_subcommand(
      "merge",
      "Merge torchlint-unit/1 shards (ckpt --files-from, audit --repos-from) into one organisation-level report");
  merge_->add_option("shards", shards_, "The JSON-lines shards")->required();
  merge_->add_option("--output-format", output_format_, "markdown (default), html or json")
      ->check(CLI::IsMember({"markdown", "html", "json"}));
  merge_->add_option("-o,--output-file", output_file_, "Write the report to this file (default: standard output)");
  merge_->add_option("--baseline", baseline_,
                     "Shards of an earlier run: score change per repository, new dangerous checkpoints");
}

int ReportCommand::run() const {
  std::vector<report::UnitShard> shards, baseline;
  if (!read_shards(shards_, shards) || !read_shards(baseline_, baseline)) return kExitError;
  report::FleetReport fleet = report::merge_units(shards, baseline, utc_now());
  std::ofstream file;
  std::ostream* out = open_output(output_file_, file);
  if (!out) return kExitError;
  if (output_format_ == "html") {
    report::write_fleet_html(*out, fleet);
  } else if (output_format_ == "json") {
    report::write_fleet_json(*out, fleet);
  } else {
    report::write_fleet_markdown(*out, fleet);
  }
  out->flush();
  if (!*out) {
    std::cerr << "torchlint: error: cannot write " << (output_file_.empty() ? std::string("the report") : output_file_)
              << '\n';
    return kExitError;
  }
  for (const auto& m : fleet.malformed) std::cerr << "torchlint: error: " << m << '\n';
  if (!output_file_.empty()) {
    std::cerr << "Merged " << fleet.records << " records (" << fleet.repos.size() << " repositories, "
              << fleet.checkpoints.size() << " checkpoints, " << fleet.duplicates << " duplicates, "
              << fleet.errors.size() << " failed units) into " << output_file_ << ".\n";
  }
  return fleet.malformed.empty() ? kExitClean : kExitError;
}

}  // namespace torchlint::cli
