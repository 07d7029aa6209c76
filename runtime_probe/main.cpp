// torchlint-probe's command line. Exit codes: 0 every check passed, 1 findings (of warning or
// error severity), 2 usage error, or the model (or a check) could not run.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "cli/parse_errors.h"
#include "options.h"
#include "probe.h"

namespace {

using namespace torchlint::probe;

constexpr int kExitError = 2;

bool use_color(const std::string& mode, bool to_terminal) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return to_terminal && !(no_color && *no_color) && !(term && std::string(term) == "dumb");
}

// Turns a parser's nullopt into CLI11's validation error, so usage errors all look alike.
template <class T>
T require(std::optional<T> value, const std::string& error) {
  if (!value) throw CLI::ValidationError(error);
  return *value;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "torchlint-probe: load a TorchScript model with LibTorch and check AMP, memory, determinism,\n"
      "export readiness and latency (findings TL901-TL908)"};
  app.set_version_flag("-V,--version", std::string("torchlint-probe ") + TORCHLINT_VERSION);
  ProbeOptions options;
  std::vector<std::string> input_specs;
  std::string batch_sizes, memory_budget, checks, optimizer = "adam", format = "text", output, color = "auto";
  app.add_option("model", options.model_path, "TorchScript model (torch.jit.save)")->required();
  app.add_option("--checkpoint", options.checkpoint_path,
                 "state dict or training checkpoint whose weights replace the model's (read without unpickling)");
  app.add_option("--input", input_specs,
                 "NAME:SHAPE[:DTYPE[:LOW..HIGH]] per forward argument, e.g. x:1x3x224x224:float32")
      ->required();
  app.add_option("--device", options.device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  app.add_option("--batch-sizes", batch_sizes,
                 "batch sizes for memory and latency, e.g. 1,8,32 (default: the input's)");
  app.add_option("--memory-budget", memory_budget,
                 "memory a training step may use, e.g. 16GiB (CUDA default: the device's)");
  app.add_option(
      "--checks", checks,
      "comma-separated: mode,finite,determinism,amp,memory,export,quantize,benchmark,latency,compare (default: all)");
  app.add_option("--optimizer", optimizer,
                 "optimizer of the memory estimate: sgd, sgd-momentum, adam, adamw, adam-amsgrad")
      ->capture_default_str();
  app.add_option("--compare", options.compare_path,
                 "second TorchScript model for an A/B comparison of outputs and latency");
  app.add_option("--seed", options.seed, "seed of the inputs and of every run")->capture_default_str();
  app.add_option("--threads", options.threads, "intra-op threads (default: LibTorch's)");
  app.add_option("--warmup-runs", options.warmup_runs, "latency: untimed runs per batch size")->capture_default_str();
  app.add_option("--timed-runs", options.timed_runs, "latency: timed runs per batch size (at most)")
      ->capture_default_str();
  app.add_option("--seconds-per-batch", options.seconds_per_batch,
                 "latency: time budget per batch size (at least 10 runs)")
      ->capture_default_str();
  // `full` is the name the other torchlint binaries give their human-readable report.
  app.add_option("--output-format", format, "text (or full) or json")
      ->check(CLI::IsMember({"text", "full", "json"}))
      ->capture_default_str();
  app.add_option("-o,--output-file,--output", output, "write the report to this file instead of stdout");
  app.add_option("--color", color, "auto, always or never")->check(CLI::IsMember({"auto", "always", "never"}));
  bool exit_zero = false, quiet = false;
  app.add_flag("--exit-zero", exit_zero, "exit 0 even when there are findings (a model that cannot run still exits 2)");
  app.add_flag("-q,--quiet", quiet, "no progress on the terminal (the report only)");
  try {
    app.parse(argc, argv);
    std::string error;
    for (const std::string& spec : input_specs) options.inputs.push_back(require(parse_input_spec(spec, error), error));
    if (!batch_sizes.empty()) options.batch_sizes = require(parse_batch_sizes(batch_sizes, error), error);
    if (!memory_budget.empty()) options.memory_budget = require(parse_byte_size(memory_budget, error), error);
    if (!checks.empty()) options.checks = require(parse_check_list(checks, error), error);
    options.optimizer = require(parse_optimizer(optimizer, error), error);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return torchlint::cli::report_parse_error(app, e, argc, argv, "torchlint-probe");
  }

  // Progress goes to stderr, and only to a terminal: never into a report or a pipe.
  const bool progress = !quiet && isatty(STDERR_FILENO);
  if (progress) {
    options.progress = [](std::string_view check, size_t index, size_t total) {
      std::cerr << "\r\x1b[K[" << index + 1 << '/' << total << "] " << check << "..." << std::flush;
    };
  }
  const Report report = run_probe(options);
  if (progress) std::cerr << "\r\x1b[K" << std::flush;

  const bool to_file = !output.empty();
  std::ofstream file;
  if (to_file) {
    file.open(output);
    if (!file) {
      std::cerr << "torchlint-probe: error: cannot write " << output << '\n';
      return kExitError;
    }
  }
  std::ostream& out = to_file ? static_cast<std::ostream&>(file) : std::cout;
  if (format == "json") {
    out << report.to_json().dump(2) << '\n';
  } else {
    out << report.to_text(use_color(color, !to_file && isatty(STDOUT_FILENO)));
  }
  if (!report.fatal.empty() && (format == "json" || to_file)) {
    std::cerr << "torchlint-probe: error: " << report.fatal << '\n';  // visible even when stdout is parsed
  }
  const int exit_code = report.exit_code();
  return exit_zero && exit_code == 1 ? 0 : exit_code;
}
