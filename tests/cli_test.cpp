// The torchlint binary end to end: exit codes, formats, configuration, suppressions and
// hostile input (binary, bad UTF-8, huge lines, deep nesting, FIFOs, symlink loops).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "support/run_torchlint.h"

namespace fs = std::filesystem;

namespace {

using torchlint::testing::Result;
using torchlint::testing::TempDir;

Result run(const std::string& args, const fs::path& cwd = TORCHLINT_SOURCE_DIR) {
  return torchlint::testing::run_torchlint(args, cwd);
}

std::string quote(const std::string& s) { return torchlint::testing::shell_quote(s); }

const char* kViolation = "import torch\nm = torch.nn.DataParallel(net)\n";

}  // namespace

TEST_CASE("sample project: expected findings, exit 1") {
  auto r = run("check fixtures/sample_project --output-format concise");
  CHECK(r.exit == 1);
  for (const char* code : {"TL101", "TL102", "TL201", "TL202", "TL204", "TL207", "TL304", "TL401"}) {
    CHECK_MESSAGE(r.out.find(code) != std::string::npos, code);
  }
  CHECK(r.out.find("train.py:135:17: TL401") != std::string::npos);
}

TEST_CASE("exit codes: clean, findings, --exit-zero, no files") {
  TempDir d;
  d.write("clean.py", "import torch\nx = torch.zeros(3)\n");
  d.write("bad.py", kViolation);
  CHECK(run("check clean.py", d.path).exit == 0);
  CHECK(run("check bad.py", d.path).exit == 1);
  CHECK(run("check bad.py --exit-zero", d.path).exit == 0);
  fs::create_directories(d.path / "empty");
  auto empty = run("check empty", d.path);
  CHECK(empty.exit == 0);
  CHECK(empty.out.empty());
  d.write("empty.py", "");
  CHECK(run("check empty.py", d.path).exit == 0);
}

TEST_CASE("usage and configuration errors exit 2 with one clear line") {
  TempDir d;
  d.write("bad.py", kViolation);
  auto r = run("check bad.py --select TL999", d.path);
  CHECK(r.exit == 2);
  CHECK(r.err.find("unknown rule selector `TL999`") != std::string::npos);
  CHECK(run("check bad.py --output-format xml", d.path).exit == 2);
  CHECK(run("check bad.py --bogus-flag", d.path).exit == 2);
  CHECK(run("check bad.py --target-torch latest", d.path).exit == 2);
  CHECK(run("check bad.py --config missing.toml", d.path).exit == 2);
  d.write("torchlint.toml", "selct = [\"TL1\"]\n");
  r = run("check bad.py", d.path);
  CHECK(r.exit == 2);
  CHECK(r.err.find("torchlint.toml: `selct`: unknown setting") != std::string::npos);
  CHECK(run("rule TL999").exit == 2);
  CHECK(run("").exit == 2);
}

TEST_CASE("typos: one torchlint: error: line, a did-you-mean, and the help pointer") {
  auto cmd = run("chek .");
  CHECK(cmd.exit == 2);
  CHECK(cmd.err.rfind("torchlint: error: unknown command `chek`", 0) == 0);
  CHECK(cmd.err.find("did you mean `torchlint check`?") != std::string::npos);
  auto opt = run("check --selct TL1 .");
  CHECK(opt.exit == 2);
  CHECK(opt.err.find("torchlint: error: unexpected argument `--selct`") != std::string::npos);
  CHECK(opt.err.find("did you mean `--select`?") != std::string::npos);
  CHECK(opt.err.find("run `torchlint check --help`") != std::string::npos);
  CHECK(run("ckpt --alow-global x.Y m.pt").err.find("did you mean `--allow-global`?") != std::string::npos);
  // No command: the help (exit 2); `help`, `help CMD`: the help (exit 0); -V: the version.
  auto none = run("");
  CHECK(none.exit == 2);
  CHECK(none.out.find("Subcommands:") != std::string::npos);
  auto help = run("help check");
  CHECK(help.exit == 0);
  CHECK(help.out.find("--select") != std::string::npos);
  auto version = run("-V");
  CHECK(version.exit == 0);
  CHECK(version.out.rfind("torchlint ", 0) == 0);
}

TEST_CASE("bad input: reported per file, other files' findings kept") {
  TempDir d;
  d.write("good_findings.py", kViolation);
  d.write("binary.py", std::string("\x7f"
                                   "ELF\0\0\x01",
                                   7) +
                           std::string(100, '\0'));
  d.write("latin1.py", std::string("import torch\n# caf\xe9\nm = torch.nn.DataParallel(net)\n"));
  d.write("huge.py", "x = [" + std::string(5 * 1024 * 1024 / 2, '1').replace(0, 0, "") + "]\n");
  std::string nested = "y = " + std::string(10000, '[') + std::string(10000, ']') + "\n";
  std::string blocks;
  for (int i = 0; i < 1000; ++i) blocks += std::string(static_cast<size_t>(i), ' ') + "if x:\n";
  blocks += std::string(1000, ' ') + "pass\n";
  d.write("nested.py", nested + blocks);
  d.write("syntax.py", "import torch\ndef f(:\n    pass\nm = torch.nn.DataParallel(net)\n");
  d.write("empty.py", "");

  auto r = run("check . --output-format concise", d.path);
  CHECK(r.exit == 1);
  CHECK(r.out.find("good_findings.py:2:5: TL401") != std::string::npos);
  CHECK(r.out.find("binary.py:1:1: TL000 binary file") != std::string::npos);
  CHECK(r.out.find("latin1.py:2:6: TL000 file is not valid UTF-8") != std::string::npos);
  CHECK(r.out.find("latin1.py:3:5: TL401") != std::string::npos);  // still linted
  CHECK(r.out.find("syntax.py:2:") != std::string::npos);
  CHECK(r.out.find("syntax.py:4:5: TL401") != std::string::npos);
  CHECK(r.err.find("internal error") == std::string::npos);

  // The full format shows a cut excerpt of the 5 MB line, not the whole line.
  d.write("huge_bad.py",
          "import torch; m = torch.nn.DataParallel(net); x = [" + std::string(5 * 1024 * 1024, '1') + "]\n");
  auto full = run("check huge_bad.py", d.path);
  CHECK(full.exit == 1);
  CHECK(full.out.size() < 4096);
}

