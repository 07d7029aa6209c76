#pragma once
// Starting other programs (git, torchlint-cpp, torchlint-probe) without a shell: the
// arguments go to posix_spawnp as a vector, so no path or revision is ever parsed by
// /bin/sh. One place for spawning, waiting, timeouts and finding executables.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace torchlint::cli {

struct ProcessOptions {
  // Where the child's stdout/stderr go: captured into the result (up to `capture_limit`
  // bytes, the rest is read and dropped), written to a file, or discarded.
  bool capture_stdout = false;
  std::optional<std::filesystem::path> stdout_file;
  std::optional<std::filesystem::path> stderr_file;
  size_t capture_limit = 256u << 20;
  int timeout_seconds = 0;  // 0: wait for as long as it takes
};

struct ProcessResult {
  int exit_code = -1;      // set when the child exited
  int signal = 0;          // set when it was killed by a signal
  bool timed_out = false;  // killed by us after timeout_seconds
  std::string error;       // it could not be started (or waited for)
  std::string out;         // captured stdout
  bool ok() const { return error.empty() && !timed_out && signal == 0 && exit_code == 0; }
};

// Runs argv[0] (searched on PATH when it has no slash) with stdin from /dev/null.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// `name` beside this executable, then on PATH; nullopt when neither has it.
std::optional<std::filesystem::path> find_executable(const std::string& name);

}  // namespace torchlint::cli
