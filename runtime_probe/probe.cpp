// run_probe: the environment, the model (identified, loaded to the device, checkpoint
// applied, inputs matched to forward's arguments, one smoke run), then each selected check
// in turn. Anything that stops the model from running at all is `fatal`; a check that
// throws is recorded as that check's error and the others still run.
#include <ATen/Parallel.h>
#include <torch/script.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "artifact.h"
#include "checkpoint_loader.h"
#include "checks/checks.h"
#include "cuda_support.h"
#include "dtypes.h"
#include "instrumentation.h"
#include "session.h"

namespace torchlint::probe {

namespace {

struct Fatal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

c10::Device resolve_device(const std::string& spec) {
  if (spec == "auto") return cuda::available() ? c10::Device(c10::DeviceType::CUDA, 0) : c10::Device(c10::kCPU);
  c10::Device device(c10::kCPU);
  try {
    device = c10::Device(spec);
  } catch (const std::exception&) {
    throw Fatal("--device " + spec + ": expected auto, cpu, cuda or cuda:N");
  }
  if (device.is_cpu()) return device;
  if (!device.is_cuda()) throw Fatal("--device " + spec + ": only cpu and cuda are supported");
  if (!cuda::compiled())
    throw Fatal("--device " + spec + ": this torchlint-probe was built against a CPU-only LibTorch");
  if (!cuda::available()) throw Fatal("--device " + spec + ": no CUDA device is available");
  if (!device.has_index()) device.set_index(0);
  if (device.index() >= cuda::device_count()) {
    throw Fatal("--device " + spec + ": there are " + std::to_string(cuda::device_count()) + " CUDA devices");
  }
  return device;
}

Json environment(const c10::Device& device) {
  Json env;
  env["torch_version"] = TORCH_VERSION;
  env["cuda_compiled"] = cuda::compiled();
  env["cuda_available"] = cuda::available();
  env["device"] = device.str();
  env["threads"] = at::get_num_threads();
  env["mkldnn"] = at::hasMKLDNN();
  env["xnnpack"] = at::globalContext().isXNNPACKAvailable();
  Json engines = Json::array();
  for (at::QEngine e : at::globalContext().supportedQEngines()) {
    if (e != at::QEngine::NoQEngine) engines.push_back(c10::toString(e));
  }
  env["quantized_engines"] = engines;
  if (device.is_cuda()) env["cuda"] = cuda::device_properties(device.index());
  return env;
}

// Matches the --input specs to forward's arguments: by name when every name is an argument
// (then in the arguments' order), otherwise by position.
std::vector<InputSpec> match_inputs(const torch::jit::Module& model, std::vector<InputSpec> specs, Json& out) {
  auto method = model.find_method("forward");
  if (!method) throw Fatal("the model has no forward method");
  const c10::FunctionSchema& schema = method->function().getSchema();
  std::vector<const c10::Argument*> args;
  for (const auto& a : schema.arguments()) {
    if (a.name() != "self") args.push_back(&a);
  }
  const size_t required =
      std::count_if(args.begin(), args.end(), [](const c10::Argument* a) { return !a->default_value().has_value(); });
  out["forward"] = schema.name() + "(" + [&] {
    std::string s;
    for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i]->name();
    return s;
  }() + ")";
  if (specs.size() < required || specs.size() > args.size()) {
    throw Fatal("forward takes " + std::to_string(required) +
                (required == args.size() ? "" : " to " + std::to_string(args.size())) + " inputs (" +
                out["forward"].get<std::string>() + "); " + std::to_string(specs.size()) + " given with --input");
  }
  const bool by_name = std::all_of(specs.begin(), specs.end(), [&](const InputSpec& spec) {
    return std::any_of(args.begin(), args.end(), [&](const c10::Argument* a) { return a->name() == spec.name; });
  });
  if (by_name) {
    std::vector<InputSpec> ordered;
    for (const c10::Argument* a : args) {
      auto it = std::find_if(specs.begin(), specs.end(), [&](const InputSpec& spec) { return spec.name == a->name(); });
      if (it != specs.end()) {
        ordered.push_back(*it);
      } else if (!a->default_value()) {
        throw Fatal("no --input for forward's argument `" + a->name() + "`");
      } else {
        break;  // later arguments keep their defaults; positional order must not skip one
      }
    }
    if (ordered.size() != specs.size()) throw Fatal("--input names skip one of forward's arguments with a default");
    specs = std::move(ordered);
  }
  out["inputs_matched"] = by_name ? "by name" : "by position";
  Json inputs = Json::array();
  for (size_t i = 0; i < specs.size(); ++i) {
    inputs.push_back(Json{
        {"name", specs[i].name}, {"argument", args[i]->name()}, {"shape", specs[i].shape}, {"dtype", specs[i].dtype}});
  }
  out["inputs"] = inputs;
  return specs;
}

bool selected(const ProbeOptions& o, std::string_view name) {
  if (o.checks.empty()) return name != "compare" || !o.compare_path.empty();
  return std::find(o.checks.begin(), o.checks.end(), name) != o.checks.end();
}

void probe_into(Report& report, const ProbeOptions& given) {
  ProbeOptions o = given;
  if (o.threads > 0) at::set_num_threads(o.threads);
  const c10::Device device = resolve_device(o.device);
  // cuBLAS is only deterministic with a fixed workspace; the variable is read when the first
  // cuBLAS handle is made, so it is set before anything runs (unless the user set it).
  if (device.is_cuda() && selected(o, "determinism") && !std::getenv("CUBLAS_WORKSPACE_CONFIG")) {
    setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", 0);
  }
  report.environment = environment(device);
  if (const char* cublas = std::getenv("CUBLAS_WORKSPACE_CONFIG"))
    report.environment["cublas_workspace_config"] = cublas;

  report.model["path"] = o.model_path;
  const Artifact artifact = identify_model_file(o.model_path);
  report.model["format"] = artifact.format;
  report.model["format_detail"] = artifact.detail;
  if (!artifact.unsupported.empty()) throw Fatal(o.model_path + ": " + artifact.unsupported);
  torch::jit::Module module;
  try {
    module = torch::jit::load(o.model_path, device);
  } catch (const std::exception& e) {
    throw Fatal(o.model_path + ": torch::jit::load fails: " + short_error(e));
  }
  if (!o.checkpoint_path.empty()) {
    try {
      report.model["checkpoint"] = apply_checkpoint(module, o.checkpoint_path);
    } catch (const std::exception& e) {
      throw Fatal(o.checkpoint_path + ": " + short_error(e));
    }
  }
  o.inputs = match_inputs(module, o.inputs, report.model);

  ProbeSession session(o, device, std::move(module));
  report.summary = session.inventory().to_json();
  try {
    Json outputs = Json::array();
    for (const at::Tensor& t : output_tensors(session.run(session.eval_model()))) {
      outputs.push_back(Json{{"shape", t.sizes().vec()}, {"dtype", dtype_name(t.scalar_type())}});
    }
    report.model["outputs"] = outputs;
  } catch (const std::exception& e) {
    throw Fatal("forward fails on the given inputs: " + short_error(e));
  }

  std::vector<const CheckEntry*> plan;
  for (const CheckEntry& entry : kChecks) {
    if (selected(o, entry.name)) plan.push_back(&entry);
  }
  for (size_t i = 0; i < plan.size(); ++i) {
    if (o.progress) o.progress(plan[i]->name, i, plan.size());
    CheckResult result;
    result.name = std::string(plan[i]->name);
    result.rule = std::string(plan[i]->rule);
    const size_t findings_before = report.findings.size();
    CheckRun run{session, result, report.findings};
    const auto t0 = std::chrono::steady_clock::now();
    try {
      plan[i]->run(run);
    } catch (const std::exception& e) {
      result.status = CheckStatus::kError;
      result.reason = short_error(e);
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const bool failed =
        std::any_of(report.findings.begin() + static_cast<std::ptrdiff_t>(findings_before), report.findings.end(),
                    [](const Finding& f) { return f.severity != Severity::kInfo; });
    if (result.status == CheckStatus::kPassed && failed) result.status = CheckStatus::kFailed;
    report.checks.push_back(std::move(result));
    if (session.on_cuda()) cuda::empty_cache();  // each check starts from the same allocator state
  }
}

}  // namespace

Report run_probe(const ProbeOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  Report report;
  {
    WarningCollector warnings;
    try {
      probe_into(report, options);
    } catch (const std::exception& e) {
      report.fatal = dynamic_cast<const Fatal*>(&e) ? e.what() : short_error(e);
    }
    report.warnings = warnings.warnings();
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

}  // namespace torchlint::probe