TEST_CASE("I/O errors exit 2 but keep the other files' findings") {
  TempDir d;
  d.write("bad.py", kViolation);
  ::mkfifo((d.path / "fifo.py").c_str(), 0644);
  fs::create_symlink("loop_b.py", d.path / "loop_a.py");
  fs::create_symlink("loop_a.py", d.path / "loop_b.py");
  fs::create_symlink("nowhere.py", d.path / "dangling.py");
  fs::create_directories(d.path / "pkg");
  fs::create_directory_symlink("..", d.path / "pkg" / "up");  // a directory loop
  fs::create_directories(d.path / "dir.py");                  // a directory named like a file
  d.write("dir.py/inner.py", kViolation);

  auto r = run("check bad.py fifo.py loop_a.py missing.py --output-format concise", d.path);
  CHECK(r.exit == 2);
  CHECK(r.out.find("bad.py:2:5: TL401") != std::string::npos);
  CHECK(r.err.find("fifo.py: not a regular file") != std::string::npos);
  CHECK(r.err.find("loop_a.py: cannot follow symbolic link") != std::string::npos);
  CHECK(r.err.find("missing.py: no such file or directory") != std::string::npos);

  // Walking the directory: loops are not followed, the FIFO is skipped by type.
  auto walk = run("check . --output-format concise", d.path);
  CHECK(walk.out.find("dir.py/inner.py:2:5: TL401") != std::string::npos);
  CHECK(walk.out.find("bad.py:2:5: TL401") != std::string::npos);
  CHECK(walk.err.find("dangling.py") != std::string::npos);
  CHECK(walk.exit == 2);

  if (::geteuid() != 0) {
    fs::path locked = d.write("locked.py", kViolation);
    fs::permissions(locked, fs::perms::none);
    auto denied = run("check locked.py bad.py", d.path);
    CHECK(denied.exit == 2);
    CHECK(denied.err.find("Permission denied") != std::string::npos);
  }
}

TEST_CASE("JSON output and statistics") {
  TempDir d;
  d.write("bad.py", "import torch\nm = torch.nn.DataParallel(net)\nsd = torch.load('x.pt')\n");
  auto r = run("check bad.py --output-format json", d.path);
  CHECK(r.exit == 1);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.size() == 2);
  CHECK(j[0]["code"] == "TL401");
  CHECK(j[0]["name"] == "data-parallel");
  CHECK(j[0]["severity"] == "warning");
  CHECK(j[0]["filename"] == "bad.py");
  CHECK(j[0]["location"]["row"] == 2);
  CHECK(j[0]["location"]["column"] == 5);
  CHECK(j[0]["end_location"]["column"] == 31);  // exclusive, like Ruff
  CHECK(j[0]["fix"].is_null());
  CHECK(j[1]["code"] == "TL304");
  CHECK(j[1]["fix"]["edits"][0]["content"] == ", weights_only=True");
  auto s = run("check bad.py --statistics", d.path);
  CHECK(s.out.find("TL304  [*] unsafe-torch-load") != std::string::npos);
}

TEST_CASE("selection on the command line and in configuration") {
  TempDir d;
  d.write("bad.py", "import torch\nm = torch.nn.DataParallel(net)\nsd = torch.load('x.pt')\n");
  auto only = run("check bad.py --select TL4 --output-format concise", d.path);
  CHECK(only.out.find("TL401") != std::string::npos);
  CHECK(only.out.find("TL304") == std::string::npos);
  auto ignored = run("check bad.py --ignore data-parallel --output-format concise", d.path);
  CHECK(ignored.out.find("TL401") == std::string::npos);
  CHECK(ignored.out.find("TL304") != std::string::npos);

  d.write("pyproject.toml",
          "[tool.torchlint]\nignore = [\"TL304\"]\n[tool.torchlint.per-file-ignores]\n\"legacy/*\" = [\"TL401\"]\n");
  d.write("legacy/old.py", kViolation);
  auto cfg = run("check . --output-format concise", d.path);
  CHECK(cfg.out.find("TL304") == std::string::npos);
  CHECK(cfg.out.find("bad.py:2:5: TL401") != std::string::npos);
  CHECK(cfg.out.find("legacy/old.py") == std::string::npos);
  // The command line wins over the file.
  CHECK(run("check bad.py --select TL304 --output-format concise", d.path).out.find("TL304") != std::string::npos);
  d.write("pyproject.toml", "[tool.torchlint]\nexclude = [\"legacy\"]\ntarget-torch = \"2.6\"\n");
  auto excl = run("check . --output-format concise", d.path);
  CHECK(excl.out.find("legacy") == std::string::npos);
  CHECK(excl.out.find("TL304") == std::string::npos);  // 2.6 defaults to weights_only=True
}

TEST_CASE("list options take one value each: paths after them stay paths") {
  TempDir d;
  d.write("bad.py", "import torch\nm = torch.nn.DataParallel(net)\nsd = torch.load('x.pt')\n");
  d.write("other.py", kViolation);
  auto all = run("check --select ALL bad.py other.py --output-format concise", d.path);
  CHECK(all.exit == 1);
  CHECK(all.out.find("bad.py:2:5: TL401") != std::string::npos);
  CHECK(all.out.find("other.py:2:5: TL401") != std::string::npos);
  // Repeated and comma-separated forms both accumulate.
  auto two = run("check --select TL304 --extend-select TL401 --ignore TL1 --ignore TL2 bad.py --output-format concise",
                 d.path);
  CHECK(two.out.find("TL304") != std::string::npos);
  CHECK(two.out.find("TL401") != std::string::npos);
  auto equals = run("check --select=TL401,TL304 bad.py --output-format concise", d.path);
  CHECK(equals.out.find("TL304") != std::string::npos);
  CHECK(equals.out.find("TL401") != std::string::npos);
}

TEST_CASE("suppression comments") {
  TempDir d;
  d.write("s.py",
          "import torch\n"
          "a = torch.nn.DataParallel(net)  # noqa: TL401\n"
          "b = torch.nn.DataParallel(net)  # noqa\n"
          "c = torch.nn.DataParallel(net)  # noqa: TL304\n"
          "# torchlint: ignore[data-parallel] -- migrating in #123\n"
          "d = torch.nn.DataParallel(net)\n"
          "e = torch.nn.DataParallel(\n"
          "    net)  # noqa: TL401\n"
          "f = 1  # noqa: TL401\n");
  auto r = run("check s.py --output-format concise --extend-select TL001", d.path);
  CHECK(r.out.find("s.py:2:") == std::string::npos);
  CHECK(r.out.find("s.py:3:") == std::string::npos);
  CHECK(r.out.find("s.py:4:5: TL401") != std::string::npos);
  CHECK(r.out.find("s.py:4:33: TL001") != std::string::npos);  // TL304 suppressed nothing
  CHECK(r.out.find("s.py:6:") == std::string::npos);
  CHECK(r.out.find("s.py:7:") == std::string::npos);
  CHECK(r.out.find("s.py:9:8: TL001") != std::string::npos);
  d.write("f.py", "# torchlint: noqa\nimport torch\nm = torch.nn.DataParallel(net)\n");
  CHECK(run("check f.py", d.path).exit == 0);
}

