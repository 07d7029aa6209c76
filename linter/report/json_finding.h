#pragma once
// One finding as a JSON object: shared by the json and jsonl formats.
#include <nlohmann/json.hpp>

#include "report.h"

namespace torchlint::report {

nlohmann::ordered_json finding_json(const Diagnostic& d, const ReportContext& ctx);

}  // namespace torchlint::report
