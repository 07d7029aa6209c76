#pragma once
// Per-file results cached on disk, keyed by the file's content, the tool version and the
// effective configuration for that file. A corrupted or foreign entry is a miss (and gets
// rewritten), never trusted.
#include <array>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "config.h"
#include "lint_session.h"

namespace torchlint {

// The entries live in a few pack files per project (kShards, chosen by the file's path),
// not one file per source file: creating a file costs more than analysing a small one. A
// shard is read once, when its first entry is asked for, and rewritten once, when the
// cache is flushed (at destruction), with the entries stored since; every entry carries a
// checksum. Two processes flushing at once lose each other's new entries, never correctness.
class ResultCache {
 public:
  static constexpr size_t kShards = 8;

  // `pack_prefix` names this writer's pack files: torchlint-cpp keeps its entries in
  // `cpp-pack-N.tlc` beside torchlint's `pack-N.tlc`, so that the two processes of one
  // `torchlint check` never rewrite each other's shards.
  ResultCache(std::filesystem::path dir, std::string tool_version, std::string pack_prefix = "");
  ~ResultCache();
  ResultCache(const ResultCache&) = delete;
  ResultCache& operator=(const ResultCache&) = delete;

  // The key of one file's analysis: its bytes and everything that changes the result.
  uint64_t key(std::string_view text, const RuleSet& enabled, TorchVersion target, std::string_view module,
               TorchVersion target_torchvision = paired_torchvision(kDefaultTargetTorch)) const;

  // Thread-safe.
  std::optional<FileResult> load(const std::string& relative_path, uint64_t key) const;
  void store(const std::string& relative_path, uint64_t key, const FileResult& result) const;
  // Entries of another shape (torchlint-cpp's), under a key the caller computes (with
  // hash(), its tool version included); checksummed like the others.
  std::optional<std::string> load_bytes(const std::string& path, uint64_t key) const;
  void store_bytes(const std::string& path, uint64_t key, std::string_view payload) const;
  // The hash of the keys and checksums (fast, not cryptographic; a collision is a wrong hit
  // with probability ~2^-64 per lookup).
  static uint64_t hash(std::string_view data, uint64_t seed = 0);
  // Writes the shards that received entries (also done by the destructor).
  void flush() const;

  const std::filesystem::path& dir() const { return dir_; }

 private:
  struct Entry {
    uint64_t key = 0;
    std::string bytes;  // checksum + payload, as stored
  };
  struct Shard {
    std::mutex mutex;
    bool read = false;
    bool dirty = false;
    std::unordered_map<uint64_t, Entry> entries;  // by path hash
  };
  std::filesystem::path shard_path(size_t index) const;
  Shard& shard_for(uint64_t path_hash) const;  // read from disk on first use (mutex held by caller)
  std::filesystem::path dir_;
  std::string version_;
  std::string prefix_;
  mutable std::array<Shard, kShards> shards_;
};

// What a cache must be invalidated by besides its inputs: this exact build of the running
// executable (a rebuilt binary may have different rules with the same version number).
std::string executable_identity(const std::string& version);

// Exposed for tests: the binary form of a FileResult.
std::string serialize_file_result(const FileResult& result);
std::optional<FileResult> deserialize_file_result(std::string_view bytes);

}  // namespace torchlint