TEST_CASE("output order does not depend on the number of threads") {
  auto one = run("check fixtures --output-format concise --exit-zero -j 1");
  auto many = run("check fixtures --output-format concise --exit-zero -j 4");
  CHECK(one.out == many.out);
  CHECK_FALSE(one.out.empty());
}

TEST_CASE("rules and rule docs") {
  auto list = run("rules");
  CHECK(list.exit == 0);
  CHECK(list.out.find("TL102  eval-without-no-grad") != std::string::npos);
  auto doc = run("rule TL304");
  CHECK(doc.exit == 0);
  CHECK(doc.out.starts_with("# TL304: unsafe-torch-load"));
  CHECK(run("rule unsafe-torch-load").out == doc.out);
  auto json = nlohmann::json::parse(run("rules --output-format json").out);
  CHECK(json.size() >= 10);
  CHECK(run("--version").out.starts_with("torchlint "));
}

TEST_CASE("rule typos get a did-you-mean") {
  TempDir d;
  d.write("f.py", kViolation);
  auto code = run("check --select TL3O4 f.py", d.path);
  CHECK(code.exit == 2);
  CHECK(code.err.find("unknown rule selector `TL3O4`; did you mean `TL304` (unsafe-torch-load)?") != std::string::npos);
  CHECK(run("check --ignore unsafe-torch-lod f.py", d.path).err.find("did you mean `unsafe-torch-load`?") !=
        std::string::npos);
  CHECK(run("rule tl3o4").err.find("unknown rule `tl3o4`; did you mean `TL304`") != std::string::npos);
  // Nothing close: no guess, the pointer to the list.
  CHECK(run("check --select XYZ12345 f.py", d.path)
            .err.find("unknown rule selector `XYZ12345` (see `torchlint rules`)") != std::string::npos);
}

TEST_CASE("full output ends with a summary line; --quiet prints the findings only") {
  TempDir d;
  d.write("pyproject.toml", "[project]\nname = 'p'\n");
  d.write("a.py", "import torch\nsd = torch.load('x.pt')\nm = torch.nn.DataParallel(net)\n");
  d.write("b.py", "x = 1\n");
  auto full = run("check --no-cache a.py b.py", d.path);
  CHECK(full.exit == 1);
  CHECK(full.out.find("Found 2 findings in 2 files (1 fixable with `--fix`).\n") != std::string::npos);
  CHECK(run("check --no-cache b.py", d.path).out == "All checks passed (1 file).\n");
  auto quiet = run("check --no-cache -q a.py b.py", d.path);
  CHECK(quiet.exit == 1);
  CHECK(quiet.out.find("Found") == std::string::npos);
  CHECK(quiet.out.find("a.py:2:6: TL304") != std::string::npos);
  CHECK(run("check --no-cache --quiet b.py", d.path).out.empty());
  // Concise and machine-readable formats never carry it on standard output.
  CHECK(run("check --no-cache a.py --output-format concise", d.path).out.find("Found") == std::string::npos);
}

TEST_CASE("--exclude replaces the configuration's exclude, --extend-exclude adds to it") {
  TempDir d;
  d.write("pyproject.toml", "[tool.torchlint]\nexclude = [\"gen\"]\n");
  d.write("gen/a.py", kViolation);
  d.write("old/b.py", kViolation);
  d.write("src/c.py", kViolation);
  auto base = run("check --no-cache . --output-format concise", d.path);
  CHECK(base.out.find("gen/a.py") == std::string::npos);
  CHECK(base.out.find("old/b.py") != std::string::npos);
  auto extend = run("check --no-cache . --extend-exclude old --output-format concise", d.path);
  CHECK(extend.out.find("gen/a.py") == std::string::npos);
  CHECK(extend.out.find("old/b.py") == std::string::npos);
  CHECK(extend.out.find("src/c.py") != std::string::npos);
  auto replace = run("check --no-cache . --exclude old,src --output-format concise", d.path);
  CHECK(replace.out.find("gen/a.py") != std::string::npos);
  CHECK(replace.out.find("old/b.py") == std::string::npos);
  CHECK(replace.out.find("src/c.py") == std::string::npos);
}

TEST_CASE("standard input: `-` with --stdin-filename, findings, fixes and configuration") {
  TempDir d;
  d.write("pyproject.toml", "[tool.torchlint]\nper-file-ignores = { \"tests/*\" = [\"TL401\"] }\n");
  fs::path input = d.write("buffer.txt", "import torch\nsd = torch.load('x.pt')\nm = torch.nn.DataParallel(net)\n");
  auto lint = torchlint::testing::run_torchlint("check - --stdin-filename src/train.py --output-format concise", d.path,
                                                input.string());
  CHECK(lint.exit == 1);
  CHECK(lint.out.find("src/train.py:2:6: TL304") != std::string::npos);
  CHECK(lint.out.find("src/train.py:3:5: TL401") != std::string::npos);
  CHECK_FALSE(fs::exists(d.path / "src/train.py"));  // named, never written
  // The name decides the configuration that applies.
  auto ignored = torchlint::testing::run_torchlint("check - --stdin-filename tests/t.py --output-format concise",
                                                   d.path, input.string());
  CHECK(ignored.out.find("TL401") == std::string::npos);
  CHECK(ignored.out.find("tests/t.py:2:6: TL304") != std::string::npos);
  // --fix: the fixed text on standard output, what is left on standard error.
  auto fixed = torchlint::testing::run_torchlint("check - --stdin-filename src/train.py --fix --output-format concise",
                                                 d.path, input.string());
  CHECK(fixed.exit == 1);
  CHECK(fixed.out == "import torch\nsd = torch.load('x.pt', weights_only=True)\nm = torch.nn.DataParallel(net)\n");
  CHECK(fixed.err.find("src/train.py:3:5: TL401") != std::string::npos);
  CHECK(fixed.err.find("TL304") == std::string::npos);
  // Without a name: stdin.py. A C++ name or a second path: a usage error.
  auto unnamed = torchlint::testing::run_torchlint("check - --output-format concise", d.path, input.string());
  CHECK(unnamed.out.find("stdin.py:2:6: TL304") != std::string::npos);
  CHECK(torchlint::testing::run_torchlint("check - --stdin-filename a.cpp", d.path, input.string()).exit == 2);
  CHECK(torchlint::testing::run_torchlint("check - other.py", d.path, input.string()).exit == 2);
  CHECK(run("check --stdin-filename a.py .", d.path).exit == 2);
}

