// C++ fixtures: runs torchlint-cpp over fixtures/cpp/<dir>/{bad,good}_*.cpp (with the small
// stand-in LibTorch header in fixtures/cpp/include) through a compilation database, as a
// user would, and compares its findings with the `// expect: TLxxx` marks (read by
// support/expect_marks.h): every mark must be found and every finding marked. The command
// line around it (no database, -p without one, the fallback include path) is tested by
// tests/cpp_cli_test.py.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/process.h"
#include "support/expect_marks.h"

namespace fs = std::filesystem;
using torchlint::testing::CommentSyntax;
using torchlint::testing::Mark;

namespace {

bool is_case(const fs::path& p) {
  std::string name = p.filename().string();
  return (name.starts_with("bad") || name.starts_with("good")) && p.extension() == ".cpp";
}

}  // namespace

TEST_CASE("C++ fixtures: torchlint-cpp's findings are exactly the expect marks") {
  const fs::path fixtures = fs::path(TORCHLINT_SOURCE_DIR) / "fixtures" / "cpp";
  const fs::path include = fixtures / "include";
  const fs::path work = TORCHLINT_CPP_FIXTURES_WORK_DIR;
  REQUIRE_MESSAGE(fs::is_directory(fixtures), "no fixtures at " << fixtures);

  // The cases: every fixture directory but the stand-in header and the end-to-end project
  // (tests/cpp_e2e_test.sh), each with at least one case.
  std::vector<fs::path> dirs, files;
  for (const auto& e : fs::directory_iterator(fixtures)) {
    std::string name = e.path().filename().string();
    if (e.is_directory() && name != "include" && name != "e2e") dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  REQUIRE_FALSE(dirs.empty());
  std::set<Mark> expected;
  for (const auto& dir : dirs) {
    std::vector<fs::path> cases;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.is_regular_file() && is_case(e.path())) cases.push_back(e.path());
    }
    std::sort(cases.begin(), cases.end());
    CHECK_MESSAGE(!cases.empty(), dir << " holds no bad_*.cpp or good_*.cpp case");
    // In a rule's directory (TLnnn-name), a flagged case that marks nothing of its rule
    // would pass with the rule silent.
    std::string dir_name = dir.filename().string();
    std::string code = dir_name.substr(0, dir_name.find('-'));
    for (const auto& file : cases) {
      torchlint::testing::Marks marks = torchlint::testing::read_marks(file, CommentSyntax::kSlashes);
      for (const auto& e : marks.errors) FAIL_CHECK(e);
      if (torchlint::testing::is_rule_code(code) && file.filename().string().starts_with("bad")) {
        CHECK_MESSAGE(
            std::any_of(marks.marks.begin(), marks.marks.end(), [&](const Mark& m) { return m.code == code; }),
            file << " is a bad_* case without an `expect: " << code << "` mark");
      }
      expected.merge(marks.marks);
      files.push_back(file);
    }
  }
  REQUIRE_FALSE(files.empty());

  // The database: every case compiled on its own against the stand-in header.
  fs::create_directories(work);
  nlohmann::json db = nlohmann::json::array();
  for (const auto& f : files) {
    db.push_back(
        {{"directory", work.string()},
         {"file", f.string()},
         {"arguments", {"clang++", "-std=c++17", "-I" + include.string(), "-c", f.string(), "-o", "/dev/null"}}});
  }
  std::ofstream(work / "compile_commands.json") << db.dump(1);

  std::vector<std::string> argv = {TORCHLINT_CPP_BINARY, "-p", work.string()};
  argv.insert(argv.end(), {"--select", "ALL", "--output-format", "json", "-j", "2"});
  for (const auto& f : files) argv.push_back(f.string());
  const fs::path stderr_file = work / "stderr.txt";
  torchlint::cli::ProcessOptions options;
  options.capture_stdout = true;
  options.stderr_file = stderr_file;
  options.timeout_seconds = 600;
  torchlint::cli::ProcessResult run = torchlint::cli::run_process(argv, options);
  std::ifstream err_in(stderr_file);
  const std::string err{std::istreambuf_iterator<char>(err_in), std::istreambuf_iterator<char>()};
  REQUIRE_MESSAGE(run.error.empty(), run.error);
  REQUIRE_MESSAGE(!run.timed_out, "torchlint-cpp ran past 600 s");
  REQUIRE_MESSAGE((run.signal == 0 && (run.exit_code == 0 || run.exit_code == 1)),
                  "torchlint-cpp exited with " << run.exit_code << " (signal " << run.signal << ")\n"
                                               << err);
  nlohmann::json findings = nlohmann::json::parse(run.out, nullptr, /*allow_exceptions=*/false);
  REQUIRE_MESSAGE(findings.is_array(), "torchlint-cpp's output is not a JSON array:\n" << run.out);
  std::set<Mark> found;
  for (const auto& d : findings) {
    found.insert({fs::absolute(d.at("filename").get<std::string>()).lexically_normal().generic_string(),
                  d.at("location").at("row").get<uint32_t>(), d.at("code").get<std::string>()});
  }

  std::ostringstream report;
  size_t mismatches = 0;
  for (const auto& key : found) {
    if (expected.contains(key)) continue;
    ++mismatches;
    report << "Noisy:   " << key.path << ":" << key.line << " " << key.code << "\n";
  }
  for (const auto& key : expected) {
    if (found.contains(key)) continue;
    ++mismatches;
    report << "Missing: " << key.path << ":" << key.line << " " << key.code << "\n";
  }
  // Missing headers are the environment's problem: one note per file naming them, no TL000.
  for (const auto& f : files) {
    if (f.filename().string().find("missing_third_party_header") == std::string::npos) continue;
    for (const char* header : {"header", "opencv_stand_in_not_shipped.h", "not_shipped_either.hpp"}) {
      CHECK_MESSAGE(err.find(header) != std::string::npos, "missing headers: no note naming " << header << " in\n"
                                                                                              << err);
    }
    std::string path = f.lexically_normal().generic_string();
    CHECK_MESSAGE(
        std::none_of(found.begin(), found.end(), [&](const Mark& m) { return m.path == path && m.code == "TL000"; }),
        "missing headers: TL000 reported for " << path);
  }
  MESSAGE(files.size() << " C++ fixture files, " << expected.size() << " marks, " << found.size() << " findings, "
                       << mismatches << " mismatches");
  CHECK_MESSAGE(mismatches == 0, report.str());
}
