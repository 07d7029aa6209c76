#pragma once
// The precompiled-header cache of torchlint-cpp. A translation unit whose leading
// #include lines name LibTorch headers (<torch/...>, <ATen/...>, <c10/...>) gets a PCH of
// a generated header with just those includes, built once with the TU's own flags by
// LibTooling (so it matches this libclang) and kept in a cache directory under a key of
// the flags, the working directory, the Clang version, the header text and the size and
// mtime of the included LibTorch headers. Files are written atomically (temp + rename).
// The cache has a size cap (pch_lru.h): least recently used PCHs are removed whenever one
// is handed out, never one that a translation unit of this run is parsing with.
#include <clang/Tooling/ArgumentsAdjusters.h>
#include <clang/Tooling/CompilationDatabase.h>

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace torchlint::cpp {

// The LibTorch includes at the top of a source (before any code or other directive),
// in order, as `<path>`; empty when there are none.
std::vector<std::string> leading_torch_includes(const std::string& text);

class PchCache {
 public:
  PchCache(std::string dir, uint64_t max_size) : dir_(std::move(dir)), max_size_(max_size) {}
  // The PCH for a TU with this (adjusted) command and these includes; built when missing.
  // Empty when none can be had (the TU is then parsed without one). A PCH handed out is
  // in use (not evicted) until release().
  std::string get(const clang::tooling::CompileCommand& command, const std::string& main_file,
                  const std::vector<std::string>& includes);
  void release(const std::string& pch);
  // Clang rejected `pch` (corrupted, stale): remove it; the next get() rebuilds it once.
  void invalidate(const std::string& pch);
  const std::string& dir() const { return dir_; }

 private:
  struct Entry {
    std::mutex mutex;
    bool done = false;
    int builds = 0;
    std::string path;
  };
  std::string build(const std::string& key, const clang::tooling::CompileCommand& command,
                    const std::vector<std::string>& args, const std::string& header_text);
  // Marks `pch` used now (its mtime is its last use) and in use, then trims the cache.
  void acquire(const std::string& pch);
  std::string dir_;
  uint64_t max_size_;
  std::mutex mutex_;
  std::map<std::string, int> in_use_;                      // PCH path -> translation units parsing with it
  std::set<std::string> ours_;                             // every PCH path this process handed out
  std::map<std::string, std::shared_ptr<Entry>> entries_;  // by key
  std::map<std::string, std::string> key_of_;              // PCH path -> key
};

// The include directories (-I, -isystem, -iquote, -idirafter) of a command line (args[0]
// is the compiler), relative ones resolved against the command's `directory`.
std::vector<std::string> include_dirs(const std::string& directory, const std::vector<std::string>& args);

// The default cache directory: $XDG_CACHE_HOME/torchlint/pch or ~/.cache/torchlint/pch.
std::string default_pch_dir();

}  // namespace torchlint::cpp