TEST_CASE("--diff shows and --fix applies the safe fixes") {
  TempDir d;
  const std::string before =
      "import torch as T\n"
      "sd = T.load('x.pt',\n"
      "            map_location='cpu',)\n"
      "with T.cuda.amp.autocast(dtype=T.bfloat16):\n"
      "    scaler = T.cuda.amp.GradScaler(init_scale=2.0)\n"
      "old = T.cuda.amp.autocast(True)\n"
      "mine = T.load('y.pt', pickle_module=my_pickle)\n";
  d.write("f.py", before);
  auto diff = run("check f.py --diff", d.path);
  CHECK(diff.exit == 1);
  CHECK(diff.out.find("+            map_location='cpu', weights_only=True,)") != std::string::npos);
  CHECK(diff.out.find("+with T.amp.autocast(\"cuda\", dtype=T.bfloat16):") != std::string::npos);
  CHECK(diff.out.find("+    scaler = T.amp.GradScaler(\"cuda\", init_scale=2.0)") != std::string::npos);
  CHECK(diff.out.find("+old") == std::string::npos);   // positional `enabled`: no safe fix
  CHECK(diff.out.find("+mine") == std::string::npos);  // custom pickle_module: no fix
  std::ifstream unchanged(d.path / "f.py");
  std::stringstream ss;
  ss << unchanged.rdbuf();
  CHECK(ss.str() == before);

  auto fixed = run("check f.py --fix --output-format concise", d.path);
  CHECK(fixed.exit == 1);  // what cannot be fixed is still reported
  CHECK(fixed.err.find("Fixed 3 findings") != std::string::npos);
  CHECK(fixed.out.find("f.py:6:7: TL204") != std::string::npos);
  CHECK(fixed.out.find("f.py:7:8: TL304") != std::string::npos);
  auto again = run("check f.py --select TL204,TL304 --diff", d.path);
  CHECK(again.out.empty());

  // --show-fixes: what was fixed, per file and rule.
  d.write("f.py", before);
  auto shown = run("check f.py --fix --show-fixes --output-format concise", d.path);
  CHECK(shown.err.find(
            "Fixed 3 findings:\n- f.py:\n    2 × TL204 (deprecated-amp-api)\n    1 × TL304 (unsafe-torch-load)\n") !=
        std::string::npos);
}

TEST_CASE("baseline: known findings stay hidden when code moves, reappear when edited") {
  TempDir d;
  const std::string body =
      "import torch\n"
      "def setup(net):\n"
      "    return torch.nn.DataParallel(net)\n"
      "def load(p):\n"
      "    return torch.load(p)\n";
  d.write("m.py", body);
  auto w = run("check m.py --write-baseline base.json", d.path);
  CHECK(w.exit == 0);
  CHECK(w.err.find("Wrote 2 findings to base.json") != std::string::npos);
  auto json = nlohmann::json::parse(std::ifstream(d.path / "base.json"));
  CHECK(json["version"] == 1);
  REQUIRE(json["entries"].size() == 2);
  CHECK(json["entries"][0]["path"] == "m.py");
  CHECK(json["entries"][0].contains("line") == false);
  // Regenerating from unchanged code gives the same bytes.
  std::stringstream first;
  first << std::ifstream(d.path / "base.json").rdbuf();
  run("check m.py --write-baseline base.json", d.path);
  std::stringstream second;
  second << std::ifstream(d.path / "base.json").rdbuf();
  CHECK(first.str() == second.str());

  CHECK(run("check m.py --baseline base.json", d.path).exit == 0);
  // Moving the code down (new lines above) keeps it baselined.
  d.write("m.py", "# a header\n\n\"\"\"Docs.\"\"\"\n" + body);
  auto moved = run("check m.py --baseline base.json --output-format concise", d.path);
  CHECK(moved.exit == 0);
  CHECK(moved.out.empty());
  // Editing the flagged statement releases that finding only.
  d.write("m.py",
          "import torch\ndef setup(net):\n    return torch.nn.DataParallel(net, device_ids=[0])\ndef load(p):\n    "
          "return torch.load(p)\n");
  auto edited = run("check m.py --baseline base.json --output-format concise", d.path);
  CHECK(edited.exit == 1);
  CHECK(edited.out.find("m.py:3:12: TL401") != std::string::npos);
  CHECK(edited.out.find("TL304") == std::string::npos);
  CHECK(edited.err.find("1 baseline entry matches no finding") != std::string::npos);
  // A fixed finding leaves a stale entry: reported, and fatal with --baseline-strict.
  d.write("m.py", "import torch\ndef load(p):\n    return torch.load(p)\n");
  CHECK(run("check m.py --baseline base.json", d.path).exit == 0);
  CHECK(run("check m.py --baseline base.json --baseline-strict", d.path).exit == 1);
  // A broken baseline file is an error, not an empty baseline.
  d.write("broken.json", "{\"entries\": 3}");
  CHECK(run("check m.py --baseline broken.json", d.path).exit == 2);
  // SARIF marks baseline state.
  auto sarif =
      nlohmann::json::parse(run("check m.py --baseline base.json --output-format sarif --select TL304", d.path).out);
  CHECK(sarif["runs"][0]["results"][0]["baselineState"] == "unchanged");
}

TEST_CASE("--diff-base reports only findings on changed lines") {
  TempDir d;
  auto git = [&](const std::string& args) {
    std::string cmd = "cd " + quote(d.path.string()) + " && git -c user.name=t -c user.email=t@example.invalid " +
                      args + " >/dev/null 2>&1";
    return std::system(cmd.c_str());
  };
  REQUIRE(git("init -q") == 0);
  d.write("old.py", "import torch\nm = torch.nn.DataParallel(a)\n\n\n\nn = 1\n");
  REQUIRE(git("add old.py") == 0);
  REQUIRE(git("commit -qm base") == 0);
  d.write("old.py", "import torch\nm = torch.nn.DataParallel(a)\n\n\n\nn = torch.nn.DataParallel(b)\n");
  d.write("new.py", "import torch\nk = torch.nn.DataParallel(c)\n");
  auto r = run("check . --diff-base HEAD --output-format concise", d.path);
  CHECK(r.exit == 1);
  CHECK(r.out.find("old.py:2:") == std::string::npos);  // unchanged line
  CHECK(r.out.find("old.py:6:5: TL401") != std::string::npos);
  CHECK(r.out.find("new.py:2:5: TL401") != std::string::npos);  // untracked: all new
  CHECK(run("check . --diff-base no-such-rev", d.path).exit == 2);

  // From a subdirectory (git names paths from the top level): the same findings, not none.
  d.write("proj/src/train.py", "import torch\nm = torch.nn.DataParallel(a)\n\n\n\nn = 1\n");
  REQUIRE(git("add proj") == 0);
  REQUIRE(git("commit -qm sub") == 0);
  d.write("proj/src/train.py", "import torch\nm = torch.nn.DataParallel(a)\n\n\n\nn = torch.nn.DataParallel(b)\n");
  d.write("proj/src/fresh.py", "import torch\nk = torch.nn.DataParallel(c)\n");
  auto sub = run("check . --diff-base HEAD --output-format concise", d.path / "proj" / "src");
  CHECK(sub.exit == 1);
  CHECK(sub.out.find("train.py:2:") == std::string::npos);
  CHECK(sub.out.find("train.py:6:5: TL401") != std::string::npos);
  CHECK(sub.out.find("fresh.py:2:5: TL401") != std::string::npos);
  // And a path that goes up and down again.
  auto up = run("check ../src/train.py --diff-base HEAD --output-format concise", d.path / "proj" / "src");
  CHECK(up.out.find("train.py:6:5: TL401") != std::string::npos);
}

