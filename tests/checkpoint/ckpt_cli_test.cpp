// `torchlint ckpt` end to end: exit codes, formats, selection, directories, diff, and
// `torchlint check --include-checkpoints`. Hostile files are written by the test.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "builders.h"
#include "support/run_torchlint.h"

namespace fs = std::filesystem;
using namespace torchlint::ckpt::testing;

namespace {

using torchlint::testing::Result;
using Dir = torchlint::testing::TempDir;

Result run(const std::string& args, const fs::path& cwd) { return torchlint::testing::run_torchlint(args, cwd); }

}  // namespace

TEST_CASE("clean, findings, and unreadable files: exit 0, 1, 2; other files still reported") {
  Dir d;
  d.write("good.pt", benign_zip());
  d.write("evil.pkl", os_system_pickle(2));
  d.write("broken.pt", benign_zip().substr(0, 100));
  Result clean = run("ckpt good.pt", d.path);
  CHECK(clean.exit == 0);
  CHECK(clean.out.find("safe: torch.load(weights_only=True) loads it") != std::string::npos);
  CHECK(clean.out.find("fc.weight") != std::string::npos);
  Result bad = run("ckpt good.pt evil.pkl", d.path);
  CHECK(bad.exit == 1);
  CHECK(bad.out.find("evil.pkl:1:1: TL810") != std::string::npos);
  CHECK(bad.out.find("DANGEROUS") != std::string::npos);
  Result broken = run("ckpt broken.pt evil.pkl good.pt --output-format concise", d.path);
  CHECK(broken.exit == 2);
  CHECK(broken.out.find("broken.pt:1:1: TL813") != std::string::npos);
  CHECK(broken.out.find("evil.pkl:1:1: TL810") != std::string::npos);
  CHECK(broken.err.find("broken.pt") != std::string::npos);
  CHECK(run("ckpt evil.pkl --exit-zero", d.path).exit == 0);
  CHECK(run("ckpt missing.pt", d.path).exit == 2);
}

TEST_CASE("--allow-global: one name per occurrence, code-running names refused") {
  Dir d;
  d.write("ns.pt", build_zip(torch_members(
                       Pickle().proto(2).global("argparse", "Namespace").empty_tuple().reduce().stop(), {})));
  d.write("other/evil.pkl", os_system_pickle(2));
  // The path after the option stays a path (the current directory is not scanned instead).
  Result trusted = run("ckpt --allow-global argparse.Namespace ns.pt", d.path);
  CHECK(trusted.exit == 0);
  CHECK(trusted.out.find("evil.pkl") == std::string::npos);
  Result repeated = run("ckpt --allow-global argparse.Namespace --allow-global mylib.Config ns.pt", d.path);
  CHECK(repeated.exit == 0);
  for (const char* name :
       {"builtins.eval", "builtins.exec", "os.system", "subprocess.Popen", "posix.system", "sys.modules"}) {
    CAPTURE(name);
    Result refused = run(std::string("ckpt --allow-global ") + name + " ns.pt", d.path);
    CHECK(refused.exit == 2);
    CHECK(refused.err.find("refused") != std::string::npos);
  }
}

TEST_CASE("--max-inflate: a compressed member past the limit is TL813, the others are still read") {
  Dir d;
  std::vector<ZipMember> members = torch_members(benign_pickle(), benign_storages());
  members[0].method = 8;  // data.pkl deflated
  d.write("deflated.pt", build_zip(members));
  d.write("good.pt", benign_zip());
  CHECK(run("ckpt deflated.pt", d.path).exit == 0);
  Result small = run("ckpt deflated.pt good.pt --max-inflate 100B --output-format concise", d.path);
  CHECK(small.exit == 2);
  CHECK(small.out.find("deflated.pt:1:1: TL813") != std::string::npos);
  CHECK(small.out.find("--max-inflate") != std::string::npos);
  CHECK(run("ckpt deflated.pt --max-inflate lots", d.path).exit == 2);
}

