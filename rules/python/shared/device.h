#pragma once
// Shared by the rules that ask whether a script targets CUDA on purpose (TL202, TL203,
// TL205, TL206).
#include <vector>

#include "python/rule.h"

namespace torchlint::python::device_util {

// A CUDA device named inside an availability check: `torch.device("cuda" if ... else "cpu")`.
bool cuda_when_available(const CallEvent& call, const SemanticModel& model);

// GPU-only advice in a file that names no GPU itself holds only in programs that do (the
// project pass decides); a program that never names a GPU in any form is CPU-only.
std::vector<ProjectCondition> gpu_program_condition(const SemanticModel& model, bool cuda_here = false);

}  // namespace torchlint::python::device_util