TEST_CASE("result cache: a tree with no project marker is not written into") {
  TempDir d, cache_home;
  d.write("a.py", "import torch\nm = torch.nn.DataParallel(net)\n");
  ::setenv("XDG_CACHE_HOME", cache_home.path.c_str(), 1);
  auto r = run("check . --output-format concise", d.path);
  ::unsetenv("XDG_CACHE_HOME");
  CHECK(r.exit == 1);
  CHECK_FALSE(fs::exists(d.path / ".torchlint_cache"));
  size_t entries = 0;
  for (const auto& e : fs::recursive_directory_iterator(cache_home.path / "torchlint"))
    entries += e.path().extension() == ".tlc";
  CHECK(entries == 1);
}

TEST_CASE("result cache: reused when nothing changed, never trusted when corrupted") {
  TempDir d;
  d.write("pyproject.toml", "[project]\nname = \"p\"\n");
  d.write("a.py", "import torch\nm = torch.nn.DataParallel(net)\n");
  d.write("b.py", "import torch\nx = torch.load('w.pt')\n");
  auto cold = run("check . --output-format concise", d.path);
  CHECK(cold.exit == 1);
  REQUIRE(fs::is_directory(d.path / ".torchlint_cache"));
  CHECK(fs::exists(d.path / ".torchlint_cache" / ".gitignore"));
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(d.path / ".torchlint_cache")) entries += e.path().extension() == ".tlc";
  CHECK(entries >= 1);  // pack files, not one file per source file
  CHECK(entries <= 2);
  CHECK(run("check . --output-format concise", d.path).out == cold.out);

  // Corrupt every entry: results must be recomputed (and equal), entries rewritten.
  for (const auto& e : fs::directory_iterator(d.path / ".torchlint_cache")) {
    if (e.path().extension() != ".tlc") continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(30);
    f.write("garbage!", 8);
  }
  CHECK(run("check . --output-format concise", d.path).out == cold.out);
  for (const auto& e : fs::directory_iterator(d.path / ".torchlint_cache")) {
    if (e.path().extension() != ".tlc") continue;
    std::ofstream(e.path(), std::ios::trunc) << "not a cache file";
  }
  CHECK(run("check . --output-format concise", d.path).out == cold.out);

  // Content and configuration changes are seen.
  d.write("a.py", "import torch\nm = 1\n");
  auto edited = run("check . --output-format concise", d.path);
  CHECK(edited.out.find("a.py") == std::string::npos);
  CHECK(edited.out.find("b.py:2:5: TL304") != std::string::npos);
  CHECK(run("check . --output-format concise --target-torch 2.6", d.path).exit == 0);
  CHECK(run("check . --output-format concise --ignore TL304", d.path).exit == 0);
  CHECK(run("check . --output-format concise", d.path).exit == 1);

  // Many files still make a few pack files.
  for (int i = 0; i < 40; ++i) d.write("m" + std::to_string(i) + ".py", "import torch\nx = torch.load('w.pt')\n");
  CHECK(run("check . --output-format concise", d.path).exit == 1);
  entries = 0;
  for (const auto& e : fs::directory_iterator(d.path / ".torchlint_cache")) entries += e.path().extension() == ".tlc";
  CHECK(entries <= 8);
  CHECK(run("check . --output-format concise", d.path).out.find("m39.py:2:5: TL304") != std::string::npos);

  // --no-cache writes nothing; --cache-dir puts it elsewhere.
  TempDir e;
  e.write("a.py", "x = 1\n");
  run("check . --no-cache", e.path);
  CHECK_FALSE(fs::exists(e.path / ".torchlint_cache"));
  run("check . --cache-dir mycache", e.path);
  CHECK(fs::is_directory(e.path / "mycache"));
}

TEST_CASE("github, jsonl and gitlab formats") {
  TempDir d;
  d.write("a b.py", "import torch\nm = torch.nn.DataParallel(net)\nsd = torch.load('x.pt')\n");
  auto gh = run("check 'a b.py' --output-format github", d.path);
  CHECK(gh.exit == 1);
  CHECK(gh.out.find(
            "::warning title=torchlint (TL401 data-parallel),file=a b.py,line=2,col=5,endLine=2,endColumn=31::") !=
        std::string::npos);
  CHECK(gh.out.find("::error title=torchlint (TL304 unsafe-torch-load)") != std::string::npos);
  auto lines = run("check 'a b.py' --output-format jsonl", d.path);
  std::istringstream in(lines.out);
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    CHECK(j.contains("code"));
    ++n;
  }
  CHECK(n == 2);
  auto gl = nlohmann::json::parse(run("check 'a b.py' --output-format gitlab", d.path).out);
  REQUIRE(gl.size() == 2);
  CHECK(gl[0]["location"]["path"] == "a b.py");
  CHECK(gl[0]["location"]["lines"]["begin"] == 2);
  CHECK(gl[1]["severity"] == "critical");
  CHECK(gl[0]["fingerprint"] != gl[1]["fingerprint"]);
}

