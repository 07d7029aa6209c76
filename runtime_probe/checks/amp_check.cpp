// amp: the model under autocast (CUDA float16, and bfloat16 where the device has it; CPU
// bfloat16, the only CPU autocast dtype in LibTorch 1.13) against an fp32 reference run with
// TF32 off (on Ampere and newer the "fp32" baseline is otherwise already reduced precision).
// Fails on an exception, on NaN/Inf the fp32 run does not have, or when
// max |amp - fp32| / max |fp32| exceeds the dtype's tolerance (1e-2 fp16, 5e-2 bf16:
// whole-network figures; torch.testing's per-op tolerances are far too tight for them).
#include "checks.h"
#include "cuda_support.h"
#include "dtypes.h"
#include "instrumentation.h"

namespace torchlint::probe {

namespace {

struct AmpVariant {
  std::string name;  // "cpu_bfloat16"
  c10::DeviceType device_type;
  at::ScalarType dtype;
  double tolerance;
};

std::string label(const AmpVariant& v) {
  return "autocast " + dtype_name(v.dtype) + " (" + c10::DeviceTypeName(v.device_type, /*lower_case=*/true) + ")";
}

}  // namespace

void amp_check(CheckRun& run) {
  ProbeSession& s = run.session;
  std::vector<AmpVariant> variants;
  if (s.on_cuda()) {
    variants.push_back({"cuda_float16", c10::DeviceType::CUDA, at::kHalf, 1e-2});
    if (cuda::supports_bf16(s.device().index())) {
      variants.push_back({"cuda_bfloat16", c10::DeviceType::CUDA, at::kBFloat16, 5e-2});
    } else {
      run.figures()["cuda_bfloat16"] = Json{{"skipped", "compute capability below 8.0: no bfloat16"}};
    }
  } else {
    variants.push_back({"cpu_bfloat16", c10::DeviceType::CPU, at::kBFloat16, 5e-2});
  }

  // Inputs are made before any observer is installed: their random fill is not the model's.
  const std::vector<c10::IValue> inputs = s.inputs();
  c10::IValue reference;
  {
    const cuda::Tf32State previous = cuda::set_tf32({false, false});
    try {
      reference = s.run(s.eval_model(), inputs);
    } catch (...) {
      cuda::set_tf32(previous);
      throw;
    }
    cuda::set_tf32(previous);
  }

  std::vector<std::string> headline;
  for (const AmpVariant& v : variants) {
    Json j;
    j["dtype"] = dtype_name(v.dtype);
    j["tolerance"] = v.tolerance;
    try {
      c10::IValue out;
      std::vector<std::string> fp32_ops;
      {
        AutocastScope autocast(v.device_type, v.dtype);
        PrecisionCensus census;
        out = s.run(s.eval_model(), inputs);
        fp32_ops = census.fp32_only_ops();
      }
      const Difference d = compare_outputs(reference, out);
      j["max_abs"] = d.max_abs;
      j["max_rel"] = d.max_rel;
      j["cosine"] = d.cosine;
      j["nonfinite_outputs"] = d.nonfinite_other;
      j["argmax_agreement"] = d.argmax_agreement ? Json(*d.argmax_agreement) : Json(nullptr);
      std::vector<std::string> output_dtypes;
      for (const at::Tensor& t : output_tensors(out)) output_dtypes.push_back(dtype_name(t.scalar_type()));
      j["output_dtypes"] = output_dtypes;
      j["fp32_ops"] = fp32_ops;  // ops that still ran in full precision

      std::string failure;
      if (!d.comparable) {
        failure = "its outputs do not match the fp32 run's: " + d.why;
      } else if (d.nonfinite_other > d.nonfinite_reference) {
        std::optional<std::string> op;
        {
          AutocastScope autocast(v.device_type, v.dtype);
          NonFiniteOpFinder finder;
          s.run(s.eval_model(), inputs);
          op = finder.first_op();
        }
        j["first_nonfinite_op"] = op ? Json(*op) : Json(nullptr);
        failure = "gives " + std::to_string(d.nonfinite_other) + " NaN/Inf outputs where fp32 gives " +
                  std::to_string(d.nonfinite_reference) +
                  (op ? " (first from `" + *op + "`, out of " + dtype_name(v.dtype) + " range?)" : "");
      } else if (d.max_rel > v.tolerance) {
        failure = "differs from fp32 by max |difference| / max |fp32| = " + format_number(d.max_rel) + " (tolerance " +
                  format_number(v.tolerance) + ")";
      }
      j["passed"] = failure.empty();
      if (!failure.empty()) run.find(kAmpUnsafe, label(v) + " " + failure);
      headline.push_back(dtype_name(v.dtype) + " rel " + format_number(d.max_rel, 2));
    } catch (const std::exception& e) {
      j["passed"] = false;
      j["error"] = short_error(e);
      run.find(kAmpUnsafe, label(v) + " fails: " + short_error(e));
      headline.push_back(dtype_name(v.dtype) + " fails");
    }
    run.figures()[v.name] = j;
  }
  for (size_t i = 0; i < headline.size(); ++i) run.result.headline += (i ? ", " : "") + headline[i];
}

}  // namespace torchlint::probe
