#pragma once
// `torchlint report merge SHARD.jsonl...`: the work-unit records (torchlint-unit/1) that
// `ckpt --files-from` and `audit --repos-from` wrote on many machines, merged into one
// organisation-level report (linter/report/fleet.h renders it).
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace torchlint::cli {

class ReportCommand {
 public:
  explicit ReportCommand(CLI::App& app);
  bool selected() const { return command_->parsed(); }
  // 0 when the report was written; 2 when a shard cannot be read, the output cannot be
  // written, or a shard holds lines that are no torchlint-unit/1 record (the report is
  // still written, listing them).
  int run() const;

 private:
  CLI::App* command_ = nullptr;
  CLI::App* merge_ = nullptr;
  std::vector<std::string> shards_, baseline_;
  std::string output_format_ = "markdown", output_file_;
};

}  // namespace torchlint::cli
