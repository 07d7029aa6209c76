// export: can the model be shipped the ways LibTorch offers? On an eval-mode copy:
//   save_load               torch.jit.save -> torch.jit.load round trip, bitwise-equal outputs;
//   freeze                  torch.jit.freeze, outputs allclose (torch.testing fp32 defaults);
//   optimize_for_inference  runs and stays close (its fused/MKLDNN kernels may sum in another
//                           order: rtol 1e-4); its result is not saved (LibTorch does not
//                           promise that works);
//   mobile                  _save_for_mobile -> _load_for_mobile (lite interpreter), equal
//                           outputs, and the operator list a mobile build must include;
//   mobile_flatbuffer, optimize_for_mobile (XNNPACK): reported, not required;
//   onnx                    not from C++: the exporter is Python's (torch.onnx.export).
// Every required step that fails is a TL904 finding.
#include <torch/csrc/jit/mobile/import.h>
#include <torch/csrc/jit/passes/xnnpack_rewrite.h>
#include <torch/csrc/jit/serialization/import.h>

#include <chrono>
#include <sstream>

#include "checks.h"

namespace torchlint::probe {

namespace {

std::vector<c10::IValue> to_cpu(const std::vector<c10::IValue>& inputs) {
  std::vector<c10::IValue> out;
  for (const auto& v : inputs) out.emplace_back(v.isTensor() ? c10::IValue(v.toTensor().cpu()) : v);
  return out;
}

// Runs one export step; an exception is the step's failure.
Json export_step(const std::function<void(Json&)>& body) {
  Json j;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    body(j);
  } catch (const std::exception& e) {
    j["ok"] = false;
    j["error"] = short_error(e);
  }
  j["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return j;
}

void record_difference(Json& j, const Difference& d, bool required_equal) {
  j["ok"] = d.comparable && (required_equal ? d.bitwise_equal : d.allclose);
  j["max_abs"] = d.max_abs;
  if (!j["ok"].get<bool>()) {
    j["error"] = !d.comparable ? "outputs do not match: " + d.why
                               : "outputs differ from the eval model by up to " + format_number(d.max_abs);
  }
}

}  // namespace

void export_check(CheckRun& run) {
  ProbeSession& s = run.session;
  const c10::IValue reference = s.run(s.eval_model());
  Json steps = Json::object();

  steps["save_load"] = export_step([&](Json& j) {
    std::stringstream archive;
    s.eval_model().save(archive);
    j["bytes"] = archive.str().size();
    archive.seekg(0);
    torch::jit::Module loaded = torch::jit::load(archive, s.device());
    loaded.eval();
    record_difference(j, compare_outputs(reference, s.run(loaded)), /*required_equal=*/true);
  });

  steps["freeze"] = export_step([&](Json& j) {
    torch::jit::Module frozen = torch::jit::freeze(s.eval_copy());
    j["parameters_left"] = frozen.named_parameters(true).size();
    record_difference(j, compare_outputs(reference, s.run(frozen)), /*required_equal=*/false);
  });

  steps["optimize_for_inference"] = export_step([&](Json& j) {
    torch::jit::Module copy = s.eval_copy();
    torch::jit::Module optimized = torch::jit::optimize_for_inference(copy);
    record_difference(j, compare_outputs(reference, s.run(optimized), 1e-4, 1e-5), /*required_equal=*/false);
  });

  // The lite interpreter runs on the CPU: export a CPU copy and compare with its CPU run.
  torch::jit::Module cpu_model = s.eval_copy();
  if (s.on_cuda()) cpu_model.to(at::kCPU);
  const std::vector<c10::IValue> cpu_inputs = to_cpu(s.inputs());
  const c10::IValue cpu_reference = s.run(cpu_model, cpu_inputs);
  auto mobile_step = [&](bool flatbuffer) {
    return export_step([&](Json& j) {
      std::stringstream archive;
      cpu_model._save_for_mobile(archive, {}, /*save_mobile_debug_info=*/false, flatbuffer);
      j["bytes"] = archive.str().size();
      archive.seekg(0);
      torch::jit::mobile::Module lite = torch::jit::_load_for_mobile(archive, at::Device(at::kCPU));
      s.reseed();
      c10::IValue out;
      {
        torch::NoGradGuard no_grad;
        out = lite.forward(cpu_inputs);
      }
      if (!flatbuffer) {
        std::set<std::string> ops = torch::jit::mobile::_export_operator_list(lite);
        j["operators"] = std::vector<std::string>(ops.begin(), ops.end());
      }
      record_difference(j, compare_outputs(cpu_reference, out), /*required_equal=*/true);
    });
  };
  steps["mobile"] = mobile_step(false);
  steps["mobile_flatbuffer"] = mobile_step(true);

  if (at::globalContext().isXNNPACKAvailable()) {
    steps["optimize_for_mobile"] = export_step([&](Json& j) {
      torch::jit::Module optimized = torch::jit::optimizeForMobile(cpu_model);
      record_difference(j, compare_outputs(cpu_reference, s.run(optimized, cpu_inputs), 1e-4, 1e-5), false);
    });
  } else {
    steps["optimize_for_mobile"] = Json{{"ok", nullptr}, {"note", "this LibTorch has no XNNPACK"}};
  }
  steps["onnx"] =
      Json{{"ok", nullptr}, {"note", "needs Python's torch.onnx.export: the ONNX exporter is not part of LibTorch"}};
  run.figures()["steps"] = steps;

  std::vector<std::string> failed;
  for (const char* required : {"save_load", "freeze", "optimize_for_inference", "mobile"}) {
    const Json& step = steps[required];
    if (step["ok"].is_boolean() && step["ok"].get<bool>()) continue;
    failed.push_back(required);
    run.find(kExportNotReady, std::string(required) + " fails: " + step.value("error", std::string("unknown error")));
  }
  run.result.headline = failed.empty() ? "save/load, freeze, optimize_for_inference, mobile ok"
                                       : std::to_string(failed.size()) + " of 4 export steps fail";
}

}  // namespace torchlint::probe
