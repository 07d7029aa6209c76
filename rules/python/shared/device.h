#pragma once
// Shared by the rules that ask whether a script targets CUDA on purpose (TL203, TL205,
// TL206).
// Header-only so that each rule stays one .cpp.
#include <string_view>
#include <vector>

#include "python/rule.h"

namespace torchlint::python::device_util {

// A CUDA device named inside an availability check: `torch.device("cuda" if ... else "cpu")`.
inline bool cuda_when_available(const CallEvent& call, const SemanticModel& model) {
  if (call.qualname != api::kTorchDevice) return false;
  TSNode arg = call.positional(0);
  if (ts_node_is_null(arg) || Syntax::get().kind(arg) != Kind::kConditionalExpression) return false;
  for (uint32_t i = 0; i < ts_node_named_child_count(arg); ++i) {
    std::string_view v;
    if (string_literal_value(ts_node_named_child(arg, i), model.source(), v) && v.starts_with("cuda")) return true;
  }
  return false;
}

// GPU-only advice in a file that names no GPU itself holds only in programs that do (the
// project pass decides); a program that never names a GPU in any form is CPU-only.
inline std::vector<ProjectCondition> gpu_program_condition(const SemanticModel& model, bool cuda_here = false) {
  if (model.uses_cuda() || cuda_here) return {};
  return {{ProjectCondition::Kind::kProgramHas, {}, kUsesCudaFact, ""}};
}

}  // namespace torchlint::python::device_util