// The audit as a CI gate: info findings never fail an item unless asked, the exit code
// follows the score with --fail-under, --exit-zero reports only, errors still exit 2.
TEST_CASE("audit gate: --fail-on, --fail-under, --exit-zero, --select, --summary") {
  auto json_of = [](const std::string& args) {
    auto r = run("audit fixtures/sample_project --no-cache --output-format json " + args);
    return std::make_pair(r.exit, nlohmann::json::parse(r.out));
  };
  auto [exit_default, by_default] = json_of("");
  CHECK(exit_default == 1);
  CHECK(by_default["project"] == "sample_project");  // the directory's name, not the path given
  auto [exit_info, with_info] = json_of("--fail-on info");
  CHECK(exit_info == 1);
  // The sample's info findings (TL602) fail their items only with --fail-on info.
  CHECK(with_info["summary"]["failed"].get<int>() > by_default["summary"]["failed"].get<int>());
  size_t advisory = 0;
  for (const auto& item : by_default["items"]) {
    for (const auto& f : item["advisory"]) {
      CHECK(f["severity"] == "info");
      ++advisory;
    }
    if (!item["advisory"].empty() && item["evidence"].empty()) CHECK(item["status"] != "failed");
  }
  CHECK(advisory > 0);
  int score = by_default["summary"]["score"].get<int>();
  CHECK(json_of("--fail-under " + std::to_string(score)).first == 0);
  auto below =
      run("audit fixtures/sample_project --no-cache --output-format json --fail-under " + std::to_string(score + 1));
  CHECK(below.exit == 1);
  CHECK(below.err.find("below --fail-under") != std::string::npos);
  CHECK(json_of("--exit-zero").first == 0);
  CHECK(run("audit fixtures/sample_project --no-cache --fail-under 101").exit == 2);
  CHECK(run("audit fixtures/sample_project --no-cache --config no-such.toml --exit-zero").exit == 2);
  CHECK(run("audit no-such-dir --exit-zero").exit == 2);
  auto [exit_selected, selected] = json_of("--select TL101");
  for (const auto& item : selected["items"]) {
    for (const auto& f : item["evidence"]) CHECK(f["code"] == "TL101");
  }
  CHECK(selected["summary"]["findings"] == 1);
  // The same vocabulary as `check`: --output-format and -o/--output-file.
  TempDir d;
  CHECK(run("audit " + std::string(TORCHLINT_SOURCE_DIR) +
                "/fixtures/sample_project --no-cache --exit-zero --output-file a.md",
            d.path)
            .exit == 0);
  CHECK(fs::exists(d.path / "a.md"));
  auto summary = run("audit fixtures/sample_project --no-cache --summary --report-url https://ci.example/audit.html");
  CHECK(summary.exit == 1);
  CHECK(summary.out.size() < 60000);
  CHECK(summary.out.find("Full report: https://ci.example/audit.html") != std::string::npos);
  CHECK(summary.out.find("## What to do next") != std::string::npos);
  CHECK(summary.out.find("## Checklist") == std::string::npos);  // the full report's part
  CHECK(run("audit fixtures/sample_project --no-cache --summary --output-format html").exit == 2);
  // A repository with a thousand findings: both Markdown reports still fit a PR comment.
  TempDir big;
  big.write("pyproject.toml", "");
  for (int i = 0; i < 250; ++i) {
    big.write("train_" + std::to_string(i) + ".py",
              "import torch\nm = torch.nn.DataParallel(net)\nstate = torch.load('w.pt')\n"
              "loader = torch.utils.data.DataLoader(ds, shuffle=True)\nfor x, y in loader:\n"
              "    loss = m(x.cuda()).sum()\n    loss.backward()\n    opt.step()\n    opt.zero_grad()\n");
  }
  auto full = run("audit . --no-cache", big.path);
  CHECK(full.exit == 1);
  CHECK(full.out.size() < 60000);
  auto brief = run("audit . --no-cache --summary", big.path);
  CHECK(brief.out.size() < 20000);
}

// Every item of the checklist, Parts A-F, has a row and a status; Part F's items pass when
// the code shows the practice and are left to a person otherwise.
TEST_CASE("audit: the whole checklist, Part F shown by the code") {
  TempDir d;
  d.write("pyproject.toml", "");
  d.write("train.py",
          "import torch\nfrom torch.utils.data import DataLoader, random_split\n"
          "def main(ds, model):\n    torch.manual_seed(0)\n    train, val = random_split(ds, [0.9, 0.1])\n"
          "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
          "    for x, y in DataLoader(train, num_workers=4):\n        opt.zero_grad()\n"
          "        torch.nn.functional.cross_entropy(model(x), y).backward()\n        opt.step()\n"
          "if __name__ == '__main__':\n    main(None, None)\n");
  auto without_ci = nlohmann::json::parse(run("audit . --no-cache --output-format json --exit-zero", d.path).out);
  d.write(".github/workflows/ci.yml", "on: push\n");
  auto with_ci = nlohmann::json::parse(run("audit . --no-cache --output-format json --exit-zero", d.path).out);
  std::map<std::string, std::string> status, status_ci;
  for (const auto& item : without_ci["items"]) status[item["id"]] = item["status"];
  for (const auto& item : with_ci["items"]) status_ci[item["id"]] = item["status"];
  for (const char* part : {"A", "B", "C", "D", "E", "F"}) {
    CHECK(std::any_of(status.begin(), status.end(), [&](const auto& s) { return s.first.starts_with(part); }));
  }
  for (int i = 1; i <= 14; ++i) CHECK(status.contains("F" + std::to_string(i)));
  CHECK(status["F1"] == "passed");  // random_split
  CHECK(status["F3"] == "manual");  // no scheduler: a person looks
  CHECK(status["F8"] == "manual");  // a baseline is never in the code
  CHECK(status["F14"] == "manual");
  CHECK(status_ci["F14"] == "passed");  // a CI workflow file
}

TEST_CASE("notebooks: code cells linted, magics skipped, cell locations shown") {
  TempDir d;
  d.write("nb.ipynb", R"nb({
 "cells": [
  {"cell_type": "markdown", "metadata": {}, "source": ["# Notes\n", "torch.load('x')\n"]},
  {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
   "source": [
    "!pip install torch\n",
    "%matplotlib inline\n",
    "old_path = %env PATH\n",
    "files, more = !ls\n",
    "import torch\n",
    "model = torch.nn.DataParallel(net)\n",
    "ok = torch.nn.DataParallel(net)  # noqa: TL401\n"
   ]},
  {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [],
   "source": ["%%bash\n", "echo this is not python (\n"]},
  {"cell_type": "code", "execution_count": 3, "metadata": {}, "outputs": [],
   "source": "state = torch.load('w.pt')"}
 ],
 "metadata": {}, "nbformat": 4, "nbformat_minor": 5
})nb");
  auto r = run("check nb.ipynb --output-format concise", d.path);
  CHECK(r.exit == 1);
  CHECK(r.out.find("nb.ipynb:cell 2:6:9: TL401") != std::string::npos);
  CHECK(r.out.find("nb.ipynb:cell 4:1:9: TL304") != std::string::npos);
  CHECK(r.out.find("TL000") == std::string::npos);     // magics (assigned too) and %%bash are not Python errors
  CHECK(r.out.find("cell 1") == std::string::npos);    // markdown is not code
  CHECK(r.out.find("cell 2:7") == std::string::npos);  // noqa works in cells
  auto sarif = nlohmann::json::parse(run("check nb.ipynb --output-format sarif", d.path).out);
  auto region = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"];
  CHECK(region["startLine"] == 11);  // the JSON line holding the cell's source line
  // A notebook of another kernel holds no Python: skipped, not a syntax error.
  d.write("cling.ipynb", R"nb({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
   "source": ["#include <torch/torch.h>\n", "auto x = torch::load(\"w.pt\");\n"]}],
   "metadata": {"kernelspec": {"display_name": "C++14", "language": "C++14", "name": "xcpp14"}},
   "nbformat": 4, "nbformat_minor": 5})nb");
  auto cling = run("check cling.ipynb --output-format concise", d.path);
  CHECK(cling.exit == 0);
  CHECK(cling.out.find("TL000") == std::string::npos);
  d.write("broken.ipynb", "{not json");
  auto b = run("check broken.ipynb --output-format concise", d.path);
  CHECK(b.out.find("TL000 not a Jupyter notebook") != std::string::npos);
}

