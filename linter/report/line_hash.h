#pragma once
// GitHub's `primaryLocationLineHash`, computed the way its upload action computes it, so
// alerts keep their identity across runs however the SARIF reaches code scanning.
#include <string>
#include <string_view>
#include <vector>

namespace torchlint::report {

// One hash per line of `text` ("<hex>:<occurrence>"); index 0 is line 1.
std::vector<std::string> primary_location_line_hashes(std::string_view text);

}  // namespace torchlint::report
