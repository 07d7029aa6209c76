#include "process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>

extern char** environ;

namespace torchlint::cli {

namespace fs = std::filesystem;

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  ProcessResult result;
  if (argv.empty()) {
    result.error = "nothing to run";
    return result;
  }
  int pipe_fds[2] = {-1, -1};
  if (options.capture_stdout && pipe2(pipe_fds, O_CLOEXEC) != 0) {
    result.error = std::string("cannot create a pipe: ") + std::strerror(errno);
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (options.capture_stdout) {
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  } else if (options.stdout_file) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, options.stdout_file->c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  }
  if (options.stderr_file) {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, options.stderr_file->c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (options.capture_stdout) close(pipe_fds[1]);
  if (rc != 0) {
    if (options.capture_stdout) close(pipe_fds[0]);
    result.error = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return result;
  }
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::seconds(options.timeout_seconds);
  auto expired = [&] { return options.timeout_seconds > 0 && Clock::now() > deadline; };
  int status = 0;
  bool reaped = false;
  if (options.capture_stdout) {
    // Read until EOF (the child closed stdout), polling so that a timeout can stop it.
    char buf[65536];
    for (;;) {
      pollfd p{pipe_fds[0], POLLIN, 0};
      int ready = poll(&p, 1, options.timeout_seconds > 0 ? 50 : -1);
      if (ready < 0 && errno != EINTR) break;
      if (ready > 0) {
        ssize_t n = read(pipe_fds[0], buf, sizeof buf);
        if (n == 0) break;
        if (n < 0) {
          if (errno == EINTR) continue;
          break;
        }
        size_t room = options.capture_limit > result.out.size() ? options.capture_limit - result.out.size() : 0;
        result.out.append(buf, std::min(room, static_cast<size_t>(n)));
      }
      if (expired()) {
        kill(pid, SIGKILL);
        result.timed_out = true;
        break;
      }
    }
    close(pipe_fds[0]);
  }
  while (!reaped) {
    pid_t done = waitpid(pid, &status, options.timeout_seconds > 0 && !result.timed_out ? WNOHANG : 0);
    if (done == pid) {
      reaped = true;
      break;
    }
    if (done < 0 && errno != EINTR) {
      result.error = "waiting for " + argv[0] + " failed: " + std::strerror(errno);
      return result;
    }
    if (done == 0) {
      if (expired()) {
        kill(pid, SIGKILL);
        result.timed_out = true;
        continue;  // reap it
      }
      poll(nullptr, 0, 20);
    }
  }
  if (result.timed_out) return result;
  if (WIFEXITED(status))
    result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    result.signal = WTERMSIG(status);
  return result;
}

std::optional<fs::path> find_executable(const std::string& name) {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path beside = self.parent_path() / name;
    if (fs::is_regular_file(beside, ec) && access(beside.c_str(), X_OK) == 0) return beside;
  }
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
      if (dir.empty()) continue;
      fs::path candidate = fs::path(dir) / name;
      if (fs::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  return std::nullopt;
}

}  // namespace torchlint::cli