// The same file gets the same findings however it is linted: as part of its whole
// project, alone (pre-commit passes only the staged files), and from another working
// directory. The project root comes from the files, and the rest of the project gives a
// lone file its facts (a seeding helper, a caller under no_grad).
TEST_CASE("fixture projects: identical findings whole, one file at a time, and from another directory") {
  using Findings = std::map<std::string, std::set<std::string>>;  // file (project-relative) -> "line:col code"
  const fs::path source(TORCHLINT_SOURCE_DIR);
  auto collect = [&](const Result& r, const fs::path& cwd, const fs::path& project, Findings& out) {
    REQUIRE_MESSAGE(r.exit != 2, r.err);
    for (const auto& d : nlohmann::json::parse(r.out)) {
      fs::path file = fs::path(d["filename"].get<std::string>());
      if (file.is_relative()) file = cwd / file;
      std::string rel = file.lexically_normal().lexically_relative(project).generic_string();
      out[rel].insert(std::to_string(d["location"]["row"].get<int>()) + ":" +
                      std::to_string(d["location"]["column"].get<int>()) + " " + d["code"].get<std::string>());
    }
  };
  std::vector<fs::path> projects;
  for (const auto& e : fs::directory_iterator(source / "fixtures" / "projects")) {
    if (e.is_directory()) projects.push_back(e.path());
  }
  projects.push_back(source / "fixtures" / "sample_project");
  std::sort(projects.begin(), projects.end());
  REQUIRE(projects.size() >= 10);
  TempDir elsewhere;
  const std::string flags = " --output-format json --no-cache --exit-zero --select ALL";
  size_t files = 0, findings = 0;
  for (const auto& project : projects) {
    CAPTURE(project.filename().string());
    Findings whole, alone, away;
    collect(run("check " + quote(project.lexically_relative(source).string()) + flags), source, project, whole);
    for (const auto& e : fs::recursive_directory_iterator(project)) {
      if (e.path().extension() != ".py") continue;
      ++files;
      std::string rel = e.path().lexically_relative(source).string();
      collect(run("check " + quote(rel) + flags), source, project, alone);
      collect(run("check " + quote(e.path().string()) + flags, elsewhere.path), elsewhere.path, project, away);
    }
    for (const auto& [file, set] : whole) findings += set.size();
    CHECK(alone == whole);
    CHECK(away == whole);
  }
  MESSAGE(files << " files in " << projects.size() << " projects, " << findings << " findings");
  CHECK(findings > 0);
}

TEST_CASE("TL210 follows the target releases: removed is an error, deprecated a warning, newer silent") {
  TempDir d;
  d.write("old.py",
          "import torch\nfrom torchvision.transforms import v2\n"
          "x = torch.solve(b, A)\nq = torch.qr(A)\nlayer = torch.nn.utils.weight_norm(m)\nt = v2.ToTensor()\n");
  auto findings = [&](const std::string& extra) {
    auto r = run("check old.py --select TL210 --output-format json " + extra, d.path);
    std::map<int, std::string> by_line;  // line -> severity
    for (const auto& f : nlohmann::json::parse(r.out)) by_line[f["location"]["row"].get<int>()] = f["severity"];
    return by_line;
  };
  auto now = findings("");  // torch 2.4, torchvision 0.19
  CHECK(now == std::map<int, std::string>{{3, "error"}, {4, "warning"}, {5, "warning"}, {6, "warning"}});
  // torch 1.12 still has torch.solve (deprecated); weight_norm's deprecation (2.1) and the
  // paired torchvision 0.13's missing ToTensor deprecation (0.16) are not reported.
  auto old = findings("--target-torch 1.12");
  CHECK(old == std::map<int, std::string>{{3, "warning"}, {4, "warning"}});
  auto vision = findings("--target-torchvision 0.15");
  CHECK(vision == std::map<int, std::string>{{3, "error"}, {4, "warning"}, {5, "warning"}});
  CHECK(run("check old.py --target-torchvision next", d.path).exit == 2);
}

TEST_CASE("unsafe fixes: shown and applied only with --unsafe-fixes, never marked [*]") {
  TempDir d;
  d.write("a.py", "import torch\nfor p in m.parameters():\n    p.require_grad = False\nx = torch.ger(a, b)\n");
  auto safe = run("check a.py --diff --no-cache", d.path);
  CHECK(safe.out.find("+x = torch.outer(a, b)") != std::string::npos);
  CHECK(safe.out.find("requires_grad") == std::string::npos);
  auto unsafe = run("check a.py --diff --unsafe-fixes --no-cache", d.path);
  CHECK(unsafe.out.find("+    p.requires_grad = False") != std::string::npos);
  auto concise = run("check a.py --output-format concise --no-cache", d.path);
  CHECK(concise.out.find("TL603 [*]") == std::string::npos);
  CHECK(concise.out.find("TL603 ") != std::string::npos);
  CHECK(concise.out.find("TL210 [*]") != std::string::npos);
}

namespace {

std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

}  // namespace

