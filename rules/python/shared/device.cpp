#include "device.h"

#include <string_view>

namespace torchlint::python::device_util {

bool cuda_when_available(const CallEvent& call, const SemanticModel& model) {
  if (call.qualname != api::kTorchDevice) return false;
  TSNode arg = call.positional(0);
  if (ts_node_is_null(arg) || Syntax::get().kind(arg) != Kind::kConditionalExpression) return false;
  for (uint32_t i = 0; i < ts_node_named_child_count(arg); ++i) {
    std::string_view v;
    if (string_literal_value(ts_node_named_child(arg, i), model.source(), v) && v.starts_with("cuda")) return true;
  }
  return false;
}

std::vector<ProjectCondition> gpu_program_condition(const SemanticModel& model, bool cuda_here) {
  if (model.uses_cuda() || cuda_here) return {};
  return {{ProjectCondition::Kind::kProgramHas, {}, kUsesCudaFact, ""}};
}

}  // namespace torchlint::python::device_util