TEST_CASE("machine formats carry the findings only; selection works") {
  Dir d;
  d.write("evil.pkl", os_system_pickle(4));
  Result json = run("ckpt evil.pkl --output-format json", d.path);
  CHECK(json.exit == 1);
  auto parsed = nlohmann::json::parse(json.out);
  REQUIRE(parsed.is_array());
  REQUIRE(parsed.size() == 2);
  CHECK(parsed[0]["code"] == "TL810");
  CHECK(parsed[0]["filename"] == "evil.pkl");
  CHECK(parsed[1]["code"] == "TL811");
  Result selected = run("ckpt evil.pkl --select TL810 --output-format json", d.path);
  CHECK(nlohmann::json::parse(selected.out).size() == 1);
  Result sarif = run("ckpt evil.pkl --output-format sarif", d.path);
  if (sarif.exit != 2) {  // SARIF output present in this build
    auto s = nlohmann::json::parse(sarif.out);
    CHECK(s["runs"][0]["results"].size() == 2);
  }
  CHECK(run("ckpt evil.pkl --select TL999", d.path).exit == 2);
}

TEST_CASE("directories: walked, Trainer checkpoint directories grouped") {
  Dir d;
  d.write("runs/a.pt", benign_zip());
  d.write("runs/notes.txt", "hello");
  d.write("runs/data.bin", "\x89PNG\r\n\x1a\nnot a checkpoint");
  d.write("ckpt/checkpoint-10/model.safetensors",
          safetensors_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", std::string(4, '\0')));
  d.write("ckpt/checkpoint-10/trainer_state.json", R"({"global_step": 10, "epoch": 1.0})");
  Result r = run("ckpt runs ckpt --output-format concise", d.path);
  CHECK(r.exit == 1);
  CHECK(r.out.find("ckpt/checkpoint-10:1:1: TL801") != std::string::npos);
  CHECK(r.out.find("1 file skipped") != std::string::npos);
}

// One discovery for every command: files are checkpoints by their bytes, not their names.
TEST_CASE(
    "checkpoints found by their bytes in ckpt, check --include-checkpoints and audit; the hook skips non-checkpoints") {
  Dir d;
  d.write("proj/train.py", "print('hi')\n");
  d.write("proj/runs/model.ts", build_zip(torch_members(os_system_pickle(2), {})));  // an unusual name
  d.write("proj/runs/weights.pt.epoch4", benign_zip());                              // a numbered backup
  d.write("proj/runs/evil.data", os_system_pickle(2));                               // no known extension
  d.write("proj/runs/vocab.bin", std::string("\x00\x01vocabulary\x00", 14));         // named like one, is not
  for (const char* command : {"ckpt proj", "check proj --include-checkpoints", "audit proj --output-format sarif"}) {
    CAPTURE(command);
    Result r = run(std::string(command) + (std::string(command).starts_with("audit") ? "" : " --output-format concise"),
                   d.path);
    CHECK(r.exit == 1);
    CHECK(r.out.find("model.ts") != std::string::npos);
    CHECK(r.out.find("evil.data") != std::string::npos);
    CHECK(r.out.find("vocab.bin") == std::string::npos);
    CHECK(r.err.find("vocab.bin") == std::string::npos);
  }
  CHECK(run("ckpt proj/runs/weights.pt.epoch4", d.path).exit == 0);
  // Named on the command line: an error, unless the hook's --skip-non-checkpoints.
  CHECK(run("ckpt proj/runs/vocab.bin", d.path).exit == 2);
  Result hook = run("ckpt --skip-non-checkpoints proj/runs/vocab.bin proj/runs/weights.pt.epoch4", d.path);
  CHECK(hook.exit == 0);
  CHECK(hook.out.find("1 file skipped: not a checkpoint") != std::string::npos);
  CHECK(run("check --include-checkpoints proj/train.py proj/runs/vocab.bin proj/runs/evil.data --output-format concise",
            d.path)
            .out.find("evil.data:1:1: TL810") != std::string::npos);
}

TEST_CASE("ckpt diff") {
  Dir d;
  d.write("a.pt", benign_zip());
  d.write("b.pt", benign_zip());
  auto s = benign_storages();
  s[0][0] ^= 1;
  d.write("c.pt", build_zip(torch_members(benign_pickle(), s)));
  d.write("e.pt", build_zip(torch_members(state_dict_pickle({{"fc.weight", {3, 2}, 6}, {"head.bias", {2}, 2}}),
                                          benign_storages())));
  CHECK(run("ckpt diff a.pt b.pt", d.path).exit == 0);
  Result same_shape = run("ckpt diff a.pt c.pt", d.path);
  CHECK(same_shape.exit == 0);  // shapes and dtypes equal: values are compared only on request
  Result values = run("ckpt diff a.pt c.pt --scan-values", d.path);
  CHECK(values.exit == 1);
  CHECK(values.out.find("max |a - b|") != std::string::npos);
  Result changed = run("ckpt diff a.pt e.pt", d.path);
  CHECK(changed.exit == 1);
  CHECK(changed.out.find("~ fc.weight  float32 [2, 3] -> float32 [3, 2]") != std::string::npos);
  CHECK(changed.out.find("- fc.bias") != std::string::npos);
  CHECK(changed.out.find("+ head.bias") != std::string::npos);
}

TEST_CASE("ckpt diff: safety first, integer tensors, NaN, Trainer directories") {
  Dir d;
  d.write("a.pt", benign_zip());
  d.write("evil.pkl", os_system_pickle(2));
  // Safety verdicts of both sides come first.
  Result safety = run("ckpt diff a.pt a.pt", d.path);
  CHECK(safety.out.rfind("safety of a.pt: safe", 0) == 0);
  // Integer tensors (int64 step counters, token ids) are compared too.
  std::string ints = state_dict_pickle({{"step", {2}, 2, "cpu", "LongStorage"}});
  d.write("i1.pt", build_zip(torch_members(ints, {std::string("\x01\0\0\0\0\0\0\0\x02\0\0\0\0\0\0\0", 16)})));
  d.write("i2.pt", build_zip(torch_members(ints, {std::string("\x01\0\0\0\0\0\0\0\x07\0\0\0\0\0\0\0", 16)})));
  Result ints_diff = run("ckpt diff i1.pt i2.pt --scan-values", d.path);
  CHECK(ints_diff.exit == 1);
  CHECK_MESSAGE(ints_diff.out.find("1 of 2 elements differ, max |a - b| = 5") != std::string::npos, ints_diff.out);
  // NaN on one side says NaN.
  auto nan = benign_storages();
  const float q = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(nan[0].data(), &q, 4);
  d.write("nan.pt", build_zip(torch_members(benign_pickle(), nan)));
  Result nan_diff = run("ckpt diff a.pt nan.pt --scan-values", d.path);
  CHECK_MESSAGE(nan_diff.out.find("1 NaN on one side only") != std::string::npos, nan_diff.out);
  // Trainer directories: file by file, and files only on one side.
  d.write("run1/checkpoint-10/model.pt", benign_zip());
  d.write("run1/checkpoint-10/optimizer.pt", benign_zip());
  d.write("run2/checkpoint-10/model.pt", build_zip(torch_members(benign_pickle(), nan)));
  Result dirs = run("ckpt diff run1/checkpoint-10 run2/checkpoint-10 --scan-values", d.path);
  CHECK(dirs.exit == 1);
  CHECK_MESSAGE(dirs.out.find("NaN on one side only") != std::string::npos, dirs.out);
  CHECK(dirs.out.find("- optimizer.pt  (only in run1/checkpoint-10)") != std::string::npos);
}

TEST_CASE("rules and docs are registered; check --include-checkpoints inspects checkpoints") {
  Dir d;
  Result rules = run("rules", d.path);
  for (const char* code : {"TL801", "TL810", "TL813", "TL823"}) CHECK(rules.out.find(code) != std::string::npos);
  Result doc = run("rule TL810", d.path);
  CHECK(doc.exit == 0);
  CHECK(doc.out.find("# TL810: unsafe-pickle-global") == 0);
  d.write("proj/train.py", "print('hi')\n");
  d.write("proj/weights/evil.pt", build_zip(torch_members(os_system_pickle(2), {})));
  Result without = run("check proj --output-format concise", d.path);
  CHECK(without.out.find("TL810") == std::string::npos);
  Result with = run("check proj --include-checkpoints --output-format concise", d.path);
  CHECK(with.exit == 1);
  CHECK(with.out.find("proj/weights/evil.pt:1:1: TL810") != std::string::npos);
}

// Work units for a batch engine: one torchlint-unit/1 line per listed path, in list
// order; a path that cannot be read is an error record and the others are still judged.
TEST_CASE("ckpt --files-from: one JSON line per path, errors as records, exit 2/1/0") {
  Dir d;
  d.write("good.pt", benign_zip());
  d.write("evil.pkl", os_system_pickle(2));
  d.write("broken.pt", benign_zip().substr(0, 100));
  d.write("dir with space/model.pt", benign_zip());
  d.write("all.txt", "good.pt\n\nevil.pkl\nmissing.pt\r\nbroken.pt\ndir with space/model.pt\n");
  d.write("clean.txt", "good.pt\n");
  d.write("dangerous.txt", "good.pt\nevil.pkl\n");
  Result r = run("ckpt --files-from all.txt", d.path);
  CHECK(r.exit == 2);
  std::vector<nlohmann::json> records;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) records.push_back(nlohmann::json::parse(line));
  REQUIRE(records.size() == 5);
  const char* paths[] = {"good.pt", "evil.pkl", "missing.pt", "broken.pt", "dir with space/model.pt"};
  for (size_t i = 0; i < records.size(); ++i) {
    CHECK(records[i]["schema"] == "torchlint-unit/1");
    CHECK(records[i]["kind"] == "checkpoint");
    CHECK(records[i]["path"] == paths[i]);
  }
  CHECK(records[0]["status"] == "ok");
  CHECK(records[0]["safety"] == "safe");
  CHECK(records[0]["error"].is_null());
  CHECK(records[0]["findings"].empty());
  CHECK(records[1]["status"] == "ok");
  CHECK(records[1]["safety"] == "dangerous");
  CHECK(records[1]["findings"].contains("TL810"));
  CHECK(records[2]["status"] == "error");
  CHECK(records[2]["error"].get<std::string>().find("missing.pt") == std::string::npos);  // the path is its own field
  CHECK(!records[2]["error"].get<std::string>().empty());
  CHECK(records[3]["status"] == "error");
  CHECK(records[3]["findings"].contains("TL813"));
  CHECK(records[4]["status"] == "ok");
  // A listed directory is one unit: the worst verdict of the checkpoints it holds.
  d.write("run/a.pt", benign_zip());
  d.write("run/b.pkl", os_system_pickle(2));
  d.write("dir.txt", "run\n");
  auto dir = nlohmann::json::parse(run("ckpt --files-from dir.txt", d.path).out);
  CHECK(dir["checkpoints"] == 2);
  CHECK(dir["safety"] == "dangerous");
  CHECK(dir["status"] == "ok");
  CHECK(run("ckpt --files-from clean.txt", d.path).exit == 0);
  CHECK(run("ckpt --files-from dangerous.txt", d.path).exit == 1);
  CHECK(run("ckpt --files-from dangerous.txt --exit-zero", d.path).exit == 0);
  // -o writes the same lines to a file.
  CHECK(run("ckpt --files-from dangerous.txt -o out.jsonl", d.path).exit == 1);
  std::ifstream written(d.path / "out.jsonl");
  std::stringstream text;
  text << written.rdbuf();
  const std::string jsonl = text.str();
  CHECK(std::count(jsonl.begin(), jsonl.end(), '\n') == 2);
  // The list itself missing, or mixed with paths or another format: one error line, exit 2.
  Result no_list = run("ckpt --files-from nope.txt", d.path);
  CHECK(no_list.exit == 2);
  CHECK(no_list.err.find("torchlint: error: --files-from: cannot read the list nope.txt") != std::string::npos);
  CHECK(no_list.out.empty());
  CHECK(run("ckpt good.pt --files-from clean.txt", d.path).exit == 2);
  CHECK(run("ckpt --files-from clean.txt --output-format json", d.path).exit == 2);
}
