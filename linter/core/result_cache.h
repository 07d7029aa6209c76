#pragma once
// Per-file results cached on disk, keyed by the file's content, the tool version and the
// effective configuration for that file. A corrupted or foreign entry is a miss (and gets
// rewritten), never trusted.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "config.h"
#include "lint_session.h"

namespace torchlint {

class ResultCache {
 public:
  ResultCache(std::filesystem::path dir, std::string tool_version);

  // The key of one file's analysis: its bytes and everything that changes the result.
  uint64_t key(std::string_view text, const RuleSet& enabled, TorchVersion target, std::string_view module) const;

  std::optional<FileResult> load(const std::string& relative_path, uint64_t key) const;
  void store(const std::string& relative_path, uint64_t key, const FileResult& result) const;

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path entry_path(const std::string& relative_path) const;
  std::filesystem::path dir_;
  std::string version_;
};

// Exposed for tests: the binary form of a FileResult.
std::string serialize_file_result(const FileResult& result);
std::optional<FileResult> deserialize_file_result(std::string_view bytes);

}  // namespace torchlint
