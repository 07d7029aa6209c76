// Runs the torchlint binary under test (TORCHLINT_BINARY) as a user would, for the
// end-to-end tests: stdout, stderr and exit status of one command line.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace torchlint::testing {

struct Result {
  int exit = -1;
  std::string out;
  std::string err;
};

// Single-quotes `s` for /bin/sh.
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// `torchlint ARGS` in `cwd`, with stdin empty (or read from `stdin_file`) and a two-minute
// limit (a hang fails the test instead of blocking the suite).
inline Result run_torchlint(const std::string& args, const std::filesystem::path& cwd,
                            const std::string& stdin_file = "/dev/null") {
  namespace fs = std::filesystem;
  static int counter = 0;
  fs::path err_file = fs::temp_directory_path() /
                      ("torchlint-test-err-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::string cmd = "cd " + shell_quote(cwd.string()) + " && timeout 120 " + shell_quote(TORCHLINT_BINARY) + " " +
                    args + " 2>" + shell_quote(err_file.string()) + " <" + shell_quote(stdin_file);
  Result r;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  std::array<char, 65536> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  int status = pclose(pipe);
  r.exit = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream e(err_file);
  std::stringstream ss;
  ss << e.rdbuf();
  r.err = ss.str();
  fs::remove(err_file);
  return r;
}

// A fresh directory under the system temp folder, removed (permissions restored first)
// when the test ends.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static int n = 0;
    path = std::filesystem::temp_directory_path() /
           ("torchlint-test-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path, std::filesystem::perms::all, ec);
    std::filesystem::remove_all(path, ec);
  }
  std::filesystem::path write(const std::string& name, const std::string& bytes) const {
    std::filesystem::path p = path / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
};

}  // namespace torchlint::testing
