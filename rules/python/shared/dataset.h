#pragma once
// Shared by the rules about Dataset classes (TL112, TL209).
#include <string_view>

#include "python/rule.h"

namespace torchlint::python::dataset_util {

// `q` names one of torch's and torchvision's Dataset base classes.
bool is_dataset_base(std::string_view q);

// `q` names a torch Dataset class, directly or through classes of this file.
bool is_dataset_class(std::string_view q, const SemanticModel& model, int depth = 0);

// The class statement derives from a torch Dataset. Bases are read from the statement so
// that `Dataset[Tuple[Tensor, int]]` counts.
bool derives_from_dataset(TSNode class_node, const SemanticModel& model);

}  // namespace torchlint::python::dataset_util