// Work units for a batch engine: one torchlint-unit/1 line per repository, the same
// score as a plain audit, a repository that cannot be audited as an error record.
TEST_CASE("audit --repos-from: one JSON line per repository, errors as records") {
  TempDir d;
  d.write("clean/train.py", "import torch\nx = torch.zeros(3)\n");
  d.write("bad/train.py", kViolation);
  d.write("repos.txt", std::string(TORCHLINT_SOURCE_DIR) + "/fixtures/sample_project\nbad\nno-such-repo\nclean\n");
  auto r = run("audit --repos-from repos.txt", d.path);
  CHECK(r.exit == 2);
  auto records = json_lines(r.out);
  REQUIRE(records.size() == 4);
  for (const auto& rec : records) {
    CHECK(rec["schema"] == "torchlint-unit/1");
    CHECK(rec["kind"] == "repository");
  }
  auto plain = nlohmann::json::parse(run("audit fixtures/sample_project --no-cache --output-format json").out);
  CHECK(records[0]["status"] == "ok");
  CHECK(records[0]["score"] == plain["summary"]["score"]);
  CHECK(records[0]["failed"] == plain["summary"]["failed"]);
  CHECK(records[0]["failed_items"].size() == plain["summary"]["failed"].get<size_t>());
  CHECK(records[0]["findings"].contains("TL401"));
  CHECK(records[1]["path"] == "bad");
  CHECK(records[1]["findings"].contains("TL401"));
  CHECK(records[2]["status"] == "error");
  CHECK(records[2]["error"].get<std::string>().find("not a directory") != std::string::npos);
  CHECK(records[3]["status"] == "ok");
  // Stateless: no cache left behind unless asked.
  CHECK(!fs::exists(d.path / "bad" / ".torchlint_cache"));
  d.write("ok.txt", "clean\nbad\n");
  CHECK(run("audit --repos-from ok.txt", d.path).exit == 1);
  CHECK(run("audit --repos-from ok.txt --exit-zero", d.path).exit == 0);
  // Asked for, the cache is one folder per repository under --cache-dir, and changes nothing.
  auto uncached = json_lines(run("audit --repos-from ok.txt", d.path).out);
  for (int pass = 0; pass < 2; ++pass) {
    auto cached = json_lines(run("audit --repos-from ok.txt --cache-dir cache", d.path).out);
    REQUIRE(cached.size() == 2);
    for (size_t i = 0; i < 2; ++i) CHECK(cached[i]["findings"] == uncached[i]["findings"]);
  }
  size_t folders = 0;
  for (const auto& entry : fs::directory_iterator(d.path / "cache")) folders += entry.is_directory();
  CHECK(folders == 2);
  CHECK(run("audit --repos-from ok.txt --output-format html", d.path).exit == 2);
  CHECK(run("audit bad --repos-from ok.txt", d.path).exit == 2);
  auto missing = run("audit --repos-from none.txt", d.path);
  CHECK(missing.exit == 2);
  CHECK(missing.err.find("torchlint: error: --repos-from: cannot read the list none.txt") != std::string::npos);
}

TEST_CASE("report merge: scores, worst items, verdicts, duplicates, errors, trends") {
  TempDir d;
  d.write("a/train.py", kViolation);
  d.write("b/train.py", "import torch\nx = torch.zeros(3)\n");
  d.write("list1.txt", "a\nno-such-repo\n");
  d.write("list2.txt", "b\na\n");  // `a` again: a duplicate unit across shards
  REQUIRE(run("audit --repos-from list1.txt -o s1.jsonl", d.path).exit == 2);
  REQUIRE(run("audit --repos-from list2.txt -o s2.jsonl", d.path).exit == 1);
  // A checkpoint shard, hand-written as another machine would have sent it.
  d.write("s3.jsonl",
          "{\"schema\":\"torchlint-unit/1\",\"kind\":\"checkpoint\",\"path\":\"hub/u1/"
          "evil.pt\",\"status\":\"ok\",\"error\":null,"
          "\"safety\":\"dangerous\",\"safety_detail\":\"calls os.system\",\"format\":\"plain "
          "pickle\",\"findings\":{\"TL810\":1}}\n"
          "{\"schema\":\"torchlint-unit/1\",\"kind\":\"checkpoint\",\"path\":\"hub/u1/"
          "good.pt\",\"status\":\"ok\",\"error\":null,"
          "\"safety\":\"safe\",\"findings\":{}}\n");
  auto merged = run("report merge s1.jsonl s2.jsonl s3.jsonl --output-format json", d.path);
  CHECK(merged.exit == 0);
  auto j = nlohmann::json::parse(merged.out);
  CHECK(j["schema"] == "torchlint-fleet/1");
  CHECK(j["summary"]["records"] == 6);
  CHECK(j["summary"]["duplicates"] == 1);
  CHECK(j["summary"]["repositories"] == 3);
  CHECK(j["summary"]["checkpoints"] == 2);
  CHECK(j["summary"]["errors"] == 1);
  CHECK(j["errors"][0]["path"] == "no-such-repo");
  CHECK(j["repositories"][0]["path"] == "no-such-repo");  // unscored first, then worst score
  CHECK(j["repositories"][0]["score"].is_null());
  CHECK(j["repositories"][1]["path"] == "a");
  CHECK(!j["worst_items"].empty());
  CHECK(j["worst_items"][0]["repositories"][0] == "a");
  CHECK(j["checkpoints"]["verdicts"]["dangerous"] == 1);
  CHECK(j["checkpoints"]["verdicts"]["safe"] == 1);
  CHECK(j["checkpoints"]["flagged"].size() == 1);
  CHECK(j["checkpoints"]["flagged"][0]["path"] == "hub/u1/evil.pt");
  CHECK(j["checkpoints"]["by_directory"][0]["path"] == "hub/u1");
  CHECK(j["trends"].is_null());
  // Trends: `b` fixed nothing, `a` is now clean: its score goes up.
  d.write("a/train.py", "import torch\nx = torch.zeros(3)\n");
  d.write("list3.txt", "a\nb\n");
  REQUIRE(run("audit --repos-from list3.txt -o now.jsonl", d.path).exit == 0);
  auto trend = nlohmann::json::parse(
      run("report merge now.jsonl --baseline s1.jsonl s2.jsonl --output-format json", d.path).out);
  CHECK(trend["trends"]["repositories_removed"] == nlohmann::json::array({"no-such-repo"}));
  CHECK(trend["repositories"][0]["path"] == "a");
  CHECK(trend["repositories"][0]["score"].get<int>() > trend["repositories"][0]["baseline_score"].get<int>());
  // Markdown and HTML name the same units; HTML has no external asset.
  auto md = run("report merge s1.jsonl s2.jsonl s3.jsonl", d.path);
  CHECK(md.exit == 0);
  CHECK(md.out.find("hub/u1/evil.pt") != std::string::npos);
  CHECK(md.out.find("| a | ") != std::string::npos);
  auto html = run("report merge s1.jsonl s2.jsonl s3.jsonl --output-format html -o fleet.html", d.path);
  CHECK(html.exit == 0);
  std::ifstream in(d.path / "fleet.html");
  std::stringstream page;
  page << in.rdbuf();
  CHECK(page.str().find("hub/u1/evil.pt") != std::string::npos);
  CHECK(page.str().find("src=") == std::string::npos);
  CHECK(page.str().find("<link") == std::string::npos);
  // A line that is no record is listed and makes the merge exit 2; a missing shard is an error.
  d.write("bad.jsonl", "not json\n{\"schema\":\"torchlint-unit/9\"}\n");
  auto bad = run("report merge s3.jsonl bad.jsonl --output-format json", d.path);
  CHECK(bad.exit == 2);
  CHECK(nlohmann::json::parse(bad.out)["malformed"].size() == 2);
  CHECK(bad.err.find("torchlint: error: bad.jsonl:1: not JSON") != std::string::npos);
  CHECK(run("report merge missing.jsonl", d.path).exit == 2);
  CHECK(run("report merge", d.path).exit == 2);
}
