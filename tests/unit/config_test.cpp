#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "core/config.h"

using namespace torchlint;
namespace fs = std::filesystem;

namespace {
fs::path temp_dir(const char* name) {
  fs::path dir =
      fs::temp_directory_path() / ("torchlint-config-" + std::string(name) + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}
void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
}  // namespace

TEST_CASE("versions") {
  CHECK(TorchVersion::parse("2.4") == TorchVersion{2, 4});
  CHECK(TorchVersion::parse("2.4.1+cu121") == TorchVersion{2, 4});
  CHECK(TorchVersion::parse("2") == TorchVersion{2, 0});
  CHECK_FALSE(TorchVersion::parse("two"));
  CHECK_FALSE(TorchVersion::parse("2.x"));
  CHECK(TorchVersion{2, 6} > TorchVersion{2, 4});
}

TEST_CASE("pyproject [tool.torchlint] is found from a nested path and parsed") {
  fs::path dir = temp_dir("pyproject");
  write(dir / "pyproject.toml", R"([project]
name = "x"
[tool.torchlint]
select = ["TL1", "TL304"]
extend-select = ["TL001"]
ignore = ["TL101"]
exclude = ["legacy"]
target-torch = "2.6"
[tool.torchlint.per-file-ignores]
"tests/*" = ["TL102"]
)");
  fs::create_directories(dir / "src" / "pkg");
  auto found = find_config_file(dir / "src" / "pkg");
  REQUIRE(found);
  CHECK(fs::equivalent(*found, dir / "pyproject.toml"));
  std::string error;
  auto config = load_config(*found, error);
  REQUIRE_MESSAGE(config, error);
  CHECK(config->selection.select == std::vector<std::string>{"TL1", "TL304"});
  CHECK(config->selection.extend_select == std::vector<std::string>{"TL001"});
  CHECK(config->selection.ignore == std::vector<std::string>{"TL101"});
  CHECK(config->exclude == std::vector<std::string>{"legacy"});
  CHECK(config->target_torch == TorchVersion{2, 6});
  REQUIRE(config->per_file_ignores.size() == 1);
  CHECK(config->per_file_ignores[0].first == "tests/*");
  fs::remove_all(dir);
}

TEST_CASE("torchlint.toml wins; pyproject without the table is skipped") {
  fs::path dir = temp_dir("own");
  write(dir / "pyproject.toml", "[project]\nname = \"x\"\n");
  CHECK_FALSE(find_config_file(dir));
  write(dir / "torchlint.toml", "ignore = [\"TL201\"]\n");
  auto found = find_config_file(dir);
  REQUIRE(found);
  CHECK(found->filename() == "torchlint.toml");
  fs::remove_all(dir);
}

TEST_CASE("configuration errors name the file and the key") {
  fs::path dir = temp_dir("errors");
  std::string error;
  write(dir / "torchlint.toml", "selct = [\"TL1\"]\n");
  CHECK_FALSE(load_config(dir / "torchlint.toml", error));
  CHECK(error.find("selct") != std::string::npos);
  write(dir / "torchlint.toml", "select = \"TL1\"\n");
  CHECK_FALSE(load_config(dir / "torchlint.toml", error));
  CHECK(error.find("array of strings") != std::string::npos);
  write(dir / "torchlint.toml", "target-torch = \"latest\"\n");
  CHECK_FALSE(load_config(dir / "torchlint.toml", error));
  write(dir / "torchlint.toml", "select = [\n");
  CHECK_FALSE(load_config(dir / "torchlint.toml", error));
  CHECK(error.find("invalid TOML") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("target torch inferred from declared dependencies") {
  fs::path dir = temp_dir("infer");
  std::string source;
  CHECK_FALSE(infer_target_torch(dir, source));
  write(dir / "requirements.txt", "numpy\ntorchvision>=0.19\ntorch>=2.1,<3\n");
  CHECK(infer_target_torch(dir, source) == TorchVersion{2, 1});
  CHECK(source == "requirements.txt");
  fs::remove(dir / "requirements.txt");
  write(dir / "pyproject.toml", "[project]\ndependencies = [\"torch==2.6.0\"]\n");
  CHECK(infer_target_torch(dir, source) == TorchVersion{2, 6});
  fs::remove_all(dir);
}

TEST_CASE("target torchvision: declared, inferred, or paired with the torch target") {
  fs::path dir = temp_dir("vision");
  std::string source;
  write(dir / "requirements.txt", "torch>=2.1\ntorchvision-extra>=9.9\ntorchvision >= 0.16.1\n");
  CHECK(infer_target_version(dir, "torchvision", source) == TorchVersion{0, 16});
  CHECK(source == "requirements.txt");
  CHECK(infer_target_torch(dir, source) == TorchVersion{2, 1});
  fs::remove(dir / "requirements.txt");
  CHECK_FALSE(infer_target_version(dir, "torchvision", source));
  write(dir / "torchlint.toml", "target-torch = \"2.2\"\ntarget-torchvision = \"0.15\"\n");
  std::string error;
  auto config = load_config(dir / "torchlint.toml", error);
  REQUIRE_MESSAGE(config, error);
  CHECK(config->target_torchvision == TorchVersion{0, 15});
  CHECK(config->target_torchvision_source == "torchlint.toml");
  write(dir / "torchlint.toml", "target-torchvision = \"new\"\n");
  CHECK_FALSE(load_config(dir / "torchlint.toml", error));
  CHECK(error.find("0.19") != std::string::npos);
  // The releases published together.
  CHECK(paired_torchvision({2, 4}) == TorchVersion{0, 19});
  CHECK(paired_torchvision({2, 0}) == TorchVersion{0, 15});
  CHECK(paired_torchvision({1, 13}) == TorchVersion{0, 14});
  CHECK(paired_torchvision({1, 12}) == TorchVersion{0, 13});
  fs::remove_all(dir);
}

TEST_CASE("[tool.torchlint.probe] for `torchlint audit --probe`") {
  fs::path dir = temp_dir("probe");
  write(dir / "pyproject.toml", R"([tool.torchlint]
[tool.torchlint.probe]
inputs = ["x:1x3x32x32:float32", "lengths:1:int64:1..33"]
batch-sizes = [1, 8]
models = ["exports/*.ts"]
checks = ["mode", "amp"]
device = "cpu"
memory-budget = "2GiB"
timeout = 120
)");
  std::string error;
  auto config = load_config(dir / "pyproject.toml", error);
  REQUIRE_MESSAGE(config, error);
  CHECK(config->probe.inputs == std::vector<std::string>{"x:1x3x32x32:float32", "lengths:1:int64:1..33"});
  CHECK(config->probe.batch_sizes == std::vector<int64_t>{1, 8});
  CHECK(config->probe.models == std::vector<std::string>{"exports/*.ts"});
  CHECK(config->probe.checks == std::vector<std::string>{"mode", "amp"});
  CHECK(config->probe.device == "cpu");
  CHECK(config->probe.memory_budget == "2GiB");
  CHECK(config->probe.timeout_seconds == 120);

  write(dir / "pyproject.toml", "[tool.torchlint.probe]\nbatch-sizes = [0]\n");
  CHECK_FALSE(load_config(dir / "pyproject.toml", error));
  CHECK(error.find("tool.torchlint.probe.batch-sizes") != std::string::npos);
  write(dir / "pyproject.toml", "[tool.torchlint.probe]\ninput = [\"x:1x4\"]\n");
  CHECK_FALSE(load_config(dir / "pyproject.toml", error));
  CHECK(error.find("unknown setting") != std::string::npos);
  write(dir / "torchlint.toml", "[probe]\ninputs = [\"x:1x4\"]\n");
  auto plain = load_config(dir / "torchlint.toml", error);
  REQUIRE_MESSAGE(plain, error);
  CHECK(plain->probe.inputs == std::vector<std::string>{"x:1x4"});
  fs::remove_all(dir);
}

TEST_CASE("[tool.torchlint.cpp] / [cpp] for the C++ front-end") {
  fs::path dir = temp_dir("cpp");
  write(dir / "pyproject.toml", R"([tool.torchlint.cpp]
build-path = "build/release"
extra-args = ["-Ithird_party/argparse", "-DNDEBUG"]
pch-dir = "../pch"
pch-max-size = "500M"
)");
  std::string error;
  auto config = load_config(dir / "pyproject.toml", error);
  REQUIRE_MESSAGE(config, error);
  // Paths are the file's, not the working directory's.
  CHECK(config->cpp.build_path == (fs::absolute(dir) / "build/release").lexically_normal().string());
  CHECK(config->cpp.pch_dir == (fs::absolute(dir) / "../pch").lexically_normal().string());
  CHECK(config->cpp.extra_args == std::vector<std::string>{"-Ithird_party/argparse", "-DNDEBUG"});
  CHECK(config->cpp.pch_max_size == 500ull << 20);

  write(dir / "pyproject.toml", "[tool.torchlint.cpp]\npch-max-size = 4096\n");
  config = load_config(dir / "pyproject.toml", error);
  REQUIRE_MESSAGE(config, error);
  CHECK(config->cpp.pch_max_size == 4096u);
  CHECK_FALSE(config->cpp.build_path);

  write(dir / "pyproject.toml", "[tool.torchlint.cpp]\npch-max-size = \"lots\"\n");
  CHECK_FALSE(load_config(dir / "pyproject.toml", error));
  CHECK(error.find("tool.torchlint.cpp.pch-max-size") != std::string::npos);
  write(dir / "pyproject.toml", "[tool.torchlint.cpp]\nextra_args = [\"-DX\"]\n");
  CHECK_FALSE(load_config(dir / "pyproject.toml", error));
  CHECK(error.find("tool.torchlint.cpp.extra_args") != std::string::npos);
  CHECK(error.find("unknown setting (known: build-path, extra-args, pch-dir, pch-max-size)") != std::string::npos);
  write(dir / "pyproject.toml", "[tool.torchlint.cpp]\nextra-args = \"-DX\"\n");
  CHECK_FALSE(load_config(dir / "pyproject.toml", error));
  CHECK(error.find("expected an array of strings") != std::string::npos);

  write(dir / "torchlint.toml", "[cpp]\nbuild-path = \"out\"\npch-max-size = \"2G\"\n");
  auto plain = load_config(dir / "torchlint.toml", error);
  REQUIRE_MESSAGE(plain, error);
  CHECK(plain->cpp.build_path == (fs::absolute(dir) / "out").string());
  CHECK(plain->cpp.pch_max_size == 2ull << 30);
  write(dir / "torchlint.toml", "[cpp]\nbogus = 1\n");
  CHECK_FALSE(load_config(dir / "torchlint.toml", error));
  CHECK(error.find("`cpp.bogus`: unknown setting") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("sizes: units and bytes") {
  CHECK(parse_size("500M") == 500ull << 20);
  CHECK(parse_size("2G") == 2ull << 30);
  CHECK(parse_size("2GiB") == 2ull << 30);
  CHECK(parse_size("1000") == 1000u);
  CHECK(parse_size("1.5k") == 1536u);
  CHECK_FALSE(parse_size("two"));
  CHECK_FALSE(parse_size("5 parsecs"));
  CHECK_FALSE(parse_size(""));
}
